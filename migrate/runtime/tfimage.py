"""``tf.image``'s colour adjustments and random augmentations on MindSpore tensors.

Images are channels-last (``[height, width, channels]`` or a batch of them), as in TF. The
adjustments follow TF's kernels: the image is converted to float32 in ``[0, 1]`` as
``tf.image.convert_image_dtype`` does, adjusted, and converted back to its dtype with
saturation; ``adjust_contrast`` moves each channel of each image away from its mean over
height and width; ``adjust_saturation`` and ``adjust_hue`` go through TF's HSV (hue in
``[0, 1)``, grey pixels of hue 0), scale the saturation (clipped to ``[0, 1]``) or turn
the hue (wrapped), and come back. They are MindSpore ops throughout, so they run in a
``tfdata`` map and differentiate in a model alike.

The random augmentations draw from MindSpore's generator: the same distributions as TF's
(one factor for the whole input, as TF draws; ``random_flip_*`` one coin per image of a
batch), other numbers for the same seeds, as ``migrate.runtime.tfrandom``'s draws are.
The geometric operations (flips, crops, pads) are ``migrate.runtime.tfmath``'s.

``total_variation`` and ``sobel_edges`` are TF's formulas on MindSpore ops (differentiable:
style transfer minimises the one, edge losses use the other). So are the quality measures
``psnr``, ``ssim`` and ``ssim_multiscale``: TF's constants, Gaussian window ('VALID', no
padding) and reductions over the last three axes, on float32 copies of the images as TF
makes them (uint8 scaled to [0, 1], ``max_val`` with them); ``1 - ssim`` is a training loss.
"""

from __future__ import annotations

import numpy as np

from . import tfmath, tfrandom

__all__ = ["adjust_brightness", "adjust_contrast", "adjust_hue", "adjust_saturation", "hsv_to_rgb",
           "psnr", "random_brightness", "random_contrast", "random_crop", "random_flip_left_right",
           "random_flip_up_down", "random_hue", "random_saturation", "rgb_to_hsv", "sample_distorted_bounding_box",
           "sobel_edges", "ssim", "ssim_multiscale", "total_variation"]


def _ms():
    import mindspore as ms
    from mindspore import ops

    return ms, ops


def _image(image, what: str):
    ms, _ = _ms()
    x = image if isinstance(image, ms.Tensor) else ms.Tensor(np.asarray(image))
    if x.ndim < 3:
        raise ValueError(f"{what}: 'image' (shape {tuple(x.shape)}) must be at least three-dimensional.")
    return x


def _in_float(image, what: str, adjust):
    """TF's pattern: ``adjust`` the image as float32 in [0, 1] and convert back to its dtype, saturating."""
    ms, _ = _ms()
    x = _image(image, what)
    floats = x if x.dtype == ms.float32 else tfmath.convert_image_dtype(x, ms.float32)
    out = adjust(floats)
    return out if x.dtype == ms.float32 else tfmath.convert_image_dtype(out, x.dtype, saturate=True)


def _scalar(value) -> float:
    return float(value.asnumpy()) if hasattr(value, "asnumpy") else float(value)


def adjust_brightness(image, delta):
    """``tf.image.adjust_brightness``: ``delta`` added to every value (of the image in [0, 1])."""
    return _in_float(image, "adjust_brightness", lambda x: x + _scalar(delta))


def adjust_contrast(images, contrast_factor):
    """``tf.image.adjust_contrast``: each channel of each image moved from its mean over height and
    width, ``(x - mean) * contrast_factor + mean``."""
    _, ops = _ms()

    def contrast(x):
        mean = ops.mean(x, (-3, -2), keep_dims=True)
        return (x - mean) * _scalar(contrast_factor) + mean

    return _in_float(images, "adjust_contrast", contrast)


