"""TF's norm clipping and split, pad, resize, norms, masks, image geometry, Python calls and eager
control flow (while_loop, case, map_fn), on MindSpore tensors.

MindSpore's ``ops.clip_by_norm`` divides by ``norm + 1e-6`` and clips the norm of all its
inputs together; TF's ``clip_by_norm`` clips one tensor (over ``axes``) by
``t * clip_norm / max(norm, clip_norm)``, and ``clip_by_global_norm`` scales every tensor by
``clip_norm * min(1 / global_norm, 1 / clip_norm)``. These follow TF's kernels step for step,
so clipped gradients are the ones TF computes.
"""

from __future__ import annotations

import collections
import functools

import numpy as np

from .tferrors import InvalidArgumentError


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


class ResizeMethod:
    """``tf.image.ResizeMethod``'s constants this module resizes with (TF's are these strings)."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"


class ResizeMethodV1:
    """TF 1's ``tf.compat.v1.image.ResizeMethod`` constants :func:`image_resize_v1` resizes with (TF's are these ints)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2


def image_resize(images, size, method="bilinear", preserve_aspect_ratio=False, antialias=False, name=None):
    """``tf.image.resize`` on ``[height, width, channels]`` or ``[batch, height, width, channels]``
    images, sampling as TF 2 does: bilinear with half-pixel centres (float32 out), or nearest
    neighbour taking source pixel ``min(floor((i + 0.5) * in / out), in - 1)`` (the images' dtype
    out)."""
    import mindspore as ms

    ops = _ops()
    method = str(method).lower()
    if method not in ("bilinear", "nearest", "bicubic") or preserve_aspect_ratio or antialias:
        raise NotImplementedError("tf.image.resize: only method 'bilinear', 'nearest' or 'bicubic' without "
                                  "preserve_aspect_ratio or antialias has TF's numbers here")
    batch, single, height, width = _image_batch(images, size, "tf.image.resize")
    if method == "bicubic":
        out = _bicubic(batch, height, width, False, True)
        return out[0] if single else out
    if method == "nearest":
        import numpy as np

        def sources(n_in: int, n_out: int):
            scale = np.float32(n_in) / np.float32(n_out)  # TF's kernel computes in float32
            index = np.floor((np.arange(n_out, dtype=np.float32) + np.float32(0.5)) * scale).astype(np.int32)
            return ms.Tensor(np.minimum(index, n_in - 1))

        out = ops.gather(batch, sources(batch.shape[1], height), 1)
        out = ops.gather(out, sources(batch.shape[2], width), 2)
        return out[0] if single else out
    nchw = batch.astype(ms.float32).transpose(0, 3, 1, 2)
    out = ops.interpolate(nchw, size=(height, width), mode="bilinear", align_corners=False)
    out = out.transpose(0, 2, 3, 1)
    return out[0] if single else out


def meshgrid(*args, **kwargs):
    """``tf.meshgrid``: N coordinate tensors, each input flattened to one axis; ``indexing="xy"``
    (TF's default: the first two axes swapped) or ``"ij"``; a list, as TF returns. Inputs that
    are not tensors take TF's dtypes (a float list float32, an int list int32)."""
    from .tensors import tf_inferred

    ms = _ms()
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Key word arguments {list(kwargs)} not supported. Supported keyword arguments are name, indexing")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got '{indexing}'")
    tensors = [arg if isinstance(arg, ms.Tensor) else ms.Tensor(tf_inferred(arg)) for arg in args]
    if not tensors:
        return []
    if any(t.dtype != tensors[0].dtype for t in tensors):
        raise InvalidArgumentError("tf.meshgrid: all inputs must have the same dtype")
    if len(tensors) == 1:
        return [tensors[0].reshape(-1)]
    return list(_ops().meshgrid(*(t.reshape(-1) for t in tensors), indexing=indexing))


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


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None, fn_output_signature=None):
    """``tf.map_fn`` as TF 2 runs it eagerly: ``fn`` called on each slice of ``elems`` along its
    first axis, in order, and what it returns stacked along a new first axis.

    ``elems`` may be a structure of tensors of one length (``fn`` gets the structure of their
    slices); ``fn``'s result may be a structure too, stacked leaf by leaf. Numbers ``fn``
    returns become tensors with TF's dtypes. Gradients flow through the slices and the stack.
    ``dtype``/``fn_output_signature`` only describe the result, which here is read from it (a
    Python number ``fn`` returns takes the declared dtype); with no element to call ``fn`` on,
    the result cannot be read, which is an error.
    """
    from . import tfnest
    from .tensors import tf_inferred

    ops = _ops()
    leaves = [_tensor(leaf) for leaf in tfnest.flatten(elems)]
    if not leaves:
        raise ValueError("elems must be a Tensor or (possibly nested) sequence of Tensors. Got []")
    count = leaves[0].shape[0] if leaves[0].ndim else None
    if count is None or any(leaf.ndim == 0 or leaf.shape[0] != count for leaf in leaves):
        raise ValueError("Elements in elems must be 1+ dimensional Tensors, all with the same first dimension; "
                         f"got shapes {[tuple(leaf.shape) for leaf in leaves]}")
    if count == 0:
        raise ValueError("map_fn over 0 elements: the result's shape and dtype come from fn's results here, "
                         "and there are none")
    results = [fn(tfnest.pack_sequence_as(elems, [leaf[i] for leaf in leaves])) for i in range(count)]
    flat = [tfnest.flatten(r) for r in results]
    signature = fn_output_signature if fn_output_signature is not None else dtype
    dtypes = tfnest.flatten(signature) if signature is not None else []
    if len(dtypes) != len(flat[0]):
        dtypes = [None] * len(flat[0])

    def tensor(value, dtype):
        """A Python number ``fn`` returned, as a tensor of the declared dtype (else TF's inferred one)."""
        if hasattr(value, "asnumpy"):
            return value
        import mindspore as ms

        if isinstance(dtype, ms.dtype.Type):
            return ms.Tensor(np.asarray(value), dtype)
        return _tensor(tf_inferred(value))

    stacked = [ops.stack([tensor(v, dtypes[j]) for v in column]) for j, column in enumerate(zip(*flat))]
    return tfnest.pack_sequence_as(results[0], stacked)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """``tf.vectorized_map``: what TF's vectorized form computes, computed as ``map_fn`` does
    (TF's own fallback): ``fn`` on each slice of ``elems``, the results stacked."""
    return map_fn(fn, elems)


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """``tf.case`` as TF runs it eagerly: the function of the first true predicate, else ``default``.

    With ``exclusive=True`` more than one true predicate is an error, as in TF; so is no true
    predicate without a ``default`` (TF's InvalidArgumentError, :class:`tferrors.InvalidArgumentError`).
    """
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    pairs = list(pred_fn_pairs)
    for pred, fn in pairs:
        if not callable(fn):
            raise TypeError("fn for pred %s must be callable." % getattr(pred, "name", pred))
    truths = [bool(pred) for pred, _ in pairs]
    if exclusive and sum(truths) > 1:
        raise InvalidArgumentError(f"More than one condition evaluated as True but exclusive=True. Conditions: "
                         f"{[str(p) for p, _ in pairs]}, Values: {truths}")
    for truth, (_, fn) in zip(truths, pairs):
        if truth:
            return fn()
    if default is not None:
        return default()
    # TF (eager) asserts that some predicate holds when there is no default.
    raise InvalidArgumentError(f"Input error: None of conditions evaluated as True: {truths}")


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """``tf.switch_case`` as TF runs it eagerly: the function at ``branch_index`` (a list, or a dict
    of index keys), else ``default``, else the last function, as TF does."""
    index = int(branch_index.asnumpy() if hasattr(branch_index, "asnumpy") else branch_index)
    if isinstance(branch_fns, dict):
        pairs = sorted(branch_fns.items())
        if [key for key, _ in pairs] != list(range(len(pairs))):
            raise ValueError("branch indices (keys) must form contiguous range of [0 to N) if branch_fns is a dict")
        fns = [fn for _, fn in pairs]
    else:
        fns = [fn[1] if isinstance(fn, tuple) else fn for fn in branch_fns]
    if not fns:
        raise ValueError("Must provide at least one item in branch_fns")
    for fn in fns + ([default] if default is not None else []):
        if not callable(fn):
            raise TypeError(f"fn for index {index} must be callable.")
    if 0 <= index < len(fns):
        return fns[index]()
    return default() if default is not None else fns[-1]()


