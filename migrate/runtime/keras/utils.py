"""`tf.keras.utils`: seeding, one-hot labels, and small helpers."""

from __future__ import annotations

import random

import numpy as np

from . import initializers


def set_random_seed(seed: int) -> None:
    """Seed Python, numpy, MindSpore and the generator unseeded Keras initializers draw from.

    TF's own random streams cannot be reproduced: equal seeds give equal runs here, not
    TF's numbers.
    """
    import mindspore as ms

    random.seed(seed)
    np.random.seed(seed)
    ms.set_seed(seed)
    initializers.set_global_seed(seed)


def to_categorical(y, num_classes=None, dtype="float32"):
    y = np.asarray(y, dtype="int64")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.reshape(-1)
    num_classes = int(num_classes or y.max() + 1)
    out = np.zeros((y.shape[0], num_classes), dtype=dtype)
    out[np.arange(y.shape[0]), y] = 1
    return out.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    x = np.asarray(x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


# --- the registry of custom objects (Keras's serialization names) -----------------------

_CUSTOM_OBJECTS: dict[str, object] = {}
_NAMES: dict[object, str] = {}


def register_keras_serializable(package: str = "Custom", name: str | None = None):
    """The decorator Keras puts on custom layers, losses and functions: ``obj`` is
    registered as ``"package>name"`` (its own name by default) and returned unchanged.
    Registering a name again replaces the earlier object, as Keras 3 does."""

    def decorator(obj):
        registered = f"{package}>{name or obj.__name__}"
        _CUSTOM_OBJECTS[registered] = obj
        _NAMES[obj] = registered
        return obj

    return decorator


def get_registered_name(obj) -> str:
    """``"package>name"`` of a registered object, else its own name."""
    return _NAMES.get(obj, getattr(obj, "__name__", type(obj).__name__))


def get_registered_object(name: str, custom_objects=None, module_objects=None):
    """The object registered, or passed, under ``name`` (the registry first, then
    ``custom_objects``, then ``module_objects``, as Keras looks); None when there is none."""
    for table in (_CUSTOM_OBJECTS, custom_objects, module_objects):
        if table and name in table:
            return table[name]
    return None
