"""Mirrored variables start identical: parameters are broadcast from rank 0.

TF creates one copy of each variable per replica from the same initial value. Here
every process builds its own model, so random initializers would differ. While a
strategy's scope is open, every `mindspore.Parameter` created is recorded (creation
order is the same on every rank, since every rank runs the same program); when the
scope closes they are broadcast from rank 0.
"""

from __future__ import annotations

import weakref
from collections import defaultdict

from .collectives import Group, LocalGroup

_recording: list[list] = []   # one list of weakrefs per open scope
_original_init = None


def _recording_init(self, *args, **kwargs):
    _original_init(self, *args, **kwargs)
    for recorded in _recording:
        recorded.append(weakref.ref(self))


def start_recording() -> list:
    """Begin recording created Parameters; returns the list that fills up."""
    global _original_init
    from mindspore import Parameter

    if not _recording:
        _original_init = Parameter.__init__
        Parameter.__init__ = _recording_init
    recorded: list = []
    _recording.append(recorded)
    return recorded


def stop_recording(recorded: list) -> list:
    """Stop recording; return the Parameters still alive, in creation order."""
    from mindspore import Parameter

    _recording.remove(recorded)
    if not _recording and _original_init is not None:
        Parameter.__init__ = _original_init
    seen, alive = set(), []
    for ref in recorded:
        parameter = ref()
        if parameter is not None and id(parameter) not in seen:
            seen.add(id(parameter))
            alive.append(parameter)
    return alive


def _parameters_of(params) -> list:
    if hasattr(params, "get_parameters"):  # a Cell
        return list(params.get_parameters())
    if isinstance(params, dict):
        return list(params.values())
    return list(params)


def write_in_place(parameter, value) -> None:
    """Give a MindSpore ``Parameter`` a value by writing into its memory (``ops.assign``): compiled
    code (``ms.jit``, a cell compiled in GRAPH_MODE) keeps the memory each parameter had when it
    compiled, and ``set_data`` would give the parameter new memory, which it never reads. Other
    variables take ``set_data``."""
    import mindspore as ms
    import numpy as np

    if not isinstance(parameter, ms.Parameter):
        parameter.set_data(value)
        return
    if isinstance(value, ms.Tensor):
        value = value.astype(parameter.dtype)
    else:
        value = ms.Tensor(np.asarray(value, dtype=ms.dtype_to_nptype(parameter.dtype)))
    ms.ops.assign(parameter, value)


def broadcast_parameters(group: Group, params, root: int = 0) -> None:
    """Set every rank's parameters to root's values, one broadcast per dtype bucket."""
    params = _parameters_of(params)
    description = "broadcast_parameters(root=%d) %s" % (
        root, " ".join(f"{str(p.dtype).lower()}{list(p.shape)}" for p in params))
    group.agree(description, "broadcast_parameters")
    if isinstance(group, LocalGroup) or not params:
        return
    from mindspore import ops

    by_dtype: dict[str, list] = defaultdict(list)
    for parameter in params:
        by_dtype[str(parameter.dtype)].append(parameter)
    for members in by_dtype.values():
        flat = ops.cat([p.value().reshape(-1) if hasattr(p, "value") else p.reshape(-1) for p in members])
        received = group.broadcast(flat, root)
        if group.rank == root:
            continue
        pieces = ops.split(received, [int(p.size) for p in members])
        for parameter, piece in zip(members, pieces):
            write_in_place(parameter, piece.reshape(parameter.shape).astype(parameter.dtype))