def sequence_mask(lengths, maxlen=None, dtype=None, name=None):
    """``tf.sequence_mask``: ``mask[..., j] = j < lengths[...]``, ``maxlen`` the longest length when
    not given; bool unless ``dtype``."""
    import mindspore as ms

    ops = _ops()
    lengths = _tensor(lengths)
    limit = int(lengths.max().asnumpy()) if maxlen is None else int(maxlen.asnumpy() if hasattr(maxlen, "asnumpy")
                                                                     else maxlen)
    mask = ops.arange(max(limit, 0), dtype=lengths.dtype) < lengths.expand_dims(-1)
    return mask if dtype is None or dtype in (bool, ms.bool_) else mask.astype(dtype)


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
    import numpy as np

    from .tensors import numpy_dtype

    image = _tensor(image)
    source, target = numpy_dtype(image.dtype), numpy_dtype(dtype)
    if target.kind not in "fiu":
        raise AttributeError("dtype must be either floating point or integer")
    if source.kind not in "fiu":
        raise AttributeError("image dtype must be either floating point or integer")
    ms_target = _ms_dtype(dtype, target)
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


def _ms_dtype(dtype, target):
    """MindSpore's dtype for ``dtype`` (already one, or a NumPy dtype or name whose NumPy form is ``target``)."""
    import mindspore as ms
    import numpy as np

    return dtype if not isinstance(dtype, (str, np.dtype, type)) else ms.Tensor(np.zeros((), target)).dtype


def saturate_cast(value, dtype, name=None):
    """``tf.dtypes.saturate_cast``: ``value`` clamped into ``dtype``'s range (where the input
    type reaches past it), then cast; a complex input to a real type keeps its real part."""
    from .tensors import numpy_dtype

    value = _tensor(value)
    target = numpy_dtype(dtype)
    ms_target = _ms_dtype(dtype, target)
    if value.dtype == ms_target:
        return value
    if numpy_dtype(value.dtype).kind == "c" and target.kind != "c":
        value = _ops().real(value)
    return _saturate_cast(value, target, ms_target)


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
    low, high = np.array(low, source), np.array(high, source)
    if source.kind == "f":  # (a limit the float type cannot hold rounds toward zero, as TF's: it must cast)
        if float(high) > info.max:
            high = np.nextafter(high, source.type(0))
        if float(low) < info.min:
            low = np.nextafter(low, source.type(0))
    clipped = _ops().clip_by_value(value, _tensor(low), _tensor(high))
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


# --- norms, masks, counts, sizes -------------------------------------------------------------------

def _axes(axis, ndim: int):
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) % ndim for a in axis)
    return int(axis) % ndim


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):  # noqa: A002 - TF's parameter names
    """``tf.norm``: a vector norm over ``axis`` (all of the tensor when None) or a matrix norm over a
    pair of axes, with TF's formulas: ``"euclidean"`` (``"fro"`` for a matrix, 2 for a vector) is
    ``sqrt(sum(x * x))`` (a zero tensor's gradient is NaN, as TF's), 1 and ``inf`` the absolute sum
    and maximum (for a matrix, the largest column and row sums), another ``p > 0``
    ``sum(|x|**p)**(1/p)``. A matrix's spectral norm (``ord=2`` over two axes) is not provided."""
    import numpy as np

    ops = _ops()
    x = _tensor(tensor)
    keep = bool(keepdims)
    axes = _axes(axis, x.ndim)
    matrix = isinstance(axes, tuple) and len(axes) == 2
    if isinstance(axes, tuple) and len(axes) not in (1, 2):
        raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
    if isinstance(axes, tuple) and len(axes) == 1:
        axes = axes[0]
    if ord in ("euclidean", "fro") or (ord == 2 and not matrix):
        if ord == "fro" and not matrix:
            raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
        return ops.sqrt(ops.sum(x * x, dim=axes, keepdim=keep))
    if matrix:
        rows, cols = axes
        if ord == 1:
            sums = ops.sum(ops.abs(x), dim=rows, keepdim=True)
            return _squeezed(ops.amax(sums, axis=cols, keepdims=True), axes, keep)
        if ord == np.inf:
            sums = ops.sum(ops.abs(x), dim=cols, keepdim=True)
            return _squeezed(ops.amax(sums, axis=rows, keepdims=True), axes, keep)
        # (TF also takes 2 here, the spectral norm, through an SVD: not provided)
        raise ValueError(f"'ord' must be a supported matrix norm in ['euclidean', 'fro', 1, inf], got {ord}")
    if ord == 1:
        return ops.sum(ops.abs(x), dim=axes, keepdim=keep)
    if ord == np.inf:
        return ops.amax(ops.abs(x), axis=axes if axes is not None else (), keepdims=keep)
    if isinstance(ord, (int, float)) and ord > 0:
        return ops.pow(ops.sum(ops.pow(ops.abs(x), float(ord)), dim=axes, keepdim=keep), 1.0 / float(ord))
    raise ValueError(f"'ord' must be a supported vector norm, got {ord}")


def _squeezed(value, axes, keep):
    return value if keep else _ops().squeeze(value, tuple(axes))


def boolean_mask(tensor, mask, axis=None, name=None):
    """``tf.boolean_mask``: the entries of ``tensor`` where ``mask`` (matching ``tensor``'s dimensions from
    ``axis``, 0 by default) is True, those dimensions flattened into one. A gather: gradients flow."""
    import mindspore as ms
    import numpy as np

    from .tensors import to_numpy

    x = _tensor(tensor)
    m = to_numpy(mask).astype(bool, copy=False)
    start = 0 if axis is None else int(axis) % x.ndim
    k = m.ndim
    if k == 0:
        raise ValueError("mask cannot be scalar.")
    shape = tuple(x.shape)
    if shape[start:start + k] != m.shape:
        raise ValueError(f"Shapes {shape[start:start + k]} and {m.shape} are incompatible")
    flat = x.reshape(shape[:start] + (int(np.prod(m.shape)),) + shape[start + k:])
    picked = ms.Tensor(np.flatnonzero(m.reshape(-1)).astype(np.int32))
    return _ops().gather(flat, picked, start)


def count_nonzero(input, axis=None, keepdims=None, dtype=None, name=None):  # noqa: A002 - TF's parameter names
    """``tf.math.count_nonzero``: how many entries differ from zero, as ``dtype`` (int64 by default)."""
    import mindspore as ms

    x = _tensor(input)
    counted = _ops().not_equal(x, _tensor(0, x)).astype(ms.int64)
    total = _ops().sum(counted, dim=_axes(axis, x.ndim), keepdim=bool(keepdims))  # (MindSpore sums ints as int64)
    return total.astype(dtype) if dtype is not None and dtype != ms.int64 else total


def size(input, out_type=None, name=None):  # noqa: A002 - TF's parameter names
    """``tf.size``: the number of elements, as a scalar tensor (int32 unless ``out_type``)."""
    import mindspore as ms
    import numpy as np

    shape = input.shape if hasattr(input, "shape") else np.shape(input)
    return ms.Tensor(int(np.prod(shape)), out_type if out_type is not None else ms.int32)


def rank(input, name=None):  # noqa: A002 - TF's parameter names
    """``tf.rank``: the number of dimensions, as an int32 scalar tensor."""
    import mindspore as ms
    import numpy as np

    return ms.Tensor(len(input.shape if hasattr(input, "shape") else np.shape(input)), ms.int32)


# --- images: flips, crops, pads, grayscale ------------------------------------------------------------

def _image(image):
    x = _tensor(image)
    if x.ndim < 3:
        raise ValueError(f"'image' (shape {tuple(x.shape)}) must be at least three-dimensional.")
    return x


def flip_left_right(image):
    """``tf.image.flip_left_right``: the width axis reversed (``[..., height, width, channels]``)."""
    return _ops().flip(_image(image), (-2,))


def flip_up_down(image):
    """``tf.image.flip_up_down``: the height axis reversed."""
    return _ops().flip(_image(image), (-3,))


