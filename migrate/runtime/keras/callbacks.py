"""`tf.keras.callbacks`: Callback, History, LambdaCallback, LearningRateScheduler, EarlyStopping,
ReduceLROnPlateau, ModelCheckpoint, BackupAndRestore, CSVLogger, TensorBoard, TerminateOnNaN.

Hooks run on every process (each process runs the same loop, and the metrics in `logs`
are global, so every process decides alike); anything that writes files
(ModelCheckpoint, BackupAndRestore, CSVLogger, TensorBoard) writes from rank 0 only,
through the model's own saving and `migrate.runtime.tfsummary`.
"""

from __future__ import annotations

import collections
import csv
import json
import os
import shutil
import warnings

import numpy as np

from ._tensors import to_float


class Callback:
    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass
    def on_train_batch_begin(self, batch, logs=None): pass
    def on_train_batch_end(self, batch, logs=None): pass
    def on_test_begin(self, logs=None): pass
    def on_test_end(self, logs=None): pass
    def on_test_batch_begin(self, batch, logs=None): pass
    def on_test_batch_end(self, batch, logs=None): pass
    def on_predict_begin(self, logs=None): pass
    def on_predict_end(self, logs=None): pass
    def on_predict_batch_begin(self, batch, logs=None): pass
    def on_predict_batch_end(self, batch, logs=None): pass

    # Keras 2 aliases
    def on_batch_begin(self, batch, logs=None): pass
    def on_batch_end(self, batch, logs=None): pass


def _overrides(callback, name: str) -> bool:
    if name in vars(callback):  # LambdaCallback sets its hooks on the instance
        return True
    return getattr(type(callback), name, None) is not getattr(Callback, name)


class History(Callback):
    """Records the epoch logs: `history.history["loss"]` is the list of per-epoch losses."""

    def __init__(self):
        super().__init__()
        self.history: dict = {}
        self.epoch: list = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)


class LambdaCallback(Callback):
    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, **kwargs):
        super().__init__()
        for name, fn in dict(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end, on_train_begin=on_train_begin,
                             on_train_end=on_train_end, on_train_batch_begin=on_train_batch_begin,
                             on_train_batch_end=on_train_batch_end, **kwargs).items():
            if fn is not None:
                setattr(self, name, fn)


