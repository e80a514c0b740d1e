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


def write_entries(path: str, entries, strings: dict | None = None) -> None:
    """Write [(name, Tensor|ndarray)] (and {name: str}) to `path` from rank 0 (temp file + rename),
    then barrier."""
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
            ms.save_checkpoint(payload, temporary, append_dict=dict(strings) if strings else None)
            os.replace(temporary, path)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
    group.barrier()


def read_entries(path: str) -> dict:
    """{name: numpy array (or str)} from a checkpoint written by `write_entries` (any suffix)."""
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
    return {name: value if isinstance(value, str) else value.asnumpy() for name, value in loaded.items()}


def entries_under(prefix: str, entries: dict) -> dict:
    """The entries whose keys start with `prefix`, keyed by the rest (an object's own, in a larger file)."""
    return {key[len(prefix):]: value for key, value in entries.items() if key.startswith(prefix)}


def weight_entries(prefix: str, weights) -> list:
    return [(f"{prefix}{index:05d}/{parameter.name}", parameter) for index, parameter in enumerate(weights)]


def assign_by_position(prefix: str, weights, entries: dict, what: str, write=None) -> None:
    """Assign ``weights`` the checkpoint's values under ``prefix``, by position, every shape
    checked before any is written. ``write(parameter, value)`` writes one (``set_data`` unless
    given: the native loop writes in place)."""
    import mindspore as ms

    keys = sorted(k for k in entries if k.startswith(prefix) and not isinstance(entries[k], str))
    if len(keys) != len(weights):
        raise ValueError(f"{what}: the checkpoint holds {len(keys)} weights, the model has {len(weights)}")
    for key, parameter in zip(keys, weights):
        value = entries[key]
        if tuple(value.shape) != tuple(parameter.shape):
            raise ValueError(f"{what}: weight {parameter.name} has shape {tuple(parameter.shape)}, the checkpoint's "
                             f"{key} has shape {tuple(value.shape)}")
    for key, parameter in zip(keys, weights):
        if write is not None:
            write(parameter, entries[key])
        else:
            parameter.set_data(ms.Tensor(entries[key].astype(parameter.asnumpy().dtype)))


def save_weights(model, path) -> None:
    write_entries(path, weight_entries("weights/", model.weights))


def load_weights(model, path) -> None:
    restore_weights(model, read_entries(path), f"load_weights({path!r})")


def restore_weights(model, entries: dict, what: str) -> None:
    """Assign a model's weights from `entries` (by position), then let layers that cache values
    derived from their weights (an adapted `Normalization`'s statistics) derive them again, as
    Keras's `finalize_state` does after a load."""
    assign_by_position("weights/", model.weights, entries, what)
    finalize_layers(model)


def finalize_layers(model) -> None:
    """Let the layers that cache values derived from their weights derive them again (after a load)."""
    for _, cell in model.cells_and_names():
        finalize = getattr(type(cell), "_finalize", None)
        if finalize is not None:
            finalize(cell)


def model_entries(model) -> list:
    """The weights and, once compiled, the optimizer's state, as `model.save` and `BackupAndRestore` write them."""
    entries = weight_entries("weights/", model.weights)
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None:
        entries += [(f"optimizer/{key}", value) for key, value in optimizer.checkpoint_entries()]
    return entries


# --- whole models: `model.save` / `load_model` --------------------------------------------------

CONFIG_KEY = "keras_model_config"
FORMAT = "migrate-keras-model"
_DIRECTORY_FILE = "model.ckpt"  # what a SavedModel-style directory path holds


def model_file(path: str, writing: bool) -> str:
    """A path that is a directory (TF's SavedModel form) holds the model as one file inside it."""
    if os.path.isdir(path) or (writing and path.endswith(("/", os.sep))):
        return os.path.join(path, _DIRECTORY_FILE)
    return path


def save_model(model, filepath, include_optimizer=True) -> None:
    """Write the architecture (Keras 3's config), the compile arguments, the weights and the
    optimizer's state into one MindSpore checkpoint (rank 0, atomically)."""
    import json

    from .serialization import serialize_object, serialize_value

    try:
        architecture = serialize_object(model)
        compiled = model._compile_config() if getattr(model, "_is_compiled", False) else None
        record = {"format": FORMAT, "version": 1, "model": architecture,
                  "build_input_shape": serialize_value(getattr(model, "_build_input_shape", None)),
                  "compile_config": serialize_value(compiled)}
        text = json.dumps(record)
    except TypeError as error:
        raise TypeError(f"Cannot save {model.name!r}: {error}. A custom layer or model needs a `get_config()` that "
                        "returns its constructor's arguments (Keras's rule for saving).") from None
    path = model_file(os.fspath(filepath), writing=True)
    entries = model_entries(model) if include_optimizer else weight_entries("weights/", model.weights)
    write_entries(path, entries, {CONFIG_KEY: text})


def _not_ours(path: str) -> str | None:
    """What a TensorFlow/Keras file at `path` is, if it is one (this reads MindSpore checkpoints only)."""
    if os.path.isdir(path):
        if os.path.exists(os.path.join(path, "saved_model.pb")):
            return "a TensorFlow SavedModel directory"
        return None
    with open(path, "rb") as handle:
        head = handle.read(8)
    if head.startswith(b"\x89HDF"):
        return "a Keras HDF5 file"
    if head.startswith(b"PK"):
        return "a Keras `.keras` archive"
    return None


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):  # noqa: A002 (Keras's name)
    """The model `model.save` wrote: rebuilt from its config, its weights assigned, compiled again
    as it was, the optimizer's state restored (when its slots are built, at the first step)."""
    import json

    from .serialization import deserialize_object, deserialize_value

    path = os.fspath(filepath)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No model found at {path!r}")
    foreign = _not_ours(path)
    if foreign is not None:
        raise ValueError(
            f"{path!r} is {foreign}, written by TensorFlow: the converted program reads what its own `model.save` "
            "writes (MindSpore checkpoints). Carry a trained TF model over once: build it in the converted "
            "program, then `model.load_weights(...)` a Keras HDF5 weight file TF wrote (`model.save_weights('w.h5')`), "
            "or `model.set_weights(...)` the arrays TF's `model.get_weights()` gives (Keras layouts).")
    path = model_file(path, writing=False)
    entries = read_entries(path)
    text = entries.get(CONFIG_KEY)
    if not isinstance(text, str):
        raise ValueError(f"{path!r} holds weights only (written by `save_weights` or a checkpoint): build the model "
                         f"in code, then `model.load_weights({path!r})`")
    record = json.loads(text)
    if record.get("format") != FORMAT:
        raise ValueError(f"{path!r} holds no model this version can read (format {record.get('format')!r})")
    model = deserialize_object(record["model"], custom_objects, safe_mode)
    if not model.built and record.get("build_input_shape") is not None:
        model._build_for_restore(deserialize_value(record["build_input_shape"]))
    if model.weights:
        restore_weights(model, entries, f"load_model({path!r})")
    else:  # its layers build at the first call: the values wait for it
        model._defer_restore("weights/", entries)
    compiled = record.get("compile_config")
    if compile and compiled:
        model.compile(**deserialize_value(compiled, custom_objects, safe_mode))
        if model.optimizer is not None:
            model.optimizer.restore_entries(entries_under("optimizer/", entries))
    return model
