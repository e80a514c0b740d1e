"""``tf.random`` on MindSpore: TF's signatures, defaults, dtypes and arithmetic, drawn from
MindSpore's generator.

``uniform``, ``normal`` and ``truncated_normal`` take TF's arguments (``shape`` as a list,
tuple or 1-D tensor; ``minval``/``maxval``/``mean``/``stddev`` as numbers or tensors that
broadcast to it; ``dtype``; an operation ``seed``) and compute what TF computes from a
draw: ``minval + u * (maxval - minval)``, ``mean + z * stddev``, and for
``truncated_normal`` draws farther than two standard deviations redrawn. An integer
``uniform`` needs ``maxval`` and draws from ``[minval, maxval)``, as TF's does.

The draws themselves are float32 (MindSpore's generators make no float64), so a float64
result has float32's resolution in its random part; bounds, means and deviations are
applied in float64 for it. The numbers differ from TF's for the same seeds: the
generators differ. Seeding works as
in TF: ``ms.set_seed`` (what ``tf.random.set_seed`` converts to) makes a run repeat, and
an operation seed fixes one call site's stream; every process of a data-parallel job
seeded alike draws the same numbers, as TF's replicas do from one seeded op.
"""

from __future__ import annotations

import numpy as np

from .draws import draw as _draw

__all__ = ["categorical", "gamma", "normal", "shuffle", "truncated_normal", "uniform"]


def _ms():
    import mindspore as ms
    from mindspore import ops

    return ms, ops


def _shape(shape) -> tuple[int, ...]:
    if hasattr(shape, "asnumpy"):
        shape = shape.asnumpy()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in np.asarray(shape).reshape(-1))


def _dtype(dtype):
    ms, _ = _ms()
    if dtype is None:
        return ms.float32
    if isinstance(dtype, ms.dtype.Type):
        return dtype
    return ms.Tensor(np.zeros((), dtype=np.dtype(dtype))).dtype  # a numpy dtype or its name


def _is_float(dtype) -> bool:
    ms, _ = _ms()
    return dtype in (ms.float16, ms.float32, ms.float64, ms.bfloat16)


def _seed(seed):
    return None if seed is None else int(seed)


def uniform(shape, minval=0, maxval=None, dtype=None, seed=None, name=None):
    """``tf.random.uniform``: floats in ``[minval, maxval)`` (``maxval`` 1 by default), or
    integers in ``[minval, maxval)`` for an integer ``dtype`` (``maxval`` required)."""
    ms, ops = _ms()
    dims, dtype = _shape(shape), _dtype(dtype)
    if not _is_float(dtype):
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {dtype}")
        low, high = int(_scalar(minval)), int(_scalar(maxval))
        if low >= high:
            raise ValueError(f"Need minval < maxval, got {low} >= {high}")
        return _draw(lambda: ops.randint(low, high, dims, seed=_seed(seed), dtype=dtype), f"randint{dims}")
    work = _working(dtype)
    draw = _draw(lambda: ops.uniform(dims, ms.Tensor(0.0, ms.float32), ms.Tensor(1.0, ms.float32), seed=_seed(seed)),
                 f"uniform{dims}").astype(work)
    low = _as(minval, work)
    high = _as(1.0 if maxval is None else maxval, work)
    return (low + draw * (high - low)).astype(dtype)


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None, name=None):
    """``tf.random.normal``: ``mean + z * stddev`` with ``z`` standard normal."""
    ms, ops = _ms()
    dims, dtype = _shape(shape), _dtype(dtype)
    _float_only(dtype, "normal")
    return _located(_draw(lambda: ops.standard_normal(dims, seed=_seed(seed)), f"normal{dims}"), mean, stddev, dtype)


