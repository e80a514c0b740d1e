"""Conversions between what Keras programs pass (numpy, Python numbers, lists) and MindSpore Tensors.

Keras converts float inputs to floatx (float32); integer inputs stay integers. MindSpore's
CPU kernels prefer int32 indices, so int64 arrays become int32 (values beyond 2**31 are
not expected for labels or token ids).
"""

from __future__ import annotations

import numbers

import numpy as np


def contiguous(array) -> np.ndarray:
    """C-contiguous array of the same shape (np.ascontiguousarray turns a 0-d array into 1-d)."""
    array = np.asarray(array)
    return array if array.flags.c_contiguous else array.copy(order="C")


def is_tensor(value) -> bool:
    from mindspore import Tensor

    return isinstance(value, Tensor)


def as_tensor(value, dtype=None):
    """A MindSpore Tensor for `value` (float64 → float32, int64 → int32, bool kept)."""
    import mindspore as ms

    if is_tensor(value):
        if dtype is not None and value.dtype != _ms_dtype(dtype):
            return value.astype(_ms_dtype(dtype))
        if dtype is None and value.dtype == ms.float64:
            return value.astype(ms.float32)
        return value
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):  # a tf.Tensor
        value = value.numpy()
    array = np.asarray(value)
    if dtype is not None:
        return ms.Tensor(contiguous(array), dtype=_ms_dtype(dtype))
    if array.dtype == np.float64 or array.dtype.kind == "O":
        array = array.astype(np.float32)
    elif array.dtype.kind in "iu" and array.dtype != np.int32:
        array = array.astype(np.int32)
    return ms.Tensor(contiguous(array))


def tensor_of(value):
    """`value` as a Tensor; a Tensor passes as it is, unasked (`as_tensor` asks its dtype, and asking a
    new Tensor waits for the work queued before it)."""
    return value if is_tensor(value) else as_tensor(value)


def as_float(value):
    """A float32 MindSpore Tensor (Keras casts y_true/y_pred to the loss dtype)."""
    import mindspore as ms

    tensor = as_tensor(value)
    return tensor if tensor.dtype == ms.float32 else tensor.astype(ms.float32)


def _ms_dtype(dtype):
    import mindspore as ms

    if isinstance(dtype, str):
        return {"float32": ms.float32, "float64": ms.float64, "float16": ms.float16, "int32": ms.int32,
                "int64": ms.int64, "bool": ms.bool_, "bfloat16": ms.bfloat16}[dtype]
    return dtype


def to_numpy(value) -> np.ndarray:
    if is_tensor(value):
        return value.asnumpy()
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        return np.asarray(value.numpy())
    return np.asarray(value)


def to_float(value) -> float:
    """A Python float from a scalar Tensor/array/number."""
    if isinstance(value, numbers.Number):
        return float(value)
    return float(np.asarray(to_numpy(value)).reshape(()))


def map_structure(fn, value):
    """Apply `fn` to the leaves of a nest of tuples/lists/dicts."""
    if isinstance(value, dict):
        return type(value)((k, map_structure(fn, v)) for k, v in value.items())
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(map_structure(fn, v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(map_structure(fn, v) for v in value)
    return fn(value)


def flatten(value) -> list:
    if isinstance(value, dict):
        return [leaf for k in value for leaf in flatten(value[k])]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in flatten(v)]
    return [value]
