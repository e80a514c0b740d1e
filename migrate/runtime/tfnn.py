"""``tf.nn``'s convolutions, pooling, moments and normalisation on MindSpore, in TF's layouts.

TF's ``tf.nn.conv2d``, ``depthwise_conv2d`` and the pools take channels-last input (``NHWC``,
``NWC``) and filters ``(kh, kw, in, out)``; MindSpore's ``ops.conv2d`` and pooling primitives
take ``NCHW`` and ``(out, in, kh, kw)``. These functions take TF's arguments (``strides`` and
``ksize`` as one int, one per spatial axis, or one per axis of the input; ``padding``
``"SAME"``, ``"VALID"`` or explicit pairs; ``data_format``; ``dilations``) and run MindSpore's
kernels between transposes, so a program written against ``tf.nn`` computes TF's numbers and
differentiates through MindSpore's autograd:

- "SAME" pads as TF does (``total = max((ceil(n / s) - 1) * s + (k - 1) * d + 1 - n, 0)``,
  the odd pixel after), with ``-inf``-like values for a max pool, and an average pool divides
  by the number of real (unpadded) values in each window, as TF's does (MindSpore's own
  "same" average would count the padding at the borders);
- ``depthwise_conv2d``'s filter ``(kh, kw, in, multiplier)`` is a grouped convolution with one
  group per input channel; output channel ``c * multiplier + m`` as TF's;
- ``moments`` is TF's two-pass mean and variance (the variance about the mean with the mean's
  gradient stopped), ``l2_normalize`` is ``x * rsqrt(max(sum(x**2), epsilon))``.

The Keras layers of ``migrate.runtime.keras`` (Conv1D/Conv2D/DepthwiseConv2D, the pooling
layers) run on the same NCHW helpers.
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["avg_pool", "avg_pool1d", "avg_pool2d", "conv1d", "conv2d", "depthwise_conv2d", "l2_normalize",
           "max_pool", "max_pool1d", "max_pool2d", "moments"]


def _ops():
    from mindspore import ops

    return ops


def _tensor(value):
    import mindspore as ms

    return value if isinstance(value, ms.Tensor) else ms.Tensor(np.asarray(value))


def same_padding(size: int, kernel: int, stride: int, dilation: int = 1) -> tuple[int, int]:
    """TF's "same" padding of one axis: (before, after), the odd one after."""
    effective = (kernel - 1) * dilation + 1
    total = max((math.ceil(size / stride) - 1) * stride + effective - size, 0)
    return total // 2, total - total // 2


def conv_nchw(x, weight, strides, dilations, padding, groups: int = 1):
    """A 2-D convolution of ``x`` (N, C, H, W) by ``weight`` (out, in / groups, kh, kw).

    ``padding``: "same" (TF's rule), "valid", or ((top, bottom), (left, right))."""
    ops = _ops()
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str) and padding.lower() == "same":
        padding = tuple(same_padding(x.shape[2 + i], kernel[i], strides[i], dilations[i]) for i in range(2))
    elif isinstance(padding, str):
        padding = ((0, 0), (0, 0))
    if all(before == after for before, after in padding) and any(before for before, _ in padding):
        # Even padding: the convolution pads, with no padded copy of the input to make and to
        # differentiate through.
        return ops.conv2d(x, weight, None, stride=strides, pad_mode="pad", padding=(padding[0][0], padding[1][0]),
                          dilation=dilations, groups=groups)
    if any(p for pair in padding for p in pair):
        x = ops.pad(x, (padding[1][0], padding[1][1], padding[0][0], padding[0][1]))
    return ops.conv2d(x, weight, None, stride=strides, pad_mode="valid", padding=0, dilation=dilations, groups=groups)


@functools.lru_cache(maxsize=None)
def _pool_primitive(mode: str, kernel: tuple, strides: tuple):
    ops = _ops()
    cls = ops.MaxPool if mode == "max" else ops.AvgPool
    return cls(kernel_size=kernel, strides=strides, pad_mode="VALID", data_format="NCHW")


def same_pads(sizes, kernel, strides, dilations=None) -> tuple[int, ...]:
    """TF's "same" padding of the spatial axes of these ``sizes``, as ``ops.pad`` takes it (the last
    axis's (before, after) first)."""
    dilations = dilations or (1,) * len(sizes)
    pairs = [same_padding(int(n), k, s, d) for n, k, s, d in zip(sizes, kernel, strides, dilations)]
    return tuple(p for pair in reversed(pairs) for p in pair)


