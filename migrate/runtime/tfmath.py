"""TF's norm clipping and split, pad, resize, and eager control flow (while_loop, case), on MindSpore tensors.

MindSpore's ``ops.clip_by_norm`` divides by ``norm + 1e-6`` and clips the norm of all its
inputs together; TF's ``clip_by_norm`` clips one tensor (over ``axes``) by
``t * clip_norm / max(norm, clip_norm)``, and ``clip_by_global_norm`` scales every tensor by
``clip_norm * min(1 / global_norm, 1 / clip_norm)``. These follow TF's kernels step for step,
so clipped gradients are the ones TF computes.
"""

from __future__ import annotations

import collections


def _ops():
    from mindspore import ops

    return ops


def _tensor(value, like=None):
    import mindspore as ms

    if isinstance(value, ms.Tensor):
        return value
    return ms.Tensor(value, like.dtype if like is not None else None)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """``tf.clip_by_norm``: ``t * clip_norm / max(l2norm(t, axes), clip_norm)``; a zero ``t`` stays zero."""
    ops = _ops()
    t = _tensor(t)
    clip_norm = _tensor(clip_norm, t)
    axis = tuple(axes) if isinstance(axes, (list, tuple)) else axes
    l2sum = ops.sum(t * t, axis, keepdim=True) if axis is not None else ops.sum(t * t).reshape((1,) * t.ndim)
    positive = l2sum > 0
    l2norm = ops.where(positive, ops.sqrt(ops.where(positive, l2sum, ops.ones_like(l2sum))), l2sum)
    return t * clip_norm / ops.maximum(l2norm, clip_norm)


def global_norm(t_list, name=None):
    """``tf.linalg.global_norm``: the square root of every tensor's sum of squares, added up (Nones skipped)."""
    ops = _ops()
    sums = [ops.sum(_tensor(t) * _tensor(t)) for t in t_list if t is not None]
    if not sums:
        return _tensor(0.0)
    return ops.sqrt(ops.addn(sums) if len(sums) > 1 else sums[0])


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """``tf.clip_by_global_norm``: ``(clipped list, global norm)``; every tensor is NaN when the norm is
    infinite or NaN, as in TF."""
    if isinstance(t_list, (str, bytes)) or not hasattr(t_list, "__iter__"):
        raise TypeError("`t_list` should be a sequence of tensors. Received: " + type(t_list).__name__)
    t_list = list(t_list)
    norm = global_norm(t_list) if use_norm is None else _tensor(use_norm)
    one = _tensor(1.0, norm)
    clip = _tensor(clip_norm, norm)
    ops = _ops()
    scale = clip * ops.minimum(one / norm, one / clip) + (norm - norm)
    clipped = [None if t is None else _tensor(t) * scale.astype(_tensor(t).dtype) for t in t_list]
    return clipped, norm