def rgb_to_grayscale(images, name=None):
    """``tf.image.rgb_to_grayscale``: TF's weights (0.2989, 0.5870, 0.1140) on the image as float32 in
    [0, 1], converted back to the input's dtype as TF converts it; the channel axis kept (size 1)."""
    import mindspore as ms
    import numpy as np

    x = _tensor(images)
    floats = convert_image_dtype(x, ms.float32)
    weights = ms.Tensor(np.array([0.2989, 0.5870, 0.1140], np.float32))
    gray = _ops().sum(floats * weights, dim=-1, keepdim=True)
    return convert_image_dtype(gray, x.dtype)


def grayscale_to_rgb(images, name=None):
    """``tf.image.grayscale_to_rgb``: the one channel three times (its dtype kept)."""
    x = _tensor(images)
    if x.ndim < 2 or int(x.shape[-1]) != 1:
        raise ValueError(f"Dimension must be 1 but is {x.shape[-1] if x.ndim else 0} for the last dimension of the "
                         "image (grayscale_to_rgb takes a single channel)")
    return _ops().tile(x, (1,) * (x.ndim - 1) + (3,))


def _hw(image):
    x = _tensor(image)
    if x.ndim not in (3, 4):
        raise ValueError(f"'image' (shape {tuple(x.shape)}) must have either 3 or 4 dimensions.")
    return x, int(x.shape[-3]), int(x.shape[-2])


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """``tf.image.crop_to_bounding_box``: rows ``offset_height:+target_height``, columns likewise, with TF's checks."""
    x, height, width = _hw(image)
    oh, ow, th, tw = int(offset_height), int(offset_width), int(target_height), int(target_width)
    if oh < 0 or ow < 0:
        raise ValueError("offset_height and offset_width must be >= 0.")
    if th <= 0 or tw <= 0:
        raise ValueError("target_height and target_width must be > 0.")
    if width < tw + ow or height < th + oh:
        raise ValueError("width must be >= target + offset." if width < tw + ow else "height must be >= target + offset.")
    return x[..., oh:oh + th, ow:ow + tw, :]


def central_crop(image, central_fraction):
    """``tf.image.central_crop``: the central ``central_fraction`` of the height and the width,
    the start row ``int((h - h * fraction) / 2)`` and as many rows cut at the end, as TF computes
    them; a fraction of 1 gives the image itself."""
    fraction = float(central_fraction)
    if fraction <= 0.0 or fraction > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    x, height, width = _hw(image)
    if fraction == 1.0:
        return x
    top = int((float(height) - float(height) * fraction) / 2)
    left = int((float(width) - float(width) * fraction) / 2)
    return x[..., top:height - top, left:width - left, :]


def resize_with_pad(image, target_height, target_width, method="bilinear", antialias=False):
    """``tf.image.resize_with_pad``: resized to fit inside the target, keeping its aspect ratio (TF's
    float32 arithmetic for the size and the offsets), then padded with zeros to the target."""
    import numpy as np

    x = _tensor(image)
    if x.ndim not in (3, 4):
        raise ValueError(f"'image' (shape {tuple(x.shape)}) must have either 3 or 4 dimensions.")
    target_height, target_width = int(target_height), int(target_width)
    if target_height <= 0 or target_width <= 0:
        raise ValueError("target_width must be > 0." if target_width <= 0 else "target_height must be > 0.")
    f = np.float32
    height, width = f(x.shape[-3]), f(x.shape[-2])
    ratio = max(width / f(target_width), height / f(target_height))
    resized_height, resized_width = height / ratio, width / ratio
    pad_height = max(0, int(np.floor((f(target_height) - resized_height) / f(2))))
    pad_width = max(0, int(np.floor((f(target_width) - resized_width) / f(2))))
    resized = image_resize(x, (int(np.floor(resized_height)), int(np.floor(resized_width))), method=method,
                           antialias=antialias)
    return pad_to_bounding_box(resized, pad_height, pad_width, target_height, target_width)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """``tf.image.pad_to_bounding_box``: zeros around the image, ``offset_*`` above and to the left."""
    x, height, width = _hw(image)
    oh, ow, th, tw = int(offset_height), int(offset_width), int(target_height), int(target_width)
    after_h, after_w = th - oh - height, tw - ow - width
    if oh < 0 or ow < 0:
        raise ValueError("offset_height and offset_width must be >= 0")
    if after_h < 0 or after_w < 0:
        raise ValueError("height must be <= target - offset" if after_h < 0 else "width must be <= target - offset")
    pads = [[0, 0]] * (x.ndim - 3) + [[oh, after_h], [ow, after_w], [0, 0]]
    return pad(x, pads)


