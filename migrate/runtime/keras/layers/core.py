"""Core Keras layers: InputLayer, Dense, Activation, Dropout, Flatten, Reshape, Embedding, Lambda, ReLU, Softmax.

Dense keeps Keras's `(in, out)` kernel (MindSpore's nn.Dense stores `(out, in)`) and
computes `x @ kernel + bias` on the last axis for inputs of any rank, as Keras does.
Dropout is inverted dropout (scaled by 1 / (1 - rate) in training); its random mask
cannot reproduce TF's stream.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import draws
from .. import activations, initializers
from .._tensors import as_tensor, tensor_of
from ..symbolic import KerasTensor, Node
from .base import KernelLayer, Layer


def _ops():
    from mindspore import ops

    return ops


@functools.lru_cache(maxsize=None)
def _matmul():
    """MindSpore's MatMul primitive. Its gradient multiplies with transposed operands in place; the
    functional `ops.matmul`'s gradient transposes copies first, which costs a Dense layer's backward
    pass about a third more on the CPU. With `ops.bias_add` (one BiasAddGrad, not a broadcast sum)."""
    return _ops().MatMul()


class InputLayer(Layer):
    """The layer behind `Input`: holds the symbolic input; in a Sequential model it passes inputs through."""

    def __init__(self, shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, input_tensor=None,
                 name=None, input_shape=None, ragged=None, optional=False, **kwargs):
        if shape is None and input_shape is not None:
            shape = input_shape
        if batch_shape is None:
            if shape is None:
                raise ValueError("You must pass a `shape` argument.")
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            batch_shape = (batch_size,) + shape
        super().__init__(name=name, dtype=dtype, **kwargs)
        self.batch_shape = tuple(batch_shape)
        self._batch_input_shape = self.batch_shape
        self.built = True
        if input_tensor is not None and isinstance(input_tensor, KerasTensor):
            self._tensor = input_tensor
        else:
            self._tensor = KerasTensor(self.batch_shape, dtype=dtype or "float32", name=self.name)
            node = Node(self, (), {}, self._tensor)
            self._tensor.node = node
            self._inbound_nodes.append(node)

    @property
    def output(self):
        """The symbolic tensor this layer feeds (what `Input(...)` returns)."""
        return self._tensor

    def call(self, inputs):
        return inputs

    def get_config(self):
        return {"batch_shape": self.batch_shape, "dtype": getattr(self.output, "dtype", None) or self.dtype,
                "name": self.name}


class Dense(KernelLayer):
    """`activation(inputs @ kernel + bias)`, kernel `(input_dim, units)` (Keras layout)."""

    supports_masking = True

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, **kwargs):
        super().__init__(**kwargs)
        self.units = int(units)
        self._kernel_options(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                             bias_regularizer, kernel_constraint, bias_constraint)
        if self._batch_input_shape is not None:
            self.build(self._batch_input_shape)

    def build(self, input_shape):
        self.build_kernel_and_bias((int(input_shape[-1]), self.units), self.units)

    def call(self, inputs):
        ops = _ops()
        x = inputs if inputs.dtype == self.kernel.dtype else inputs.astype(self.kernel.dtype)
        rows = x if x.ndim == 2 else x.reshape(-1, x.shape[-1])
        y = _matmul()(rows, self.kernel)
        if self.bias is not None:
            y = ops.bias_add(y, self.bias)
        if rows is not x:
            y = y.reshape(tuple(x.shape[:-1]) + (self.units,))
        return self.activation(y)

    def get_config(self):
        return {**super().get_config(), "units": self.units, "activation": activations.serialize(self.activation),
                "use_bias": self.use_bias}


class Activation(Layer):
    supports_masking = True

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)


class ReLU(Layer):
    supports_masking = True

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, threshold

    def call(self, inputs):
        return activations.relu(inputs, self.negative_slope, self.max_value, self.threshold)


class LeakyReLU(Layer):
    """Keras 3's default slope is 0.3."""

    supports_masking = True

    def __init__(self, negative_slope=0.3, alpha=None, **kwargs):
        super().__init__(**kwargs)
        self.negative_slope = alpha if alpha is not None else negative_slope

    def call(self, inputs):
        return activations.leaky_relu(inputs, self.negative_slope)