def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """``tf.split``: an int ``n`` cuts ``value`` into ``n`` equal parts along ``axis`` (it must
    divide the axis); a list of sizes cuts parts of those sizes, one of which may be -1 (the
    rest). A list, as TF returns."""
    ops = _ops()
    value = _tensor(value)
    axis = int(axis.asnumpy()) if hasattr(axis, "asnumpy") else int(axis)
    length = value.shape[axis]
    if hasattr(num_or_size_splits, "asnumpy"):
        num_or_size_splits = num_or_size_splits.asnumpy()
    if isinstance(num_or_size_splits, (list, tuple)) or getattr(num_or_size_splits, "ndim", 0) == 1:
        sizes = [int(s) for s in num_or_size_splits]
        if sizes.count(-1) > 1:
            raise ValueError("tf.split: at most one size may be -1")
        if -1 in sizes:
            sizes[sizes.index(-1)] = length - (sum(sizes) + 1)
        if sum(sizes) != length or any(s < 0 for s in sizes):
            raise ValueError(f"tf.split: sizes {sizes} do not add up to the axis length {length}")
        return list(ops.split(value, sizes, axis))
    n = int(num_or_size_splits)
    if n <= 0 or length % n:
        raise ValueError(f"tf.split: the axis length {length} is not divisible by {n}")
    return list(ops.split(value, length // n, axis))


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """``tf.pad``: ``paddings[d] = [before, after]`` for every dimension ``d``; ``mode``
    ``CONSTANT`` (with ``constant_values``), ``REFLECT`` (the edge not repeated) or
    ``SYMMETRIC`` (the edge repeated), in any case, as in TF."""
    ops = _ops()
    tensor = _tensor(tensor)
    if hasattr(paddings, "asnumpy"):
        paddings = paddings.asnumpy()
    pairs = [(int(before), int(after)) for before, after in (list(p) for p in paddings)]
    if len(pairs) != tensor.ndim:
        raise ValueError(f"tf.pad: paddings must give [before, after] for each of the {tensor.ndim} dimensions, "
                         f"not {len(pairs)}")
    kind = str(mode).upper()
    if kind == "CONSTANT":
        flat = tuple(v for before, after in reversed(pairs) for v in (before, after))
        value = constant_values.asnumpy().item() if hasattr(constant_values, "asnumpy") else constant_values
        return ops.pad(tensor, flat, mode="constant", value=value)
    if kind not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f"tf.pad: mode must be CONSTANT, REFLECT or SYMMETRIC, not {mode!r}")
    shift = 1 if kind == "REFLECT" else 0
    for axis, (before, after) in enumerate(pairs):
        size = tensor.shape[axis]
        if before + shift > size or after + shift > size:
            raise ValueError(f"tf.pad: {kind} padding of ({before}, {after}) is too large for dimension {axis} "
                             f"of size {size}")
        parts = []
        if before:
            parts.append(ops.flip(ops.narrow(tensor, axis, shift, before), (axis,)))
        parts.append(tensor)
        if after:
            parts.append(ops.flip(ops.narrow(tensor, axis, size - after - shift, after), (axis,)))
        tensor = ops.cat(parts, axis) if len(parts) > 1 else tensor
    return tensor


def image_resize(images, size, method="bilinear", preserve_aspect_ratio=False, antialias=False, name=None):
    """``tf.image.resize`` with TF 2's bilinear sampling (half-pixel centres, no antialiasing)
    on ``[height, width, channels]`` or ``[batch, height, width, channels]`` images; float32
    out, as TF gives for bilinear."""
    import mindspore as ms

    ops = _ops()
    if str(method).lower() != "bilinear" or preserve_aspect_ratio or antialias:
        raise NotImplementedError("tf.image.resize: only method='bilinear' without preserve_aspect_ratio or "
                                  "antialias has TF's numbers here")
    images = _tensor(images)
    single = images.ndim == 3
    if images.ndim not in (3, 4):
        raise ValueError(f"tf.image.resize: images must have rank 3 or 4, not {images.ndim}")
    batch = images[None] if single else images
    height, width = (int(v) for v in (size.asnumpy() if hasattr(size, "asnumpy") else size))
    nchw = batch.astype(ms.float32).transpose(0, 3, 1, 2)
    out = ops.interpolate(nchw, size=(height, width), mode="bilinear", align_corners=False)
    out = out.transpose(0, 2, 3, 1)
    return out[0] if single else out


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, maximum_iterations=None, name=None):
    """``tf.while_loop`` as TF 2 runs it eagerly: a Python loop that returns ``loop_vars``'s structure.

    ``body(*loop_vars)`` gives the next loop variables; ``maximum_iterations`` bounds the
    loop; ``cond``'s result reads as a bool; numbers among the results become tensors
    with TF's dtypes, as TF converts them.
    """
    from .tensors import map_structure, tf_inferred

    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    if parallel_iterations < 1:
        raise TypeError("'parallel_iterations' must be a positive integer.")
    if not loop_vars:
        raise ValueError("'loop_vars' must be provided.")
    if maximum_iterations is not None:
        maximum_iterations = int(maximum_iterations)
    iterations = 0
    while (maximum_iterations is None or iterations < maximum_iterations) and bool(cond(*loop_vars)):
        loop_vars = body(*loop_vars)
        iterations += 1

    def convert(value):
        return value if hasattr(value, "asnumpy") else _tensor(tf_inferred(value))

    return map_structure(convert, loop_vars)


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """``tf.case`` as TF runs it eagerly: the function of the first true predicate, else ``default``.

    With ``exclusive=True`` more than one true predicate is an error, as in TF; so is no true
    predicate without a ``default`` (TF's InvalidArgumentError; a ValueError here).
    """
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    pairs = list(pred_fn_pairs)
    for pred, fn in pairs:
        if not callable(fn):
            raise TypeError("fn for pred %s must be callable." % getattr(pred, "name", pred))
    truths = [bool(pred) for pred, _ in pairs]
    if exclusive and sum(truths) > 1:
        raise ValueError(f"More than one condition evaluated as True but exclusive=True. Conditions: "
                         f"{[str(p) for p, _ in pairs]}, Values: {truths}")
    for truth, (_, fn) in zip(truths, pairs):
        if truth:
            return fn()
    if default is not None:
        return default()
    # TF (eager) asserts that some predicate holds when there is no default.
    raise ValueError(f"Input error: None of conditions evaluated as True: {truths}")


