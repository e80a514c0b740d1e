"""Keras's tuple arguments (``kernel_size=3`` -> ``(3, 3)``); TF's "same" padding is ``migrate.runtime.tfnn.same_padding``."""

from __future__ import annotations


def normalize_tuple(value, n: int, name: str) -> tuple:
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value}")
    return value