def resize_with_crop_or_pad(image, target_height, target_width):
    """``tf.image.resize_with_crop_or_pad``: a centred crop or zero padding to the target size, as TF
    splits the difference (the extra row or column of an odd difference after, for a crop before)."""
    x, height, width = _hw(image)
    th, tw = int(target_height), int(target_width)
    if th <= 0 or tw <= 0:
        raise ValueError("target_height and target_width must be > 0.")
    crop_h, crop_w = max((height - th) // 2, 0), max((width - tw) // 2, 0)
    pad_h, pad_w = max((th - height) // 2, 0), max((tw - width) // 2, 0)
    x = crop_to_bounding_box(x, crop_h, crop_w, min(th, height), min(tw, width))
    return pad_to_bounding_box(x, pad_h, pad_w, th, tw)


# --- calling Python -------------------------------------------------------------------------------------

def _outputs(values, Tout, what: str):  # noqa: N803 - TF's parameter name
    import mindspore as ms
    import numpy as np

    from .tensors import numpy_dtype

    def one(value, dtype):
        array = value.asnumpy() if isinstance(value, ms.Tensor) else np.asarray(value)
        if dtype in ("string", bytes, str, object):  # tf.string (converted to tfio.string): bytes stay NumPy
            return np.asarray(array, dtype=object)
        target = numpy_dtype(dtype)
        if array.dtype != target:
            # TF takes what converts to the declared dtype without loss of kind (a Python float list as
            # float32); a NumPy array of another dtype is refused, as TF's graph refuses it.
            if isinstance(value, np.ndarray) or not np.can_cast(array.dtype, target, casting="same_kind"):
                raise TypeError(f"{what}: the function returned {array.dtype}, not the declared {target}")
            array = array.astype(target)
        return ms.Tensor(array)

    if Tout is None:
        return []
    if isinstance(Tout, (list, tuple)):
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        if len(values) != len(Tout):
            raise ValueError(f"{what}: the function returned {len(values)} values, {len(Tout)} declared")
        return [one(v, t) for v, t in zip(values, Tout)]
    return one(values, Tout)


def numpy_function(func, inp, Tout, stateful=True, name=None):  # noqa: N803 - TF's parameter name
    """``tf.numpy_function``: ``func`` called on NumPy arrays, its results as tensors of ``Tout``
    (a list gives a list). PyNative runs it in place, as eager TF does."""
    import numpy as np

    args = [x.asnumpy() if hasattr(x, "asnumpy") else np.asarray(x) for x in inp]
    # A scalar string reaches the function as `bytes`, as TF hands it over (`p.decode()` works).
    args = [a[()] if a.ndim == 0 and a.dtype.kind in "OS" else a for a in args]
    return _outputs(func(*args), Tout, "numpy_function")


def py_function(func, inp, Tout, name=None):  # noqa: N803 - TF's parameter name
    """``tf.py_function``: ``func`` called on tensors (MindSpore's here), its results as tensors of ``Tout``."""
    import numpy as np

    # Text has no MindSpore tensor: it reaches the function as NumPy bytes (`.item()` / `[()]` give `bytes`).
    args = [x if hasattr(x, "asnumpy") or np.asarray(x).dtype.kind in "OSU" else _tensor(x) for x in inp]
    return _outputs(func(*args), Tout, "py_function")


# --- einsum ---------------------------------------------------------------------------------------

def einsum(equation, *inputs, **kwargs):
    """``tf.einsum`` for one or two operands, as transposes, reshapes, sums and one batched
    matrix product (MindSpore's ``ops.einsum`` runs on Ascend and GPU only): what every index
    letter means is TF's, ``...`` included; the output's order is the one written, or the
    letters that appear once in alphabetical order, after ``...``, when there is no ``->``."""
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"einsum() got unexpected keyword arguments: {', '.join(kwargs)}")
    ops = _ops()
    tensors = [_tensor(x) for x in inputs]
    if not 1 <= len(tensors) <= 2:
        raise ValueError(f"einsum here takes one or two operands, got {len(tensors)}: "
                         "contract them pairwise (einsum('ab,bc->ac', einsum('...'), z))")
    specs, out, ellipsis = _einsum_specs(equation.replace(" ", ""), [t.ndim for t in tensors])
    for spec in specs:
        if len(set(spec)) != len(spec):
            raise ValueError(f"einsum: a repeated index within one operand ({spec!r}: a diagonal) is not supported")
    sizes: dict[str, int] = {}
    for spec, t in zip(specs, tensors):
        for letter, size in zip(spec, t.shape):
            known = sizes.setdefault(letter, size)
            # (only the dimensions `...` stands for broadcast, as in TF; a named index must agree)
            if known != size and (letter not in ellipsis or 1 not in (known, size)):
                raise ValueError(f"einsum: index {letter!r} has sizes {known} and {size}")
            sizes[letter] = max(known, size)
    # An index only one operand has and the output lacks is summed over first.
    reduced = []
    for i, (spec, t) in enumerate(zip(specs, tensors)):
        others = set(out).union(*(s for j, s in enumerate(specs) if j != i))
        gone = [k for k, letter in enumerate(spec) if letter not in others]
        if gone:
            t = t.sum(axis=tuple(gone))
            spec = "".join(letter for letter in spec if letter in others)
        reduced.append((spec, t))
    if len(reduced) == 1:
        spec, t = reduced[0]
        return ops.transpose(t, tuple(spec.index(letter) for letter in out)) if spec != out else t
    (a_spec, a), (b_spec, b) = reduced
    batch = [x for x in a_spec if x in b_spec and x in out]
    contracted = [x for x in a_spec if x in b_spec and x not in out]
    left = [x for x in a_spec if x not in b_spec]
    right = [x for x in b_spec if x not in a_spec]

    def arranged(t, spec, order):
        # broadcast size-1 batch and contracted axes to the other operand's size
        t = ops.transpose(t, tuple(spec.index(x) for x in order)) if list(spec) != order else t
        target = tuple(sizes[x] if x in batch or x in contracted else t.shape[k] for k, x in enumerate(order))
        return ops.broadcast_to(t, target) if tuple(t.shape) != target else t

    def count(letters):
        n = 1
        for x in letters:
            n *= sizes[x]
        return n

    a = arranged(a, a_spec, batch + left + contracted).reshape(count(batch), count(left), count(contracted))
    b = arranged(b, b_spec, batch + contracted + right).reshape(count(batch), count(contracted), count(right))
    product = ops.bmm(a, b).reshape(tuple(sizes[x] for x in batch + left + right))
    order = batch + left + right
    return ops.transpose(product, tuple(order.index(x) for x in out)) if order != list(out) else product


def _einsum_specs(equation: str, ranks: list[int]) -> tuple[list[str], str, str]:
    """The operands' and the output's index letters, ``...`` spelled out with letters of its own
    (returned third)."""
    lhs, arrow, rhs = equation.partition("->")
    specs = lhs.split(",")
    if len(specs) != len(ranks):
        raise ValueError(f"einsum: {equation!r} names {len(specs)} operands, {len(ranks)} given")
    used = set(equation)
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    # `...` stands for the same trailing batch dimensions in every operand, aligned from the
    # right (numpy's broadcasting): one set of letters, as many as the most any operand has.
    widths = [rank - (len(spec) - 3) for spec, rank in zip(specs, ranks) if "..." in spec]
    if any(n < 0 for n in widths):
        raise ValueError(f"einsum: {equation!r} has more indices than an operand has dimensions")
    ellipsis = "".join(spare[:max(widths, default=0)])
    expanded = []
    for spec, rank in zip(specs, ranks):
        if "..." in spec:
            n = rank - (len(spec) - 3)
            spec = spec.replace("...", ellipsis[len(ellipsis) - n:] if n else "")
        if len(spec) != rank:
            raise ValueError(f"einsum: operand {spec!r} of rank {rank}")
        expanded.append(spec)
    if arrow:
        out = rhs.replace("...", ellipsis)
    else:
        letters = "".join(expanded)
        out = ellipsis + "".join(sorted(x for x in set(letters) if letters.count(x) == 1 and x not in ellipsis))
    return expanded, out, ellipsis


def roll(input, shift, axis, name=None):  # noqa: A002 - TF's parameter names
    """``tf.roll``: elements shifted along ``axis`` (several axes with lists), wrapping around,
    as two slices joined (MindSpore's ``ops.roll`` has no CPU kernel)."""
    ops = _ops()
    x = _tensor(input)
    shifts, axes = ints(shift), ints(axis)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift and axis must have the same length, got {len(shifts)} and {len(axes)}")
    total: dict[int, int] = {}
    for s, a in zip(shifts, axes):
        a = int(a) % x.ndim
        total[a] = total.get(a, 0) + int(s)
    for a, s in total.items():
        n = x.shape[a]
        s %= n if n else 1
        if s:
            x = ops.cat((x.narrow(a, n - s, s), x.narrow(a, 0, n - s)), axis=a)
    return x


def transpose(a, perm=None, conjugate=False, name=None):
    """``tf.transpose``: ``perm`` None reverses every axis, as TF's default does."""
    ops = _ops()
    a = _tensor(a)
    if perm is None:
        perm = tuple(range(a.ndim - 1, -1, -1))
    elif hasattr(perm, "asnumpy"):
        perm = tuple(int(p) for p in perm.asnumpy().reshape(-1))
    result = ops.transpose(a, tuple(int(p) for p in perm))
    return ops.conj(result) if conjugate and a.dtype in (_ms().complex64, _ms().complex128) else result


def constant(value, dtype=None, shape=None, name=None):
    """``tf.constant`` with ``shape``: a value of as many elements as the shape holds is reshaped
    to it, a value of one element fills it, any other count is TF's error. Without ``dtype``
    the dtype is TF's (a Python float float32, an int int32)."""
    import mindspore as ms
    import numpy as np

    from .tensors import numpy_dtype, tf_inferred

    if isinstance(value, ms.Tensor):
        value = value.asnumpy()
    array = tf_inferred(value)
    if dtype is not None:
        array = np.asarray(array, dtype=numpy_dtype(dtype))
    if shape is None:
        return ms.Tensor(array)
    if hasattr(shape, "asnumpy"):
        shape = shape.asnumpy()
    shape = tuple(int(d) for d in np.asarray(shape).reshape(-1))
    count = int(np.prod(shape, dtype=np.int64))
    if array.size == count:
        return ms.Tensor(array.reshape(shape))
    if array.size == 1:
        return ms.Tensor(np.full(shape, array.reshape(()), dtype=array.dtype))
    raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tried to convert a value of "
                    f"{array.size} elements to shape {list(shape)}")


def _ms():
    import mindspore as ms

    return ms


def _int_dtype(dtype, default):
    return default if dtype is None else as_dtype(dtype)


def unique(x, out_idx=None, name=None):
    """``tf.unique``: the distinct values of a 1-D ``x`` in the order they first appear, and each
    element's index into them (int32 unless ``out_idx`` says)."""
    ms = _ms()
    values, index = _ops().unique(_tensor(x))
    return values, index.astype(_int_dtype(out_idx, ms.int32))


def unique_with_counts(x, out_idx=None, name=None):
    """``tf.unique_with_counts``: :func:`unique` and how often each distinct value occurs."""
    ms = _ms()
    values, index = _ops().unique(_tensor(x))
    counts = _ops().bincount(index.astype(ms.int32), minlength=values.shape[0])
    dtype = _int_dtype(out_idx, ms.int32)
    return values, index.astype(dtype), counts.astype(dtype)


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002 - TF's parameter names
    """``tf.linalg.band_part``: keeps ``input[..., m, n]`` where ``num_lower < 0 or m - n <= num_lower``
    and ``num_upper < 0 or n - m <= num_upper``; zeros elsewhere."""
    import numpy as np

    ops = _ops()
    x = _tensor(input)
    rows, cols = x.shape[-2], x.shape[-1]
    lower, upper = (int(v.asnumpy()) if hasattr(v, "asnumpy") else int(v) for v in (num_lower, num_upper))
    m = np.arange(rows)[:, None]
    n = np.arange(cols)[None, :]
    keep = ((lower < 0) | (m - n <= lower)) & ((upper < 0) | (n - m <= upper))
    return ops.where(_ms().Tensor(keep), x, ops.zeros_like(x))


