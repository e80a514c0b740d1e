"""BatchNormalization and LayerNormalization with Keras's defaults and formulas.

BatchNormalization (momentum 0.99, epsilon 1e-3; MindSpore's nn.BatchNorm uses
momentum 0.9 and epsilon 1e-5): in training it normalises with the batch's mean and
biased variance (`tf.nn.moments`) over every axis but `axis`, and moves
`moving = moving * momentum + batch * (1 - momentum)`; in inference, or when the layer
is frozen (`trainable = False`), it uses the moving statistics. Output is
`x * inv + (beta - mean * inv)` with `inv = gamma / sqrt(var + eps)`
(`tf.nn.batch_normalization`). Statistics are per replica (Keras's default
`synchronized=False`); with `synchronized=True` (and Keras 2's `SyncBatchNormalization`)
they are the whole global batch's, as Keras computes them under a strategy: every
replica's per-channel sum, sum of squares and count added across the replicas (one
all-reduce, which the backward pass all-reduces in turn), `mean = sum / count` and
`variance = max(sum_sq / count - mean ** 2, 0)`.

LayerNormalization (epsilon 1e-3) normalises over `axis` with the same formula.
"""

from __future__ import annotations

import functools

from .. import initializers
from ..autodiff import is_building
from .. import compiled
from .._tensors import to_numpy
from .base import Layer


def _ops():
    from mindspore import ops

    return ops


@functools.lru_cache(maxsize=None)
def _fused_batch_norm(epsilon: float):
    """MindSpore's training BatchNorm primitive with momentum 0: it returns (y, running mean, running
    variance, batch mean, batch biased variance); the layer's moving statistics are not handed to it."""
    return _ops().BatchNorm(is_training=True, epsilon=float(epsilon), momentum=0.0)


@functools.lru_cache(maxsize=None)
def _scratch_statistics(channels: int):
    """Running statistics for the kernel to write and nobody to read: even at momentum 0 it writes
    its own update, NaN for a batch of one row (an unbiased variance of one value)."""
    import mindspore as ms
    import numpy as np

    return ms.Tensor(np.zeros(channels, np.float32)), ms.Tensor(np.ones(channels, np.float32))


def _moments(x, axes):
    ops = _ops()
    mean = ops.mean(x, axis=axes, keep_dims=True)
    variance = ops.mean(ops.square(x - ops.stop_gradient(mean)), axis=axes, keep_dims=True)
    return mean, variance


def _synchronized_moments(x, axes):
    """Keras's moments with ``synchronized=True`` under a strategy (its TF backend's
    ``_compute_moments_sync``): the sums and counts of every replica, then
    ``E[x] = sum / count`` and ``Var[x] = max(E[x**2] - E[x]**2, 0)``. The replicas' three
    sums travel in one all-reduce; MindSpore's all-reduce differentiates to an all-reduce
    of the gradients, as TF's does."""
    from ... import collectives

    ops = _ops()
    local_sum = ops.sum(x, dim=axes, keepdim=True)
    local_squares = ops.sum(ops.square(x), dim=axes, keepdim=True)
    local_count = ops.sum(ops.ones_like(x), dim=axes, keepdim=True)
    shape = local_sum.shape
    stacked = ops.concat([local_sum.reshape(1, -1), local_squares.reshape(1, -1), local_count.reshape(1, -1)])
    total = collectives.replicas().all_reduce_sum(stacked)
    total_sum, total_squares, count = (total[i].reshape(shape) for i in range(3))
    safe = ops.where(count == 0, ops.ones_like(count), count)
    mean = ops.where(count == 0, ops.zeros_like(count), total_sum / safe)
    squares_mean = ops.where(count == 0, ops.zeros_like(count), total_squares / safe)
    return mean, ops.maximum(squares_mean - ops.square(mean), ops.zeros_like(squares_mean))