def _rgb_to_hsv(x):
    ms, ops = _ms()
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    value = ops.maximum(ops.maximum(r, g), b)
    spread = value - ops.minimum(ops.minimum(r, g), b)
    zero = ops.zeros_like(value)
    saturation = ops.where(value > 0, spread / ops.where(value > 0, value, ops.ones_like(value)), zero)
    norm = 1.0 / (6.0 * ops.where(spread > 0, spread, ops.ones_like(spread)))
    hue = ops.where(r == value, norm * (g - b),
                    ops.where(g == value, norm * (b - r) + 2.0 / 6.0, norm * (r - g) + 4.0 / 6.0))
    hue = ops.where(spread > 0, hue, zero)
    hue = ops.where(hue < 0, hue + 1.0, hue)
    return hue, saturation, value


def _hsv_to_rgb(hue, saturation, value):
    _, ops = _ms()
    chroma = saturation * value
    channels = []
    for n in (5.0, 3.0, 1.0):  # r, g, b: v - c * clip(min(k, 4 - k), 0, 1), k = (n + 6h) mod 6
        k = ops.remainder(hue * 6.0 + n, 6.0)
        channels.append(value - chroma * ops.clip(ops.minimum(k, 4.0 - k), 0.0, 1.0))
    return ops.stack(channels, -1)


def _rgb(x, what: str):
    if x.shape[-1] != 3:
        raise ValueError(f"{what}: the last axis must hold 3 channels (RGB), got shape {tuple(x.shape)}")
    return x


def rgb_to_hsv(images, name=None):
    """``tf.image.rgb_to_hsv``: float images in [0, 1] to hue, saturation, value in [0, 1]."""
    _, ops = _ms()
    return ops.stack(_rgb_to_hsv(_rgb(_image(images, "rgb_to_hsv"), "rgb_to_hsv")), -1)


def hsv_to_rgb(images, name=None):
    """``tf.image.hsv_to_rgb``: the inverse of :func:`rgb_to_hsv`."""
    x = _rgb(_image(images, "hsv_to_rgb"), "hsv_to_rgb")
    return _hsv_to_rgb(x[..., 0], x[..., 1], x[..., 2])


def adjust_saturation(image, saturation_factor, name=None):
    """``tf.image.adjust_saturation``: the saturation scaled by ``saturation_factor``, clipped to [0, 1]."""
    _, ops = _ms()

    def saturate(x):
        hue, saturation, value = _rgb_to_hsv(_rgb(x, "adjust_saturation"))
        return _hsv_to_rgb(hue, ops.clip(saturation * _scalar(saturation_factor), 0.0, 1.0), value)

    return _in_float(image, "adjust_saturation", saturate)


def adjust_hue(image, delta, name=None):
    """``tf.image.adjust_hue``: the hue turned by ``delta`` (in [-1, 1]) and wrapped into [0, 1)."""
    _, ops = _ms()
    delta = _scalar(delta)
    if not -1.0 <= delta <= 1.0:
        raise ValueError(f"delta must be in the interval [-1, 1], got {delta}")

    def turn(x):
        hue, saturation, value = _rgb_to_hsv(_rgb(x, "adjust_hue"))
        hue = hue + delta
        return _hsv_to_rgb(hue - ops.floor(hue), saturation, value)

    return _in_float(image, "adjust_hue", turn)


def _uniform(low: float, high: float, seed):
    return float(tfrandom.uniform([], low, high, seed=seed).asnumpy())


def random_brightness(image, max_delta, seed=None):
    """``tf.image.random_brightness``: :func:`adjust_brightness` by a delta drawn from [-max_delta, max_delta)."""
    max_delta = _scalar(max_delta)
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, _uniform(-max_delta, max_delta, seed))


def _factor_range(lower, upper, what: str):
    lower, upper = _scalar(lower), _scalar(upper)
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return lower, upper


def random_contrast(image, lower, upper, seed=None):
    """``tf.image.random_contrast``: :func:`adjust_contrast` by a factor drawn from [lower, upper)."""
    lower, upper = _factor_range(lower, upper, "random_contrast")
    return adjust_contrast(image, _uniform(lower, upper, seed))


def random_saturation(image, lower, upper, seed=None):
    """``tf.image.random_saturation``: :func:`adjust_saturation` by a factor drawn from [lower, upper)."""
    lower, upper = _factor_range(lower, upper, "random_saturation")
    return adjust_saturation(image, _uniform(lower, upper, seed))