class LearningRateScheduler(Callback):
    """Set the optimizer's learning rate to `schedule(epoch, lr)` at the start of every epoch."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        current = float(optimizer.current_learning_rate())
        try:
            value = self.schedule(epoch, current)
        except TypeError:
            value = self.schedule(epoch)
        optimizer.learning_rate = float(value)

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(self.model.optimizer.current_learning_rate())


class EarlyStopping(Callback):
    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        self.monitor, self.min_delta, self.patience = monitor, abs(min_delta), patience
        self.baseline, self.restore_best_weights, self.start_from_epoch = baseline, restore_best_weights, start_from_epoch
        if mode == "auto":
            mode = "max" if "acc" in monitor or monitor.endswith("auc") else "min"
        self.mode = mode
        self.stopped_epoch = 0

    def _better(self, value, best):
        if self.mode == "min":
            return value < best - self.min_delta
        return value > best + self.min_delta

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.best = np.inf if self.mode == "min" else -np.inf
        self.best_weights = None

    def on_epoch_end(self, epoch, logs=None):
        value = (logs or {}).get(self.monitor)
        if value is None or epoch < self.start_from_epoch:
            return
        if self._better(value, self.best):
            self.best, self.wait = value, 0
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            return
        self.wait += 1
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                self.model.set_weights(self.best_weights)


_UP = ("accuracy", "auc", "precision", "recall", "iou", "f1", "fbeta", "r2", "truepositives", "truenegatives",
       "specificity", "sensitivity")
_DOWN = ("crossentropy", "error", "hinge", "loss", "divergence", "poisson", "logcosh", "falsepositives",
         "falsenegatives")


def _direction(model, name: str) -> str | None:
    """'up' or 'down' for a compiled metric of `model` called `name` (Keras's `_direction`), else None."""
    for metric in getattr(model, "metrics", None) or []:
        if getattr(metric, "name", None) != name:
            continue
        direction = getattr(metric, "_direction", None)
        if direction:
            return direction
        kind = type(metric).__name__.lower()
        if any(word in kind for word in _UP):
            return "up"
        if any(word in kind for word in _DOWN):
            return "down"
    return None


class _MonitorCallback(Callback):
    """Keras 3's MonitorCallback: is a monitored value an improvement, in `mode` or the metric's direction."""

    def __init__(self, monitor="val_loss", mode="auto", baseline=None, min_delta=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"{type(self).__name__} mode '{mode}' is unknown, fallback to auto mode.", stacklevel=2)
            mode = "auto"
        self.monitor, self.mode, self.best = monitor, mode, baseline
        self.min_delta = abs(min_delta)
        self.monitor_op = None

    def _set_monitor_op(self) -> None:
        if self.mode == "min":
            self.monitor_op = np.less
        elif self.mode == "max":
            self.monitor_op = np.greater
        else:
            name = self.monitor.removeprefix("val_")
            direction = "down" if name == "loss" else _direction(self.model, name)
            if direction is None:
                raise ValueError(f"{type(self).__name__} callback received monitor={self.monitor}, but Keras isn't "
                                 "able to automatically determine whether that metric should be maximized or "
                                 "minimized. Pass `mode='max'` in order to monitor based on the highest metric "
                                 "value, or pass `mode='min'` in order to use the lowest value.")
            self.monitor_op = np.greater if direction == "up" else np.less
        if self.monitor_op is np.less:
            self.min_delta *= -1

    def _is_improvement(self, value, reference) -> bool:
        if reference is None:
            return True
        return bool(self.monitor_op(value - self.min_delta, reference))


class ReduceLROnPlateau(_MonitorCallback):
    """Multiply the learning rate by `factor` after `patience` epochs without improvement (Keras 3's rules)."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs):
        super().__init__(monitor, mode, min_delta=min_delta)
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}")
        self.factor, self.min_lr, self.patience = factor, min_lr, patience
        self.verbose, self.cooldown = verbose, cooldown
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self.best, self.cooldown_counter, self.wait = None, 0, 0

    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        logs = logs if logs is not None else {}
        optimizer = self.model.optimizer
        logs["learning_rate"] = float(optimizer.current_learning_rate())
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Learning rate reduction is conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(logs)}.", stacklevel=2)
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current, self.best):
            self.best, self.wait = current, 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old = float(optimizer.current_learning_rate())
                if old > np.float32(self.min_lr):
                    new = max(old * self.factor, self.min_lr)
                    optimizer.learning_rate = new
                    if self.verbose > 0 and _rank() == 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.")
                    self.cooldown_counter, self.wait = self.cooldown, 0


def _rank() -> int:
    from .. import collectives

    return collectives.replicas().rank


class CSVLogger(Callback):
    """One CSV row of epoch logs per epoch (Keras's columns, order and "NA"), written by rank 0."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.sep, self.filename, self.append = separator, os.fspath(filename), append
        self.writer = self.keys = self.csv_file = None
        self.append_header = True

    def on_train_begin(self, logs=None):
        if _rank() != 0:
            return
        mode = "w"
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as handle:
                    self.append_header = not bool(len(handle.readline()))
            mode = "a"
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, mode, newline="")
        self.writer = self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        if self.csv_file is None:
            return
        logs = logs or {}

        def handle_value(value):
            if isinstance(value, str):
                return value
            if isinstance(value, collections.abc.Iterable) and not (isinstance(value, np.ndarray) and value.ndim == 0):
                return f'"[{", ".join(map(str, value))}]"'
            return value

        if self.keys is None:
            self.keys = sorted(logs)
            if self.keys and not any(key.startswith("val_") for key in self.keys):
                self.keys.extend([f"val_{key}" for key in self.keys])
        if not self.writer:
            dialect = type("CustomDialect", (csv.excel,), {"delimiter": self.sep})
            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys, dialect=dialect)
            if self.append_header:
                self.writer.writeheader()
        row = collections.OrderedDict({"epoch": epoch})
        row.update((key, handle_value(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None


class BackupAndRestore(Callback):
    """Resume an interrupted `fit` where its last completed epoch (or `save_freq` batch) left it.

    As Keras 3: the weights, the optimizer's state and ``{"epoch", "batch"}`` are saved to
    ``backup_dir`` (rank 0 writes, atomically); a later `fit` with the same directory loads
    them and starts at the saved epoch; a `fit` that completes deletes the directory. The
    weights file is a MindSpore checkpoint under Keras's name ``latest.weights.h5``. In a
    job of several nodes, `backup_dir` must be on storage every node sees, as in TF.
    """

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False, delete_checkpoint=True):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(f"Invalid value for argument `save_freq`. Received: save_freq={save_freq}. "
                             "Expected either 'epoch' or an integer value.")
        self.backup_dir, self.save_freq = os.fspath(backup_dir), save_freq
        self.double_checkpoint, self.delete_checkpoint = double_checkpoint, delete_checkpoint
        self._batches_seen_since_last_saving = self._last_batch_seen = self._current_epoch = 0
        self._weights_path = os.path.join(self.backup_dir, "latest.weights.h5")
        self._training_metadata_path = os.path.join(self.backup_dir, "training_metadata.json")
        self._prev_weights_path = f"{self._weights_path}.bkp"
        self._prev_training_metadata_path = f"{self._training_metadata_path}.bkp"

    def on_train_begin(self, logs=None):
        try:
            self._load_model()
        except (OSError, ValueError, RuntimeError):
            if not os.path.exists(self._prev_weights_path):
                raise
            if _rank() == 0:
                shutil.copy(self._prev_weights_path, self._weights_path)
                if os.path.exists(self._prev_training_metadata_path):
                    shutil.copy(self._prev_training_metadata_path, self._training_metadata_path)
                elif os.path.exists(self._training_metadata_path):
                    os.remove(self._training_metadata_path)
            _barrier()
            self._load_model()

    def _load_model(self) -> None:
        from . import saving

        if not self.model.built:
            raise ValueError("To use the BackupAndRestore callback, you model must be built before you call "
                             f"`fit()`. Model {self.model} is unbuilt. You can build it beforehand by calling it "
                             "on a batch of data.")
        if os.path.exists(self._weights_path):
            optimizer = self.model.optimizer
            if optimizer is not None and not optimizer.built:
                optimizer.build(self.model.trainable_variables)
            entries = saving.read_entries(self._weights_path)
            saving.restore_weights(self.model, entries, f"BackupAndRestore({self.backup_dir!r})")
            if optimizer is not None:
                optimizer.restore_entries(saving.entries_under("optimizer/", entries))
        if os.path.exists(self._training_metadata_path):
            with open(self._training_metadata_path) as handle:
                self.model._initial_epoch = json.loads(handle.read())["epoch"]

    def on_epoch_end(self, epoch, logs=None):
        self._current_epoch = epoch + 1
        self._last_batch_seen = 0
        if self.save_freq == "epoch":
            self._save_model()

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch):
            self._save_model()

    def _save_model(self) -> None:
        from . import saving

        rank = _rank()
        if rank == 0:
            os.makedirs(self.backup_dir, exist_ok=True)
            if self.double_checkpoint and os.path.exists(self._weights_path):
                shutil.copy(self._weights_path, self._prev_weights_path)
            if self.double_checkpoint and os.path.exists(self._training_metadata_path):
                shutil.copy(self._training_metadata_path, self._prev_training_metadata_path)
        saving.write_entries(self._weights_path, saving.model_entries(self.model))  # rank 0 writes, every rank waits
        if rank == 0:
            temporary = f"{self._training_metadata_path}.tmp"
            with open(temporary, "w") as handle:
                handle.write(json.dumps({"epoch": self._current_epoch, "batch": self._last_batch_seen}))
            os.replace(temporary, self._training_metadata_path)
        _barrier()

    def _should_save_on_batch(self, batch) -> bool:
        if self.save_freq == "epoch":
            return False
        add = batch + 1 if batch <= self._last_batch_seen else batch - self._last_batch_seen
        self._batches_seen_since_last_saving += add
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            return True
        return False

    def on_train_end(self, logs=None):
        if not self.delete_checkpoint:
            return
        _barrier()  # every rank is done with the files ...
        if _rank() == 0 and os.path.exists(self.backup_dir):
            shutil.rmtree(self.backup_dir)
        _barrier()  # ... and none sees them after fit returns


def _barrier() -> None:
    from .. import collectives

    collectives.replicas().barrier()


class ModelCheckpoint(Callback):
    """Save the model (or its weights) at the end of every epoch, or only when `monitor` improves."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", initial_value_threshold=None):
        super().__init__()
        self.filepath, self.monitor, self.save_best_only = str(filepath), monitor, save_best_only
        self.save_weights_only = save_weights_only
        if mode == "auto":
            mode = "max" if "acc" in monitor else "min"
        self.mode = mode
        self.best = initial_value_threshold if initial_value_threshold is not None else (
            np.inf if mode == "min" else -np.inf)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.save_best_only:
            value = logs.get(self.monitor)
            if value is None:
                return
            improved = value < self.best if self.mode == "min" else value > self.best
            if not improved:
                return
            self.best = value
        path = self.filepath.format(epoch=epoch + 1, **logs)
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)


class TensorBoard(Callback):
    """Keras's TensorBoard callback on :mod:`migrate.runtime.tfsummary`: the same event files
    (``<log_dir>/train`` and ``<log_dir>/validation``) and tags: ``epoch_<metric>`` and
    ``epoch_learning_rate`` at each epoch, ``batch_<metric>`` every ``update_freq`` batches,
    ``evaluation_<metric>_vs_iterations`` after each evaluation, and weight histograms every
    ``histogram_freq`` epochs. The model graph, profiling and embeddings are not written."""

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
                 embeddings_metadata=None):
        super().__init__()
        self.log_dir = str(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = write_graph
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self._writers: dict = {}
        self._global_train_batch = 0
        self._global_test_batch = 0
        self._contexts: list = []

    @staticmethod
    def _summary():
        from migrate.runtime import tfsummary

        return tfsummary

    def set_model(self, model):
        import os

        self.model = model
        self._train_dir = os.path.join(self.log_dir, "train")
        self._val_dir = os.path.join(self.log_dir, "validation")
        self._writers = {}

    def _writer(self, which: str):
        if which not in self._writers:
            self._writers[which] = self._summary().create_file_writer(
                self._train_dir if which == "train" else self._val_dir)
        return self._writers[which]

    def _push(self, which: str, step: int) -> None:
        """Keras's default writer for batch-level summaries, recording every `update_freq` steps."""
        if self.update_freq == "epoch":
            return
        summary = self._summary()
        contexts = (self._writer(which).as_default(step), summary.record_if(lambda: step % self.update_freq == 0))
        for context in contexts:
            context.__enter__()
        self._contexts.append(contexts)

    def _pop(self) -> None:
        if self.update_freq == "epoch" or not self._contexts:
            return
        for context in reversed(self._contexts.pop()):
            context.__exit__(None, None, None)

    def on_train_begin(self, logs=None):
        self._global_train_batch = 0
        self._push("train", 0)

    def on_train_end(self, logs=None):
        self._pop()
        for writer in self._writers.values():
            writer.close()

    def on_test_begin(self, logs=None):
        self._push("val", self._global_test_batch)

    def on_test_end(self, logs=None):
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and hasattr(optimizer, "iterations") and logs:
            with self._writer("val").as_default():
                for name, value in logs.items():
                    self._summary().scalar(f"evaluation_{name}_vs_iterations", value,
                                           step=int(to_float(optimizer.iterations)))
        self._pop()

    def on_train_batch_begin(self, batch, logs=None):
        self._global_train_batch += 1
        if self.update_freq != "epoch":
            self._pop()
            self._push("train", self._global_train_batch)

    def on_train_batch_end(self, batch, logs=None):
        if isinstance(logs, dict) and self.update_freq != "epoch":
            for name, value in logs.items():
                self._summary().scalar(f"batch_{name}", value, step=self._global_train_batch)

    def on_test_batch_begin(self, batch, logs=None):
        self._global_test_batch += 1
        if self.update_freq != "epoch":
            self._pop()
            self._push("val", self._global_test_batch)

    def on_epoch_end(self, epoch, logs=None):
        summary = self._summary()
        if logs:
            train = {k: v for k, v in logs.items() if not k.startswith("val_")}
            val = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
            optimizer = getattr(self.model, "optimizer", None)
            optimizer = getattr(optimizer, "inner_optimizer", optimizer)
            if optimizer is not None and hasattr(optimizer, "learning_rate"):
                train["learning_rate"] = to_float(optimizer.learning_rate)
            with self._writer("train").as_default():
                for name, value in train.items():
                    summary.scalar(f"epoch_{name}", value, step=epoch)
            if val:
                with self._writer("val").as_default():
                    for name, value in val.items():
                        summary.scalar(f"epoch_{name}", value, step=epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            with self._writer("train").as_default():
                for layer in getattr(self.model, "layers", []):
                    for weight in getattr(layer, "weights", []):
                        name = str(getattr(weight, "path", None) or weight.name).replace(":", "_")
                        summary.histogram(f"{name}/histogram", weight, step=epoch)


class ProgbarLogger(Callback):
    """Accepted for compatibility; `fit(verbose=...)` prints one line per epoch on rank 0."""


class TerminateOnNaN(Callback):
    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not np.isfinite(loss):
            self.model.stop_training = True


def _flattened(callbacks):
    if callbacks is None:
        return
    if isinstance(callbacks, (list, tuple)):
        for each in callbacks:
            yield from _flattened(each)
    else:
        yield callbacks


class CallbackList:
    """Calls a list of callbacks; knows whether any needs per-batch logs (which cost a collective)."""

    def __init__(self, callbacks=None, model=None, params=None, add_history=True):
        self.callbacks = list(_flattened(callbacks))  # (Keras takes one callback, or nested lists)
        self.history = None
        if add_history:
            self.history = History()
            self.callbacks.append(self.history)
        for callback in self.callbacks:
            callback.set_model(model)
            callback.set_params(params or {})

    @property
    def wants_batch_logs(self) -> bool:
        return any(_overrides(c, "on_train_batch_end") or _overrides(c, "on_batch_end") for c in self.callbacks)

    @property
    def wants_test_batch_logs(self) -> bool:
        return any(_overrides(c, "on_test_batch_end") for c in self.callbacks)

    def __getattr__(self, name):
        if not name.startswith("on_"):
            raise AttributeError(name)

        def call(*args, **kwargs):
            for callback in self.callbacks:
                getattr(callback, name)(*args, **kwargs)
                if name == "on_train_batch_end" and _overrides(callback, "on_batch_end"):
                    callback.on_batch_end(*args, **kwargs)
                if name == "on_train_batch_begin" and _overrides(callback, "on_batch_begin"):
                    callback.on_batch_begin(*args, **kwargs)

        return call
