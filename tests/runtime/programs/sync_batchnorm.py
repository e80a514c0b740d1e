"""`BatchNormalization(synchronized=True)` on every rank: `sync_batchnorm.py OUT_DIR` writes
OUT_DIR/<rank>.json.

Each rank normalises its own rows (a contiguous slice) of one global batch in training, takes the gradient of its loss with respect to its rows, gamma and
beta, and also computes, alone, the same layer on the whole global batch (the reference
synchronized statistics must equal). It runs the channels-last case (a (8, 3) batch) and a
4-D one normalised along axis 1 with a batch of one row on the last rank's side (the first as
Keras 2's `SyncBatchNormalization`, the second as Keras 3's `synchronized=True`), and two subclasses
that compute the global statistics in their own `_moments` (Keras 2's hook and Keras 3's).
"""

import json
import sys
from pathlib import Path

import numpy as np

import mindspore as ms
from migrate.runtime import collectives, spmd
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


class TpuBatchNormalization(mk.layers.BatchNormalization):
    """Keras 2's hook, as TPU programs override it (what TFD309 converts them to): shard moments
    averaged over the replicas, the variance from E[x^2] - E[x]^2."""

    def _moments(self, inputs, reduction_axes, keep_dims):
        mean, variance = super()._moments(inputs, reduction_axes, keep_dims=keep_dims)
        shards = spmd.get_tpu_context().number_of_shards
        group_mean = spmd.cross_replica_sum(mean) / shards
        group_mean_of_square = spmd.cross_replica_sum(variance + mean * mean) / shards
        return group_mean, group_mean_of_square - group_mean * group_mean


class MaskedHookBatchNormalization(mk.layers.BatchNormalization):
    """Keras 3's hook (inputs, mask), the same average."""

    def _moments(self, inputs, mask):
        mean, variance = super()._moments(inputs, mask)
        shards = spmd.get_tpu_context().number_of_shards
        group_mean = spmd.cross_replica_sum(mean) / shards
        return group_mean, spmd.cross_replica_sum(variance + mean * mean) / shards - group_mean * group_mean


results = {"size": size}
rng = np.random.default_rng(7)
cases = {
    # name: (global batch, axis, rows of each rank)
    "dense": (rng.normal(2.0, 3.0, size=(8, 3)).astype(np.float32), -1, [slice(0, 5), slice(5, 8)]),
    "images": (rng.normal(size=(3, 2, 2, 2)).astype(np.float32), 1, [slice(0, 2), slice(2, 3)]),
    # a subclass's own moments (equal shards: the mean of the shards' moments is the batch's)
    "keras2_hook": (rng.normal(1.0, 2.0, size=(8, 3)).astype(np.float32), -1, [slice(0, 4), slice(4, 8)]),
    "keras3_hook": (rng.normal(size=(4, 3, 2, 2)).astype(np.float32), 1, [slice(0, 2), slice(2, 4)]),
}
HOOKS = {"keras2_hook": TpuBatchNormalization, "keras3_hook": MaskedHookBatchNormalization}
for name, (x, axis, rows) in cases.items():
    w = rng.normal(size=x.shape).astype(np.float32)
    mine = rows[rank]
    if name in HOOKS:
        layer = HOOKS[name](axis=axis, momentum=0.5)
    else:
        layer = mk.layers.SyncBatchNormalization(axis=axis, momentum=0.5) if name == "dense" else \
            mk.layers.BatchNormalization(axis=axis, momentum=0.5, synchronized=True)  # (Keras 2's name, and Keras 3's)
    results[name] = step(layer, x[mine], w[mine])
    reference = mk.layers.BatchNormalization(axis=axis, momentum=0.5)  # the whole batch, in this process alone
    results[name + "_whole"] = step(reference, x, w)
    results[name + "_rows"] = [mine.start, mine.stop]

out.mkdir(parents=True, exist_ok=True)
(out / f"{rank}.json").write_text(json.dumps(results))
