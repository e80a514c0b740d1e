"""Conv1D, Conv2D, Conv3D, DepthwiseConv2D, Conv2DTranspose and UpSampling2D with Keras's layouts: inputs channels_last (NWC / NHWC / NDHWC), kernels `(k, in, out)` /
`(kh, kw, in, out)`.

MindSpore's convolution takes NCHW inputs and `(out, in, kh, kw)` kernels, so the layer
transposes both inside `call` (the stored Parameter keeps the Keras layout, so get/set
weights and gradients are in Keras's layout). "same" padding is applied explicitly with
TF's rule (the odd pixel goes after), "causal" (Conv1D) pads only before.
"""

from __future__ import annotations

from .. import activations, initializers
from ... import tfnn
from ._padding import normalize_tuple
from .base import KernelLayer, Layer


def _ops():
    from mindspore import ops

    return ops


class _Conv(KernelLayer):
    rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.filters = int(filters)
        self.kernel_size = normalize_tuple(kernel_size, self.rank, "kernel_size")
        self.strides = normalize_tuple(strides, self.rank, "strides")
        self.dilation_rate = normalize_tuple(dilation_rate, self.rank, "dilation_rate")
        self.padding = padding.lower()
        if self.padding not in ("valid", "same", "causal") or (self.padding == "causal" and self.rank != 1):
            raise ValueError(f"Invalid padding {padding!r}")
        self.data_format = data_format or "channels_last"
        self.groups = int(groups)
        self._kernel_options(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                             bias_regularizer, kernel_constraint, bias_constraint)
        if self._batch_input_shape is not None:
            self.build(self._batch_input_shape)

    def build(self, input_shape):
        channels = int(input_shape[-1] if self.data_format == "channels_last" else input_shape[1])
        self.build_kernel_and_bias(self.kernel_size + (channels // self.groups, self.filters), self.filters)

    def _conv_nchw(self, x, spatial):
        """x: (N, C, H, W); returns (N, filters, H', W'). `spatial` are the (H, W) sizes."""
        ops = _ops()
        strides = self.strides if self.rank == 2 else (1,) + self.strides
        dilation = self.dilation_rate if self.rank == 2 else (1,) + self.dilation_rate
        padding = self.padding
        if padding == "causal":
            left = (self.kernel_size[-1] - 1) * dilation[1]
            if left:
                x = ops.pad(x, (left, 0, 0, 0))
            padding = "valid"
        return tfnn.conv_nchw(x, self._weight(), strides, dilation, padding, self.groups)

    def _weight(self):
        # Keras kernel (kh, kw, in, out) -> MindSpore (out, in, kh, kw)
        kernel = self.kernel if self.rank == 2 else self.kernel.reshape((1,) + tuple(self.kernel.shape))
        return kernel.transpose(3, 2, 0, 1)

    def call(self, inputs):
        ops = _ops()
        x = inputs
        if self.rank == 2:
            if self.data_format == "channels_last":
                x = x.transpose(0, 3, 1, 2)
            spatial = (x.shape[2], x.shape[3])
        else:
            x = x.transpose(0, 2, 1) if self.data_format == "channels_last" else x
            x = x.reshape(x.shape[0], x.shape[1], 1, x.shape[2])
            spatial = (1, x.shape[3])
        y = self._conv_nchw(x, spatial)
        if self.bias is not None:
            y = ops.bias_add(y, self.bias)  # NCHW; one BiasAddGrad in the backward pass
        if self.rank == 2:
            if self.data_format == "channels_last":
                y = y.transpose(0, 2, 3, 1)
        else:
            y = y.reshape(y.shape[0], y.shape[1], y.shape[3])
            if self.data_format == "channels_last":
                y = y.transpose(0, 2, 1)
        return self.activation(y)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate, "groups": self.groups,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias}


class Conv2D(_Conv):
    rank = 2


class Conv1D(_Conv):
    rank = 1


class Conv3D(_Conv):
    """Keras's Conv3D: inputs NDHWC (or NCDHW), kernel `(kd, kh, kw, in / groups, out)`; MindSpore's
    `ops.conv3d` on NCDHW with the kernel as `(out, in / groups, kd, kh, kw)`, "same" padded by TF's rule."""

    rank = 3

    def call(self, inputs):
        ops = _ops()
        x = inputs.transpose(0, 4, 1, 2, 3) if self.data_format == "channels_last" else inputs
        if self.padding == "same":
            padding = tfnn.same_pads(x.shape[2:], self.kernel_size, self.strides, self.dilation_rate)
            if any(padding):
                x = ops.pad(x, padding)
        y = ops.conv3d(x, self.kernel.transpose(4, 3, 0, 1, 2), None, stride=self.strides, pad_mode="valid",
                       dilation=self.dilation_rate, groups=self.groups)
        if self.bias is not None:
            y = ops.bias_add(y, self.bias)
        if self.data_format == "channels_last":
            y = y.transpose(0, 2, 3, 4, 1)
        return self.activation(y)


Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D


def _depthwise_kernel(layer, channels: int):
    """A depthwise layer's kernel `(kh, kw, in, depth_multiplier)` (its initializer, regularizer, constraint)."""
    return layer.add_weight(name="depthwise_kernel", shape=layer.kernel_size + (channels, layer.depth_multiplier),
                            initializer=layer.kernel_initializer, regularizer=layer.kernel_regularizer,
                            constraint=layer.kernel_constraint)


class DepthwiseConv2D(Conv2D):
    """Keras's DepthwiseConv2D: each input channel convolved with its own `depth_multiplier`
    filters, kernel `(kh, kw, in, depth_multiplier)`, output channel `c * depth_multiplier + m`
    (MindSpore: a grouped convolution, one group per input channel, weight `(in * m, 1, kh, kw)`)."""

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, bias_constraint=None, **kwargs):
        self.depth_multiplier = int(depth_multiplier)
        super().__init__(1, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                         kernel_initializer=depthwise_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=depthwise_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, kernel_constraint=depthwise_constraint,
                         bias_constraint=bias_constraint, **kwargs)

    def build(self, input_shape):
        channels = int(input_shape[-1] if self.data_format == "channels_last" else input_shape[1])
        self.groups, self.filters = channels, channels * self.depth_multiplier
        self.depthwise_kernel = _depthwise_kernel(self, channels)
        self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.built = True

    def _weight(self):
        return tfnn.depthwise_weight(self.depthwise_kernel)

    def get_config(self):
        config = super().get_config()
        for key in ("filters", "groups"):
            config.pop(key, None)
        return {**config, "depth_multiplier": self.depth_multiplier}