def random_hue(image, max_delta, seed=None):
    """``tf.image.random_hue``: :func:`adjust_hue` by a delta drawn from [-max_delta, max_delta)."""
    max_delta = _scalar(max_delta)
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, _uniform(-max_delta, max_delta, seed))


def _random_flip(image, axis: int, seed, what: str):
    ms, ops = _ms()
    x = _image(image, what)
    if x.ndim == 3:
        return ops.flip(x, (axis,)) if _uniform(0.0, 1.0, seed) < 0.5 else x
    if x.ndim != 4:
        raise ValueError(f"{what}: 'image' must have either 3 or 4 dimensions, got shape {tuple(x.shape)}")
    coins = tfrandom.uniform([x.shape[0]], 0.0, 1.0, seed=seed) < 0.5
    return ops.where(coins.reshape(-1, 1, 1, 1), ops.flip(x, (axis,)), x)


def random_flip_left_right(image, seed=None):
    """``tf.image.random_flip_left_right``: each image mirrored left to right with probability 1/2."""
    return _random_flip(image, -2, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """``tf.image.random_flip_up_down``: each image upside down with probability 1/2."""
    return _random_flip(image, -3, seed, "random_flip_up_down")


def random_crop(value, size, seed=None, name=None):
    """``tf.image.random_crop``: a slice of ``size`` at an offset drawn uniformly where it fits."""
    ms, _ = _ms()
    x = value if isinstance(value, ms.Tensor) else ms.Tensor(np.asarray(value))
    size = [int(s) for s in (size.asnumpy() if hasattr(size, "asnumpy") else size)]
    if len(size) != x.ndim:
        raise ValueError(f"random_crop: size {size} needs one entry per axis of a value of shape {tuple(x.shape)}")
    if any(s > d for s, d in zip(size, x.shape)):
        raise ValueError(f"Need value.shape >= size, got {tuple(x.shape)} and {size}")
    limits = [d - s + 1 for d, s in zip(x.shape, size)]
    offsets = [int(tfrandom.uniform([], 0, limit, dtype=ms.int32, seed=seed).asnumpy()) if limit > 1 else 0
               for limit in limits]
    return x[tuple(slice(o, o + s) for o, s in zip(offsets, size))]


def _random_crop_box(draws, width: int, height: int, min_area: float, max_area: float, aspect_ratio: float):
    """TF's GenerateRandomCrop: a (x, y, width, height) of ``aspect_ratio`` whose area lies in
    [min_area, max_area], or None; ``draws`` are two uniform [0, 1) numbers for its choices."""
    def lrint(v: float) -> int:
        return int(np.rint(np.float32(v)))

    crop_height = lrint(np.sqrt(np.float32(min_area / aspect_ratio)))
    max_height = lrint(np.sqrt(np.float32(max_area / aspect_ratio)))
    if lrint(max_height * aspect_ratio) > width:
        max_height = int((width + 0.5 - 1e-7) / aspect_ratio)
    max_height = min(max_height, height)
    crop_height = min(crop_height, max_height)
    if crop_height < max_height:
        crop_height += int(draws[0] * (max_height - crop_height + 1))
    crop_width = lrint(crop_height * aspect_ratio)
    area = crop_width * crop_height
    if area < min_area:
        crop_height += 1
        crop_width = lrint(crop_height * aspect_ratio)
        area = crop_width * crop_height
    if area > max_area:
        crop_height -= 1
        crop_width = lrint(crop_height * aspect_ratio)
        area = crop_width * crop_height
    if (area < min_area or area > max_area or crop_width > width or crop_height > height
            or crop_width <= 0 or crop_height <= 0):
        return None
    y = int(draws[1] * (height - crop_height)) if crop_height < height else 0
    x = int(draws[2] * (width - crop_width)) if crop_width < width else 0
    return x, y, crop_width, crop_height


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=0, min_object_covered=0.1, aspect_ratio_range=None,
                                  area_range=None, max_attempts=None, use_image_if_no_bounding_boxes=None, name=None):
    """``tf.image.sample_distorted_bounding_box``: TF's search for a random crop (an aspect ratio and
    an area drawn within their ranges, up to ``max_attempts`` tries, the first crop that holds at
    least ``min_object_covered`` of one of ``bounding_boxes``; the whole image if none does).

    Returns TF's ``(begin, size, bboxes)``: ``[offset_y, offset_x, 0]``, ``[height, width, -1]``
    (int32) and the crop as a normalised box ``[[[ymin, xmin, ymax, xmax]]]`` (float32)."""
    ms, _ = _ms()
    height, width = tfmath.ints(image_size)[:2]
    boxes = np.asarray(bounding_boxes.asnumpy() if hasattr(bounding_boxes, "asnumpy") else bounding_boxes,
                       dtype=np.float32).reshape(-1, 4)
    low_ratio, high_ratio = (0.75, 1.33) if aspect_ratio_range is None else (float(v) for v in aspect_ratio_range)
    low_area, high_area = (0.05, 1.0) if area_range is None else (float(v) for v in area_range)
    attempts = 100 if max_attempts is None else int(max_attempts)
    covered = float(_scalar(min_object_covered))
    if low_ratio <= 0 or high_ratio <= 0 or low_area <= 0 or high_area > 1 or attempts <= 0:
        raise ValueError("aspect_ratio_range must be positive, area_range within (0, 1] and max_attempts positive")
    if not len(boxes):
        if not use_image_if_no_bounding_boxes:
            raise ValueError("No bounding boxes provided as input. One must enable use_image_if_no_bounding_boxes "
                             "if you wish to not provide any bounding boxes.")
        boxes = np.array([[0.0, 0.0, 1.0, 1.0]], dtype=np.float32)
    pixels = [(int(b[1] * width), int(b[0] * height), int(b[3] * width), int(b[2] * height)) for b in boxes]
    draws = tfrandom.uniform([attempts, 4], seed=seed or None).asnumpy()
    min_area, max_area = low_area * width * height, high_area * width * height
    crop = (0, 0, width, height)
    for draw in draws:
        ratio = float(np.float32(draw[0]) * np.float32(high_ratio - low_ratio) + np.float32(low_ratio))
        found = _random_crop_box(draw[1:], width, height, min_area, max_area, ratio)
        if found is None:
            continue
        x, y, w, h = found
        for x0, y0, x1, y1 in pixels:
            box_area = (x1 - x0) * (y1 - y0)
            overlap = max(0, min(x + w, x1) - max(x, x0)) * max(0, min(y + h, y1) - max(y, y0))
            if box_area > 0 and overlap / box_area >= covered:
                crop = found
                break
        else:
            continue
        break
    x, y, w, h = crop
    begin = ms.Tensor(np.array([y, x, 0], dtype=np.int32))
    size = ms.Tensor(np.array([h, w, -1], dtype=np.int32))
    box = ms.Tensor(np.array([[[y / height, x / width, (y + h) / height, (x + w) / width]]], dtype=np.float32))
    return begin, size, box


