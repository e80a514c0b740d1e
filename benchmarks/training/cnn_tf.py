"""The TF program of the training benchmark's second workload: a small CNN (Conv2D -
BatchNormalization - ReLU - MaxPooling2D, twice, then a Dense head) on channels-last 32x32x3
images, trained by a custom loop under a MirroredStrategy, SGD with momentum, global batch 128.
`migrate convert` turns this file into the converted program the benchmark times; it prints
the seconds of every epoch."""

import json
import os
import time

import numpy as np
import tensorflow as tf

EPOCHS = int(os.environ.get("BENCH_EPOCHS", "3"))
EXAMPLES = int(os.environ.get("BENCH_EXAMPLES", "2048"))
GLOBAL_BATCH = 128
rng = np.random.default_rng(0)
x = rng.normal(size=(EXAMPLES, 32, 32, 3)).astype(np.float32)
y = rng.integers(0, 10, size=EXAMPLES).astype(np.int32)
k0 = rng.normal(scale=0.2, size=(3, 3, 3, 16)).astype(np.float32)
k1 = rng.normal(scale=0.1, size=(3, 3, 16, 32)).astype(np.float32)
w2 = rng.normal(scale=0.01, size=(8 * 8 * 32, 10)).astype(np.float32)

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(32, 32, 3)),
        tf.keras.layers.Conv2D(16, 3, padding="same", kernel_initializer=tf.constant_initializer(k0)),
        tf.keras.layers.BatchNormalization(),
        tf.keras.layers.ReLU(),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Conv2D(32, 3, padding="same", kernel_initializer=tf.constant_initializer(k1)),
        tf.keras.layers.BatchNormalization(),
        tf.keras.layers.ReLU(),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(10, kernel_initializer=tf.constant_initializer(w2)),
    ])
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.002, momentum=0.9)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    optimizer.build(model.trainable_variables)  # TF 2.21 cannot make the slots inside the step's tf.function

dataset = strategy.experimental_distribute_dataset(
    tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH))


def train_step(inputs):
    features, labels = inputs
    with tf.GradientTape() as tape:
        logits = model(features, training=True)
        loss = tf.nn.compute_average_loss(loss_object(labels, logits), global_batch_size=GLOBAL_BATCH)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


@tf.function
def distributed_step(inputs):
    per_replica = strategy.run(train_step, args=(inputs,))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)


seconds, loss = [], 0.0
for epoch in range(EPOCHS):
    start = time.perf_counter()
    for batch in dataset:
        loss = float(distributed_step(batch))
    seconds.append(time.perf_counter() - start)
print(json.dumps({"epoch_seconds": seconds, "examples": EXAMPLES, "final_loss": loss}))
