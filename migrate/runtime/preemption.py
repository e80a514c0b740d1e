"""`tf.distribute.experimental` preemption handling: `TerminationConfig`,
`PreemptionCheckpointHandler`, `PreemptionWatcher`.

What is kept: a termination signal (SIGTERM unless `termination_watcher_fn` says
otherwise) is noticed, every rank learns of it at the same step (one small
all-reduce per `run` call when there is more than one process, as TF syncs the
notice across workers), a checkpoint is saved and `exit_fn` runs (by default
``sys.exit(42)``, TF's choice outside GCE/TPU). What is not: TF's platform-specific
watchers (GCE maintenance events, TPU), grace periods that keep training until the
last moment (`grace_period` only delays the save), and the coordination service.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

__all__ = ["TerminationConfig", "PreemptionCheckpointHandler", "PreemptionWatcher"]


class TerminationConfig:
    """How to notice a termination and what to do after the checkpoint is saved."""

    def __init__(self, termination_watcher_fn=None, exit_fn=None, grace_period=None, save_fn=None):
        self.termination_watcher_fn = termination_watcher_fn
        self.exit_fn = exit_fn or (lambda: sys.exit(42))
        self.grace_period = grace_period or 0
        self.save_fn = save_fn


class _SignalFlag:
    """Set when SIGTERM arrives (installed once, chaining any previous handler)."""

    def __init__(self):
        self.event = threading.Event()
        self.installed = False

    def install(self):
        if self.installed or threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGTERM)

        def handler(signum, frame):
            self.event.set()
            if callable(previous) and previous not in (signal.SIG_DFL, signal.SIG_IGN):
                previous(signum, frame)

        signal.signal(signal.SIGTERM, handler)
        self.installed = True


_sigterm = _SignalFlag()


class PreemptionCheckpointHandler:
    """Save a checkpoint and exit when the job is being terminated (see the module notes)."""

    def __init__(self, cluster_resolver, checkpoint_or_checkpoint_manager, checkpoint_dir=None,
                 termination_config=None):
        self._cluster_resolver = cluster_resolver
        self._checkpoint = checkpoint_or_checkpoint_manager
        self._checkpoint_dir = checkpoint_dir
        self._config = termination_config or TerminationConfig()
        self._run_calls = 0
        if self._config.termination_watcher_fn is None:
            _sigterm.install()

    @property
    def total_run_calls(self) -> int:
        """How many times `run` was called (TF restores it from the checkpoint; here it counts this run)."""
        return self._run_calls

    def _preempted_here(self) -> bool:
        watcher = self._config.termination_watcher_fn
        return bool(watcher()) if watcher is not None else _sigterm.event.is_set()

    def _preempted_anywhere(self) -> bool:
        from . import collectives, reductions

        mine = 1.0 if self._preempted_here() else 0.0
        group = collectives.world()
        if group.size == 1:
            return mine > 0
        import numpy as np

        total = reductions.reduce_values(group, "sum", np.float32(mine), what="preemption notice")
        return float(total) > 0

    def _save_and_exit(self):
        if self._config.grace_period:
            time.sleep(float(self._config.grace_period))
        if self._config.save_fn is not None:
            self._config.save_fn()
        elif hasattr(self._checkpoint, "save") and hasattr(self._checkpoint, "checkpoint"):
            self._checkpoint.save()                      # a CheckpointManager
        elif hasattr(self._checkpoint, "save"):
            self._checkpoint.save(os.path.join(self._checkpoint_dir or ".", "ckpt"))
        else:
            raise TypeError("PreemptionCheckpointHandler needs a checkpoint or checkpoint manager with a save() "
                            "method, or TerminationConfig(save_fn=...)")
        self._config.exit_fn()

    def run(self, distributed_train_function, *args, **kwargs):
        """Run one step; if a termination was noticed on any rank, save a checkpoint and exit."""
        result = distributed_train_function(*args, **kwargs)
        self._run_calls += 1
        if self._preempted_anywhere():
            self._save_and_exit()
        return result

    def save_checkpoint_if_preempted(self, *args, **kwargs):
        """For custom loops: save and exit here if a termination was noticed on any rank."""
        if self._preempted_anywhere():
            self._save_and_exit()

    def watch_preemption_scope(self):
        """A scope for the training loop (kept for source compatibility; nothing to watch here)."""
        import contextlib

        return contextlib.nullcontext()


class PreemptionWatcher:
    """Notices a termination signal (SIGTERM); TF watches the platform's coordination service."""

    def __init__(self):
        _sigterm.install()

    @property
    def preemption_message(self):
        """None until a termination signal arrived, then a message saying so."""
        return "SIGTERM received" if _sigterm.event.is_set() else None

    def block_until_worker_exit(self):
        """Block until a termination signal arrives."""
        _sigterm.event.wait()
