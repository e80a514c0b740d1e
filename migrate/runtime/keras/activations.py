"""`tf.keras.activations` on MindSpore ops, by function or by name.

`softmax` and `sigmoid` remember their input (`_keras_logits` on the output Tensor) so
that crossentropy losses called with probabilities compute from the logits, as Keras 3
does with the TensorFlow backend (there the logits are found from the graph).
`gelu` is the exact erf form (Keras's default `approximate=False`).
"""

from __future__ import annotations

import math

from ._tensors import tensor_of


def _ops():
    from mindspore import ops

    return ops


def _remember_logits(output, logits):
    try:
        output._keras_logits = logits
    except AttributeError:  # a Tensor type that refuses attributes: losses then use the clipped path
        pass
    return output


def linear(x):
    return tensor_of(x)


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """Keras's relu: max(x, 0), or with a leak below `threshold`, capped at `max_value`."""
    ops = _ops()
    x = tensor_of(x)
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return ops.relu(x)
    negative_part = ops.relu(threshold - x) if negative_slope else None
    out = x * (x > threshold).astype(x.dtype) if threshold else ops.relu(x)
    if max_value is not None:
        out = ops.clip_by_value(out, 0.0, float(max_value))
    if negative_part is not None:
        out = out - negative_slope * negative_part
    return out


def relu6(x):
    ops = _ops()
    x = tensor_of(x)
    # (TF's gradient: 1 strictly between 0 and 6, 0 at both kinks; a clip's splits at its bounds)
    return ops.where((x > 0) & (x < 6.0), x, ops.stop_gradient(ops.clip_by_value(x, 0.0, 6.0)))


def sigmoid(x):
    x = tensor_of(x)
    return _remember_logits(_ops().sigmoid(x), x)


def softmax(x, axis=-1):
    x = tensor_of(x)
    return _remember_logits(_ops().softmax(x, axis=axis), x)


def log_softmax(x, axis=-1):
    return _ops().log_softmax(tensor_of(x), axis=axis)


def tanh(x):
    return _ops().tanh(tensor_of(x))


def gelu(x, approximate=False):
    ops = _ops()
    x = tensor_of(x)
    if approximate:
        return 0.5 * x * (1.0 + ops.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + ops.erf(x / math.sqrt(2.0)))


def elu(x, alpha=1.0):
    ops = _ops()
    x = tensor_of(x)
    # (TF's gradient at 0 is alpha's: the exponential side; a minimum would split it in half)
    return ops.where(x > 0, x, alpha * (ops.exp(ops.where(x > 0, ops.zeros_like(x), x)) - 1.0))


def selu(x):
    ops = _ops()
    x = tensor_of(x)
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    # (TF's gradient at 0 is `scale`: the linear side)
    return scale * ops.where(x >= 0, x, alpha * (ops.exp(ops.where(x >= 0, ops.zeros_like(x), x)) - 1.0))


def softplus(x):
    return _ops().softplus(tensor_of(x))


def softsign(x):
    x = tensor_of(x)
    return x / (1.0 + _ops().abs(x))


def swish(x):
    x = tensor_of(x)
    return x * _ops().sigmoid(x)


silu = swish


def exponential(x):
    return _ops().exp(tensor_of(x))


def hard_sigmoid(x):
    ops = _ops()
    x = tensor_of(x)
    y = x / 6.0 + 0.5
    # (TF's `relu6(x + 3) / 6`: gradient 1/6 strictly between -3 and 3, 0 at the kinks)
    return ops.where((x > -3.0) & (x < 3.0), y, ops.stop_gradient(ops.clip_by_value(y, 0.0, 1.0)))


def leaky_relu(x, negative_slope=0.2):
    x = tensor_of(x)
    return _ops().where(x > 0, x, negative_slope * x)


def mish(x):
    ops = _ops()
    x = tensor_of(x)
    return x * ops.tanh(ops.softplus(x))


_BY_NAME = {
    "linear": linear, "relu": relu, "relu6": relu6, "sigmoid": sigmoid, "softmax": softmax,
    "log_softmax": log_softmax, "tanh": tanh, "gelu": gelu, "elu": elu, "selu": selu, "softplus": softplus,
    "softsign": softsign, "swish": swish, "silu": silu, "exponential": exponential,
    "hard_sigmoid": hard_sigmoid, "leaky_relu": leaky_relu, "mish": mish,
}


def get(identifier):
    """An activation function from a name, a function, or None (linear)."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        try:
            return _BY_NAME[identifier.lower()]
        except KeyError:
            raise ValueError(f"Unknown activation function: {identifier!r}") from None
    if isinstance(identifier, dict):
        from .serialization import deserialize_value

        return deserialize_value(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret activation function identifier: {identifier!r}")


def builtin_name(activation) -> str | None:
    """The name of a built-in activation function, else None."""
    for name, fn in _BY_NAME.items():
        if fn is activation:
            return name
    return None


def serialize(activation):
    """A built-in activation's name; another function as Keras 3 writes a function (module, name,
    registered name), which `get` reads back."""
    name = builtin_name(activation)
    if name is not None:
        return name
    from .serialization import serialize_value

    return serialize_value(activation)
