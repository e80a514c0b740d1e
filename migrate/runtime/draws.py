"""Random draws a forward pass repeats when it runs again for another gradient.

TF records a forward pass once on its tapes and differentiates it as often as asked
(two tapes in one ``with``, a persistent tape's several ``gradient`` calls). MindSpore
differentiates a function: each target's gradient runs the forward pass again
(``mk.value_and_grads``). For the passes after the first to compute what the first one did,
every random draw of the shim (``tfrandom``, Keras's dropout layers, the random image
layers) is recorded in the first pass and handed back, in the same order, in the others;
stateful layers do not update in them (BatchNormalization's moving statistics, a metric's
state: see ``keras.autodiff.building``).

Only what is drawn as a value is recorded (a uniform or normal draw, a dropout mask), never
a result computed from a tensor that carries a gradient: the repeated pass still
differentiates through ``mean + draw * stddev`` or ``inputs * mask``.
"""

from __future__ import annotations

import contextlib
import contextvars

_ACTIVE: contextvars.ContextVar["Draws | None"] = contextvars.ContextVar("migrate_draws", default=None)


class NotRepeatable(RuntimeError):
    """A repeated forward pass drew other random values than the first one (a Python
    decision on a tensor's value, or a draw of MindSpore's own that the shim does not see)."""


class Draws:
    """The draws of one recorded forward pass, handed back in order while it is replayed."""

    def __init__(self) -> None:
        self.made: list = []
        self.at: int | None = None  # None: recording; else the next draw to hand back

    def take(self, make, key):
        if self.at is None:
            value = make()
            self.made.append((key, value))
            return value
        if self.at >= len(self.made) or self.made[self.at][0] != key:
            raise NotRepeatable(
                "a forward pass computed again for another gradient drew other random values than the first "
                f"time (draw {self.at + 1}: {key}); each gradient of it must see the same draws")
        value = self.made[self.at][1]
        self.at += 1
        return value

    @contextlib.contextmanager
    def replayed(self):
        """Within: the recorded draws again, from the first."""
        self.at = 0
        token = _ACTIVE.set(self)
        try:
            yield self
            if self.at != len(self.made):
                raise NotRepeatable(f"a forward pass computed again for another gradient drew {self.at} random "
                                    f"values where the first drew {len(self.made)}")
        finally:
            _ACTIVE.reset(token)
            self.at = None


@contextlib.contextmanager
def recorded():
    """Within: every draw of the shim is kept (yields the :class:`Draws`)."""
    draws = Draws()
    token = _ACTIVE.set(draws)
    try:
        yield draws
    finally:
        _ACTIVE.reset(token)


def active() -> bool:
    """Whether draws are being recorded or replayed (a compiled graph would draw its own: the
    shim's models run eagerly then)."""
    return _ACTIVE.get() is not None


def draw(make, key: str):
    """``make()``, a random value: recorded or handed back while a forward pass is repeated
    (``key`` names the kind and shape, so a pass that draws otherwise is caught)."""
    draws = _ACTIVE.get()
    return make() if draws is None else draws.take(make, key)
