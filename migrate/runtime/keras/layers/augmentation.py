"""Keras 3's random image layers, drawing from MindSpore's generator (as `tf.random` does here).

The draws follow Keras's distributions (other numbers for the same seeds, as every draw here);
given the draws, the images are Keras's: RandomRotation and RandomZoom build Keras's affine
matrices and apply them as TF's ``ImageProjectiveTransformV3`` kernel does (fill modes,
nearest and bilinear interpolation, float32), checked against it."""

from __future__ import annotations

from .. import initializers
from .base import Layer

_MODES = ("horizontal", "vertical", "horizontal_and_vertical")


class _RandomImage(Layer):
    """A random image layer: in training, `_changed(images)` of the batch (an unbatched image as a
    batch of one); in inference the images pass, cast to the compute dtype. Channels last."""

    def call(self, inputs, training=True):
        images = inputs.astype(self.compute_dtype)
        if not training:
            return images
        batched = images.ndim == 4
        out = self._changed(images if batched else images[None])
        return out if batched else out[0]

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


class RandomFlip(_RandomImage):
    """`keras.layers.RandomFlip`: in training, each image is flipped with probability 0.5 (one draw
    per image: with "horizontal_and_vertical" the same draw flips both ways, as in Keras 3); in
    inference the images pass, cast to the compute dtype. Channels-last images, batched or not."""

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        if mode not in _MODES:
            raise ValueError(f"RandomFlip layer {self.name} received an unknown mode argument {mode}")
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("RandomFlip: channels-last images (Keras's default) only")
        self.mode, self.seed = mode, seed
        if seed is None:
            initializers.draw_default_seed()  # (Keras's SeedGenerator for the layer)

    def _changed(self, x):
        from mindspore import ops

        from ... import tfrandom

        flips = tfrandom.uniform((x.shape[0], 1, 1, 1)) <= 0.5
        if self.mode in ("horizontal", "horizontal_and_vertical"):
            x = ops.where(flips, ops.flip(x, (-2,)), x)
        if self.mode in ("vertical", "horizontal_and_vertical"):
            x = ops.where(flips, ops.flip(x, (-3,)), x)
        return x


_FILL_MODES = ("reflect", "wrap", "constant", "nearest")
_INTERPOLATIONS = ("nearest", "bilinear")


def _mapped(coord, size: int, mode: str):
    """TF's ``MapCoordinate`` (image_ops.h): an input coordinate outside ``[0, size - 1]`` brought
    inside by ``fill_mode`` (float32, as TF computes it); "constant" leaves it for the fill value."""
    import numpy as np

    c = coord.astype(np.float32)
    n = np.float32(size)
    if mode == "constant":
        return c
    if mode == "nearest":
        return np.clip(c, 0, n - 1)
    if size <= 1:
        return np.zeros_like(c)
    if mode == "reflect":
        sz2 = np.float32(2) * n
        low = c < 0
        lc = sz2 * np.trunc(-c / sz2) + c  # (TF's `if (in_coord < sz2)` holds for every coordinate below 0)
        lc = np.where(lc < -n, lc + sz2, -lc - 1)
        high = c > n - 1
        hc = c - sz2 * np.trunc(c / sz2)
        hc = np.where(hc >= n, sz2 - hc - 1, hc)
        c = np.where(low, lc, np.where(high, hc, c))
    else:  # wrap
        sz = n - 1
        low = c < 0
        lc = c + n * (np.trunc(-c / sz) + 1)
        high = c > n - 1
        hc = c - n * np.trunc(c / sz)
        c = np.where(low, lc, np.where(high, hc, c))
    return np.clip(c, 0, n - 1)