class BatchNormalization(Layer):
    supports_masking = True

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 synchronized=False, **kwargs):
        kwargs.pop("fused", None)
        kwargs.pop("renorm", None)
        super().__init__(**kwargs)
        self.axis = axis[0] if isinstance(axis, (list, tuple)) else int(axis)
        self.momentum, self.epsilon = float(momentum), float(epsilon)
        self.center, self.scale = center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.synchronized = synchronized
        if self._batch_input_shape is not None:
            self.build(self._batch_input_shape)

    def build(self, input_shape):
        self._ndim = len(input_shape)
        axis = self.axis % self._ndim
        self._axis = axis
        self._reduction_axes = tuple(i for i in range(self._ndim) if i != axis)
        shape = (int(input_shape[axis]),)
        self.gamma = self.add_weight(name="gamma", shape=shape, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer, autocast=False) if self.scale else None
        self.beta = self.add_weight(name="beta", shape=shape, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer, autocast=False) if self.center else None
        self.moving_mean = self.add_weight(name="moving_mean", shape=shape,
                                           initializer=self.moving_mean_initializer, trainable=False,
                                           autocast=False)
        self.moving_variance = self.add_weight(name="moving_variance", shape=shape,
                                               initializer=self.moving_variance_initializer, trainable=False,
                                               autocast=False)
        self.built = True

    def _broadcast(self, value):
        shape = [1] * self._ndim
        shape[self._axis] = -1
        return value.reshape(tuple(shape))

    def call(self, inputs, training=None, mask=None):
        ops = _ops()
        inputs = _in_float32(inputs)  # Keras computes normalization in float32 under a half-precision policy
        if training and self.trainable and mask is not None:
            raise NotImplementedError(f"BatchNormalization {self.name!r}: statistics over the unmasked steps only "
                                      "(Keras's masked moments) are not provided by migrate.runtime.keras")
        if training and self.trainable:
            own_moments = type(self)._moments is not BatchNormalization._moments
            fused = None if self.synchronized or own_moments else self._fused_training_step(inputs)
            if fused is not None:
                return fused
            if own_moments:  # a subclass's statistics (across replicas, say): Keras calls its hook
                mean, variance = (self._broadcast(m.reshape(-1)) for m in self._subclass_moments(inputs, mask))
            elif self.synchronized:
                mean, variance = _synchronized_moments(inputs, self._reduction_axes)
            else:
                mean, variance = _moments(inputs, self._reduction_axes)
            self._move_statistics(mean.reshape(-1), variance.reshape(-1))
        else:
            mean = self._broadcast(self.moving_mean)
            variance = self._broadcast(self.moving_variance)
        inv = ops.rsqrt(variance + self.epsilon)
        if self.gamma is not None:
            inv = inv * self._broadcast(self.gamma)
        offset = -mean * inv
        if self.beta is not None:
            offset = self._broadcast(self.beta) + offset
        return _in_compute_dtype(self, inputs * inv + offset)

    def _moments(self, inputs, reduction_axes=None, keep_dims=False, mask=None):
        """The batch's mean and biased variance over ``reduction_axes`` (the layer's own), kept
        dimensions or not: what ``super()._moments(...)`` gives an override, which Keras 2 calls
        as ``(inputs, reduction_axes, keep_dims)`` and Keras 3 as ``(inputs, mask)``."""
        axes = tuple(a % self._ndim for a in (self._reduction_axes if reduction_axes is None or
                                              not isinstance(reduction_axes, (list, tuple)) else reduction_axes))
        mean, variance = (_synchronized_moments if self.synchronized else _moments)(inputs, axes)
        if not keep_dims:
            kept = tuple(int(d) for i, d in enumerate(inputs.shape) if i not in axes)
            mean, variance = mean.reshape(kept), variance.reshape(kept)
        return mean, variance

    def _subclass_moments(self, inputs, mask):
        """A subclass's ``_moments``, called with the arguments of the Keras its signature is written for."""
        import inspect

        parameters = list(inspect.signature(self._moments).parameters)
        if "reduction_axes" in parameters or len(parameters) >= 3:  # Keras 2's (inputs, reduction_axes, keep_dims)
            return self._moments(inputs, list(self._reduction_axes), keep_dims=False)
        return self._moments(inputs, mask)

    def _fused_training_step(self, inputs):
        """Training with MindSpore's fused BatchNorm kernel, or None where it does not apply.

        The kernel normalises with the batch's mean and biased variance, as Keras does, in one
        pass forward and one backward (Keras's formula is about six passes each way). It gets
        scratch running statistics, not the layer's, and returns the batch's mean and biased
        variance; the moving statistics then move by Keras's rule (MindSpore's own rule would
        use the unbiased variance, and a batch of one row would make it NaN). Channels must be
        the last axis (viewed as rows of channels) or axis 1 of a 4-D input, and both gamma and
        beta present.
        """
        if self.gamma is None or self.beta is None or str(inputs.dtype) != "Float32" or 0 in tuple(inputs.shape) \
                or compiled.recording():  # (the kernel's scratch statistics are not graph state)
            return None
        if self._axis == self._ndim - 1:
            rows = inputs.reshape(-1, inputs.shape[-1])
        elif self._axis == 1 and self._ndim == 4:
            rows = inputs
        else:
            return None
        scratch_mean, scratch_variance = _scratch_statistics(int(rows.shape[1]))
        normalized, _, _, mean, variance = _fused_batch_norm(self.epsilon)(
            rows, self.gamma, self.beta, scratch_mean, scratch_variance)
        self._move_statistics(mean, variance)
        return _in_compute_dtype(self, normalized.reshape(inputs.shape) if rows is not inputs else normalized)

    def _move_statistics(self, mean, variance) -> None:
        """Keras's rule, `moving = moving * momentum + batch * (1 - momentum)`, from the batch's per-channel
        mean and biased variance; a build-only pass must not move the statistics."""
        if is_building():
            return
        ops = _ops()
        momentum = self.momentum
        ops.assign(self.moving_mean, ops.stop_gradient(self.moving_mean * momentum + mean * (1.0 - momentum)))
        ops.assign(self.moving_variance, ops.stop_gradient(
            self.moving_variance * momentum + variance * (1.0 - momentum)))

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "momentum": self.momentum, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale, "synchronized": self.synchronized}