def histogram_fixed_width(values, value_range, nbins=100, dtype=None, name=None):
    """``tf.histogram_fixed_width``: counts of ``values`` in ``nbins`` equal bins over
    ``value_range``; values below the range count in the first bin, above it in the last.
    The bin is TF's kernel's: ``(max(v, low) - low)`` in the values' dtype, divided by the
    bin width in float64 and truncated."""
    ms = _ms()
    ops = _ops()
    values = _tensor(values).reshape(-1)
    low, high = (value_range.asnumpy().tolist() if hasattr(value_range, "asnumpy") else list(value_range))
    nbins = int(nbins.asnumpy()) if hasattr(nbins, "asnumpy") else int(nbins)
    step = (float(high) - float(low)) / nbins
    low_value = ms.Tensor(low, values.dtype)
    offset = ops.maximum(values, low_value) - low_value
    bins = ops.minimum(offset.astype(ms.float64) / step, float(nbins - 1)).astype(ms.int32)
    return ops.bincount(bins, minlength=nbins).astype(_int_dtype(dtype, ms.int32))


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=None, name=None):
    """``tf.math.confusion_matrix``: ``[num_classes, num_classes]``, row = label, column = prediction,
    each pair counted once (or by its ``weights``); ``num_classes`` is one more than the largest
    label or prediction unless given. int32 unless ``dtype`` says; a negative label or prediction,
    or one not below ``num_classes``, is TF's error."""
    import numpy as np

    ms = _ms()

    def host(value):
        value = value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)
        return value.reshape(-1) if value.ndim > 1 and value.shape[-1] == 1 and value.size == len(value) else value

    labels, predictions = host(labels).astype(np.int64), host(predictions).astype(np.int64)
    if labels.ndim != 1 or predictions.shape != labels.shape:
        raise ValueError(f"labels and predictions must be 1-D of one length, got {labels.shape} and {predictions.shape}")
    if (labels < 0).any() or (predictions < 0).any():
        raise ValueError("`labels` and `predictions` must be non-negative")
    if num_classes is None:
        n = int(max(labels.max(initial=-1), predictions.max(initial=-1))) + 1
    else:
        n = int(num_classes.asnumpy()) if hasattr(num_classes, "asnumpy") else int(num_classes)
        if (labels >= n).any() or (predictions >= n).any():
            raise ValueError(f"`labels` and `predictions` must be below `num_classes` {n}")
    out_dtype = _int_dtype(dtype, ms.int32)
    kind = ms.dtype_to_nptype(out_dtype)
    counts = np.zeros((n, n), dtype=kind)  # (TF casts the weights to `dtype`, then sums them in it)
    np.add.at(counts, (labels, predictions), kind(1) if weights is None else host(weights).astype(kind))
    return ms.Tensor(counts, out_dtype)


def as_dtype(type_value):
    """``tf.as_dtype``: a MindSpore dtype, a dtype's name (``"float32"``), a NumPy dtype or a
    Python type as MindSpore's dtype."""
    import numpy as np

    ms = _ms()
    if isinstance(type_value, ms.dtype.Type):
        return type_value
    names = {"half": "float16", "float": "float32", "double": "float64", "bool": "bool_"}
    if isinstance(type_value, str):
        name = names.get(type_value, type_value)
    else:
        name = np.dtype(type_value).name
        name = "bool_" if name == "bool" else name
    found = getattr(ms, name, None)
    if not isinstance(found, ms.dtype.Type):
        raise TypeError(f"Cannot convert the argument `type_value`: {type_value!r} to a MindSpore dtype")
    return found


def crop_and_resize(image, boxes, box_indices, crop_size, method="bilinear", extrapolation_value=0.0, name=None):
    """``tf.image.crop_and_resize``: MindSpore's kernel, which takes TF's NHWC images, boxes
    ``[y1, x1, y2, x2]`` in normalised coordinates and crop size; lists become tensors."""
    import numpy as np

    ms = _ms()
    image = _tensor(image)
    boxes = boxes if isinstance(boxes, ms.Tensor) else ms.Tensor(np.asarray(boxes, dtype=np.float32))
    box_indices = box_indices if isinstance(box_indices, ms.Tensor) else ms.Tensor(np.asarray(box_indices, np.int32))
    size = crop_size.asnumpy().tolist() if hasattr(crop_size, "asnumpy") else list(crop_size)
    return _ops().crop_and_resize(image.astype(ms.float32), boxes.astype(ms.float32), box_indices.astype(ms.int32),
                                  tuple(int(s) for s in size), method=method, extrapolation_value=float(extrapolation_value))


def _resize_sources(n_in: int, n_out: int, align_corners: bool, half_pixel_centers: bool, nearest: bool):
    """TF's source coordinates for each output row (or column), computed in float32 as TF's kernels do.

    Bilinear: (lower, upper, lerp) per output index; nearest: the source index."""
    import numpy as np

    if align_corners and n_out > 1:
        scale = np.float32(n_in - 1) / np.float32(n_out - 1)
    else:
        scale = np.float32(n_in) / np.float32(n_out)
    i = np.arange(n_out, dtype=np.float32)
    if nearest:
        source = (i + np.float32(0.5)) * scale if half_pixel_centers else i * scale
        index = np.floor(source + np.float32(0.5)) if align_corners else np.floor(source)  # roundf: half away from zero
        index = np.minimum(index.astype(np.int64), n_in - 1)
        return np.maximum(index, 0) if half_pixel_centers else index
    source = (i + np.float32(0.5)) * scale - np.float32(0.5) if half_pixel_centers else i * scale
    floor = np.floor(source)
    lower = np.maximum(floor, 0).astype(np.int64)
    upper = np.minimum(np.ceil(source), n_in - 1).astype(np.int64)
    return lower, upper, (source - floor).astype(np.float32)


def _image_batch(images, size, what: str):
    """``[height, width, channels]`` or ``[batch, height, width, channels]`` images as a batch, whether
    they were one image, and the size asked for."""
    images = _tensor(images)
    if images.ndim not in (3, 4):
        raise ValueError(f"{what}: images must have rank 3 or 4, not {images.ndim}")
    single = images.ndim == 3
    height, width = (int(v) for v in (size.asnumpy() if hasattr(size, "asnumpy") else size))
    return (images[None] if single else images), single, height, width


def _resize_v1(images, size, align_corners, half_pixel_centers, nearest: bool):
    ms = _ms()
    ops = _ops()
    batch, single, height, width = _image_batch(images, size, "resize")
    rows = _resize_sources(batch.shape[1], height, align_corners, half_pixel_centers, nearest)
    cols = _resize_sources(batch.shape[2], width, align_corners, half_pixel_centers, nearest)
    if nearest:
        out = ops.gather(ops.gather(batch, ms.Tensor(rows), 1), ms.Tensor(cols), 2)
        return out[0] if single else out
    batch = batch.astype(ms.float32)
    (y_lower, y_upper, y_lerp), (x_lower, x_upper, x_lerp) = rows, cols
    top, bottom = ops.gather(batch, ms.Tensor(y_lower), 1), ops.gather(batch, ms.Tensor(y_upper), 1)
    x_lerp = ms.Tensor(x_lerp.reshape(1, 1, -1, 1))
    y_lerp = ms.Tensor(y_lerp.reshape(1, -1, 1, 1))
    lower, upper = ms.Tensor(x_lower), ms.Tensor(x_upper)
    top_left, top_right = ops.gather(top, lower, 2), ops.gather(top, upper, 2)
    bottom_left, bottom_right = ops.gather(bottom, lower, 2), ops.gather(bottom, upper, 2)
    top = top_left + (top_right - top_left) * x_lerp
    bottom = bottom_left + (bottom_right - bottom_left) * x_lerp
    out = top + (bottom - top) * y_lerp
    return out[0] if single else out


_CUBIC_TABLE = 1024  # TF's kernel reads its cubic weights from a table of this many steps of the fraction