def fill(dims, value, name=None):
    """``tf.fill``: a tensor of shape ``dims`` holding ``value``, in the dtype TF infers for ``value``
    (a Python float is float32, an int int32; a tensor or NumPy value keeps its own)."""
    import mindspore as ms
    import numpy as np

    from .tensors import tf_inferred

    shape = tuple(int(d) for d in (dims.asnumpy() if hasattr(dims, "asnumpy") else dims))
    if isinstance(value, ms.Tensor):
        if value.size != 1:
            raise ValueError(f"tf.fill: value must be a scalar, got shape {tuple(value.shape)}")
        return _ops().broadcast_to(value.reshape(()), shape).copy()
    scalar = tf_inferred(value)
    if scalar.ndim != 0:
        raise ValueError(f"tf.fill: value must be a scalar, got shape {scalar.shape}")
    return ms.Tensor(np.full(shape, scalar, dtype=scalar.dtype))


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """``tf.image.convert_image_dtype``: integers span ``[0, MAX]``, floats ``[0, 1]``, as TF scales them.

    int -> float multiplies by ``1 / MAX`` (in the float type); float -> int multiplies by
    ``MAX + 0.5`` and casts (``saturate`` clamps first); int -> int divides or multiplies by
    the ratio of the ranges; float -> float casts. The arithmetic is TF's, step for step.
    """
    import mindspore as ms
    import numpy as np

    from .tensors import numpy_dtype

    image = _tensor(image)
    source, target = numpy_dtype(image.dtype), numpy_dtype(dtype)
    if target.kind not in "fiu":
        raise AttributeError("dtype must be either floating point or integer")
    if source.kind not in "fiu":
        raise AttributeError("image dtype must be either floating point or integer")
    ms_target = dtype if not isinstance(dtype, (str, np.dtype, type)) else ms.Tensor(np.zeros((), target)).dtype
    if source == target:
        return image.copy()
    ops = _ops()
    if source.kind in "iu" and target.kind in "iu":
        scale_in, scale_out = int(np.iinfo(source).max), int(np.iinfo(target).max)
        if scale_in > scale_out:
            scaled = ops.floor_divide(image, _tensor(np.array((scale_in + 1) // (scale_out + 1), source)))
            return _saturate_cast(scaled, target, ms_target) if saturate else scaled.astype(ms_target)
        cast = _saturate_cast(image, target, ms_target) if saturate else image.astype(ms_target)
        return cast * _tensor(np.array((scale_out + 1) // (scale_in + 1), target))
    if source.kind == "f" and target.kind == "f":
        return image.astype(ms_target)
    if source.kind in "iu":
        return image.astype(ms_target) * _tensor(np.array(1.0 / np.iinfo(source).max, target))
    scaled = image * _tensor(np.array(np.iinfo(target).max + 0.5, source))
    return _saturate_cast(scaled, target, ms_target) if saturate else scaled.astype(ms_target)


def _saturate_cast(value, target, ms_target):
    """TF's saturate_cast: clamp into the target type's range, then cast."""
    import numpy as np

    from .tensors import numpy_dtype

    info = np.iinfo(target) if target.kind in "iu" else np.finfo(target)
    source = numpy_dtype(value.dtype)
    low, high = info.min, info.max
    if source.kind == "f":
        low, high = max(low, np.finfo(source).min), min(high, np.finfo(source).max)
    elif source.kind in "iu":
        low, high = max(low, np.iinfo(source).min), min(high, np.iinfo(source).max)
    clipped = _ops().clip_by_value(value, _tensor(np.array(low, source)), _tensor(np.array(high, source)))
    return clipped.astype(ms_target)


def top_k(input, k=1, sorted=True, index_type=None, name=None):  # noqa: A002 - TF's parameter names
    """``tf.math.top_k``: ``TopKV2(values, indices)`` of the ``k`` largest entries along the last axis.

    Equal values keep their order (the lower index first), as TF's; ``sorted=False`` still
    returns them sorted, which TF allows. ``index_type`` (int32 by default) is honoured.
    A descending stable sort, then the first ``k``: MindSpore's ``ops.topk`` orders ties
    differently on CPU.
    """
    import mindspore as ms

    values, indices = _ops().sort(_tensor(input), axis=-1, descending=True)
    values, indices = values[..., :int(k)], indices[..., :int(k)]
    if index_type is not None and index_type != indices.dtype:
        indices = indices.astype(index_type if not isinstance(index_type, str) else getattr(ms, index_type))
    return TopKV2(values, indices)


def divide_no_nan(x, y, name=None):
    """``tf.math.divide_no_nan``: ``x / y``, and 0 wherever ``y`` is 0 (MindSpore's ``DivNoNan`` kernel)."""
    return _ops().DivNoNan()(_tensor(x), _tensor(y, _tensor(x)))


TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])  # TF's result of top_k