class SyncBatchNormalization(BatchNormalization):
    """Keras 2's `tf.keras.layers.experimental.SyncBatchNormalization`: Keras 3's
    `BatchNormalization(synchronized=True)`, the global batch's statistics."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 **kwargs):
        kwargs.pop("synchronized", None)
        super().__init__(axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                         beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                         moving_mean_initializer=moving_mean_initializer,
                         moving_variance_initializer=moving_variance_initializer, beta_regularizer=beta_regularizer,
                         gamma_regularizer=gamma_regularizer, beta_constraint=beta_constraint,
                         gamma_constraint=gamma_constraint, synchronized=True, **kwargs)


class LayerNormalization(Layer):
    supports_masking = True

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, rms_scaling=False, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.axis = tuple(axis) if isinstance(axis, (list, tuple)) else (int(axis),)
        self.epsilon = float(epsilon)
        self.center, self.scale, self.rms_scaling = center, scale, rms_scaling
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        if self._batch_input_shape is not None:
            self.build(self._batch_input_shape)

    def build(self, input_shape):
        ndim = len(input_shape)
        self._axes = tuple(sorted(a % ndim for a in self.axis))
        shape = tuple(int(input_shape[a]) for a in self._axes)
        self._param_shape = tuple(int(input_shape[i]) if i in self._axes else 1 for i in range(ndim))
        self.gamma = self.add_weight(name="gamma", shape=shape, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer, autocast=False) if self.scale else None
        self.beta = self.add_weight(name="beta", shape=shape, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer, autocast=False) if self.center else None
        self.built = True

    def call(self, inputs):
        ops = _ops()
        inputs = _in_float32(inputs)
        if self.rms_scaling:
            variance = ops.var(inputs, axis=self._axes, keepdims=True)
            inv = ops.rsqrt(variance + self.epsilon)
            return _in_compute_dtype(self, inputs * inv * self.gamma.reshape(self._param_shape))
        mean, variance = _moments(inputs, self._axes)
        inv = ops.rsqrt(variance + self.epsilon)
        if self.gamma is not None:
            inv = inv * self.gamma.reshape(self._param_shape)
        offset = -mean * inv
        if self.beta is not None:
            offset = offset + self.beta.reshape(self._param_shape)
        return _in_compute_dtype(self, inputs * inv + offset)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon, "center": self.center,
                "scale": self.scale}


def _in_float32(inputs):
    import mindspore as ms

    return inputs.astype(ms.float32) if inputs.dtype in (ms.float16, ms.bfloat16) else inputs


def _in_compute_dtype(layer, outputs):
    compute = layer.compute_dtype
    if compute in ("float16", "bfloat16"):
        from .._tensors import _ms_dtype

        return outputs.astype(_ms_dtype(compute))
    return outputs


def _first(batch):
    """The features of a batch: the first of an `(x, y)` or `(x, y, w)` tuple."""
    return batch[0] if isinstance(batch, (tuple, list)) else batch


class Normalization(Layer):
    """Keras's Normalization: `(x - mean) / max(sqrt(variance), 1e-7)` per position of `axis`
    (or its inverse with `invert=True`), with `mean`/`variance` given or learnt by `adapt(data)`
    (an array, a tensor, or batches: a dataset or any iterable of them, combined batch by batch
    as Keras combines them)."""

    supports_masking = True

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        self.axis = () if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
        if (mean is not None) != (variance is not None):
            raise ValueError("When setting values directly, both `mean` and `variance` must be set. "
                             f"Received: mean={mean} and variance={variance}")
        self.input_mean, self.input_variance, self.invert = mean, variance, invert
        self.mean = self.variance = None
        self._build_input_shape = None

    def build(self, input_shape):
        import numpy as np

        ndim = len(input_shape)
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError(f"All `axis` values must be in the range [-ndim, ndim). Received inputs with "
                             f"ndim={ndim}, while axis={self.axis}")
        self._build_input_shape = tuple(input_shape)
        self._keep_axis = tuple(sorted(d if d >= 0 else d + ndim for d in self.axis))
        self._reduce_axis = tuple(d for d in range(ndim) if d not in self._keep_axis)
        self._broadcast_shape = [int(input_shape[d]) if d in self._keep_axis else 1 for d in range(ndim)]
        self._mean_and_var_shape = tuple(int(input_shape[d]) for d in self._keep_axis)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(name="mean", shape=self._mean_and_var_shape, initializer="zeros",
                                              trainable=False)
            self.adapt_variance = self.add_weight(name="variance", shape=self._mean_and_var_shape,
                                                  initializer="ones", trainable=False)
            self.count = self.add_weight(name="count", shape=(), dtype="int64", initializer="zeros",
                                         trainable=False)
            self.built = True
            self._finalize()
            return
        mean, variance = np.asarray(self.input_mean, np.float32), np.asarray(self.input_variance, np.float32)
        if mean.ndim:
            expanded = [1] * ndim
            for i in range(1, mean.ndim + 1):
                expanded[self._keep_axis[-i]] = mean.shape[-i]
            mean, variance = mean.reshape(expanded), variance.reshape(expanded)
        self._set_statistics(np.broadcast_to(mean, self._broadcast_shape), np.broadcast_to(variance,
                                                                                          self._broadcast_shape))
        self.built = True

    def _set_statistics(self, mean, variance) -> None:
        import mindspore as ms
        import numpy as np

        from .._tensors import _ms_dtype

        dtype = _ms_dtype(self.compute_dtype)
        self.mean = ms.Tensor(np.ascontiguousarray(mean, np.float32)).astype(dtype)
        self.variance = ms.Tensor(np.ascontiguousarray(variance, np.float32)).astype(dtype)

    def _finalize(self) -> None:
        if self.input_mean is None and self.built:
            self._set_statistics(to_numpy(self.adapt_mean).reshape(self._broadcast_shape),
                                 to_numpy(self.adapt_variance).reshape(self._broadcast_shape))

    def adapt(self, data):
        import mindspore as ms
        import numpy as np

        whole = isinstance(data, np.ndarray) or isinstance(data, ms.Tensor)
        if whole:
            batches = None
            shape = tuple(data.shape)
        else:
            batches = iter(data)
            first = next(batches, None)
            if first is None:
                raise ValueError("adapt() received an empty iterable (no batches).")
            first = to_numpy(_first(first))
            shape = first.shape
        if not self.built:
            self.build(shape)
        if whole:
            array = to_numpy(data)
            total_mean, total_var = np.mean(array, axis=self._reduce_axis), np.var(array, axis=self._reduce_axis)
        else:
            total_mean = np.zeros(self._mean_and_var_shape, np.float32)
            total_var = np.zeros(self._mean_and_var_shape, np.float32)
            total_count = 0
            for batch in [first, *(to_numpy(_first(b)) for b in batches)]:
                batch = batch.astype(np.float32)
                batch_mean, batch_var = batch.mean(axis=self._reduce_axis), batch.var(axis=self._reduce_axis)
                count = int(np.prod([batch.shape[d] for d in self._reduce_axis])) if self._reduce_axis else 1
                total_count += count
                weight = float(count) / total_count
                existing = 1.0 - weight
                new_mean = total_mean * existing + batch_mean * weight
                total_var = (total_var + (total_mean - new_mean) ** 2) * existing + (
                    batch_var + (batch_mean - new_mean) ** 2) * weight
                total_mean = new_mean
        from mindspore import ops

        ops.assign(self.adapt_mean, ms.Tensor(np.asarray(total_mean, np.float32)))
        ops.assign(self.adapt_variance, ms.Tensor(np.asarray(total_var, np.float32)))
        self._finalize()

    def call(self, inputs):
        ops = _ops()
        if self.mean is None:
            raise ValueError("You must call `.build(input_shape)` on the layer before using it.")
        from .._tensors import _ms_dtype

        inputs = inputs.astype(_ms_dtype(self.compute_dtype))
        scale = ops.maximum(ops.sqrt(self.variance), 1e-7)
        return self.mean + inputs * scale if self.invert else (inputs - self.mean) / scale

    def get_config(self):
        import numpy as np

        return {**super().get_config(), "axis": self.axis, "invert": self.invert,
                "mean": np.array(self.input_mean).tolist(), "variance": np.array(self.input_variance).tolist()}
