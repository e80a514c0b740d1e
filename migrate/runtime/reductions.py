"""Cross-replica reduce, all-reduce and gather with TensorFlow's semantics.

Every rank makes sure its peers are about to reduce the same thing: the nest
structure and each leaf's dtype and shape, with the reduced axis left out. A rank
with a different shape or an unsupported value therefore gets a clear error on
every rank, and no rank enters a collective its peers will not join. Float sums
across replicas (``axis=None``) use the group's checked sum, which skips the
separate agreement round once a call repeats (see `collectives`); reductions
along an axis and gathers exchange per-rank counts and always agree first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .collectives import Group, LocalGroup
from .fusion import Packed, fused_all_reduce_sum
from .reduce_op import ReduceOp, resolve_reduce_op
from .tensors import (LeafSpec, contiguous, flatten, from_numpy, leaf_spec, pack_as, structure_signature, to_numpy,
                      value_kind)
from .values import unwrap_local


@dataclass
class _Leaf:
    original: Any
    kind: str
    local: Any          # what goes on the wire: an ms.Tensor (kept on device) or a numpy array
    count: int          # examples along the reduced axis on this rank (1 when axis is None)
    spec: LeafSpec      # dtype and shape every rank must share


def _normalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for a value of rank {ndim}")
    return axis % ndim


def _prepare(leaf, axis) -> _Leaf:
    kind = value_kind(leaf)
    if axis is None:
        if kind == "ms":
            return _Leaf(leaf, kind, leaf, 1, leaf_spec(leaf))
        array = contiguous(to_numpy(leaf))
        return _Leaf(leaf, kind, array, 1, LeafSpec(str(array.dtype), array.shape))
    array = to_numpy(leaf)
    axis = _normalize_axis(axis, array.ndim)
    local = contiguous(array.sum(axis=axis, dtype=array.dtype))
    return _Leaf(leaf, kind, local, array.shape[axis], LeafSpec(str(local.dtype), local.shape))


def _describe(what: str, value, leaves: list[_Leaf] | None, problem: Exception | None, suffix="") -> str:
    head = f"{what}{suffix} on {structure_signature(value)}"
    if problem is not None:
        return f"{head}: {type(problem).__name__}: {problem}"
    return f"{head} with " + ", ".join(str(leaf.spec) for leaf in leaves)


def _wire_tensor(local):
    if isinstance(local, np.ndarray):
        import mindspore as ms

        return ms.Tensor.from_numpy(local)
    return local


def _mean(total, count: int, kind: str, like):
    """TF's MEAN: floats keep their dtype, integers become float64."""
    if kind == "ms" and not isinstance(total, np.ndarray) and total.is_floating_point():
        return total / count
    host = total if isinstance(total, np.ndarray) else to_numpy(total)
    with np.errstate(invalid="ignore", divide="ignore"):
        if host.dtype.kind == "f":
            return (host / host.dtype.type(count)).astype(host.dtype)
        return host.astype(np.float64) / count


def _to_kind(result, leaf: _Leaf):
    if leaf.kind == "ms" and not isinstance(result, np.ndarray):
        return result
    host = result if isinstance(result, np.ndarray) else to_numpy(result)
    return from_numpy(np.asarray(host), leaf.original)


def reduce_values(group: Group, op, value, axis=None, what: str = "reduce"):
    """`Strategy.reduce` / `ReplicaContext.all_reduce` across the ranks of `group`.

    SUM adds the replicas' values; MEAN divides by the number of replicas, or with an
    `axis`, by the global number of examples along that axis (a last partial batch and
    an empty local batch count correctly).
    """
    reduce_op = resolve_reduce_op(op)
    value = unwrap_local(value)
    leaves, problem = None, None
    try:
        leaves = [_prepare(leaf, axis) for leaf in flatten(value)]
    except (TypeError, ValueError) as exc:
        problem = exc
    suffix = f"({reduce_op.name}" + (f", axis={axis})" if what == "reduce" else ")")
    description = _describe(what, value, leaves, problem, suffix)
    counts = None
    if isinstance(group, LocalGroup):
        if problem is not None:
            raise problem
        totals = [leaf.local for leaf in leaves]
    elif problem is None and axis is None:
        packed = Packed([leaf.local for leaf in leaves], None, group.host_packing)
        totals = group.checked_sum(description, what, packed.plan, lambda: packed.run_eager(group))
    else:
        counts = group.agree(description, what,
                             extras=[leaf.count for leaf in leaves] if leaves and axis is not None else ())
        if problem is not None:
            raise problem
        totals = fused_all_reduce_sum(group, [_wire_tensor(leaf.local) for leaf in leaves], bucket_bytes=None)
    results = []
    for index, (leaf, total) in enumerate(zip(leaves, totals)):
        if tuple(total.shape) != tuple(leaf.spec.shape):  # some kernels return (1,) for a scalar
            total = total.reshape(leaf.spec.shape)
        if reduce_op is ReduceOp.MEAN:
            count = group.size if axis is None else int(counts[:, index].sum()) if counts is not None \
                else leaf.count
            total = _mean(total, count, leaf.kind, leaf.original)
        results.append(_to_kind(total, leaf))
    return pack_as(value, results)


def gather_values(group: Group, value, axis: int):
    """`Strategy.gather`: concatenate every replica's value along `axis`, in rank order.

    Replicas may hold different sizes along `axis` (a partial last batch); all other
    dimensions must match.
    """
    value = unwrap_local(value)
    leaves = flatten(value)
    prepared, problem = [], None
    try:
        for leaf in leaves:
            kind = value_kind(leaf)
            array = to_numpy(leaf)
            if array.ndim == 0:
                raise ValueError("gather needs values of rank >= 1 (a scalar has no axis to concatenate)")
            moved = np.moveaxis(array, _normalize_axis(axis, array.ndim), 0)
            prepared.append((leaf, kind, contiguous(moved)))
    except (TypeError, ValueError) as exc:
        problem = exc
    specs = [f"{a.dtype}[*,{','.join(map(str, a.shape[1:]))}]" for _, _, a in prepared]
    description = (f"gather(axis={axis}) on {structure_signature(value)} "
                   + (f"{type(problem).__name__}: {problem}" if problem else " ".join(specs)))
    lengths = group.agree(description, "gather", extras=[a.shape[0] for _, _, a in prepared] if not problem else ())
    if problem is not None:
        raise problem
    results = []
    for index, (leaf, kind, moved) in enumerate(prepared):
        if isinstance(group, LocalGroup):
            joined = moved
        else:
            sizes = [int(n) for n in lengths[:, index]]
            longest = max(sizes)
            padded = np.zeros((longest,) + moved.shape[1:], dtype=moved.dtype)
            padded[: moved.shape[0]] = moved
            gathered = to_numpy(group.all_gather(_wire_tensor(padded)))
            gathered = gathered.reshape((group.size, longest) + moved.shape[1:])
            joined = np.concatenate([gathered[r, : sizes[r]] for r in range(group.size)], axis=0)
        array = np.moveaxis(joined, 0, _normalize_axis(axis, moved.ndim))
        results.append(from_numpy(contiguous(array), leaf))
    return pack_as(value, results)