def total_variation(images, name=None):
    """TF's ``total_variation``: the sum of absolute differences of neighbouring pixels down and across,
    over the whole image (3-D input, a scalar) or per image of a batch (4-D, a vector). Integer
    images subtract in their dtype, as TF's do."""
    _, ops = _ms()
    x = _image(images, "total_variation")
    if x.ndim == 3:
        down, across, axis = x[1:, :, :] - x[:-1, :, :], x[:, 1:, :] - x[:, :-1, :], None
    elif x.ndim == 4:
        down, across, axis = x[:, 1:, :, :] - x[:, :-1, :, :], x[:, :, 1:, :] - x[:, :, :-1, :], (1, 2, 3)
    else:
        raise ValueError("'images' must be either 3 or 4-dimensional.")
    # (in the images' dtype: MindSpore's sum would widen int32 to int64)
    return ops.sum(ops.abs(down), dim=axis, dtype=x.dtype) + ops.sum(ops.abs(across), dim=axis, dtype=x.dtype)


# TF's Sobel kernels: vertical (dy) then horizontal (dx) gradients, applied as a cross-correlation
_SOBEL = (((-1, -2, -1), (0, 0, 0), (1, 2, 1)), ((-1, 0, 1), (-2, 0, 2), (-1, 0, 1)))


