"""`tf.distribute.experimental.partitioners`: how many shards a variable would be split into.

They compute the same partition lists as TF (checked against TF 2.21). With
`ParameterServerStrategy` in this runtime nothing is partitioned (every replica
holds whole variables), so passing one as `variable_partitioner` has no effect;
calling one directly gives TF's answer.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Partitioner", "FixedShardsPartitioner", "MinSizePartitioner", "MaxSizePartitioner"]


def _dims(shape) -> list[int]:
    dims = [getattr(d, "value", d) for d in (shape.as_list() if hasattr(shape, "as_list") else shape)]
    if any(d is None for d in dims):
        raise ValueError(f"shape is not fully defined: {shape}")
    return [int(d) for d in dims]


def _element_bytes(dtype, bytes_per_string: int) -> int:
    name = getattr(dtype, "name", None) or str(dtype)
    name = name.lower().replace("mindspore.", "")
    if name in ("string", "str", "object"):
        return bytes_per_string
    if name == "bfloat16":
        return 2
    return int(np.dtype(name).itemsize)


class Partitioner:
    """Base class: ``partitioner(shape, dtype, axis=0)`` -> number of shards along each axis."""

    def __call__(self, shape, dtype, axis=0):
        raise NotImplementedError


class FixedShardsPartitioner(Partitioner):
    """A fixed number of shards along `axis` (fewer if the axis is shorter)."""

    def __init__(self, num_shards):
        if num_shards < 1:
            raise ValueError(f"`num_shards` must be >= 1, got {num_shards}")
        self._num_shards = num_shards

    def __call__(self, shape, dtype, axis=0):
        dims = _dims(shape)
        result = [1] * len(dims)
        result[axis] = min(self._num_shards, dims[axis])
        return result


class MinSizePartitioner(Partitioner):
    """As many shards as keep each at least `min_shard_bytes`, at most `max_shards`."""

    def __init__(self, min_shard_bytes=256 << 10, max_shards=1, bytes_per_string=16):
        if min_shard_bytes < 1:
            raise ValueError(f"`min_shard_bytes` must be positive, got {min_shard_bytes}")
        if max_shards < 1:
            raise ValueError(f"`max_shards` must be positive, got {max_shards}")
        if bytes_per_string < 1:
            raise ValueError(f"`bytes_per_string` must be positive, got {bytes_per_string}")
        self._min, self._max, self._string = min_shard_bytes, max_shards, bytes_per_string

    def __call__(self, shape, dtype, axis=0):
        dims = _dims(shape)
        if axis >= len(dims):
            raise ValueError(f"Cannot partition variable along axis {axis} when shape is only {dims}")
        total = int(np.prod(dims, dtype=np.int64)) * _element_bytes(dtype, self._string)
        result = [1] * len(dims)
        result[axis] = max(1, min(dims[axis], self._max, int(math.ceil(total / self._min))))
        return result


class MaxSizePartitioner(Partitioner):
    """As few shards as keep each at most `max_shard_bytes` (and at most `max_shards`)."""

    def __init__(self, max_shard_bytes, max_shards=None, bytes_per_string=16):
        if max_shard_bytes < 1 or bytes_per_string < 1:
            raise ValueError("Both max_shard_bytes and bytes_per_string must be positive.")
        if max_shards and max_shards < 1:
            raise ValueError("max_shards must be positive.")
        self._max_bytes, self._max, self._string = max_shard_bytes, max_shards, bytes_per_string

    def __call__(self, shape, dtype, axis=0):
        dims = _dims(shape)
        result = [1] * len(dims)
        bytes_per_slice = 1.0 * (int(np.prod(dims, dtype=np.int64)) / dims[axis]) * _element_bytes(dtype, self._string)
        slices_per_shard = max(1, math.floor(self._max_bytes / bytes_per_slice))
        shards = int(math.ceil(1.0 * dims[axis] / slices_per_shard))
        if self._max:
            shards = min(self._max, shards)
        result[axis] = shards
        return result
