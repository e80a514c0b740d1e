"""`tf.keras.backend`: the constants the numbers depend on, and the legacy helpers on values.

Keras clips probabilities to [epsilon, 1 - epsilon] with epsilon 1e-7 and computes
in float32 (floatx); both are the same here. The image layout is channels_last. The
legacy helpers on tensors that are one MindSpore op each are converted to that op by the
rules (TFK191, TFK192, TFK211); the ones here need Keras's own behaviour, the legacy
crossentropies (TFK210) among them.
"""

from __future__ import annotations

_EPSILON = 1e-7
_FLOATX = "float32"


def epsilon() -> float:
    """The fuzz factor Keras uses to clip probabilities (1e-7 by default)."""
    return _EPSILON


def set_epsilon(value: float) -> None:
    global _EPSILON
    _EPSILON = float(value)


def floatx() -> str:
    """The default float dtype: "float32"."""
    return _FLOATX


def clear_session() -> None:
    """Reset layer-name counters (Keras's `clear_session`); weights already made are kept."""
    from .layers import base

    base.reset_name_counters()
    base._learning_phase[0] = None  # (Keras 2 forgets the learning phase too)


_IMAGE_DATA_FORMAT = "channels_last"


def set_learning_phase(value) -> None:
    """Keras 2's `set_learning_phase(0 or 1)`: the `training` of every model or layer called without
    one (1: dropout drops and batch normalization normalizes with the batch's statistics), until
    changed; an explicit `training=` and `fit`/`evaluate`/`predict` still decide for themselves."""
    import warnings

    from .layers import base

    warnings.warn("`tf.keras.backend.set_learning_phase` is deprecated and will be removed after 2020-10-11. To "
                  "update it, simply pass a True/False value to the `training` argument of the `__call__` method of "
                  "your layer or model.", stacklevel=2)
    if value not in {0, 1}:
        raise ValueError("Expected learning phase to be 0 or 1.")
    base._learning_phase[0] = bool(value)


def learning_phase() -> int:
    """Keras 2's `learning_phase()`: the phase `set_learning_phase` set, 0 while unset."""
    from .layers import base

    return int(bool(base._learning_phase[0]))


def image_data_format() -> str:
    """Keras's image layout: ``"channels_last"`` (NHWC), which ``mk``'s layers keep."""
    return _IMAGE_DATA_FORMAT


def set_image_data_format(data_format: str) -> None:
    """Keras's setter; ``mk``'s layers compute in NHWC, so only ``"channels_last"`` is taken."""
    global _IMAGE_DATA_FORMAT
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be one of {{'channels_first', 'channels_last'}}. "
                         f"Received: data_format={data_format}")
    if data_format != "channels_last":
        raise NotImplementedError("migrate.runtime.keras's layers compute channels_last (NHWC), as Keras's "
                                  "default; a channels_first program needs its layers given data_format itself")
    _IMAGE_DATA_FORMAT = data_format


def get_value(x):
    """Keras's ``get_value``: a tensor's or variable's value as NumPy; anything else as it is."""
    return x.asnumpy() if hasattr(x, "asnumpy") else x


def set_value(x, value) -> None:
    """Keras's ``set_value``: assign NumPy ``value`` to the variable (Parameter) ``x``."""
    import mindspore as ms
    import numpy as np

    x.set_data(ms.Tensor(np.asarray(value, dtype=x.asnumpy().dtype)))


def count_params(x) -> int:
    """Keras's ``count_params``: the number of elements of ``x``."""
    import math

    return math.prod(int(d) for d in x.shape)  # (Keras's too fails on an unknown dimension)


def int_shape(x):
    """Keras's ``int_shape``: the shape as a tuple of ints, None where unknown (a symbolic input's batch)."""
    return tuple(None if d is None else int(d) for d in x.shape)


def mean(x, axis=None, keepdims=False):
    """Keras's ``mean``: a boolean tensor is averaged as float32 (floatx), as Keras casts it."""
    import mindspore as ms
    from mindspore import ops

    if not isinstance(x, ms.Tensor):
        x = ms.Tensor(x)
    if x.dtype == ms.bool_:
        x = x.astype(ms.float32)
    return ops.mean(x, axis=axis, keep_dims=keepdims)


def sqrt(x):
    """Keras's ``sqrt``: negative entries count as 0, NaN stays NaN (``tf.maximum`` keeps NaN)."""
    from mindspore import ops

    return ops.sqrt(ops.where(x < 0, ops.zeros_like(x), x))


