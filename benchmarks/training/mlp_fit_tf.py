"""The Keras `fit` program of the training benchmark: the MLP of ``mlp_tf.py`` (784-512-512-10,
SGD with momentum, global batch 256) compiled and trained by ``model.fit`` under a
MirroredStrategy, one ``fit`` call per epoch so that each epoch is timed."""

import json
import os
import time

import numpy as np
import tensorflow as tf

EPOCHS = int(os.environ.get("BENCH_EPOCHS", "3"))
EXAMPLES = int(os.environ.get("BENCH_EXAMPLES", "16384"))
GLOBAL_BATCH = 256
rng = np.random.default_rng(0)
x = rng.normal(size=(EXAMPLES, 784)).astype(np.float32)
y = rng.integers(0, 10, size=EXAMPLES).astype(np.int32)
w0 = rng.normal(scale=0.05, size=(784, 512)).astype(np.float32)
w1 = rng.normal(scale=0.05, size=(512, 512)).astype(np.float32)
w2 = rng.normal(scale=0.05, size=(512, 10)).astype(np.float32)

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(784,)),
        tf.keras.layers.Dense(512, activation="relu", kernel_initializer=tf.constant_initializer(w0)),
        tf.keras.layers.Dense(512, activation="relu", kernel_initializer=tf.constant_initializer(w1)),
        tf.keras.layers.Dense(10, kernel_initializer=tf.constant_initializer(w2)),
    ])
    model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.01, momentum=0.9),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])

seconds, loss = [], 0.0
for epoch in range(EPOCHS):
    start = time.perf_counter()
    history = model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=1, shuffle=False, verbose=0)
    seconds.append(time.perf_counter() - start)
    loss = history.history["loss"][-1]
print(json.dumps({"epoch_seconds": seconds, "examples": EXAMPLES, "final_loss": loss}))