class PReLU(Layer):
    """Keras's PReLU: `max(x, 0) + alpha * min(x, 0)` with a learned `alpha` of the input's shape
    without the batch axis (axes in `shared_axes` share one value)."""
    supports_masking = True

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None, alpha_constraint=None, shared_axes=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer, self.alpha_constraint = alpha_regularizer, alpha_constraint
        if shared_axes is None:
            self.shared_axes = None
        else:
            self.shared_axes = list(shared_axes) if isinstance(shared_axes, (list, tuple)) else [shared_axes]
        if self._batch_input_shape is not None:
            self.build(self._batch_input_shape)

    def build(self, input_shape):
        shape = list(input_shape[1:])
        for axis in self.shared_axes or []:
            shape[axis - 1] = 1
        self.alpha = self.add_weight(name="alpha", shape=tuple(int(d) for d in shape),
                                     initializer=self.alpha_initializer, regularizer=self.alpha_regularizer,
                                     constraint=self.alpha_constraint)
        self.built = True

    def call(self, inputs):
        ops = _ops()
        return ops.relu(inputs) - self.alpha * ops.relu(-inputs)

    def get_config(self):
        from .. import constraints, regularizers

        return {**super().get_config(), "alpha_initializer": initializers.serialize(self.alpha_initializer),
                "alpha_regularizer": regularizers.serialize(self.alpha_regularizer),
                "alpha_constraint": constraints.serialize(self.alpha_constraint), "shared_axes": self.shared_axes}


class Softmax(Layer):
    supports_masking = True

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs, mask=None):
        if mask is not None:
            inputs = inputs + (1.0 - mask.astype(inputs.dtype)) * -1e9
        return activations.softmax(inputs, axis=self.axis)


class Dropout(Layer):
    """Zero a fraction `rate` of the inputs and scale the rest by 1 / (1 - rate), only when training."""

    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed
        if rate > 0 and seed is None:
            initializers.draw_default_seed()  # (Keras's SeedGenerator for the layer)

    def call(self, inputs, training=None):
        if not training or self.rate == 0.0:
            return inputs
        ops = _ops()
        if self.rate == 1.0:
            return ops.zeros_like(inputs)
        if draws.active():  # a forward pass repeated for another gradient: the mask, recorded, times the inputs
            mask = draws.draw(lambda: ops.dropout(ops.ones_like(inputs), p=self.rate, training=True),
                              f"dropout{tuple(inputs.shape)}")
            return inputs * mask
        return ops.dropout(inputs, p=self.rate, training=True)


class AlphaDropout(Dropout):
    """Keras's AlphaDropout (for SELU networks), only when training: dropped units take SELU's
    negative saturation `-alpha * scale`, then `a * x + b` keeps the mean and variance
    (`a = ((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5`, `b = -a * alpha_p * rate`)."""

    def call(self, inputs, training=None):
        if not training or self.rate <= 0:
            return inputs
        import mindspore as ms

        ops = _ops()
        shape = tuple(inputs.shape) if self.noise_shape is None else tuple(
            inputs.shape[i] if d is None else d for i, d in enumerate(self.noise_shape))
        alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946
        kept = (draws.draw(lambda: ops.rand(*shape, dtype=ms.float32), f"rand{shape}") >= self.rate).astype(inputs.dtype)
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        return a * (inputs * kept + alpha_p * (1 - kept)) + b


class SpatialDropout1D(Dropout):
    pass


class SpatialDropout2D(Dropout):
    pass


class Rescaling(Layer):
    """Keras's Rescaling: `inputs * scale + offset` in the layer's compute dtype."""

    supports_masking = True

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    def call(self, inputs):
        from .._tensors import _ms_dtype

        import mindspore as ms

        dtype = _ms_dtype(self.compute_dtype)
        # (a per-channel list or array of scales broadcasts over the last axis, as in Keras)
        scale, offset = (ms.Tensor(v, dtype) if isinstance(v, (list, tuple)) or hasattr(v, "shape") else v
                         for v in (self.scale, self.offset))
        return inputs.astype(dtype) * scale + offset

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


