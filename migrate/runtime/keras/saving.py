"""Weights and checkpoints on MindSpore checkpoint files, written by rank 0 only and atomically.

Every process of a launched job holds the same weights (TF's mirrored variables), so
one copy is written: rank 0 writes a temporary file next to the target and renames it
over the target (a reader never sees a half-written file), then all processes pass a
barrier so that a load right after a save finds the file.

Entries are keyed `<index>/<parameter name>` in `model.weights` order (Keras layouts),
and loaded by position with a shape check, so a checkpoint loads into the same
architecture built in another program even if its layer names differ. The file is a
MindSpore checkpoint whatever the path's suffix (a Keras `.weights.h5` path is kept as
given; its content is not HDF5).
"""

from __future__ import annotations

import os
import tempfile

import numpy as np


def _rank_and_group():
    from .. import collectives

    group = collectives.replicas()
    return group.rank, group


def write_entries(path: str, entries) -> None:
    """Write [(name, Tensor|ndarray)] to `path` from rank 0 (temp file + rename), then barrier."""
    import mindspore as ms

    rank, group = _rank_and_group()
    path = os.fspath(path)
    if rank == 0:
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=".ckpt", dir=directory)
        os.close(handle)
        try:
            payload = [{"name": name, "data": value if hasattr(value, "asnumpy") else ms.Tensor(np.asarray(value))}
                       for name, value in entries]
            ms.save_checkpoint(payload, temporary)
            os.replace(temporary, path)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
    group.barrier()


def read_entries(path: str) -> dict:
    """{name: numpy array} from a checkpoint written by `write_entries` (any suffix)."""
    import mindspore as ms

    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No checkpoint at {path!r}")
    if path.endswith(".ckpt"):
        loaded = ms.load_checkpoint(path)
    else:  # MindSpore insists on the .ckpt suffix: read through a link that has it
        with tempfile.TemporaryDirectory() as directory:
            link = os.path.join(directory, "weights.ckpt")
            os.symlink(os.path.abspath(path), link)
            loaded = ms.load_checkpoint(link)
    return {name: value.asnumpy() for name, value in loaded.items()}


def entries_under(prefix: str, entries: dict) -> dict:
    """The entries whose keys start with `prefix`, keyed by the rest (an object's own, in a larger file)."""
    return {key[len(prefix):]: value for key, value in entries.items() if key.startswith(prefix)}


def weight_entries(prefix: str, weights) -> list:
    return [(f"{prefix}{index:05d}/{parameter.name}", parameter) for index, parameter in enumerate(weights)]


def assign_by_position(prefix: str, weights, entries: dict, what: str) -> None:
    import mindspore as ms

    keys = sorted(k for k in entries if k.startswith(prefix))
    if len(keys) != len(weights):
        raise ValueError(f"{what}: the checkpoint holds {len(keys)} weights, the model has {len(weights)}")
    for key, parameter in zip(keys, weights):
        value = entries[key]
        if tuple(value.shape) != tuple(parameter.shape):
            raise ValueError(f"{what}: weight {parameter.name} has shape {tuple(parameter.shape)}, the checkpoint's "
                             f"{key} has shape {tuple(value.shape)}")
        parameter.set_data(ms.Tensor(value.astype(parameter.asnumpy().dtype)))


def save_weights(model, path) -> None:
    write_entries(path, weight_entries("weights/", model.weights))


def load_weights(model, path) -> None:
    entries = read_entries(path)
    assign_by_position("weights/", model.weights, entries, f"load_weights({path!r})")
