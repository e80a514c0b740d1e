"""`BatchNormalization(synchronized=True)` on every rank: `sync_batchnorm.py OUT_DIR` writes
OUT_DIR/<rank>.json.

Each rank normalises its own rows (a contiguous slice) of one global batch in training, takes the gradient of its loss with respect to its rows, gamma and
beta, and also computes, alone, the same layer on the whole global batch (the reference
synchronized statistics must equal). It runs the channels-last case (a (8, 3) batch) and a
4-D one normalised along axis 1 with a batch of one row on the last rank's side (the first as
Keras 2's `SyncBatchNormalization`, the second as Keras 3's `synchronized=True`).
"""

import json
import sys
from pathlib import Path

import numpy as np

import mindspore as ms
from migrate.runtime import collectives
from migrate.runtime import keras as mk

out = Path(sys.argv[1])
group = collectives.world()
rank, size = group.rank, group.size


def arr(t):
    return np.asarray(t.asnumpy() if hasattr(t, "asnumpy") else t).tolist()


def step(layer, x, w):
    """Training forward pass and gradients of sum(layer(x) * w) with respect to x, gamma, beta."""
    layer.build(x.shape)

    def loss(inputs):
        y = layer(inputs, training=True)
        return (y * ms.Tensor(w)).sum(), y

    (value, y), (dx, (dgamma, dbeta)) = mk.value_and_grad(
        loss, grad_position=0, weights=[layer.gamma, layer.beta], has_aux=True)(ms.Tensor(x))
    return {"y": arr(y), "dx": arr(dx), "dgamma": arr(dgamma), "dbeta": arr(dbeta),
            "moving_mean": arr(layer.moving_mean), "moving_variance": arr(layer.moving_variance)}


results = {"size": size}
rng = np.random.default_rng(7)
cases = {
    # name: (global batch, axis, rows of each rank)
    "dense": (rng.normal(2.0, 3.0, size=(8, 3)).astype(np.float32), -1, [slice(0, 5), slice(5, 8)]),
    "images": (rng.normal(size=(3, 2, 2, 2)).astype(np.float32), 1, [slice(0, 2), slice(2, 3)]),
}
for name, (x, axis, rows) in cases.items():
    w = rng.normal(size=x.shape).astype(np.float32)
    mine = rows[rank]
    layer = mk.layers.SyncBatchNormalization(axis=axis, momentum=0.5) if name == "dense" else \
        mk.layers.BatchNormalization(axis=axis, momentum=0.5, synchronized=True)  # (Keras 2's name, and Keras 3's)
    results[name] = step(layer, x[mine], w[mine])
    reference = mk.layers.BatchNormalization(axis=axis, momentum=0.5)  # the whole batch, in this process alone
    results[name + "_whole"] = step(reference, x, w)
    results[name + "_rows"] = [mine.start, mine.stop]

out.mkdir(parents=True, exist_ok=True)
(out / f"{rank}.json").write_text(json.dumps(results))