def sobel_edges(image):
    """TF's ``sobel_edges``: each channel of a ``[batch, height, width, depth]`` batch, reflect-padded by
    one pixel, correlated with the two Sobel kernels; ``[batch, height, width, depth, 2]`` (dy, dx)."""
    ms, ops = _ms()
    x = _image(image, "sobel_edges")
    if x.ndim != 4:
        raise ValueError(f"sobel_edges: 'image' (shape {tuple(x.shape)}) must be 4-D [batch, height, width, depth]")
    height, width = int(x.shape[1]), int(x.shape[2])
    nchw = ops.transpose(x, (0, 3, 1, 2))
    padded = ops.transpose(ops.pad(nchw, (1, 1, 1, 1), mode="reflect"), (0, 2, 3, 1))
    maps = []
    for kernel in _SOBEL:
        total = None
        for a, row in enumerate(kernel):
            for b, weight in enumerate(row):
                if weight:
                    term = padded[:, a:a + height, b:b + width, :] * weight
                    total = term if total is None else total + term
        maps.append(total)
    return ops.stack(maps, axis=-1)


# -- image quality: psnr, ssim, ssim_multiscale --------------------------------------------------

def _quality_pair(img1, img2, max_val, what: str):
    """TF's preamble: the last three axes must agree, batch axes broadcast; both images and
    ``max_val`` (first cast to the images' dtype) go to float32 as ``convert_image_dtype`` takes
    them, so a uint8 ``max_val=255`` becomes 1.0 beside images in [0, 1]."""
    ms, _ = _ms()
    x, y = _image(img1, what), _image(img2, what)
    if tuple(x.shape[-3:]) != tuple(y.shape[-3:]):
        raise ValueError(f"Two images are not compatible: {tuple(x.shape)} and {tuple(y.shape)}")
    for a, b in zip(reversed(x.shape[:-3]), reversed(y.shape[:-3])):
        if not (a == 1 or b == 1 or a == b):
            raise ValueError(f"Two images are not compatible: {tuple(x.shape)} and {tuple(y.shape)}")
    if isinstance(max_val, ms.Tensor):
        top = max_val.astype(x.dtype)
    else:
        from .tensors import numpy_dtype

        top = ms.Tensor(np.asarray(_scalar(max_val)).astype(numpy_dtype(x.dtype)))

    def floats(t):
        # (a float32 image is taken as it is: convert_image_dtype would copy it)
        return t if t.dtype == ms.float32 else tfmath.convert_image_dtype(t, ms.float32)

    return floats(x), floats(y), floats(top)


def psnr(a, b, max_val, name=None):
    """TF's ``psnr``: ``20 log10(max_val) - 10 log10(mse)`` per image, the mean squared error over
    the last three axes (height, width, channels) of the float32 images."""
    _, ops = _ms()
    a, b, top = _quality_pair(a, b, max_val, "psnr")
    mse = ops.mean(ops.square(a - b), (-3, -2, -1))
    # TF's order of operations and float32 constants: 20 * log(max) / log(10.0) - float32(10 / ln 10) * log(mse)
    return 20.0 * ops.log(top) / float(np.log(np.float32(10.0))) - float(np.float32(10 / np.log(10))) * ops.log(mse)


def _gauss_taps(size: int, sigma: float):
    """One axis of TF's ``_fspecial_gauss``: TF takes the softmax of ``-(i² + j²) / (2σ²)`` over the
    size x size grid, which is the outer product of this softmax over one axis with itself."""
    ms, _ = _ms()
    coords = np.arange(size, dtype=np.float64) - (size - 1) / 2.0
    g = -0.5 * coords ** 2 / np.float64(np.float32(sigma)) ** 2
    taps = np.exp(g - g.max())
    return ms.Tensor((taps / taps.sum()).astype(np.float32))