@functools.lru_cache(maxsize=64)
def _cubic_weights(n_in: int, n_out: int, align_corners: bool, half_pixel: bool):
    """The ``(n_out, n_in)`` matrix of TF's ``ResizeBicubic`` weights along one axis, in float32 as
    its kernel computes them: the source ``(i + 0.5) * scale - 0.5`` with half-pixel centres (Keys'
    cubic, ``a = -0.5``; taps outside the image get weight 0 and the rest are renormalized),
    else ``i * scale`` (``a = -0.75``; taps outside read the edge pixel); the weights of the
    fraction rounded to 1/1024, from TF's table."""
    import numpy as np

    f32 = np.float32
    a = f32(-0.5 if half_pixel else -0.75)
    x = np.arange(_CUBIC_TABLE + 1, dtype=np.float64).astype(f32) / f32(_CUBIC_TABLE)
    near = ((a + f32(2)) * x - (a + f32(3))) * x * x + f32(1)
    x = x + f32(1)
    far = ((a * x - f32(5) * a) * x + f32(8) * a) * x - f32(4) * a
    scale = f32((n_in - 1) / (n_out - 1)) if align_corners and n_out > 1 else f32(n_in) / f32(n_out)
    weights = np.zeros((n_out, n_in), np.float32)
    for out in range(n_out):
        where = (f32(out) + f32(0.5)) * scale - f32(0.5) if half_pixel else f32(out) * scale
        floor = int(np.floor(where))
        step = int(np.rint(f32(where - floor) * f32(_CUBIC_TABLE)))
        taps = [far[step], near[step], near[_CUBIC_TABLE - step], far[_CUBIC_TABLE - step]]
        sources = [floor - 1, floor, floor + 1, floor + 2]
        bounded = [min(n_in - 1, max(0, source)) for source in sources]
        if half_pixel:
            taps = [tap if b == source else f32(0) for tap, b, source in zip(taps, bounded, sources)]
            total = f32(taps[0] + taps[1] + taps[2] + taps[3])
            if abs(total) >= 1000 * np.finfo(np.float32).tiny:
                taps = [tap * (f32(1) / total) for tap in taps]
        for tap, source in zip(taps, bounded):
            weights[out, source] += tap
    return weights


def _bicubic(batch, height: int, width: int, align_corners: bool, half_pixel: bool):
    """Bicubic resizing of an NHWC batch as TF's kernel samples (``_cubic_weights``), float32 out:
    the rows' weights, then the columns', as two matrix products (differentiable)."""
    ms = _ms()
    ops = _ops()
    batch = batch.astype(ms.float32)
    n, h, w, c = batch.shape
    rows = ms.Tensor(_cubic_weights(h, height, align_corners, half_pixel))
    cols = ms.Tensor(_cubic_weights(w, width, align_corners, half_pixel).T.copy())
    out = ops.matmul(rows, batch.reshape(n, h, w * c)).reshape(n, height, w, c)
    return ops.matmul(out.transpose(0, 1, 3, 2), cols).transpose(0, 1, 3, 2)


def _resize_bicubic(images, size, align_corners: bool, half_pixel: bool):
    batch, single, height, width = _image_batch(images, size, "resize")
    out = _bicubic(batch, height, width, align_corners, half_pixel)
    return out[0] if single else out


