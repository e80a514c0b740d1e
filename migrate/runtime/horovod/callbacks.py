"""Horovod's Keras callbacks (`hvd.callbacks.*`) for `migrate.runtime.keras`'s `fit`, hook for hook as Horovod's."""

from __future__ import annotations

import numpy as np

from ..keras.callbacks import Callback, ModelCheckpoint


class BroadcastGlobalVariablesCallback(Callback):
    """After the first batch, give every process `root_rank`'s model and optimizer variables.

    As Horovod does it: at the end of the first batch (the optimizer's slots exist only
    after its first step), once per training; variables passed to `register_local_var`
    stay this process's own.
    """

    def __init__(self, root_rank, device="", local_variables=None):
        super().__init__()
        self.root_rank = root_rank
        self.broadcast_done = False
        self._local_vars: set[int] = set()
        for var in local_variables or ():
            self.register_local_var(var)

    def register_local_var(self, var):
        self._local_vars.add(id(var))

    def on_batch_end(self, batch, logs=None):
        if self.broadcast_done:
            return
        from . import broadcast_variables

        broadcast_variables([v for v in self.model.variables if id(v) not in self._local_vars], self.root_rank)
        broadcast_variables(list(_optimizer_variables(self.model.optimizer)), self.root_rank)
        self.broadcast_done = True



def _optimizer_variables(optimizer):
    variables = getattr(optimizer, "variables", [])
    return variables() if callable(variables) and not isinstance(variables, (list, tuple)) else variables


class MetricAverageCallback(Callback):
    """At the end of every epoch, replace each value in `logs` by its average over processes (sorted by name)."""

    def __init__(self, device=""):
        super().__init__()

    def on_epoch_end(self, epoch, logs=None):
        if not logs:
            return
        from . import allreduce

        for metric in sorted(logs):
            logs[metric] = float(np.asarray(allreduce(np.asarray(logs[metric], dtype=np.float32))))


class LearningRateScheduleCallback(Callback):
    """Set the learning rate to ``initial_lr * multiplier(epoch)`` between `start_epoch` and `end_epoch`.

    `staircase=True` changes it at the first batch of each epoch, otherwise at every batch
    with a fractional epoch; `momentum_correction` scales the optimizer's momentum by
    ``new_lr / old_lr`` for that batch (Goyal et al.), as Horovod's does.
    """

    def __init__(self, initial_lr, multiplier, start_epoch=0, end_epoch=None, staircase=True,
                 momentum_correction=True, steps_per_epoch=None):
        super().__init__()
        if initial_lr is None:
            raise ValueError("Parameter `initial_lr` is required")
        self.start_epoch, self.end_epoch, self.staircase = start_epoch, end_epoch, staircase
        self.momentum_correction, self.initial_lr = momentum_correction, initial_lr
        self.restore_momentum = None
        self.steps_per_epoch = steps_per_epoch
        self.current_epoch = None
        if not callable(multiplier):
            self.multiplier = lambda epoch: multiplier ** (epoch - start_epoch)
        else:
            self.multiplier = multiplier

    def _autodetect_steps_per_epoch(self):
        if self.params.get("steps"):
            return self.params["steps"]
        if self.params.get("samples") and self.params.get("batch_size"):
            return self.params["samples"] // self.params["batch_size"]
        raise ValueError("Could not autodetect the number of steps per epoch. Please specify the steps_per_epoch "
                         f"parameter to the {type(self).__name__}().")

    def _adjust_learning_rate(self, epoch):
        optimizer = self.model.optimizer
        old_lr = float(optimizer.current_learning_rate())
        new_lr = self.initial_lr * self.multiplier(epoch)
        optimizer.learning_rate = float(new_lr)
        momentum = getattr(optimizer, "momentum", None)
        if self.momentum_correction and isinstance(momentum, float) and old_lr:
            self.restore_momentum = momentum
            optimizer.momentum = momentum * new_lr / old_lr

    def _restore_momentum_if_needed(self):
        if self.restore_momentum:
            self.model.optimizer.momentum = self.restore_momentum
            self.restore_momentum = None

    def on_train_begin(self, logs=None):
        if not self.staircase and not self.steps_per_epoch:
            self.steps_per_epoch = self._autodetect_steps_per_epoch()

    def on_epoch_begin(self, epoch, logs=None):
        self.current_epoch = epoch

    def on_batch_begin(self, batch, logs=None):
        if self.current_epoch < self.start_epoch or (self.end_epoch is not None
                                                     and self.current_epoch >= self.end_epoch):
            return
        if self.staircase and batch == 0:
            self._adjust_learning_rate(self.current_epoch)
        elif not self.staircase:
            self._adjust_learning_rate(self.current_epoch + float(batch) / self.steps_per_epoch)

    def on_batch_end(self, batch, logs=None):
        self._restore_momentum_if_needed()


    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["lr"] = float(self.model.optimizer.current_learning_rate())


class LearningRateWarmupCallback(LearningRateScheduleCallback):
    """Ramp the learning rate from ``initial_lr / size()`` to `initial_lr` over `warmup_epochs` (Goyal et al.)."""

    def __init__(self, initial_lr, warmup_epochs=5, momentum_correction=True, steps_per_epoch=None, verbose=0):
        from . import size

        def multiplier(epoch):
            epoch += 1.0 / self.steps_per_epoch
            return 1.0 / size() * (epoch * (size() - 1) / warmup_epochs + 1)

        super().__init__(initial_lr, multiplier, start_epoch=0, end_epoch=warmup_epochs, staircase=False,
                         momentum_correction=momentum_correction, steps_per_epoch=steps_per_epoch)
        self.verbose = verbose

    def on_epoch_end(self, epoch, logs=None):
        super().on_epoch_end(epoch, logs)
        from . import rank

        if epoch == self.end_epoch - 1 and self.verbose > 0 and rank() == 0:
            new_lr = float(self.model.optimizer.current_learning_rate())
            print(f"\nEpoch {epoch + 1}: finished gradual learning rate warmup to {new_lr:g}.")


class BestModelCheckpoint(ModelCheckpoint):
    """Horovod's `ModelCheckpoint(save_best_only=True)`; the file path is set later (`filepath`)."""

    def __init__(self, monitor="val_loss", verbose=0, save_weights_only=False, mode="auto", save_freq="epoch"):
        super().__init__(filepath="checkpoint.keras", monitor=monitor, verbose=verbose, save_best_only=True,
                         save_weights_only=save_weights_only, mode=mode, save_freq=save_freq)