def _blur(x, taps):
    """TF's ``reducer``: each channel of each image correlated with the Gaussian, 'VALID' (no padding),
    here as two one-axis passes; ``[..., h, w, c]`` becomes ``[..., h - k + 1, w - k + 1, c]``."""
    _, ops = _ms()
    size = int(taps.shape[0])
    *lead, height, width, channels = (int(d) for d in x.shape)
    planes = ops.transpose(x.reshape((-1, height, width, channels)), (0, 3, 1, 2)).reshape((-1, 1, height, width))
    planes = ops.conv2d(planes, taps.reshape((1, 1, size, 1)))
    planes = ops.conv2d(planes, taps.reshape((1, 1, 1, size)))
    height, width = height - size + 1, width - size + 1
    out = ops.transpose(planes.reshape((-1, channels, height, width)), (0, 2, 3, 1))
    return out.reshape((*lead, height, width, channels))


def _ssim_per_channel(x, y, top, filter_size, filter_sigma, k1, k2, index_map=False):
    """TF's ``_ssim_per_channel`` with ``_ssim_helper``: the luminance and contrast-structure terms
    from Gaussian-weighted local means (biased covariances: TF's compensation is 1.0), averaged
    over height and width unless ``index_map``; ``(ssim, cs)``, each ``[..., channels]``."""
    _, ops = _ms()
    size = int(_scalar(filter_size))
    for image in (x, y):
        if image.shape[-3] < size or image.shape[-2] < size:
            raise ValueError(f"ssim: each image ({tuple(image.shape)}) must be at least filter_size ({size}) high "
                             f"and wide")
    taps = _gauss_taps(size, _scalar(filter_sigma))
    c1 = ops.square(top * float(k1))
    c2 = ops.square(top * float(k2))
    mean0, mean1 = _blur(x, taps), _blur(y, taps)
    num0 = mean0 * mean1 * 2.0
    den0 = ops.square(mean0) + ops.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = _blur(x * y, taps) * 2.0
    den1 = _blur(ops.square(x) + ops.square(y), taps)
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    if index_map:
        return luminance * cs, cs
    return ops.mean(luminance * cs, (-3, -2)), ops.mean(cs, (-3, -2))


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, return_index_map=False):
    """TF's ``ssim``: the structural similarity of each image pair (Gaussian window of ``filter_size``
    and ``filter_sigma``, constants ``(k1 max_val)²`` and ``(k2 max_val)²``), averaged over height,
    width and then channels; with ``return_index_map`` the per-pixel map, averaged over channels."""
    _, ops = _ms()
    x, y, top = _quality_pair(img1, img2, max_val, "ssim")
    per_channel, _ = _ssim_per_channel(x, y, top, filter_size, filter_sigma, k1, k2, return_index_map)
    return ops.mean(per_channel, -1)


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def _halve(x):
    """TF's step between scales: an odd height or width gets its last row or column repeated
    (TF's SYMMETRIC pad of one), then 2x2 average pooling, stride 2."""
    _, ops = _ms()
    *lead, height, width, channels = (int(d) for d in x.shape)
    if height % 2:
        x = ops.concat([x, x[..., -1:, :, :]], -3)
    if width % 2:
        x = ops.concat([x, x[..., :, -1:, :]], -2)
    height, width = (height + 1) // 2, (width + 1) // 2
    blocks = x.reshape((*lead, height, 2, width, 2, channels))
    return ops.mean(blocks, (-4, -2))


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11, filter_sigma=1.5, k1=0.01,
                    k2=0.03):
    """TF's ``ssim_multiscale``: the contrast-structure term at each of ``len(power_factors)`` scales
    (each half the size of the one before) and the full SSIM at the last, each through a ReLU,
    raised to its power factor and multiplied; averaged over channels."""
    ms, ops = _ms()
    x, y, top = _quality_pair(img1, img2, max_val, "ssim_multiscale")
    factors = [float(f) for f in (power_factors.asnumpy() if hasattr(power_factors, "asnumpy") else power_factors)]
    terms = []
    for scale in range(len(factors)):
        if scale:
            x, y = _halve(x), _halve(y)
        per_channel, cs = _ssim_per_channel(x, y, top, filter_size, filter_sigma, k1, k2)
        terms.append(ops.relu(cs))
    terms[-1] = ops.relu(per_channel)  # (the last scale counts its luminance too: its SSIM, not its cs)
    stacked = ops.stack(terms, -1)
    weights = ms.Tensor(np.array(factors, np.float32))
    return ops.mean(ops.prod(ops.pow(stacked, weights), -1), -1)