class SeparableConv2D(Conv2D):
    """Keras's SeparableConv2D: a depthwise convolution (kernel `(kh, kw, in, depth_multiplier)`,
    with the strides and dilation) then a pointwise one (kernel `(1, 1, in * depth_multiplier,
    filters)`), then the bias and activation, as `tf.nn.separable_conv2d` computes it."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1),
                 depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 pointwise_initializer="glorot_uniform", bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None, **kwargs):
        self.depth_multiplier = int(depth_multiplier)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.pointwise_regularizer, self.pointwise_constraint = pointwise_regularizer, pointwise_constraint
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                         kernel_initializer=depthwise_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=depthwise_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, kernel_constraint=depthwise_constraint,
                         bias_constraint=bias_constraint, **kwargs)

    def build(self, input_shape):
        channels = int(input_shape[-1] if self.data_format == "channels_last" else input_shape[1])
        self.groups = channels
        self.depthwise_kernel = _depthwise_kernel(self, channels)
        self.pointwise_kernel = self.add_weight(name="pointwise_kernel",
                                                shape=(1, 1, channels * self.depth_multiplier, self.filters),
                                                initializer=self.pointwise_initializer,
                                                regularizer=self.pointwise_regularizer,
                                                constraint=self.pointwise_constraint)
        self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.built = True

    def _conv_nchw(self, x, spatial):
        depthwise = tfnn.conv_nchw(x, tfnn.depthwise_weight(self.depthwise_kernel), self.strides, self.dilation_rate,
                                   self.padding, self.groups)
        return tfnn.conv_nchw(depthwise, self.pointwise_kernel.transpose(3, 2, 0, 1), (1, 1), (1, 1), "valid")

    def get_config(self):
        config = super().get_config()
        config.pop("groups", None)
        return {**config, "depth_multiplier": self.depth_multiplier}


SeparableConvolution2D = SeparableConv2D


class Conv2DTranspose(KernelLayer):
    """Keras's Conv2DTranspose: kernel `(kh, kw, filters, in)`, NHWC, TF's output sizes.

    The gradient of a convolution with respect to its input, which is what TF computes:
    MindSpore's `Conv2DTranspose` primitive (`Conv2DBackpropInput`) gives the full ("valid")
    result, of size `(n - 1) * stride + kernel`; "same" keeps `n * stride` of it, cut where
    TF's "same" convolution of that size would have padded (the odd row after), with zero rows
    at the end where the kernel is smaller than the stride.
    """

    rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.filters = int(filters)
        self.kernel_size = normalize_tuple(kernel_size, self.rank, "kernel_size")
        self.strides = normalize_tuple(strides, self.rank, "strides")
        self.dilation_rate = normalize_tuple(dilation_rate, self.rank, "dilation_rate")
        self.padding = padding.lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"Invalid padding {padding!r}")
        if output_padding is not None or any(d != 1 for d in self.dilation_rate):
            raise NotImplementedError(f"{type(self).__name__}: output_padding and dilation_rate are not supported by "
                                      "migrate.runtime.keras")
        self.output_padding = output_padding
        self.data_format = data_format or "channels_last"
        self._kernel_options(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                             bias_regularizer, kernel_constraint, bias_constraint)
        self._primitives: dict = {}
        if self._batch_input_shape is not None:
            self.build(self._batch_input_shape)

    def build(self, input_shape):
        channels = int(input_shape[-1] if self.data_format == "channels_last" else input_shape[1])
        self.build_kernel_and_bias(self.kernel_size + (self.filters, channels), self.filters)

    def _output_size(self, size: int, axis: int) -> int:
        full = (size - 1) * self.strides[axis] + self.kernel_size[axis]
        return size * self.strides[axis] if self.padding == "same" else full

    def call(self, inputs):
        ops = _ops()
        x = inputs.transpose(0, 3, 1, 2) if self.data_format == "channels_last" else inputs
        n, _, h, w = x.shape
        full = tuple((s - 1) * self.strides[i] + self.kernel_size[i] for i, s in enumerate((h, w)))
        key = (tuple(x.shape), str(x.dtype))
        primitive = self._primitives.get(key)
        if primitive is None:
            # (`out_channel` is the forward convolution's: this layer's input channels, as in
            # `nn.Conv2dTranspose`; the input's gradient, a convolution, reads it)
            primitive = self._primitives[key] = ops.Conv2DTranspose(
                out_channel=int(x.shape[1]), kernel_size=self.kernel_size, pad_mode="valid", stride=self.strides)
        # Keras (kh, kw, filters, in) -> the forward convolution's (out = in, in = filters, kh, kw)
        y = primitive(x, self.kernel.transpose(3, 2, 0, 1), (n, self.filters) + full)
        if self.padding == "same":
            # TF's "same" convolution of the output size pads max(full - size, 0), half before: cut that;
            # a kernel smaller than the stride leaves rows the kernel never reaches, zeros at the end.
            y = self._same(y, (h, w), full)
        if self.bias is not None:
            y = ops.bias_add(y, self.bias)  # NCHW; one BiasAddGrad in the backward pass
        if self.data_format == "channels_last":
            y = y.transpose(0, 2, 3, 1)
        return self.activation(y)

    def _same(self, y, sizes_in, full):
        """The "same" output of the full result `y` (N, C, *spatial): TF's "same" convolution of the
        output size pads max(full - size, 0), half before: cut that; a kernel smaller than the stride
        leaves rows the kernel never reaches, zeros at the end."""
        ops = _ops()
        sizes = [self._output_size(n, i) for i, n in enumerate(sizes_in)]
        before = [max(full[i] - sizes[i], 0) // 2 for i in range(len(sizes))]
        y = y[(slice(None), slice(None)) + tuple(slice(b, b + n) for b, n in zip(before, sizes))]
        short = [sizes[i] - y.shape[2 + i] for i in range(len(sizes))]
        if any(short):
            y = ops.pad(y, tuple(v for n in reversed(short) for v in (0, n)))
        return y

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "data_format": self.data_format,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias}


class Conv3DTranspose(Conv2DTranspose):
    """Keras's Conv3DTranspose: kernel `(kd, kh, kw, filters, in)`, NDHWC, TF's output sizes, on
    MindSpore's `Conv3DTranspose` primitive (the full result, cut for "same" as in 2-D)."""

    rank = 3

    def call(self, inputs):
        ops = _ops()
        x = inputs.transpose(0, 4, 1, 2, 3) if self.data_format == "channels_last" else inputs
        spatial = tuple(x.shape[2:])
        full = tuple((s - 1) * self.strides[i] + self.kernel_size[i] for i, s in enumerate(spatial))
        key = (tuple(x.shape), str(x.dtype))
        primitive = self._primitives.get(key)
        if primitive is None:
            primitive = self._primitives[key] = ops.Conv3DTranspose(
                in_channel=int(x.shape[1]), out_channel=self.filters, kernel_size=self.kernel_size, pad_mode="valid",
                stride=self.strides)
        # Keras (kd, kh, kw, filters, in) -> MindSpore's (in, filters, kd, kh, kw)
        y = primitive(x, self.kernel.transpose(4, 3, 0, 1, 2))
        if self.padding == "same":
            y = self._same(y, spatial, full)
        if self.bias is not None:
            y = ops.bias_add(y, self.bias)
        if self.data_format == "channels_last":
            y = y.transpose(0, 2, 3, 4, 1)
        return self.activation(y)


