"""`tf.distribute.coordinator` / `tf.distribute.experimental.coordinator`: a synchronous coordinator.

TF's `ClusterCoordinator` dispatches functions from a chief to remote workers and
returns futures (`RemoteValue`). Here there is no chief and no remote worker: every
process is a worker running the same program, one replica each. So this coordinator
is synchronous: `schedule(fn)` runs `fn` at once through the strategy
(`strategy.run`, on this process's replica) and returns a `RemoteValue` that
already holds the result. As in TF, an error raised by a scheduled function is not
raised by `schedule` but by the next `join()`, `done()` or `fetch()`/`get()` of its
value.

Differences from TF: functions run in program order on every process (no load
balancing, no asynchronous overlap), and `create_per_worker_dataset` makes one
dataset for this process.
"""

from __future__ import annotations

import warnings

from .tensors import flatten, pack_as, to_numpy, value_kind

__all__ = ["ClusterCoordinator", "RemoteValue", "PerWorkerValues", "PerWorkerValue",
           "experimental_get_current_worker_index"]

_warned = False


class RemoteValue:
    """The result of a scheduled function (already computed: scheduling is synchronous)."""

    def __init__(self, value=None, error: BaseException | None = None):
        self._value, self._error = value, error

    def get(self):
        """The value, as the function returned it; raises the function's error if it failed."""
        if self._error is not None:
            raise self._error
        return self._value

    def fetch(self):
        """The value with tensors converted to numpy, like TF's `fetch`."""
        return _to_host(self.get())


class PerWorkerValues:
    """One value per worker: here, this process's value only (TF: one per remote worker)."""

    def __init__(self, values):
        self._values = tuple(values)

    @property
    def local(self):
        return self._values[0]

    def __iter__(self):
        return iter(self._values)

    def __repr__(self) -> str:
        return f"PerWorkerValues({self._values!r})"


PerWorkerValue = PerWorkerValues


class _PerWorkerIterator(PerWorkerValues):
    """`iter()` of a per-worker dataset: pass it to `schedule`; the function gets this worker's iterator."""

    def __next__(self):
        return next(self.local)


class _PerWorkerDataset:
    """What `create_per_worker_dataset` returns; `iter()` gives per-worker iterators."""

    def __init__(self, dataset):
        self._dataset = dataset

    def __iter__(self):
        return _PerWorkerIterator([iter(self._dataset)])

    def build(self):
        return self


def _to_host(value):
    def convert(leaf):
        try:
            kind = value_kind(leaf)
        except TypeError:
            return leaf
        return leaf if kind == "python" else to_numpy(leaf)

    return pack_as(value, [convert(leaf) for leaf in flatten(value)])


def _local(value):
    """Replace PerWorkerValues (anywhere in a nest of args) by this worker's value."""
    if isinstance(value, PerWorkerValues):
        return value.local
    if isinstance(value, (list, tuple)) and not hasattr(type(value), "_fields"):
        return type(value)(_local(v) for v in value)
    if isinstance(value, dict):
        return {k: _local(v) for k, v in value.items()}
    return value


class ClusterCoordinator:
    """Schedules functions on the workers: here, runs them at once on this process's replica."""

    def __init__(self, strategy):
        global _warned
        if not _warned:
            _warned = True
            warnings.warn("migrate.runtime.ClusterCoordinator runs scheduled functions synchronously on every "
                          "process (there are no remote workers or parameter servers)", UserWarning, stacklevel=2)
        self._strategy = strategy
        self._errors: list[BaseException] = []

    @property
    def strategy(self):
        return self._strategy

    def schedule(self, fn, args=None, kwargs=None) -> RemoteValue:
        """Run `fn(*args, **kwargs)` through `strategy.run`; a failure is raised by the next join/fetch."""
        args, kwargs = _local(tuple(args or ())), _local(dict(kwargs or {}))
        try:
            value = self._strategy.run(fn, args=args, kwargs=kwargs)
        except Exception as exc:  # noqa: BLE001 - TF reports scheduled failures at join/fetch time
            self._errors.append(exc)
            return RemoteValue(error=exc)
        return RemoteValue(value)

    def join(self) -> None:
        """Wait for every scheduled function (they have all run); raise the first error, if any."""
        if self._errors:
            error, self._errors = self._errors[0], []
            raise error

    def done(self) -> bool:
        """True: nothing is pending. Raises the first error of a scheduled function, if any."""
        self.join()
        return True

    def fetch(self, val):
        """Concrete values of RemoteValues (and PerWorkerValues of them) in a nest."""
        if isinstance(val, RemoteValue):
            return val.fetch()
        if isinstance(val, PerWorkerValues):
            return tuple(self.fetch(v) for v in val)
        if isinstance(val, (list, tuple)) and not hasattr(type(val), "_fields"):
            return type(val)(self.fetch(v) for v in val)
        if isinstance(val, dict):
            return {k: self.fetch(v) for k, v in val.items()}
        return val

    def create_per_worker_dataset(self, dataset_fn):
        """This worker's dataset: `dataset_fn` goes through `distribute_datasets_from_function`."""
        if callable(dataset_fn):
            dataset = self._strategy.distribute_datasets_from_function(dataset_fn)
        else:
            dataset = dataset_fn
        return _PerWorkerDataset(dataset)


def experimental_get_current_worker_index() -> int:
    """Index of the worker running this code: this process's rank."""
    from . import spmd

    return spmd.rank()