def cast(x, dtype):
    """`K.cast`: `x` as `dtype`, a name (`"float32"`, `K.floatx()`) or a MindSpore dtype."""
    from mindspore import ops

    from ._tensors import _ms_dtype, as_tensor

    return ops.cast(as_tensor(x), _ms_dtype(dtype))


# -- the legacy backend's crossentropies (tf.keras.backend.*: keras.src.legacy.backend) ----------
# They are not `mk.losses`' functions: the arguments come in another order (`axis` before
# `ignore_class`), binary crossentropy is elementwise (no mean) with epsilon added inside both
# logarithms, and a prediction's `_keras_logits` is not looked at.

def _value(x):
    """``tf.convert_to_tensor``'s dtypes: a tensor or NumPy array keeps its own, Python numbers and
    lists become float32 or int32."""
    import mindspore as ms
    import numpy as np

    from ._tensors import as_tensor

    if isinstance(x, ms.Tensor):
        return x
    return ms.Tensor(x) if isinstance(x, np.ndarray) else as_tensor(x)


def _clipped(output):
    from mindspore import ops

    return ops.clip_by_value(output, _EPSILON, 1.0 - _EPSILON)


def _log_softmax(logits, axis):
    from .losses import _log_softmax as log_softmax  # (the losses import this module)

    return log_softmax(logits, axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1, ignore_class=None):
    """Keras's legacy ``sparse_categorical_crossentropy``: ``-log softmax(output)[target]``, probabilities
    clipped to [epsilon, 1 - epsilon] and taken as logits (so renormalised); the class axis moved
    last, targets of another rank flattened (a ``[batch, 1]`` target gives ``[batch]``), and
    ``ignore_class`` positions 0 with the valid ones as the result's ``_keras_mask``."""
    import mindspore as ms
    from mindspore import ops

    target, output = _value(target).astype(ms.int64), _value(output)
    if not from_logits:
        output = ops.log(_clipped(output))
    rank = output.ndim
    axis %= rank
    if axis != rank - 1:
        output = ops.transpose(output, (*range(axis), *range(axis + 1, rank), axis))
    shape = tuple(output.shape)
    reshaped = target.ndim != rank - 1
    if reshaped:
        target, output = target.reshape(-1), output.reshape((-1, shape[-1]))
    valid = None
    if ignore_class is not None:
        valid = target != int(ignore_class)
        target = ops.where(valid, target, ops.zeros_like(target))
    # (the target's entry of log_softmax: TF's value and its gradient, softmax - one_hot; the losses'
    # log_softmax, as ops.log_softmax on the CPU is off by some 1e-6)
    picked = ops.gather_elements(_log_softmax(output, -1), -1, ops.expand_dims(target, -1))
    result = -ops.squeeze(picked, -1)
    if valid is not None:
        result = ops.where(valid, result, ops.zeros_like(result)).reshape(shape[:-1])
        try:
            result._keras_mask = valid.reshape(shape[:-1])
        except AttributeError:
            pass
        return result
    return result.reshape(shape[:-1]) if reshaped and rank >= 3 else result


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Keras's legacy ``categorical_crossentropy``: ``-sum(target * log p)`` over ``axis``, ``p`` the output
    renormalised to sum 1 and clipped to [epsilon, 1 - epsilon], or ``log_softmax`` of logits."""
    from mindspore import ops

    target, output = _value(target), _value(output)
    if tuple(target.shape) != tuple(output.shape):
        raise ValueError(f"Shapes {tuple(target.shape)} and {tuple(output.shape)} are incompatible")
    target = target.astype(output.dtype)
    if from_logits:
        return -ops.sum(target * _log_softmax(output, axis), axis)
    output = _clipped(output / ops.sum(output, axis, True))
    return -ops.sum(target * ops.log(output), axis)


def binary_crossentropy(target, output, from_logits=False):
    """Keras's legacy ``binary_crossentropy``, elementwise: ``-(t log(p + eps) + (1 - t) log(1 - p + eps))``
    with ``p`` clipped to [epsilon, 1 - epsilon], or TF's ``sigmoid_cross_entropy_with_logits``."""
    from mindspore import ops

    target, output = _value(target), _value(output)
    target = target.astype(output.dtype)
    if from_logits:
        return ops.binary_cross_entropy_with_logits(output, target, reduction="none")
    output = _clipped(output)
    bce = target * ops.log(output + _EPSILON)
    bce = bce + (1 - target) * ops.log(1 - output + _EPSILON)
    return -bce