def projective_transform(images, transforms, interpolation="bilinear", fill_mode="constant", fill_value=0.0):
    """TF's ``ImageProjectiveTransformV3`` (what Keras's ``affine_transform`` runs) on NHWC numpy
    images: output pixel ``(x, y)`` reads input ``((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)``,
    ``k = c0 x + c1 y + 1``, mapped by ``fill_mode`` and interpolated; a read outside the image
    gives ``fill_value``. Computed in float32 as TF's kernel computes it."""
    import numpy as np

    images = np.asarray(images)
    batch, height, width, channels = images.shape
    t = np.broadcast_to(np.asarray(transforms, np.float32).reshape(-1, 8), (batch, 8))
    ys, xs = np.meshgrid(np.arange(height, dtype=np.float32), np.arange(width, dtype=np.float32), indexing="ij")
    out = np.empty(images.shape, dtype=np.float32)
    fill = np.float32(fill_value)
    source = images.astype(np.float32)
    for b in range(batch):
        a0, a1, a2, b0, b1, b2, c0, c1 = t[b]
        k = c0 * xs + c1 * ys + np.float32(1)
        zero = k == 0
        k = np.where(zero, np.float32(1), k)
        x = _mapped((a0 * xs + a1 * ys + a2) / k, width, fill_mode)
        y = _mapped((b0 * xs + b1 * ys + b2) / k, height, fill_mode)

        def read(yy, xx):
            inside = (yy >= 0) & (yy < height) & (xx >= 0) & (xx < width)
            yi = np.clip(yy, 0, height - 1).astype(np.int64)
            xi = np.clip(xx, 0, width - 1).astype(np.int64)
            return np.where(inside[..., None], source[b, yi, xi], fill)

        if interpolation == "nearest":  # (std::round: halves away from zero, as np.round does not)
            value = read(np.trunc(y + np.copysign(np.float32(0.5), y)), np.trunc(x + np.copysign(np.float32(0.5), x)))
        else:
            y0, x0 = np.floor(y), np.floor(x)
            y1, x1 = y0 + 1, x0 + 1
            top = (x1 - x)[..., None] * read(y0, x0) + (x - x0)[..., None] * read(y0, x1)
            bottom = (x1 - x)[..., None] * read(y1, x0) + (x - x0)[..., None] * read(y1, x1)
            value = (y1 - y)[..., None] * top + (y - y0)[..., None] * bottom
        out[b] = np.where(zero[..., None], fill, value)
    return out


def transform(images, transforms, fill_mode="reflect", fill_value=0.0, interpolation="bilinear", output_shape=None,
              name=None):
    """Keras 2's ``image_preprocessing.transform`` (what its random layers and AutoAugment-style
    pipelines call): TF's ``ImageProjectiveTransformV3`` on NHWC images with Keras 2's defaults
    (reflect, bilinear), in the images' own dtype (a float result cast as TF's kernel casts it)."""
    import mindspore as ms
    import numpy as np

    array = images.asnumpy() if hasattr(images, "asnumpy") else np.asarray(images)
    if array.ndim != 4:
        raise ValueError(f"images must have rank 4, got {array.ndim}")
    if output_shape is not None and [int(d) for d in np.asarray(
            output_shape.asnumpy() if hasattr(output_shape, "asnumpy") else output_shape).reshape(-1)] != \
            list(array.shape[1:3]):
        raise NotImplementedError("transform to an output_shape other than the images' own is not provided")
    if fill_mode not in _FILL_MODES or interpolation not in _INTERPOLATIONS:
        raise NotImplementedError(f"Unknown fill_mode {fill_mode!r} or interpolation {interpolation!r}: expected "
                                  f"one of {_FILL_MODES} and {_INTERPOLATIONS}")
    matrix = transforms.asnumpy() if hasattr(transforms, "asnumpy") else np.asarray(transforms)
    out = projective_transform(array, matrix, interpolation, fill_mode, float(np.asarray(
        fill_value.asnumpy() if hasattr(fill_value, "asnumpy") else fill_value)))
    return ms.Tensor(out.astype(array.dtype))


def _checked(layer, fill_mode: str, interpolation: str, data_format) -> None:
    name = type(layer).__name__
    if fill_mode not in _FILL_MODES:
        raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Expected of one {_FILL_MODES}.")
    if interpolation not in _INTERPOLATIONS:
        raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected of one {_INTERPOLATIONS}.")
    if data_format not in (None, "channels_last"):
        raise NotImplementedError(f"{name}: channels-last images (Keras's default) only")