def pool_same(x, pool, mode: str, kernel: tuple, strides: tuple):
    """``pool`` (a max or average pool of ``mode`` over the axes after the channels) of ``x`` "same"
    padded as TF pads: with -inf for max; an average over the real elements of each window only."""
    ops = _ops()
    padding = same_pads(x.shape[2:], kernel, strides)
    if not any(padding):
        return pool(x)
    if mode == "max":
        return pool(ops.pad(x, padding, value=float(np.finfo(np.float32).min)))
    return pool(ops.pad(x, padding)) / pool(ops.pad(ops.ones_like(x), padding))


def pool_nchw(x, mode: str, kernel: tuple, strides: tuple, same: bool):
    """A 2-D max (``mode="max"``) or average pool of ``x`` (N, C, H, W), "same" padded as TF pads."""
    pool = _pool_primitive(mode, tuple(kernel), tuple(strides))
    return pool_same(x, pool, mode, kernel, strides) if same else pool(x)


def _spatial(value, n: int, channels_last: bool, what: str) -> tuple[int, ...]:
    """TF's ``strides``/``ksize``/``dilations``: an int, one per spatial axis, or one per axis of the
    input (the batch's and the channels' being 1)."""
    if value is None:
        return (1,) * n
    if hasattr(value, "asnumpy"):
        value = value.asnumpy().tolist()
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    value = [int(v) for v in value]
    if len(value) == 1:
        return (value[0],) * n
    if len(value) == n:
        return tuple(value)
    if len(value) == n + 2:
        outer = (value[0], value[-1]) if channels_last else (value[0], value[1])
        if outer != (1, 1):
            raise ValueError(f"`{what}` must be 1 on the batch and channel axes; got {value}")
        return tuple(value[1:-1]) if channels_last else tuple(value[2:])
    raise ValueError(f"`{what}` must be an int or a list of 1, {n} or {n + 2} ints; got {value}")


def _layout(data_format, rank: int) -> bool:
    """Whether ``data_format`` (None: TF's default) puts the channels last, for an input of ``rank``."""
    if data_format is None:
        return True
    if not isinstance(data_format, str) or data_format.upper() not in ("NWC", "NCW", "NHWC", "NCHW", "N...C", "NC..."):
        raise ValueError(f"data_format {data_format!r} is not one TF takes for a {rank}-D input")
    return data_format.upper() in ("NWC", "NHWC", "N...C")


def _padding(padding, channels_last: bool, n: int):
    """"same", "valid" or explicit ((before, after), ...) of the spatial axes, from TF's ``padding``."""
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "VALID"):
            raise ValueError(f"padding must be 'SAME', 'VALID' or a list of pairs; got {padding!r}")
        return padding.lower()
    pairs = [tuple(int(p) for p in pair) for pair in padding]
    if len(pairs) == n + 2:
        outer = (pairs[0], pairs[-1]) if channels_last else (pairs[0], pairs[1])
        if outer != ((0, 0), (0, 0)):
            raise ValueError(f"explicit padding of the batch and channel axes must be 0; got {padding}")
        pairs = pairs[1:-1] if channels_last else pairs[2:]
    if len(pairs) != n:
        raise ValueError(f"explicit padding needs a pair per axis of the input; got {padding}")
    return tuple(pairs)


def _to_nchw(x, channels_last: bool, one_d: bool):
    if one_d:  # (N, W, C) or (N, C, W) -> (N, C, 1, W)
        x = x.transpose(0, 2, 1) if channels_last else x
        return x.reshape(x.shape[0], x.shape[1], 1, x.shape[2])
    return x.transpose(0, 3, 1, 2) if channels_last else x


def _from_nchw(y, channels_last: bool, one_d: bool):
    if one_d:
        y = y.reshape(y.shape[0], y.shape[1], y.shape[3])
        return y.transpose(0, 2, 1) if channels_last else y
    return y.transpose(0, 2, 3, 1) if channels_last else y


def _convolve(input, weight_of, strides, padding, data_format, dilations, one_d: bool, groups_of=None):  # noqa: A002
    x = _tensor(input)
    channels_last = _layout(data_format, x.ndim)
    n = 1 if one_d else 2
    strides = _spatial(strides, n, channels_last, "strides")
    dilations = _spatial(dilations, n, channels_last, "dilations")
    padding = _padding(padding, channels_last, n)
    if one_d:
        strides, dilations = (1, *strides), (1, *dilations)
        padding = padding if isinstance(padding, str) else ((0, 0), *padding)
    x = _to_nchw(x, channels_last, one_d)
    weight, groups = weight_of(x.shape[1])
    return _from_nchw(conv_nchw(x, weight, strides, dilations, padding, groups), channels_last, one_d)


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):  # noqa: A002
    """``tf.nn.conv2d``: ``filters`` (kh, kw, in, out); ``in`` may divide the input's channels (groups)."""
    kernel = _tensor(filters)

    def weight(channels):
        return kernel.transpose(3, 2, 0, 1), channels // kernel.shape[2]

    return _convolve(input, weight, strides, padding, data_format, dilations, one_d=False)


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):  # noqa: A002
    """``tf.nn.conv1d``: ``filters`` (k, in, out) over (N, W, C)."""
    kernel = _tensor(filters)

    def weight(channels):
        return kernel.transpose(2, 1, 0).reshape(kernel.shape[2], kernel.shape[1], 1, kernel.shape[0]), \
            channels // kernel.shape[1]

    return _convolve(input, weight, stride, padding, data_format, dilations, one_d=True)