Convolution2DTranspose, Convolution3DTranspose = Conv2DTranspose, Conv3DTranspose


class UpSampling2D(Layer):
    """Keras's UpSampling2D: each pixel repeated `size` times ("nearest"), or bilinear resizing (TF's
    half-pixel rule, through `migrate.runtime.tfmath.resize`), NHWC."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.size = normalize_tuple(size, 2, "size")
        self.data_format = data_format or "channels_last"
        self.interpolation = interpolation
        if interpolation not in ("nearest", "bilinear"):
            raise NotImplementedError(f"UpSampling2D: interpolation={interpolation!r} is not supported by "
                                      "migrate.runtime.keras (nearest and bilinear are)")

    def call(self, inputs):
        ops = _ops()
        x = inputs if self.data_format == "channels_last" else inputs.transpose(0, 2, 3, 1)
        if self.interpolation == "nearest":
            x = ops.repeat_interleave(ops.repeat_interleave(x, self.size[0], 1), self.size[1], 2)
        else:
            from migrate.runtime import tfmath

            x = tfmath.image_resize(x, (x.shape[1] * self.size[0], x.shape[2] * self.size[1])).astype(x.dtype)
        return x if self.data_format == "channels_last" else x.transpose(0, 3, 1, 2)

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": self.data_format,
                "interpolation": self.interpolation}


class UpSampling1D(Layer):
    """Keras's UpSampling1D: each step of `(batch, steps, features)` repeated `size` times."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        self.size = int(size)

    def call(self, inputs):
        return _ops().repeat_interleave(inputs, self.size, 1)

    def get_config(self):
        return {**super().get_config(), "size": self.size}


class UpSampling3D(Layer):
    """Keras's UpSampling3D: each voxel repeated `size` times along depth, height and width,
    NDHWC (or NCDHW with `data_format="channels_first"`)."""

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.size = normalize_tuple(size, 3, "size")
        self.data_format = data_format or "channels_last"

    def call(self, inputs):
        ops = _ops()
        first = 1 if self.data_format == "channels_last" else 2
        x = inputs
        for axis, times in enumerate(self.size, start=first):
            x = ops.repeat_interleave(x, times, axis)
        return x

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": self.data_format}