class ZeroPadding2D(Layer):
    """Keras's ZeroPadding2D: zeros added around the rows and columns (`padding` an int, a pair
    (symmetric rows, columns), or ((top, bottom), (left, right)))."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, int):
            padding = ((padding, padding), (padding, padding))
        elif all(isinstance(p, int) for p in padding):
            padding = ((padding[0], padding[0]), (padding[1], padding[1]))
        self.padding = tuple(tuple(int(v) for v in p) for p in padding)
        self.data_format = data_format or "channels_last"

    def call(self, inputs):
        (top, bottom), (left, right) = self.padding
        pads = (0, 0, left, right, top, bottom) if self.data_format == "channels_last" else (left, right, top, bottom)
        return _ops().pad(inputs, pads)

    def get_config(self):
        return {**super().get_config(), "padding": self.padding, "data_format": self.data_format}


class Resizing(Layer):
    """Keras's Resizing: images resized to (height, width) as `tf.image.resize` does (bilinear with
    half-pixel centres, or nearest), NHWC; float32 out for bilinear."""

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False, pad_to_aspect_ratio=False,
                 fill_mode="constant", fill_value=0.0, antialias=False, data_format=None, **kwargs):
        super().__init__(**kwargs)
        if interpolation not in ("bilinear", "nearest") or crop_to_aspect_ratio or pad_to_aspect_ratio or antialias \
                or (data_format or "channels_last") != "channels_last":
            raise NotImplementedError("Resizing: only interpolation 'bilinear' or 'nearest' of channels_last images, "
                                      "without crop_to_aspect_ratio, pad_to_aspect_ratio or antialias, is provided "
                                      "by migrate.runtime.keras")
        self.height, self.width, self.interpolation = int(height), int(width), interpolation

    def call(self, inputs):
        from ... import tfmath

        out = tfmath.image_resize(inputs, (self.height, self.width), self.interpolation)
        from .._tensors import _ms_dtype

        return out.astype(_ms_dtype(self.compute_dtype))

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width,
                "interpolation": self.interpolation}


class Flatten(Layer):
    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = data_format or "channels_last"

    def call(self, inputs):
        if self.data_format == "channels_first" and inputs.ndim > 2:
            inputs = inputs.transpose((0,) + tuple(range(2, inputs.ndim)) + (1,))
        return inputs.reshape(inputs.shape[0], -1)


class Reshape(Layer):
    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)

    def call(self, inputs):
        return inputs.reshape((inputs.shape[0],) + self.target_shape)


class Permute(Layer):
    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)

    def call(self, inputs):
        return inputs.transpose((0,) + self.dims)


class RepeatVector(Layer):
    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        self.n = n

    def call(self, inputs):
        ops = _ops()
        return ops.tile(ops.expand_dims(inputs, 1), (1, self.n, 1))


class Embedding(Layer):
    """Rows of an `(input_dim, output_dim)` table (Keras default init: uniform(-0.05, 0.05))."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, weights=None, lora_rank=None, input_length=None,
                 **kwargs):
        kwargs.pop("activity_regularizer", None)
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = embeddings_regularizer
        self.embeddings_constraint = embeddings_constraint
        self.mask_zero = mask_zero
        self.build(None)
        if weights is not None:
            self.set_weights(weights)

    def build(self, input_shape):
        if self.built and getattr(self, "embeddings", None) is not None:
            return
        self.embeddings = self.add_weight(name="embeddings", shape=(self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)
        self.built = True

    def call(self, inputs):
        ops = _ops()
        ids = inputs.astype("int32") if str(inputs.dtype) != "Int32" else inputs
        return ops.gather(self.embeddings, ids, 0)

    @property
    def supports_masking(self):
        return bool(self.mask_zero)

    def compute_mask(self, inputs, previous_mask=None):
        """With `mask_zero`, the positions whose id is not 0 (Keras's); else no mask."""
        if not self.mask_zero:
            return None
        return _ops().not_equal(tensor_of(inputs), 0)


class Lambda(Layer):
    """Wrap a function of tensors as a layer (`tf.keras.layers.Lambda`)."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function = function
        self.arguments = arguments or {}
        self._call_takes_training = False
        self.mask = mask
        self.supports_masking = mask is not None

    def call(self, inputs):
        return self.function(inputs, **self.arguments)

    def compute_mask(self, inputs, previous_mask=None):
        """Keras's: `mask` called on the inputs and their mask, or `mask` itself."""
        if callable(self.mask):
            return self.mask(inputs, previous_mask)
        return self.mask


_OPERATIONS = {"add": lambda a, b: a + b, "subtract": lambda a, b: a - b, "multiply": lambda a, b: a * b,
               "divide": lambda a, b: a / b, "matmul": lambda a, b: _ops().matmul(a, b)}


class TensorOperation(Layer):
    """Arithmetic on the functional API's tensors (`x + y`, `2 * x`, `-x`, `x[:, 0]`) as a layer: the
    operation by name and its constant operand, so that a saved graph holds it as configuration."""

    def __init__(self, operation, operand=None, reverse=False, **kwargs):
        super().__init__(**kwargs)
        if operation not in ("negative", "getitem") and operation not in _OPERATIONS:
            raise ValueError(f"Unknown tensor operation: {operation!r}")
        self.operation, self.operand, self.reverse = operation, operand, bool(reverse)
        self._call_takes_training = False

    def call(self, inputs):
        if self.operation == "negative":
            return -inputs
        if self.operation == "getitem":
            return inputs[self.operand]
        if self.operand is None:
            a, b = inputs
        else:
            operand = self.operand
            a, b = inputs, as_tensor(operand) if isinstance(operand, np.ndarray) else operand
        return _OPERATIONS[self.operation](*((b, a) if self.reverse else (a, b)))


class Masking(Layer):
    """Keras's `Masking`: time steps whose features all equal `mask_value` are zeroed and masked out (the
    mask travels with the output to the layers that take one: recurrent layers skip those steps)."""

    supports_masking = True

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def _kept(self, inputs):
        return _ops().any(_ops().not_equal(inputs, self.mask_value), axis=-1, keep_dims=True)

    def call(self, inputs):
        ops = _ops()
        kept = self._kept(inputs)
        return ops.where(kept, inputs, ops.zeros_like(inputs))

    def compute_mask(self, inputs, previous_mask=None):
        return self._kept(inputs).squeeze(-1)


class Identity(Layer):
    supports_masking = True

    def call(self, inputs):
        return inputs

