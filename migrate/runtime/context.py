"""Which strategy is current and whether code runs in replica or cross-replica context.

Reproduces TF's predicate table (checked against TF 2.21):

=====================  ============  =========================  ===============  =====================
where                  has_strategy  in_cross_replica_context   get_strategy     get_replica_context
=====================  ============  =========================  ===============  =====================
outside any scope      False         False                      default          default ReplicaContext
inside ``scope()``     True          True                       the strategy     None
inside ``run(fn)``     True          False                      the strategy     the replica's context
=====================  ============  =========================  ===============  =====================

`merge_call` switches back to cross-replica context for the strategy.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass


@dataclass
class _Frame:
    strategy: object
    replica_context: object | None   # None means cross-replica context


_local = threading.local()
_set_strategy = None  # experimental_set_strategy


def _stack() -> list:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def current_frame() -> _Frame:
    stack = _stack()
    if stack:
        return stack[-1]
    if _set_strategy is not None:
        return _Frame(_set_strategy, None)
    from .strategies import default_strategy

    strategy = default_strategy()
    return _Frame(strategy, strategy._default_replica_context)


@contextlib.contextmanager
def enter(strategy, replica_context=None):
    """Make `strategy` current; in replica context when `replica_context` is given."""
    stack = _stack()
    stack.append(_Frame(strategy, replica_context))
    try:
        yield
    finally:
        stack.pop()


def get_strategy():
    """The current strategy: the one in scope or running, else the default (one replica)."""
    return current_frame().strategy


def has_strategy() -> bool:
    """True inside a non-default strategy's scope or run."""
    from .strategies import _DefaultStrategy

    return not isinstance(get_strategy(), _DefaultStrategy)


def in_cross_replica_context() -> bool:
    """True inside `scope()` (or `merge_call`), False outside any scope and inside `run`."""
    return current_frame().replica_context is None


def get_replica_context():
    """The current ReplicaContext, or None in cross-replica context."""
    return current_frame().replica_context


def get_cross_replica_context():
    """The current strategy in cross-replica context, else None."""
    frame = current_frame()
    return frame.strategy if frame.replica_context is None else None


def experimental_set_strategy(strategy) -> None:
    """Make `strategy` current without `with strategy.scope()`; None clears it."""
    global _set_strategy
    if _stack():
        raise RuntimeError("Must not be called inside a `tf.distribute.Strategy` scope.")
    _set_strategy = strategy


def require_cross_replica(method: str) -> None:
    """Raise TF's error when a cross-replica method is called inside `strategy.run`."""
    frame = current_frame()
    if frame.replica_context is not None and getattr(frame.replica_context, "_inside_run", False):
        raise RuntimeError(
            "Method requires being in cross-replica context, use get_replica_context().merge_call() "
            f"(migrate.runtime: {method} was called inside strategy.run; inside the replica function "
            "use get_replica_context().all_reduce / all_gather instead)")
