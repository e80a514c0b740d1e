"""Keras fit then predict of a BatchNormalization model on the runtime's Keras, under the launcher:
each rank writes its predictions, its own moving statistics and the (equal) trained weights to
OUT/<rank>.json (test_predict_per_replica.py)."""

import json
import sys
from pathlib import Path

import numpy as np

from migrate.runtime import keras as mk
from migrate.runtime.collectives import replicas
from migrate.runtime.spmd import init

init()
rng = np.random.RandomState(0)
x = (rng.randn(60, 3) * np.array([1, 2, 3]) + np.array([0, 5, -5])).astype("float32")
x[30:] += 10
y = rng.randn(60, 1).astype("float32")
model = mk.Sequential([mk.Input((3,)), mk.layers.BatchNormalization(momentum=0.5), mk.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
predictions = model.predict(x, batch_size=14, verbose=0)  # (the last batch: 4 rows, 2 per replica)
bn, dense = model.layers[0], model.layers[1]
out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
(out / f"{replicas().rank}.json").write_text(json.dumps({
    "predictions": predictions.ravel().tolist(),
    "mean": np.asarray(bn.moving_mean.numpy()).tolist(), "variance": np.asarray(bn.moving_variance.numpy()).tolist(),
    "gamma": np.asarray(bn.gamma.numpy()).tolist(), "beta": np.asarray(bn.beta.numpy()).tolist(),
    "kernel": np.asarray(dense.kernel.numpy()).tolist(), "bias": np.asarray(dense.bias.numpy()).tolist(),
    "x": x.tolist()}))