def depthwise_weight(kernel):
    """A depthwise filter (kh, kw, in, multiplier) as MindSpore's grouped weight (in * multiplier, 1, kh, kw)."""
    kh, kw, channels, multiplier = kernel.shape
    return kernel.reshape(kh, kw, channels * multiplier).transpose(2, 0, 1).reshape(channels * multiplier, 1, kh, kw)


def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None, name=None):  # noqa: A002
    """``tf.nn.depthwise_conv2d``: each input channel convolved with its own ``multiplier`` filters."""
    kernel = _tensor(filter)

    def weight(channels):
        return depthwise_weight(kernel), channels

    return _convolve(input, weight, strides, padding, data_format, dilations, one_d=False)


def _pool(mode, input, ksize, strides, padding, data_format, rank=None):  # noqa: A002
    x = _tensor(input)
    if rank is not None and x.ndim != rank:
        raise ValueError(f"a {rank - 2}-D pool takes a {rank}-D input; got shape {tuple(x.shape)}")
    if x.ndim not in (3, 4):
        raise NotImplementedError(f"pooling a {x.ndim}-D input: only 1-D and 2-D pools (3-D and 4-D inputs) are converted")
    one_d = x.ndim == 3
    channels_last = _layout(data_format, x.ndim)
    n = 1 if one_d else 2
    kernel = _spatial(ksize, n, channels_last, "ksize")
    strides = _spatial(strides, n, channels_last, "strides")
    padding = _padding(padding, channels_last, n)
    if not isinstance(padding, str):
        raise ValueError("pooling takes padding 'SAME' or 'VALID'")
    if one_d:
        kernel, strides = (1, *kernel), (1, *strides)
    y = pool_nchw(_to_nchw(x, channels_last, one_d), mode, kernel, strides, padding == "same")
    return _from_nchw(y, channels_last, one_d)


def max_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """``tf.nn.max_pool``: a 1-D or 2-D max pool, by the input's rank."""
    return _pool("max", input, ksize, strides, padding, data_format)


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """``tf.nn.avg_pool``: a 1-D or 2-D average pool, by the input's rank ("SAME" averages real values)."""
    return _pool("avg", input, ksize, strides, padding, data_format)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return _pool("max", input, ksize, strides, padding, data_format, rank=4)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return _pool("avg", input, ksize, strides, padding, data_format, rank=4)


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    return _pool("max", input, ksize, strides, padding, data_format, rank=3)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    return _pool("avg", input, ksize, strides, padding, data_format, rank=3)


def _axes(axis, ndim: int):
    if axis is None:
        return tuple(range(ndim))
    if hasattr(axis, "asnumpy"):
        axis = axis.asnumpy().tolist()
    return (int(axis),) if isinstance(axis, (int, np.integer)) else tuple(int(a) for a in axis)


def moments(x, axes, shift=None, keepdims=False, name=None):
    """``tf.nn.moments``: (mean, variance) over ``axes``, TF's two passes (float16 computed in float32)."""
    import mindspore as ms

    ops = _ops()
    x = _tensor(x)
    y = x.astype(ms.float32) if x.dtype == ms.float16 else x
    axes = _axes(axes, x.ndim)
    mean = ops.mean(y, axes, keep_dims=True)
    variance = ops.mean(ops.square(y - ops.stop_gradient(mean)), axes, keep_dims=True)
    if not keepdims:
        mean, variance = ops.squeeze(mean, axes), ops.squeeze(variance, axes)
    if x.dtype == ms.float16:
        mean, variance = mean.astype(ms.float16), variance.astype(ms.float16)
    return mean, variance


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """``tf.math.l2_normalize``: ``x * rsqrt(max(sum(x**2, axis), epsilon))``."""
    ops = _ops()
    x = _tensor(x)
    axis = dim if axis is None else axis
    square_sum = ops.sum(ops.square(x), _axes(axis, x.ndim), keepdim=True)
    return x * ops.rsqrt(ops.maximum(square_sum, ops.full((), epsilon, dtype=square_sum.dtype)))