def resize_bicubic_v1(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """TF 1's ``tf.compat.v1.image.resize_bicubic``: the legacy sampling (source ``i * in / out``,
    or corners aligned; ``a = -0.75``), or TF 2's with ``half_pixel_centers``; float32 out."""
    return _resize_bicubic(images, size, bool(align_corners), bool(half_pixel_centers))


def resize_bilinear_v1(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """TF 1's ``tf.compat.v1.image.resize_bilinear``: the legacy sampling (source ``i * in / out``,
    or corners aligned), float32 out, as TF's kernel computes it."""
    return _resize_v1(images, size, bool(align_corners), bool(half_pixel_centers), nearest=False)


def resize_nearest_neighbor_v1(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """TF 1's ``tf.compat.v1.image.resize_nearest_neighbor``: source ``floor(i * in / out)`` (rounded
    with ``align_corners``), the images' dtype out."""
    return _resize_v1(images, size, bool(align_corners), bool(half_pixel_centers), nearest=True)


def image_resize_v1(images, size, method=0, align_corners=False, preserve_aspect_ratio=False, name=None):
    """TF 1's ``tf.compat.v1.image.resize`` / ``resize_images``: ``method`` bilinear (0, TF 1's
    default), nearest neighbour (1) or bicubic (2), with TF 1's legacy sampling."""
    kind = {0: "bilinear", 1: "nearest", 2: "bicubic", "bilinear": "bilinear", "nearest": "nearest",
            "bicubic": "bicubic"}.get(method if isinstance(method, (int, str)) else int(method))
    if kind is None or preserve_aspect_ratio:
        raise NotImplementedError("tf.compat.v1.image.resize: only bilinear, nearest-neighbour or bicubic resizing "
                                  "without preserve_aspect_ratio has TF's numbers here")
    if kind == "bicubic":
        return _resize_bicubic(images, size, bool(align_corners), False)
    return _resize_v1(images, size, bool(align_corners), False, nearest=kind == "nearest")


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """``tf.gather`` with ``batch_dims``: MindSpore's ``ops.gather`` takes TF's batch dimensions;
    ``axis`` defaults to ``batch_dims`` as in TF, and indices written as a list become a tensor."""
    import numpy as np

    ms = _ms()
    params = _tensor(params)
    if not isinstance(indices, ms.Tensor):
        indices = ms.Tensor(np.asarray(indices, dtype=np.int32))
    batch_dims = int(batch_dims)
    axis = batch_dims if axis is None else int(axis)
    return _ops().gather(params, indices, axis, batch_dims=batch_dims)


def dynamic_stitch(indices, data, name=None):
    """``tf.dynamic_stitch``: ``merged[indices[m][i, ...]] = data[m][i, ..., :]``, the merged tensor
    as long as the largest index plus one. Where an index occurs twice the later value wins (the
    later list entry, then the later position), as in TF; an index no entry names reads as zeros.
    The indices are read on the host; the values are gathered on the device, so gradients flow to
    ``data`` as TF's do."""
    from .tensors import host_array

    ops, ms = _ops(), _ms()
    if len(indices) != len(data):
        raise ValueError(f"dynamic_stitch takes as many data tensors as index tensors: {len(indices)} and {len(data)}")
    flat, pieces, tail = [], [], None
    for where_to, values in zip(indices, data):
        where_to = host_array(where_to).astype(np.int64)
        values = values if isinstance(values, ms.Tensor) else constant(values)  # (TF's dtypes for Python numbers)
        shape = tuple(values.shape)
        if shape[:where_to.ndim] != where_to.shape:
            raise InvalidArgumentError(f"data shape {list(shape)} does not start with indices shape "
                                       f"{list(where_to.shape)}")
        if tail is None:
            tail = shape[where_to.ndim:]
        elif shape[where_to.ndim:] != tail:
            raise InvalidArgumentError(f"the data tensors' shapes past their indices differ: {list(tail)} and "
                                       f"{list(shape[where_to.ndim:])}")
        flat.append(where_to.reshape(-1))
        pieces.append(values.reshape((where_to.size,) + tail))
    flat = np.concatenate(flat) if flat else np.zeros(0, np.int64)
    if flat.size and flat.min() < 0:
        raise InvalidArgumentError(f"indices must be non-negative: {int(flat.min())}")
    size = int(flat.max()) + 1 if flat.size else 0
    source = np.full(size, flat.size, dtype=np.int32)  # (one past the values: a row of zeros)
    # Each index's last occurrence (NumPy does not say which of repeated assignments stays).
    indices, first_from_end = np.unique(flat[::-1], return_index=True)
    source[indices] = (flat.size - 1 - first_from_end).astype(np.int32)
    stacked = ops.concat(pieces + [ops.zeros((1,) + tail, pieces[0].dtype)], 0)
    return ops.gather(stacked, ms.Tensor(source), 0)


def packed(value):
    """``value`` as TF's ops take a list argument: a list or tuple holding tensors is stacked
    (``tf.stack``, so gradients reach the tensors), one of Python numbers becomes a tensor of
    TF's dtype for them (float32, int32), a tensor or array is taken as it is."""
    ms = _ms()
    if isinstance(value, ms.Tensor):
        return value
    if isinstance(value, (list, tuple)) and _holds_tensor(value):
        parts = [packed(v) for v in value]
        dtype = next(p.dtype for p in parts if _holds_tensor([p]))
        return _ops().stack([p if p.dtype == dtype else p.astype(dtype) for p in parts])
    return constant(value)


def _holds_tensor(value) -> bool:
    ms = _ms()
    return any(isinstance(v, ms.Tensor) or (isinstance(v, (list, tuple)) and _holds_tensor(v)) for v in value)


def _joined(values) -> list:
    """TF's conversion of the values a join takes: tensors as they are, each number or list a
    tensor in the dtype of the first tensor among them (TF's for Python numbers without one)."""
    ms = _ms()
    dtype = next((v.dtype for v in values if isinstance(v, ms.Tensor)), None)
    out = []
    for value in values:
        value = packed(value)
        out.append(value if dtype is None or value.dtype == dtype else value.astype(dtype))
    return out


def concat(values, axis=0, name=None):
    """``tf.concat`` of a list holding numbers or lists beside tensors (see :func:`_joined`)."""
    return _ops().concat(_joined(values), int(axis))


def stack(values, axis=0, name=None):
    """``tf.stack`` of a list holding numbers or lists beside tensors (see :func:`_joined`)."""
    return _ops().stack(_joined(values), int(axis))


def scatter_nd(indices, updates, shape, name=None):
    """``tf.scatter_nd`` with ``indices`` or ``updates`` written as lists (``updates=[tensor]``):
    each :func:`packed` as TF packs it, then MindSpore's ``ops.scatter_nd`` (updates at one
    index summed, as in TF)."""
    from .tensors import host_array

    shape = tuple(int(d) for d in host_array(shape).reshape(-1))
    return _ops().scatter_nd(packed(indices), packed(updates), shape)


def where_v1(condition, x=None, y=None, name=None):
    """TF 1's ``tf.compat.v1.where``: without ``x`` and ``y``, the coordinates of the true elements
    (int64, as TF 2's); with them, ``x`` where ``condition`` holds and ``y`` elsewhere, a rank-1
    ``condition`` choosing whole rows of higher-rank ``x`` and ``y`` (TF 2's broadcasts instead)."""
    ops = _ops()
    condition = _tensor(condition)
    if x is None and y is None:
        return ops.nonzero(condition).astype(_ms().int64)
    if x is None or y is None:
        raise ValueError("x and y must both be given, or neither")
    like = x if isinstance(x, _ms().Tensor) else None  # (y as TF takes it beside a tensor x)
    x, y = _tensor(x), _tensor(y, like=like)
    if condition.ndim == 1 and x.ndim > 1:
        if condition.shape[0] != x.shape[0]:
            raise ValueError(f"a rank-1 condition of {condition.shape[0]} elements chooses rows of x, which has "
                             f"{x.shape[0]}")
        condition = condition.reshape((-1,) + (1,) * (x.ndim - 1))
    elif tuple(condition.shape) != tuple(x.shape) or tuple(x.shape) != tuple(y.shape):
        raise ValueError(f"condition, x and y must have the same shape (or condition be a vector of x's rows): "
                         f"{tuple(condition.shape)}, {tuple(x.shape)}, {tuple(y.shape)}")
    return ops.where(condition, x, y)


def cond_v1(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """TF 1's ``tf.compat.v1.cond`` run eagerly: one branch called; a branch's one-element list or
    tuple is unpacked unless ``strict`` (``fn1``/``fn2``: TF 1's old names for the branches)."""
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("true_fn and false_fn must be callable")
    result = true_fn() if bool(pred) else false_fn()
    if not strict and isinstance(result, (list, tuple)) and len(result) == 1:
        return result[0]
    return result


class TensorArray:
    """``tf.TensorArray`` as TF runs it eagerly: a list of tensors of one dtype. ``write``,
    ``unstack``, ``scatter`` and ``split`` fill it (and return it, as TF's do); ``read``, ``stack``,
    ``gather`` and ``concat`` read it, an entry never written reading as zeros of the element
    shape; ``clear_after_read`` (on by default) forbids reading an entry twice; a ``size`` that is
    not ``dynamic_size`` bounds the writes. TF's messages; its ``OutOfRangeError`` is an
    ``IndexError`` here, its ``InvalidArgumentError`` a ``ValueError``."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
                 name=None):
        if handle is not None:
            raise ValueError("TensorArray handles are not supported when eager execution is enabled.")
        if size is None:
            raise ValueError("Size must be declared for TensorArrays when eager execution is enabled.")
        self._dtype = as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = infer_shape
        self._element_shape = None if element_shape is None else tuple(
            None if d is None else int(d) for d in element_shape)
        self._entries = [None] * self._int(size)
        self._read = set()

    @staticmethod
    def _int(value) -> int:
        return int(value.asnumpy() if hasattr(value, "asnumpy") else value)

    @property
    def dtype(self):
        return self._dtype

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    @property
    def element_shape(self):
        return self._element_shape

    def identity(self):
        return self

    # --- writing -----------------------------------------------------------------------------

    def _value(self, value):
        import mindspore as ms
        import numpy as np

        if isinstance(value, ms.Tensor):
            if value.dtype != self._dtype:
                raise ValueError(f"TensorArray dtype is {_dtype_name(self._dtype)} but Op is trying to write dtype "
                                 f"{_dtype_name(value.dtype)} ")
            return value
        return ms.Tensor(np.asarray(value), self._dtype)

    def _merge_shape(self, shape: tuple) -> None:
        known = self._element_shape
        if known is not None:
            if len(known) != len(shape) or any(k is not None and k != s for k, s in zip(known, shape)):
                raise ValueError(f"Incompatible shape for value ({_shape_text(shape)}), expected "
                                 f"({_shape_text(known)})")
        if self._infer_shape or known is None:
            self._element_shape = tuple(shape) if known is None else tuple(
                s if k is None else k for k, s in zip(known, shape))

    def _write(self, index, value) -> None:
        index = self._int(index)
        if index < 0:
            raise IndexError(f"Writing to negative indices (index {index}) is not allowed.")
        size = len(self._entries)
        if index >= size:
            if not self._dynamic_size:
                raise IndexError(f"Tried to write to index {index} but array is not resizeable and size is: {size} ")
            self._entries.extend([None] * (index - size + 1))
        value = self._value(value)
        self._merge_shape(tuple(value.shape))
        self._entries[index] = value

    def write(self, index, value, name=None):
        self._write(index, value)
        return self

    def unstack(self, value, name=None):
        value = self._value(value)
        rows = [value[i] for i in range(int(value.shape[0]))]
        if len(rows) > len(self._entries) and not self._dynamic_size:
            raise ValueError(f"Cannot unstack {len(rows)} tensors into a TensorArray of static size "
                             f"{len(self._entries)} ")
        if rows:
            self._merge_shape(tuple(rows[0].shape))
        self._entries = rows
        return self

    def scatter(self, indices, value, name=None):
        value = self._value(value)
        for index, row in zip(ints(indices), (value[i] for i in range(int(value.shape[0])))):
            self._write(index, row)
        return self

    def split(self, value, lengths, name=None):
        value = self._value(value)
        lengths = ints(lengths)
        if value.ndim == 0:
            raise ValueError("Expected value to be at least a vector, but received shape: []")
        if sum(lengths) != int(value.shape[0]):
            raise ValueError(f"Expected sum of lengths to be equal to values.shape[0], but sum of lengths is "
                             f"{sum(lengths)} and value's shape is: {_shape_text(tuple(value.shape))} ")
        if not self._dynamic_size and len(lengths) != len(self._entries):
            raise ValueError(f"TensorArray's size is not equal to the size of lengths ({len(self._entries)} vs. "
                             f"{len(lengths)}), and the TensorArray is not marked as dynamically resizeable.")
        starts = [sum(lengths[:i]) for i in range(len(lengths))]  # (pieces may differ in length, as in TF)
        self._entries = [value[start:start + length] for start, length in zip(starts, lengths)]
        return self

    # --- reading -----------------------------------------------------------------------------

    def _zero_or_value(self, index: int):
        entry = self._entries[index]
        if entry is None:
            shape = self._element_shape
            if shape is None or any(d is None for d in shape):
                raise ValueError(f"Could not read from TensorArray index {index}: it was never written and the "
                                 "element shape is not known")
            entry = self._entries[index] = _ops().zeros(shape, self._dtype)
        return entry

    def read(self, index, name=None):
        index = self._int(index)
        if index < 0:
            raise IndexError(f"Reading from negative indices (index {index}) is not allowed.")
        if index >= len(self._entries):
            raise IndexError(f"Tried to read from index {index} but array size is: {len(self._entries)} ")
        if self._entries[index] is None and index in self._read:
            raise ValueError(f"Could not read index {index} twice because it was cleared after a previous read "
                             "(perhaps try setting clear_after_read = false?)")
        value = self._zero_or_value(index)
        if self._clear_after_read:
            self._entries[index] = None
            self._read.add(index)
        return value

    def stack(self, name=None):
        if not self._entries:
            shape = self._element_shape
            if shape is not None and all(d is not None for d in shape):
                return _ops().zeros((0,) + shape, self._dtype)
            raise ValueError("TensorArray has size zero, but element shape is not fully defined")
        return _ops().stack([self._zero_or_value(i) for i in range(len(self._entries))])

    def gather(self, indices, name=None):
        return _ops().stack([self._zero_or_value(i) for i in ints(indices)])

    def concat(self, name=None):
        values = [self._zero_or_value(i) for i in range(len(self._entries))]
        for index, value in enumerate(values):
            if value.ndim == 0:
                raise ValueError(f"Concat saw a scalar shape at index {index} but requires at least vectors.")
        return _ops().cat(values, 0)

    def size(self, name=None):
        import mindspore as ms

        return ms.Tensor(len(self._entries), ms.int32)

    def close(self, name=None) -> None:
        self._entries.clear()


def ints(values) -> list[int]:
    """The integers of a number, list, array or tensor, flattened (sizes, indices, lengths)."""
    import numpy as np

    return [int(v) for v in np.asarray(values.asnumpy() if hasattr(values, "asnumpy") else values).reshape(-1)]


def _dtype_name(dtype) -> str:
    return str(dtype).lower().replace("mindspore.", "")


def _shape_text(shape) -> str:
    return ", ".join("?" if d is None else str(d) for d in shape)


# -- complex values and tf.signal ----------------------------------------------------------------


def abs(x, name=None):  # noqa: A001 - TF's name
    """`tf.abs`: the magnitude, real even for complex input (MindSpore's `ops.abs` keeps a complex
    dtype there), the absolute value otherwise."""
    ops = _ops()
    x = _tensor(x)
    return ops.ComplexAbs()(x) if ops.is_complex(x) else ops.abs(x)


def _signal(value, complex_input: bool = False):
    """A signal as TF converts it: a tensor as it is; anything else float32 (complex64), TF's preferred dtype."""
    import mindspore as ms

    if isinstance(value, ms.Tensor):
        return value
    array = np.asarray(value)
    return ms.Tensor(array.astype(np.complex64 if complex_input or np.iscomplexobj(array) else np.float32))


def _lengths(fft_length, count: int):
    if fft_length is None:
        return None
    lengths = tuple(int(n) for n in np.asarray(fft_length.asnumpy() if hasattr(fft_length, "asnumpy")
                                               else fft_length).reshape(-1))
    if len(lengths) != count:
        raise InvalidArgumentError(f"fft_length must have {count} element(s), got {len(lengths)}")
    return lengths


def rfft(input_tensor, fft_length=None, name=None):
    """`tf.signal.rfft`: the FFT of a real signal over its innermost axis, the first `n // 2 + 1`
    frequencies (`fft_length`: the signal cropped or zero-padded to it first)."""
    lengths = _lengths(fft_length, 1)
    return _ops().rfft(_signal(input_tensor), None if lengths is None else lengths[0], -1)


def irfft(input_tensor, fft_length=None, name=None):
    """`tf.signal.irfft`: the real signal of `n // 2 + 1` frequencies (`fft_length` `n`, by default
    `2 * (inner - 1)`)."""
    lengths = _lengths(fft_length, 1)
    return _ops().irfft(_signal(input_tensor, True), None if lengths is None else lengths[0], -1)


def rfft2d(input_tensor, fft_length=None, name=None):
    """`tf.signal.rfft2d`: the 2-D FFT of a real signal over its two innermost axes."""
    return _ops().rfft2(_signal(input_tensor), _lengths(fft_length, 2), (-2, -1))


def irfft2d(input_tensor, fft_length=None, name=None):
    """`tf.signal.irfft2d`: the inverse of `rfft2d`."""
    return _ops().irfft2(_signal(input_tensor, True), _lengths(fft_length, 2), (-2, -1))


def fft(input, name=None):  # noqa: A002 - TF's parameter names
    """`tf.signal.fft`: the FFT of a complex signal over its innermost axis."""
    return _ops().fft(_signal(input, True), None, -1)


def ifft(input, name=None):  # noqa: A002 - TF's parameter names
    """`tf.signal.ifft`: the inverse FFT over the innermost axis (divided by its length, as TF)."""
    return _ops().ifft(_signal(input, True), None, -1)


def fft2d(input, name=None):  # noqa: A002 - TF's parameter names
    """`tf.signal.fft2d`: the 2-D FFT over the two innermost axes."""
    return _ops().fft2(_signal(input, True), None, (-2, -1))


def ifft2d(input, name=None):  # noqa: A002 - TF's parameter names
    """`tf.signal.ifft2d`: the inverse 2-D FFT over the two innermost axes."""
    return _ops().ifft2(_signal(input, True), None, (-2, -1))


def _raised_cosine_window(window_length, periodic, dtype, a: float, b: float):
    """TF's raised-cosine window: `a - b * cos(2 pi k / n)`, `n = length - 1`, plus one for an even
    `periodic` window (TF's rule: an odd window is the same either way); computed in `dtype`."""
    import mindspore as ms

    from .tensors import numpy_dtype

    length = int(window_length)
    kind = np.dtype(numpy_dtype(dtype) if dtype is not None else np.float32).type
    if length == 1:
        return ms.Tensor(np.ones(1, kind))
    n = kind(length + (1 if periodic else 0) * (1 - length % 2) - 1)
    count = np.arange(length, dtype=kind)
    return ms.Tensor((kind(a) - kind(b) * np.cos(kind(2 * np.pi) * count / n)).astype(kind))


def hann_window(window_length, periodic=True, dtype=None, name=None):
    """`tf.signal.hann_window`: `0.5 - 0.5 cos(2 pi k / n)` by TF's rule for `n` (MindSpore's
    `ops.hann_window` makes odd periodic windows differently)."""
    return _raised_cosine_window(window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length, periodic=True, dtype=None, name=None):
    """`tf.signal.hamming_window`: `0.54 - 0.46 cos(2 pi k / n)` by TF's rule for `n`."""
    return _raised_cosine_window(window_length, periodic, dtype, 0.54, 0.46)


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """`tf.signal.frame` over the innermost axis: windows of `frame_length` samples every
    `frame_step`, as a new axis before the samples; with `pad_end` the end is padded with
    `pad_value` to make `ceil(n / frame_step)` frames, as TF does."""
    ops = _ops()
    if axis != -1:
        raise NotImplementedError("tf.signal.frame: only axis=-1 is provided by migrate.runtime.tfmath")
    x = _signal(signal)
    frame_length, frame_step = int(frame_length), int(frame_step)
    samples = int(x.shape[-1])
    if pad_end:
        frames = -(-samples // frame_step)
        needed = max((frames - 1) * frame_step + frame_length - samples, 0)
        if needed:
            x = ops.pad(x, (0, needed), value=float(pad_value))
    else:
        frames = max(1 + (samples - frame_length) // frame_step, 0) if samples >= frame_length else 0
    import mindspore as ms

    indices = np.arange(frames)[:, None] * frame_step + np.arange(frame_length)[None, :]
    return ops.gather(x, ms.Tensor(indices.astype(np.int32)), x.ndim - 1)


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window, pad_end=False, name=None):
    """`tf.signal.stft`: frames of the signal (`frame`), each multiplied by `window_fn(frame_length)`
    (a periodic Hann window by default) and transformed by `rfft` over `fft_length` (by default the
    smallest power of two holding a frame): `(..., frames, fft_length // 2 + 1)` complex."""
    frame_length = int(frame_length)
    if fft_length is None:
        fft_length = 1 << (frame_length - 1).bit_length()
    framed = frame(signals, frame_length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = framed * window_fn(frame_length, dtype=framed.dtype)
    return _ops().rfft(framed, int(fft_length), -1)