def gamma(shape, alpha, beta=None, dtype=None, seed=None, name=None):
    """``tf.random.gamma``: draws of Gamma(``alpha``, rate ``beta``) of shape ``shape +
    broadcast(alpha, beta).shape``; ``beta`` 1 by default.

    MindSpore's CPU kernels have no gamma sampler but the deprecated ``random_gamma``, so the
    draws are numpy's, seeded by a draw from MindSpore's generator: ``ms.set_seed`` and an
    operation ``seed`` make them repeat as they make the others. As TF's, the draws are at least
    the dtype's smallest normal number (a small ``alpha`` would draw zeros). TF differentiates its draws
    with respect to ``alpha`` (implicit reparameterization); these carry no gradient."""
    ms, ops = _ms()
    dtype = _dtype(dtype)
    _float_only(dtype, "gamma")
    a = np.asarray(alpha.asnumpy() if hasattr(alpha, "asnumpy") else alpha, np.float64)
    b = np.asarray(1.0 if beta is None else (beta.asnumpy() if hasattr(beta, "asnumpy") else beta), np.float64)
    a, b = np.broadcast_arrays(a, b)
    dims = _shape(shape) + a.shape

    kind = {ms.float16: np.float16, ms.float64: np.float64}.get(dtype, np.float32)

    def make():
        stream = int(ops.randint(0, 2**31 - 1, (1,), seed=_seed(seed)).asnumpy()[0])
        draws = (np.random.default_rng(stream).standard_gamma(a, size=dims) / b).astype(kind)
        # (TF keeps its draws at least the dtype's smallest normal number: a small `alpha` draws 0 otherwise)
        return ms.Tensor(np.maximum(draws, np.finfo(kind).tiny))

    return _draw(make, f"gamma{dims}").astype(dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None, name=None):
    """``tf.random.truncated_normal``: as :func:`normal`, with every draw farther than two
    standard deviations from the mean drawn again."""
    ms, ops = _ms()
    dims, dtype = _shape(shape), _dtype(dtype)
    _float_only(dtype, "truncated_normal")

    def truncated():
        draw = ops.standard_normal(dims, seed=_seed(seed))
        outside = ops.abs(draw) > 2.0
        while bool(outside.any()):
            draw = ops.where(outside, ops.standard_normal(dims, seed=_seed(seed)), draw)
            outside = ops.abs(draw) > 2.0
        return draw

    return _located(_draw(truncated, f"truncated_normal{dims}"), mean, stddev, dtype)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """``tf.random.categorical``: ``num_samples`` class indices per row of ``logits`` (batch,
    classes), drawn with replacement from ``softmax(logits)``; int64 unless ``dtype`` says."""
    ms, ops = _ms()
    logits = logits if isinstance(logits, ms.Tensor) else ms.Tensor(np.asarray(logits, dtype=np.float32))
    if logits.ndim != 2:
        raise ValueError(f"logits should be a matrix (batch, classes), got shape {tuple(logits.shape)}")
    dtype = ms.int64 if dtype is None else _dtype(dtype)
    if dtype not in (ms.int32, ms.int64):
        raise ValueError(f"dtype must be int32 or int64, got {dtype}")
    probabilities = ops.softmax(logits.astype(ms.float32), -1)
    count = int(_scalar(num_samples))
    return _draw(lambda: ops.multinomial(probabilities, count, True, seed=_seed(seed)),
                 f"categorical{tuple(probabilities.shape)}x{count}").astype(dtype)


def shuffle(value, seed=None, name=None):
    """``tf.random.shuffle``: ``value`` with its first axis in a random order (a list in TF's dtype)."""
    from .tensors import tf_inferred

    ms, ops = _ms()
    value = value if isinstance(value, ms.Tensor) else ms.Tensor(tf_inferred(value))
    return _draw(lambda: ops.shuffle(value, seed=_seed(seed)), f"shuffle{tuple(value.shape)}")  # (TF: no gradient)


def _located(draw, mean, stddev, dtype):
    """TF's ``mean + draw * stddev`` (in float64 for a float64 result), as ``dtype``."""
    work = _working(dtype)
    return (_as(mean, work) + draw.astype(work) * _as(stddev, work)).astype(dtype)


def _working(dtype):
    """The dtype the arithmetic is done in: float64 for float64 results (a mean of 1e8 keeps
    its unit deviation), float32 otherwise (as TF computes float16 results)."""
    ms, _ = _ms()
    return ms.float64 if dtype == ms.float64 else ms.float32


def _float_only(dtype, what: str) -> None:
    if not _is_float(dtype):
        raise TypeError(f"tf.random.{what} takes a floating dtype, not {dtype}")


def _scalar(value):
    return value.asnumpy().item() if hasattr(value, "asnumpy") else value


def _as(value, dtype):
    ms, _ = _ms()
    if isinstance(value, ms.Tensor):
        return value.astype(dtype)
    return ms.Tensor(np.asarray(value, dtype=np.float64), dtype)