def _bounds(factor, what: str, low: float = -1.0, high: float = 1.0) -> tuple[float, float]:
    """Keras's `_set_factor`: a number `f` is `(-|f|, |f|)`, a pair is sorted."""
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > high or factor[1] < low:
            raise ValueError(f"The `{what}` argument should be a number (or a list of two numbers) in the range "
                             f"[{low}, {high}]. Received: {what}={factor}")
        lower, upper = sorted(float(f) for f in factor)
        return lower, upper
    if not isinstance(factor, (int, float)) or not low <= factor <= high:
        raise ValueError(f"The `{what}` argument should be a number (or a list of two numbers) in the range "
                         f"[{low}, {high}]. Received: {what}={factor}")
    factor = abs(float(factor))
    return max(-factor, low), factor


class _Affine(_RandomImage):
    """A random affine image layer: `_matrices(batch, height, width)` gives one transform per image."""

    def __init__(self, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        super().__init__(**kwargs)
        _checked(self, fill_mode, interpolation, data_format)
        self.fill_mode, self.interpolation, self.seed, self.fill_value = fill_mode, interpolation, seed, fill_value
        if seed is None:
            initializers.draw_default_seed()  # (Keras's SeedGenerator for the layer)

    def _changed(self, x):
        import mindspore as ms

        transforms = self._matrices(x.shape[0], x.shape[1], x.shape[2])
        out = projective_transform(x.asnumpy(), transforms, self.interpolation, self.fill_mode, self.fill_value)
        return ms.Tensor(out).astype(x.dtype)

    def _uniform(self, shape, low: float, high: float):
        from ... import tfrandom

        return tfrandom.uniform(shape, low, high, seed=self.seed).asnumpy().astype("float32")


class RandomRotation(_Affine):
    """`keras.layers.RandomRotation`: each image turned by an angle drawn from
    `[lower * 360, upper * 360]` degrees (`factor` a fraction of a full turn) about its centre."""

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0,
                 data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.factor = _bounds(factor, "factor")

    def _matrices(self, batch: int, height: int, width: int):
        import numpy as np

        f32 = np.float32
        angle = self._uniform((batch,), self.factor[0] * 360.0, self.factor[1] * 360.0)
        angle = angle * f32(np.pi / 180.0)
        cx, cy = f32(0.5) * (f32(width) - f32(1)), f32(0.5) * (f32(height) - f32(1))
        cos, sin = np.cos(angle), np.sin(angle)
        a0, a1, b0, b1 = cos, -sin, sin, cos
        a2 = cx - cx * a0 - cy * a1
        b2 = cy - cx * b0 - cy * b1
        zeros = np.zeros_like(angle)
        return np.stack([a0, a1, a2, b0, b1, b2, zeros, zeros], axis=1).astype(f32)


class RandomZoom(_Affine):
    """`keras.layers.RandomZoom`: each image scaled about its centre by `1 + z`, `z` drawn from
    `height_factor`'s range (and `width_factor`'s, else the same draw), a positive `z` zooming out."""

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_range = _bounds(height_factor, "height_factor", low=-1.0 + 1e-12)
        self.width_range = None if width_factor is None else _bounds(width_factor, "width_factor", low=-1.0 + 1e-12)

    def _matrices(self, batch: int, height: int, width: int):
        import numpy as np

        f32 = np.float32
        zy = self._uniform((batch, 1), 1.0 + self.height_range[0], 1.0 + self.height_range[1])[:, 0]
        zx = zy if self.width_range is None else \
            self._uniform((batch, 1), 1.0 + self.width_range[0], 1.0 + self.width_range[1])[:, 0]
        x_offset = ((f32(width) - f32(1)) / f32(2)) * (f32(1) - zx)
        y_offset = ((f32(height) - f32(1)) / f32(2)) * (f32(1) - zy)
        zeros = np.zeros_like(zx)
        return np.stack([zx, zeros, x_offset, zeros, zy, y_offset, zeros, zeros], axis=1).astype(f32)
