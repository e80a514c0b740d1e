"""Pooling layers in Keras's channels_last layout, on ``migrate.runtime.tfnn``'s pooling.

Max pooling pads "same" with -inf; average pooling "same" divides by the number of
real (unpadded) elements in each window, as TF does (MindSpore's own "same" average
would differ at the borders).
"""

from __future__ import annotations

from ... import tfnn
from ._padding import normalize_tuple
from .base import Layer


def _ops():
    from mindspore import ops

    return ops


class _Pooling(Layer):
    rank = 2
    mode = "max"

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.pool_size = normalize_tuple(pool_size, self.rank, "pool_size")
        self.strides = normalize_tuple(strides, self.rank, "strides") if strides is not None else self.pool_size
        self.padding = padding.lower()
        self.data_format = data_format or "channels_last"

    def call(self, inputs):
        x = inputs
        if self.rank == 2:
            if self.data_format == "channels_last":
                x = x.transpose(0, 3, 1, 2)
        else:
            x = x.transpose(0, 2, 1) if self.data_format == "channels_last" else x
            x = x.reshape(x.shape[0], x.shape[1], 1, x.shape[2])
        kernel = self.pool_size if self.rank == 2 else (1,) + self.pool_size
        strides = self.strides if self.rank == 2 else (1,) + self.strides
        y = tfnn.pool_nchw(x, self.mode, kernel, strides, self.padding == "same")
        if self.rank == 2:
            return y.transpose(0, 2, 3, 1) if self.data_format == "channels_last" else y
        y = y.reshape(y.shape[0], y.shape[1], y.shape[3])
        return y.transpose(0, 2, 1) if self.data_format == "channels_last" else y


class MaxPooling2D(_Pooling):
    rank, mode = 2, "max"


class AveragePooling2D(_Pooling):
    rank, mode = 2, "avg"


class MaxPooling1D(_Pooling):
    rank, mode = 1, "max"


class AveragePooling1D(_Pooling):
    rank, mode = 1, "avg"


class _Pooling3D(_Pooling):
    """3-D pooling of NDHWC (or NCDHW) inputs on MindSpore's `max_pool3d`/`avg_pool3d`, "same" padded as TF
    pads (-inf for max; an average over the real elements of each window only)."""

    rank = 3

    def call(self, inputs):
        ops = _ops()
        x = inputs.transpose(0, 4, 1, 2, 3) if self.data_format == "channels_last" else inputs
        pool = ops.max_pool3d if self.mode == "max" else ops.avg_pool3d

        def pooled(value):
            return pool(value, self.pool_size, self.strides)

        y = tfnn.pool_same(x, pooled, self.mode, self.pool_size, self.strides) if self.padding == "same" else pooled(x)
        return y.transpose(0, 2, 3, 4, 1) if self.data_format == "channels_last" else y


class MaxPooling3D(_Pooling3D):
    mode = "max"


class AveragePooling3D(_Pooling3D):
    mode = "avg"


MaxPool1D, MaxPool2D, AvgPool1D, AvgPool2D = MaxPooling1D, MaxPooling2D, AveragePooling1D, AveragePooling2D
MaxPool3D, AvgPool3D = MaxPooling3D, AveragePooling3D


class _GlobalPooling(Layer):
    rank = 2
    mode = "avg"

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = data_format or "channels_last"
        self.keepdims = keepdims

    def call(self, inputs):
        ops = _ops()
        if self.data_format == "channels_last":
            axes = tuple(range(1, 1 + self.rank))
        else:
            axes = tuple(range(2, 2 + self.rank))
        if self.mode == "avg":
            return ops.mean(inputs, axis=axes, keep_dims=self.keepdims)
        return ops.amax(inputs, axis=axes, keepdims=self.keepdims)


class GlobalAveragePooling2D(_GlobalPooling):
    rank, mode = 2, "avg"


class GlobalAveragePooling1D(_GlobalPooling):
    rank, mode = 1, "avg"
    supports_masking = True

    def call(self, inputs, mask=None):
        """Keras's: with a mask, the mean over the unmasked steps only."""
        if mask is None:
            return super().call(inputs)
        ops = _ops()
        steps = 1 if self.data_format == "channels_last" else 2
        weights = ops.expand_dims(mask.astype(inputs.dtype), 2 if self.data_format == "channels_last" else 1)
        return ops.sum(inputs * weights, dim=steps, keepdim=self.keepdims) / \
            ops.sum(weights, dim=steps, keepdim=self.keepdims)

    def compute_mask(self, inputs, previous_mask=None):
        return None


class GlobalMaxPooling2D(_GlobalPooling):
    rank, mode = 2, "max"


class GlobalMaxPooling1D(_GlobalPooling):
    rank, mode = 1, "max"


class GlobalAveragePooling3D(_GlobalPooling):
    rank, mode = 3, "avg"


class GlobalMaxPooling3D(_GlobalPooling):
    rank, mode = 3, "max"


GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D = GlobalAveragePooling1D, GlobalAveragePooling2D, \
    GlobalAveragePooling3D
GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D = GlobalMaxPooling1D, GlobalMaxPooling2D, GlobalMaxPooling3D
