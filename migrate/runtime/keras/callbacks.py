"""`tf.keras.callbacks`: Callback, History, LambdaCallback, LearningRateScheduler, EarlyStopping,
ModelCheckpoint, TensorBoard.

Hooks run on every process (each process runs the same loop); anything that writes
files (ModelCheckpoint, TensorBoard) writes from rank 0 only, through the model's own
saving and `migrate.runtime.tfsummary`.
"""

from __future__ import annotations

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


class CallbackList:
    """Calls a list of callbacks; knows whether any needs per-batch logs (which cost a collective)."""

    def __init__(self, callbacks=None, model=None, params=None, add_history=True):
        self.callbacks = list(callbacks or [])
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
