"""Values the runtime accepts and how they cross the process boundary.

A value is a MindSpore Tensor, a numpy array or scalar, a Python number, a
``tf.Tensor`` (only when TensorFlow is already loaded by the program), or a
nest of these in tuples, lists, namedtuples and dicts. Collectives work on
numpy arrays and MindSpore Tensors; every result is converted back to the
kind of value that came in, so a ``tf.Tensor`` comes back as a ``tf.Tensor``.

TensorFlow is never imported here unless a value's type lives in a
``tensorflow`` module: converted programs usually no longer load it.
"""

from __future__ import annotations

import collections.abc
import numbers
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


def _is_tf_tensor(value) -> bool:
    module = type(value).__module__ or ""
    return module.startswith("tensorflow") and hasattr(value, "numpy")


def _is_ms_tensor(value) -> bool:
    module = type(value).__module__ or ""
    if not module.startswith("mindspore"):
        return False
    from mindspore import Tensor

    return isinstance(value, Tensor)


def value_kind(value) -> str:
    """Name the kind of a leaf value: "ms", "tf", "numpy", "python"; raise TypeError otherwise."""
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        return "numpy"
    if isinstance(value, (bool, numbers.Number)) and not isinstance(value, complex):
        return "python"
    if _is_ms_tensor(value):
        return "ms"
    if _is_tf_tensor(value):
        return "tf"
    raise TypeError(
        f"migrate.runtime cannot reduce or exchange a value of type {type(value).__module__}."
        f"{type(value).__qualname__}: use a MindSpore Tensor, a numpy array, a Python number, "
        "a tf.Tensor, or tuples/lists/dicts of these"
    )


def host_array(value) -> np.ndarray:
    """``value`` as a NumPy array, as TF's tests' ``_GetNdArray`` makes one (Python floats stay
    float64; a ragged list becomes an array of objects): a MindSpore tensor or Parameter, a
    runtime variable or a tf.Tensor (``numpy()``), an array, a number or a list."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "asnumpy"):  # a MindSpore Tensor or Parameter
        return value.asnumpy()
    if hasattr(value, "numpy") and callable(value.numpy):  # a runtime variable, a tf.Tensor
        return np.asarray(value.numpy())
    try:
        return np.array(value)
    except ValueError:
        if any(isinstance(x, collections.abc.Sequence) for x in value):
            return np.array(value, dtype=object)
        raise


def to_numpy(value) -> np.ndarray:
    """Host copy (or view) of a leaf value as a numpy array.

    Python floats become float32 and ints int32, as ``tf.constant`` would make them.
    """
    kind = value_kind(value)
    if kind == "numpy":
        return np.asarray(value)
    if kind == "python":
        if isinstance(value, bool):
            return np.asarray(value)
        if isinstance(value, numbers.Integral):
            return np.asarray(value, dtype=np.int32)
        return np.asarray(value, dtype=np.float32)
    if kind == "ms":
        return _ms_to_numpy(value)
    return np.asarray(value.numpy())


def contiguous(array) -> np.ndarray:
    """C-contiguous array with the same shape (np.ascontiguousarray turns 0-d into 1-d)."""
    array = np.asarray(array)
    return array if array.flags.c_contiguous else array.copy(order="C")


def _ms_to_numpy(tensor) -> np.ndarray:
    import mindspore as ms

    if tensor.dtype == ms.bfloat16:  # numpy has no bfloat16
        return tensor.float().asnumpy()
    return tensor.asnumpy()


def from_numpy(array: np.ndarray, like) -> Any:
    """Convert `array` back to the kind of value `like` was."""
    kind = value_kind(like)
    if kind == "numpy":
        return array if isinstance(like, np.ndarray) else array[()] if array.ndim == 0 else array
    if kind == "python":
        return array.item() if array.ndim == 0 else array
    if kind == "ms":
        import mindspore as ms

        out = ms.Tensor(contiguous(array))
        if like.dtype == ms.bfloat16 and out.dtype != ms.bfloat16:
            out = out.astype(ms.bfloat16)
        return out
    import tensorflow as tf  # only reached when the program already loaded TensorFlow

    return tf.convert_to_tensor(array)


# --- nests ------------------------------------------------------------------------------

_INT32 = np.iinfo(np.int32)


def tf_inferred(value) -> np.ndarray:
    """A Python number, bool or (nested) list as NumPy with the dtype TF infers for it: a
    float is float32, an int int32 (int64 when a value does not fit), a bool bool. NumPy
    arrays and scalars keep theirs."""
    array = np.asarray(value)
    if isinstance(value, (np.ndarray, np.generic)):
        return array
    if array.dtype == np.float64:
        return array.astype(np.float32)
    if array.dtype.kind == "i":
        fits = array.size == 0 or (array.min() >= _INT32.min and array.max() <= _INT32.max)
        return array.astype(np.int32 if fits else np.int64)
    return array


def numpy_dtype(dtype):
    """A dtype given as numpy, a name, or a MindSpore type (Float32, Int64, Bool, ...) as numpy's; None if absent."""
    if dtype is None:
        return None
    try:
        return np.dtype(dtype)
    except TypeError:
        pass
    try:  # a MindSpore type: its name, lower-cased, is numpy's
        return np.dtype(str(dtype).lower())
    except TypeError:
        from mindspore import dtype_to_nptype

        return np.dtype(dtype_to_nptype(dtype))


def is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def flatten(structure) -> list:
    """Leaves of a nest in a fixed order (dict keys sorted, as ``tf.nest`` does)."""
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_as(structure, leaves: list):
    """Rebuild `structure` with `leaves` in `flatten` order."""
    iterator = iter(leaves)

    def build(node):
        if isinstance(node, dict):
            built = {key: build(node[key]) for key in sorted(node)}
            return type(node)((key, built[key]) for key in node) if type(node) is not dict else {
                key: built[key] for key in node}
        if is_namedtuple(node):
            return type(node)(*[build(item) for item in node])
        if isinstance(node, (list, tuple)):
            return type(node)(build(item) for item in node)
        return next(iterator)

    return build(structure)


def map_structure(fn: Callable, structure):
    return pack_as(structure, [fn(leaf) for leaf in flatten(structure)])


def structure_signature(structure) -> str:
    """Describe the shape of a nest without its leaves, for cross-rank agreement."""
    if isinstance(structure, dict):
        return "{" + ",".join(f"{key!r}:{structure_signature(structure[key])}" for key in sorted(structure)) + "}"
    if isinstance(structure, (list, tuple)):
        open_, close = ("[", "]") if isinstance(structure, list) else ("(", ")")
        return open_ + ",".join(structure_signature(item) for item in structure) + close
    return "*"


@dataclass(frozen=True)
class LeafSpec:
    """dtype and shape of one leaf, as every rank must agree on them."""

    dtype: str
    shape: tuple

    def __str__(self) -> str:
        return f"{self.dtype}{list(self.shape)}"


def leaf_spec(value) -> LeafSpec:
    """dtype/shape of a leaf without copying device memory."""
    kind = value_kind(value)
    if kind == "ms":
        return LeafSpec(str(value.dtype).lower(), tuple(value.shape))
    if kind == "tf":
        return LeafSpec(value.dtype.name, tuple(value.shape))
    array = to_numpy(value)
    return LeafSpec(str(array.dtype), tuple(array.shape))
