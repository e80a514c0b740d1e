"""`keras.utils.load_img`, `img_to_array`, `array_to_img`, `save_img`: Keras 3's, on Pillow and numpy.

Keras itself does these with Pillow and numpy, so the arrays and files are Keras's: the same
mode conversions, resampling filters, crop for `keep_aspect_ratio`, scaling and dtypes (float32
by default), images channels-last.
"""

from __future__ import annotations

import io
import os
import pathlib
import warnings

import numpy as np


def _pil():
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - Pillow comes with the runtime's extra
        raise ImportError("Could not import PIL.Image. The use of these image helpers requires PIL.") from None
    return Image


def _interpolations(Image) -> dict:
    resampling = getattr(Image, "Resampling", Image)
    return {"nearest": resampling.NEAREST, "bilinear": resampling.BILINEAR, "bicubic": resampling.BICUBIC,
            "hamming": resampling.HAMMING, "box": resampling.BOX, "lanczos": resampling.LANCZOS}


def _channels_first(data_format) -> bool:
    if data_format not in (None, "channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be one of {{'channels_first', 'channels_last'}}. "
                         f"Received: data_format={data_format}")
    return data_format == "channels_first"


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A Pillow image of a `(height, width, channels)` array (scaled to 0-255 unless `scale=False`)."""
    Image = _pil()
    x = np.asarray(x.asnumpy() if hasattr(x, "asnumpy") else x, dtype=dtype or "float32")
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}")
    if _channels_first(data_format):
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        largest = np.max(x)
        if largest != 0:
            x /= largest
        x *= 255
    channels = x.shape[2]
    if channels == 4:
        return Image.fromarray(x.astype("uint8"), "RGBA")
    if channels == 3:
        return Image.fromarray(x.astype("uint8"), "RGB")
    if channels == 1:
        if np.max(x) > 255:
            return Image.fromarray(x[:, :, 0].astype("int32"), "I")
        return Image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {channels}")


def img_to_array(img, data_format=None, dtype=None):
    """The image's pixels as a numpy array, `(height, width, channels)` float32 by default."""
    x = np.asarray(img, dtype=dtype or "float32")
    first = _channels_first(data_format)
    if x.ndim == 3:
        return x.transpose(2, 0, 1) if first else x
    if x.ndim == 2:
        return x.reshape((1,) + x.shape) if first else x.reshape(x.shape + (1,))
    raise ValueError(f"Unsupported image shape: {x.shape}")


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Write an image array to `path` (the format from its suffix unless given)."""
    if file_format is None and isinstance(path, (str, pathlib.Path)):
        file_format = pathlib.Path(path).suffix[1:].lower()
    if file_format and file_format.lower() == "jpg":
        file_format = "jpeg"
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and file_format == "jpeg":
        warnings.warn("The JPEG format does not support RGBA images, converting to RGB.", stacklevel=2)
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def load_img(path, color_mode="rgb", target_size=None, interpolation="nearest", keep_aspect_ratio=False):
    """A Pillow image read from `path` (or a `BytesIO`), in `color_mode`, resized to `target_size`
    `(height, width)` with Pillow's `interpolation` filter (after a centred crop to the target's
    aspect ratio with `keep_aspect_ratio`)."""
    Image = _pil()
    if isinstance(path, io.BytesIO):
        img = Image.open(path)
    elif isinstance(path, (pathlib.Path, bytes, str, os.PathLike)):
        if isinstance(path, pathlib.Path):
            path = str(path.resolve())
        with open(path, "rb") as handle:
            img = Image.open(io.BytesIO(handle.read()))
    else:
        raise TypeError(f"path should be path-like or io.BytesIO, not {type(path)}")
    wanted = {"grayscale": ("L", ("L", "I;16", "I")), "rgba": ("RGBA", ("RGBA",)), "rgb": ("RGB", ("RGB",))}
    if color_mode not in wanted:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    mode, kept = wanted[color_mode]
    if img.mode not in kept:
        img = img.convert(mode)
    if target_size is None:
        return img
    size = (target_size[1], target_size[0])
    if img.size == size:
        return img
    methods = _interpolations(Image)
    if interpolation not in methods:
        raise ValueError(f"Invalid interpolation method {interpolation} specified. Supported methods are "
                         f"{', '.join(methods)}")
    if not keep_aspect_ratio:
        return img.resize(size, methods[interpolation])
    width, height = img.size
    crop_height = min(height, (width * size[1]) // size[0])
    crop_width = min(width, (height * size[0]) // size[1])
    top, left = (height - crop_height) // 2, (width - crop_width) // 2
    return img.resize(size, methods[interpolation], box=[left, top, left + crop_width, top + crop_height])
