"""``tf.compat.v1.distributions`` (TF 1's probability distributions) on MindSpore: ``Beta``.

Programs use TF 1's distributions for one thing above all: mixup and CutMix draw their mixing
weights from ``Beta(alpha, alpha).sample(...)``. ``Beta`` here takes TF's arguments and gives
TF's samples' shape (``sample_shape + batch_shape``) and dtype, drawn as TF draws them
(``g1 / (g1 + g0)`` of two gamma draws, ``tfrandom.gamma``), and TF's formulas for ``mean``,
``variance``, ``stddev``, ``mode`` (NaN where it is undefined, or an error without
``allow_nan_stats``), ``log_prob``, ``prob`` and ``entropy``. The draws are MindSpore's
generator's (with numpy's gamma sampler), not TF's numbers.
"""

from __future__ import annotations

import numpy as np

from . import tfrandom

__all__ = ["Beta"]


def _ms():
    import mindspore as ms
    from mindspore import ops

    return ms, ops


def _tensor(value, dtype=None):
    ms, _ = _ms()
    if isinstance(value, ms.Tensor):
        return value if dtype is None else value.astype(dtype)
    array = np.asarray(value)
    if dtype is None:  # (Python numbers are float32, as TF converts them; numpy's float16 and float64 stay so)
        kinds = {np.dtype(np.float64): ms.float64, np.dtype(np.float16): ms.float16}
        dtype = kinds.get(array.dtype, ms.float32) if isinstance(value, (np.ndarray, np.generic)) else ms.float32
    numpy_kind = {ms.float64: np.float64, ms.float16: np.float16}.get(dtype, np.float32)
    return ms.Tensor(array.astype(numpy_kind), dtype)


def _xlogy(a, x):
    """TF's ``xlogy``: ``a * log(x)``, 0 where ``a`` is 0."""
    _, ops = _ms()
    product = a * ops.log(x)
    return ops.where(a == 0, ops.zeros_like(product), product)


class Beta:
    """TF's ``Beta(concentration1, concentration0, validate_args=False, allow_nan_stats=True,
    name="Beta")``: the distribution on ``(0, 1)`` with density proportional to
    ``x ** (concentration1 - 1) * (1 - x) ** (concentration0 - 1)``."""

    def __init__(self, concentration1=None, concentration0=None, validate_args=False, allow_nan_stats=True,
                 name="Beta"):
        ms, ops = _ms()
        first = _tensor(concentration1)
        self._concentration1 = first
        self._concentration0 = _tensor(concentration0, first.dtype)
        if validate_args and (bool((self._concentration1 <= 0).any()) or bool((self._concentration0 <= 0).any())):
            raise ValueError("Condition x > 0 did not hold element-wise: the concentrations must be positive.")
        self._validate_args = validate_args
        self._allow_nan_stats = allow_nan_stats
        self._name = name
        self._batch_shape = tuple(np.broadcast_shapes(tuple(first.shape), tuple(self._concentration0.shape)))

    # -- TF's properties -------------------------------------------------------------------

    @property
    def concentration1(self):
        return self._concentration1

    @property
    def concentration0(self):
        return self._concentration0

    @property
    def total_concentration(self):
        return self._concentration1 + self._concentration0

    @property
    def dtype(self):
        return self._concentration1.dtype

    @property
    def name(self) -> str:
        return self._name

    @property
    def validate_args(self) -> bool:
        return self._validate_args

    @property
    def allow_nan_stats(self) -> bool:
        return self._allow_nan_stats

    def batch_shape_tensor(self):
        ms, _ = _ms()
        return ms.Tensor(np.array(self._batch_shape, np.int32))

    @property
    def batch_shape(self) -> tuple:
        return self._batch_shape

    @property
    def event_shape(self) -> tuple:
        return ()

    def _broadcast(self):
        _, ops = _ms()
        shape = self._batch_shape
        return ops.broadcast_to(self._concentration1, shape), ops.broadcast_to(self._concentration0, shape)

    # -- sampling ---------------------------------------------------------------------------

    def sample(self, sample_shape=(), seed=None, name="sample"):
        """Draws of shape ``sample_shape + batch_shape``: ``g1 / (g1 + g0)`` with ``g1`` drawn from
        Gamma(concentration1) and ``g0`` from Gamma(concentration0), as TF draws them."""
        c1, c0 = self._broadcast()
        shape = tfrandom._shape(sample_shape)  # (an int, a list, a tuple or a 1-D tensor, as TF takes it)
        first = tfrandom.gamma(shape, c1, dtype=self.dtype, seed=seed)
        second = tfrandom.gamma(shape, c0, dtype=self.dtype, seed=None if seed is None else int(seed) + 1)
        return first / (first + second)

    # -- moments and densities --------------------------------------------------------------

    def mean(self, name="mean"):
        c1, c0 = self._broadcast()
        return c1 / (c1 + c0)

    def variance(self, name="variance"):
        c1, c0 = self._broadcast()
        total = c1 + c0
        return c1 * c0 / (total * total * (total + 1.0))

    def stddev(self, name="stddev"):
        _, ops = _ms()
        return ops.sqrt(self.variance())

    def mode(self, name="mode"):
        """``(c1 - 1) / (c1 + c0 - 2)``, undefined unless both concentrations exceed 1: NaN there
        (``allow_nan_stats``), else an error, as TF's."""
        ms, ops = _ms()
        c1, c0 = self._broadcast()
        mode = (c1 - 1.0) / (c1 + c0 - 2.0)
        defined = ops.logical_and(c1 > 1.0, c0 > 1.0)
        if not self._allow_nan_stats:
            if not bool(defined.all()):
                raise ValueError("Mode undefined for concentration1 <= 1 or concentration0 <= 1.")
            return mode
        return ops.where(defined, mode, ops.full_like(mode, float("nan")))

    def log_prob(self, value, name="log_prob"):
        ms, ops = _ms()
        x = _tensor(value, self.dtype)
        c1, c0 = self._concentration1, self._concentration0
        log_beta = ops.lgamma(c1) + ops.lgamma(c0) - ops.lgamma(c1 + c0)
        # (TF's formula: `xlogy` for the first term only, so `Beta(1, 2).log_prob(0.)` is finite and
        # `Beta(2, 1).log_prob(1.)` is NaN, as there)
        return _xlogy(c1 - 1.0, x) + (c0 - 1.0) * ops.log1p(-x) - log_beta

    def prob(self, value, name="prob"):
        _, ops = _ms()
        return ops.exp(self.log_prob(value))

    def entropy(self, name="entropy"):
        _, ops = _ms()
        c1, c0 = self._broadcast()
        total = c1 + c0
        log_beta = ops.lgamma(c1) + ops.lgamma(c0) - ops.lgamma(total)
        return (log_beta - (c1 - 1.0) * ops.digamma(c1) - (c0 - 1.0) * ops.digamma(c0)
                + (total - 2.0) * ops.digamma(total))
