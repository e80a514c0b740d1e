"""A Keras `Sequence`/`PyDataset` fed to fit, evaluate and predict: what is read when, and the numbers.

    python py_dataset.py tf|ms    # prints one JSON line

The dataset reshuffles its examples in `on_epoch_end` with numpy's global generator, as the
usual data generators do, and logs every call Keras makes on it.
"""

import json
import os
import sys

import numpy as np

if sys.argv[1] == "tf":
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import tensorflow as tf

    K = tf.keras
else:
    from migrate.runtime import keras as K

X = np.random.default_rng(0).normal(size=(40, 4)).astype("float32")
Y = (X.sum(axis=1) > 0).astype("int32")
log = []


class Examples(K.utils.Sequence):
    def __init__(self, batch_size=8, reshuffle=True, **kwargs):
        super().__init__(**kwargs)
        self.batch_size, self.reshuffle = batch_size, reshuffle
        self.order = np.arange(len(X))

    def __len__(self):
        return len(X) // self.batch_size

    def __getitem__(self, index):
        log.append(f"get{index}")
        rows = self.order[index * self.batch_size:(index + 1) * self.batch_size]
        return X[rows], Y[rows]

    def on_epoch_begin(self):
        log.append("begin")

    def on_epoch_end(self):
        log.append("end")
        if self.reshuffle:
            np.random.shuffle(self.order)


K.utils.set_random_seed(3)  # Python's random (fit's batch order), numpy's (the reshuffles)
model = K.Sequential([K.Input(shape=(4,)), K.layers.Dense(3, activation="relu"), K.layers.Dense(2)])
model.set_weights([np.full(w.shape, 0.1 * (i + 1), "float32") for i, w in enumerate(model.get_weights())])
model.compile(optimizer=K.optimizers.SGD(0.1), loss=K.losses.SparseCategoricalCrossentropy(from_logits=True))
out = {}
history = model.fit(Examples(), epochs=3, verbose=0)
out["fit"] = {"loss": [float(v) for v in history.history["loss"]], "calls": list(log)}
log.clear()
out["fit_in_order"] = {"loss": float(model.fit(Examples(), shuffle=False, verbose=0).history["loss"][0]),
                       "calls": list(log)}
log.clear()
# one pass goes on across epochs (TF reads a batch ahead there, across the epoch's end: a dataset
# that reshuffles in on_epoch_end would give that batch another content)
history = model.fit(Examples(reshuffle=False), epochs=3, steps_per_epoch=3, verbose=0)
out["steps_per_epoch"] = {"loss": [float(v) for v in history.history["loss"]], "calls": list(log)}
log.clear()
history = model.fit(X, Y, batch_size=8, epochs=1, shuffle=False, validation_data=Examples(), verbose=0)
out["validation"] = {"loss": float(history.history["loss"][0]), "val_loss": float(history.history["val_loss"][0])}
log.clear()
out["evaluate"] = {"loss": float(model.evaluate(Examples(), verbose=0)), "calls": list(log)}
log.clear()
out["predict"] = {"values": model.predict(Examples(), verbose=0).tolist(), "calls": list(log)}
print(json.dumps(out))
