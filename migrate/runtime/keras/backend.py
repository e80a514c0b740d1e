"""`tf.keras.backend` constants the numbers depend on.

Keras clips probabilities to [epsilon, 1 - epsilon] with epsilon 1e-7 and computes
in float32 (floatx); both are the same here.
"""

from __future__ import annotations

_EPSILON = 1e-7
_FLOATX = "float32"


def epsilon() -> float:
    """The fuzz factor Keras uses to clip probabilities (1e-7 by default)."""
    return _EPSILON


def set_epsilon(value: float) -> None:
    global _EPSILON
    _EPSILON = float(value)


def floatx() -> str:
    """The default float dtype: "float32"."""
    return _FLOATX


def clear_session() -> None:
    """Reset layer-name counters (Keras's `clear_session`); weights already made are kept."""
    from .layers import base

    base.reset_name_counters()
