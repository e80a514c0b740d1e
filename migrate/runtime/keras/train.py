"""`tf.train.Checkpoint` and `tf.train.CheckpointManager` on MindSpore checkpoint files.

A Checkpoint tracks objects passed as keywords — models/layers (their weights),
optimizers (iterations, learning rate and slot variables), metrics, Parameters/Tensors,
nested Checkpoints. `save(prefix)` writes `<prefix>-<n>.ckpt` (rank 0, atomic) and
returns `<prefix>-<n>` as TF does; `restore(path)` reads it back. Optimizer slots that
do not exist yet (the optimizer has not applied gradients) are restored when they are
created, as TF defers such restorations. `CheckpointManager` numbers checkpoints, keeps
`max_to_keep` of them and records them in a `checkpoint` file in TF's text format, which
`latest_checkpoint(directory)` reads.
"""

from __future__ import annotations

import os
import re

import numpy as np

from . import saving

_SUFFIX = ".ckpt"


def _file(prefix: str) -> str:
    return prefix if prefix.endswith(_SUFFIX) else prefix + _SUFFIX


class _RestoreStatus:
    """What `restore` returns; the assertions are accepted (mismatches raise during restore)."""

    def assert_consumed(self):
        return self

    def assert_existing_objects_matched(self):
        return self

    def assert_nontrivial_match(self):
        return self

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None):
        return None


class Checkpoint:
    def __init__(self, root=None, **objects):
        import mindspore as ms

        if root is not None:
            objects["root"] = root
        self._objects = objects
        self.save_counter = ms.Parameter(ms.Tensor(np.array(0, dtype=np.int64)), name="save_counter",
                                         requires_grad=False)

    def __getattr__(self, name):
        objects = self.__dict__.get("_objects", {})
        if name in objects:
            return objects[name]
        raise AttributeError(name)

    # --- entries ---------------------------------------------------------------------------

    def _entries(self, prefix="") -> list:
        entries = [(f"{prefix}save_counter", self.save_counter)]
        for key, obj in sorted(self._objects.items()):
            entries.extend(_object_entries(f"{prefix}{key}/", obj))
        return entries

    def _restore_entries(self, entries: dict, prefix="") -> None:
        import mindspore as ms

        counter = entries.get(f"{prefix}save_counter")
        if counter is not None:
            self.save_counter.set_data(ms.Tensor(counter.astype(np.int64)))
        for key, obj in sorted(self._objects.items()):
            _restore_object(f"{prefix}{key}/", obj, entries)

    # --- API ---------------------------------------------------------------------------------

    def write(self, file_prefix, options=None) -> str:
        file_prefix = os.fspath(file_prefix)
        saving.write_entries(_file(file_prefix), self._entries())
        return file_prefix

    def save(self, file_prefix, options=None) -> str:
        """Write ``<file_prefix>-<n>`` (n counts saves) and record it in the directory's
        ``checkpoint`` file as the latest, as TF does (``write`` records nothing), so
        ``latest_checkpoint`` finds it."""
        import mindspore as ms

        from .. import collectives

        count = int(self.save_counter.asnumpy()) + 1
        self.save_counter.set_data(ms.Tensor(np.array(count, dtype=np.int64)))
        path = self.write(f"{os.fspath(file_prefix)}-{count}")
        _write_state(os.path.dirname(path) or ".", path, [path])
        collectives.replicas().barrier()  # every rank's latest_checkpoint sees it
        return path

    def read(self, save_path, options=None):
        return self.restore(save_path)

    def restore(self, save_path, options=None):
        if save_path is None:  # TF: restoring None is a no-op (fresh start)
            return _RestoreStatus()
        save_path = os.fspath(save_path)
        path = save_path if os.path.exists(save_path) and not os.path.isdir(save_path) else _file(save_path)
        if not os.path.exists(path) and os.path.exists(save_path + ".index"):
            raise ValueError(f"{save_path} is a checkpoint TensorFlow wrote: its objects cannot be restored into "
                             "MindSpore's; read its values with `tf.train.load_checkpoint` (`tfcheckpoint`) and "
                             "assign them")
        self._restore_entries(saving.read_entries(path))
        return _RestoreStatus()


def _object_entries(prefix: str, obj) -> list:
    from .layers.base import Layer
    from .metrics import Metric
    from .optimizers.base import Optimizer

    if isinstance(obj, Checkpoint):
        return obj._entries(prefix)
    if isinstance(obj, Layer):
        return saving.weight_entries(prefix, obj.weights)
    if isinstance(obj, Optimizer):
        return [(f"{prefix}{key}", parameter) for key, parameter in obj.checkpoint_entries()]
    if isinstance(obj, Metric):
        return saving.weight_entries(prefix, obj.variables)
    if hasattr(obj, "asnumpy"):
        return [(f"{prefix}value", obj)]
    if hasattr(obj, "get_parameters"):  # a plain MindSpore Cell
        return saving.weight_entries(prefix, list(obj.get_parameters()))
    raise TypeError(f"Checkpoint cannot track an object of type {type(obj).__name__}")


