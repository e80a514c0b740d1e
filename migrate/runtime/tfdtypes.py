"""What TF's dtypes answer about their range and MindSpore's do not: ``tf.int32.limits``, ``.min``, ``.max``.

As TF's ``DType`` (tensorflow/python/framework/dtypes.py): ``min``/``max`` are NumPy's
``finfo``/``iinfo`` bounds (a NumPy scalar for a float, a Python int for an integer), and
``limits`` is an image's *intensity* range with the negative part clipped: ``(0, 127)`` for
``int8``, ``(0, 1)`` for ``float32``, and an error for a dtype TF lists none for.
"""

from __future__ import annotations

import numpy as np

# TF's `dtype_range`
_INTENSITY = {"bool": (False, True), "uint8": (0, 255), "uint16": (0, 65535), "int8": (-128, 127),
              "int16": (-32768, 32767), "int64": (-(2**63), 2**63 - 1), "uint64": (0, 2**64 - 1),
              "int32": (-(2**31), 2**31 - 1), "uint32": (0, 2**32 - 1), "float32": (-1, 1), "float64": (-1, 1)}


class DType:
    """The range of one numeric dtype, by its TF name."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._numpy = np.dtype(name)

    def _info(self):
        return np.finfo(self._numpy) if np.issubdtype(self._numpy, np.floating) else np.iinfo(self._numpy)

    @property
    def min(self):
        return self._info().min

    @property
    def max(self):
        return self._info().max

    @property
    def limits(self) -> tuple:
        if self.name not in _INTENSITY:
            raise ValueError(f"<dtype: '{self.name}'> does not have defined limits.")
        return 0, _INTENSITY[self.name][1]

    def __repr__(self) -> str:
        return f"<dtype: '{self.name}'>"


int8, int16, int32, int64 = DType("int8"), DType("int16"), DType("int32"), DType("int64")
uint8, uint16, uint32, uint64 = DType("uint8"), DType("uint16"), DType("uint32"), DType("uint64")
float16, float32, float64 = DType("float16"), DType("float32"), DType("float64")
