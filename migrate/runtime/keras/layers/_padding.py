"""TF's "same" padding: total = max((ceil(n / s) - 1) * s + (k - 1) * d + 1 - n, 0), the extra one after."""

from __future__ import annotations

import math


def same_padding(size: int, kernel: int, stride: int, dilation: int = 1) -> tuple[int, int]:
    effective = (kernel - 1) * dilation + 1
    total = max((math.ceil(size / stride) - 1) * stride + effective - size, 0)
    return total // 2, total - total // 2


def normalize_tuple(value, n: int, name: str) -> tuple:
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value}")
    return value