def _restore_object(prefix: str, obj, entries: dict) -> None:
    import mindspore as ms

    from .layers.base import Layer
    from .metrics import Metric
    from .optimizers.base import Optimizer

    if isinstance(obj, Checkpoint):
        obj._restore_entries(entries, prefix)
    elif isinstance(obj, Layer):
        own = {key: value for key, value in entries.items() if key.startswith(prefix)}
        if own and not obj.weights:  # not built yet
            obj._defer_restore(prefix, own)
        else:
            saving.assign_by_position(prefix, obj.weights, entries, "Checkpoint.restore")
    elif isinstance(obj, Metric):
        saving.assign_by_position(prefix, obj.variables, entries, "Checkpoint.restore")
    elif isinstance(obj, Optimizer):
        obj.restore_entries(saving.entries_under(prefix, entries))
    elif hasattr(obj, "asnumpy"):
        value = entries.get(f"{prefix}value")
        if value is not None and hasattr(obj, "set_data"):
            obj.set_data(ms.Tensor(value.astype(obj.asnumpy().dtype)))
    elif hasattr(obj, "get_parameters"):
        saving.assign_by_position(prefix, list(obj.get_parameters()), entries, "Checkpoint.restore")


_STATE_FILE = "checkpoint"


def _write_state(directory: str, latest: str, all_paths: list) -> None:
    from .. import collectives

    if collectives.replicas().rank != 0:
        return
    lines = [f'model_checkpoint_path: "{os.path.basename(latest)}"']
    lines += [f'all_model_checkpoint_paths: "{os.path.basename(p)}"' for p in all_paths]
    temporary = os.path.join(directory, f".{_STATE_FILE}.tmp")
    with open(temporary, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    os.replace(temporary, os.path.join(directory, _STATE_FILE))


def _read_state(directory: str):
    path = os.path.join(directory, _STATE_FILE)
    if not os.path.exists(path):
        return None, []
    latest, everything = None, []
    for line in open(path).read().splitlines():
        match = re.match(r'(\w+): "(.*)"', line.strip())
        if not match:
            continue
        key, value = match.groups()
        full = value if os.path.isabs(value) else os.path.join(directory, value)
        if key == "model_checkpoint_path":
            latest = full
        elif key == "all_model_checkpoint_paths":
            everything.append(full)
    return latest, everything


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest checkpoint recorded in `checkpoint_dir`, or None: one this runtime
    wrote (`<prefix>.ckpt`) or one TF wrote (`<prefix>.index`, which `tfcheckpoint` reads)."""
    latest, _ = _read_state(os.fspath(checkpoint_dir))
    if latest and (os.path.exists(_file(latest)) or os.path.exists(latest + ".index")):
        return latest
    return None


class CheckpointManager:
    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None):
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._checkpoint_name = checkpoint_name
        self._step_counter = step_counter
        latest, everything = _read_state(self._directory)
        self._checkpoints = [p for p in everything if os.path.exists(_file(p))]
        self._latest = latest if latest and os.path.exists(_file(latest)) else None

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def checkpoints(self) -> list:
        return list(self._checkpoints)

    @property
    def latest_checkpoint(self):
        return self._latest

    def save(self, checkpoint_number=None, check_interval=True, options=None) -> str:
        import mindspore as ms

        from .. import collectives

        if checkpoint_number is None:
            checkpoint_number = int(self._checkpoint.save_counter.asnumpy()) + 1
        else:
            checkpoint_number = int(checkpoint_number.asnumpy() if hasattr(checkpoint_number, "asnumpy")
                                    else checkpoint_number)
        self._checkpoint.save_counter.set_data(ms.Tensor(np.array(
            int(self._checkpoint.save_counter.asnumpy()) + 1, dtype=np.int64)))
        prefix = os.path.join(self._directory, f"{self._checkpoint_name}-{checkpoint_number}")
        self._checkpoint.write(prefix)
        if prefix in self._checkpoints:
            self._checkpoints.remove(prefix)
        self._checkpoints.append(prefix)
        if self._max_to_keep is not None:
            while len(self._checkpoints) > self._max_to_keep:
                old = self._checkpoints.pop(0)
                if collectives.replicas().rank == 0 and os.path.exists(_file(old)):
                    os.unlink(_file(old))
        self._latest = prefix
        _write_state(self._directory, prefix, self._checkpoints)
        collectives.replicas().barrier()
        return prefix

    def restore_or_initialize(self):
        if self._latest:
            self._checkpoint.restore(self._latest)
            return self._latest
        return None
