"""A tutorial-style custom training loop: experimental_distribute_dataset, run, reduce(SUM)."""

import json

import numpy as np
import tensorflow as tf

GLOBAL_BATCH = 8
rng = np.random.default_rng(7)
x = rng.normal(size=(36, 4)).astype(np.float32)
y = (x @ rng.normal(size=(4, 1))).astype(np.float32)
w1 = rng.normal(scale=0.5, size=(4, 8)).astype(np.float32)
w2 = rng.normal(scale=0.5, size=(8, 1)).astype(np.float32)

strategy = tf.distribute.MirroredStrategy()

with strategy.scope():
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(4,)),
        tf.keras.layers.Dense(8, activation="tanh", kernel_initializer=tf.constant_initializer(w1)),
        tf.keras.layers.Dense(1, kernel_initializer=tf.constant_initializer(w2)),
    ])
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.05)

dist_ds = strategy.experimental_distribute_dataset(
    tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH))


def train_step(inputs):
    features, targets = inputs
    with tf.GradientTape() as tape:
        per_example = tf.reduce_sum(tf.square(model(features, training=True) - targets), axis=1)
        loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


@tf.function
def distributed_step(inputs):
    per_replica = strategy.run(train_step, args=(inputs,))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)


losses = []
for epoch in range(2):
    for batch in dist_ds:
        losses.append(float(distributed_step(batch)))
print(json.dumps({"losses": losses}))
