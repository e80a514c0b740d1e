"""``tf.debugging``'s checks, as TF runs them eagerly, on MindSpore tensors.

An eager TF program calls ``tf.debugging.assert_less(x, y)`` for its effect: it returns
``None`` when the condition holds and raises when it does not. Here each check reads its
tensors back to the host (as TF's eager kernels do) and raises what TF raises:
:class:`InvalidArgumentError` for a condition on the values (with TF's text: the message,
``Condition x < y did not hold.``, the first differing indices and values, the first
``summarize`` elements), ``ValueError`` for a static rank or shape, ``TypeError`` for a dtype.
``check_numerics`` and ``assert_all_finite`` return their tensor, as in TF.

``tf.compat.v1``'s spellings take ``data`` before ``message`` (``v1.assert_equal(x, y, data,
summarize, message)``): :data:`v1` holds them. When a check fails, ``data`` (or TF's default
summary) follows the message, as in TF 1.
"""

from __future__ import annotations

import types as _types

import numpy as _np

from .tensors import host_array as _array
from .tferrors import InvalidArgumentError  # what a failed value check raises, as in TF

__all__ = [
    "Assert", "InvalidArgumentError", "assert_all_finite", "assert_equal", "assert_greater",
    "assert_greater_equal", "assert_integer", "assert_less", "assert_less_equal", "assert_near",
    "assert_negative", "assert_non_negative", "assert_non_positive", "assert_none_equal", "assert_positive",
    "assert_rank", "assert_rank_at_least", "assert_scalar", "assert_type", "check_numerics", "v1",
]


def _first(values: _np.ndarray, summarize: int) -> str:
    return str(values.reshape(-1)[:summarize])


def _prefix(message) -> str:
    return f"{message}\n" if message else ""


def _sentence(message) -> str:
    """A message as TF puts it before a static check's text: ``"message.  "``."""
    return f"{message}.  " if message else ""


def _compare(symbol: str, test, x, y, message, summarize) -> None:
    a, b = _array(x), _array(y)
    try:
        held = _np.broadcast_to(test(a, b), _np.broadcast_shapes(a.shape, b.shape))
    except ValueError:
        raise InvalidArgumentError(f"Incompatible shapes: {list(a.shape)} vs. {list(b.shape)}") from None
    if held.all():
        return
    n = 3 if summarize is None else int(summarize)
    text = _prefix(message) + f"Condition x {symbol} y did not hold."
    if a.shape == b.shape:
        wrong = _np.argwhere(~held)[:n]
        text += (f"\nIndices of first {len(wrong)} different values:\n{wrong}"
                 f"\nCorresponding x values:\n{a[tuple(wrong.T)]}\nCorresponding y values:\n{b[tuple(wrong.T)]}")
    text += (f"\nFirst {min(n, a.size)} elements of x:\n{_first(a, n)}"
             f"\nFirst {min(n, b.size)} elements of y:\n{_first(b, n)}")
    raise InvalidArgumentError(text)


def _sign(name: str, symbol: str, test):
    def check(x, message=None, summarize=None, name=None) -> None:
        a = _array(x)
        if test(a).all():
            return
        n = 3 if summarize is None else int(summarize)
        shown = [str(v) for v in a.reshape(-1)[:n]]
        raise InvalidArgumentError(f"{_sentence(message)}\nCondition x {symbol} 0 did not hold element-wise:\n"
                                   f"x (shape={a.shape} dtype={a.dtype}) = \n{shown}")
    check.__name__ = check.__qualname__ = name
    return check


def assert_equal(x, y, message=None, summarize=None, name=None) -> None:
    """``tf.debugging.assert_equal``: raises unless ``x == y`` element-wise (broadcast)."""
    _compare("==", _np.equal, x, y, message, summarize)


def assert_none_equal(x, y, message=None, summarize=None, name=None) -> None:
    """``tf.debugging.assert_none_equal``: raises unless ``x != y`` element-wise."""
    _compare("!=", _np.not_equal, x, y, message, summarize)


def assert_less(x, y, message=None, summarize=None, name=None) -> None:
    """``tf.debugging.assert_less``: raises unless ``x < y`` element-wise."""
    _compare("<", _np.less, x, y, message, summarize)


def assert_less_equal(x, y, message=None, summarize=None, name=None) -> None:
    """``tf.debugging.assert_less_equal``: raises unless ``x <= y`` element-wise."""
    _compare("<=", _np.less_equal, x, y, message, summarize)


def assert_greater(x, y, message=None, summarize=None, name=None) -> None:
    """``tf.debugging.assert_greater``: raises unless ``x > y`` element-wise."""
    _compare(">", _np.greater, x, y, message, summarize)


def assert_greater_equal(x, y, message=None, summarize=None, name=None) -> None:
    """``tf.debugging.assert_greater_equal``: raises unless ``x >= y`` element-wise."""
    _compare(">=", _np.greater_equal, x, y, message, summarize)


assert_positive = _sign("assert_positive", ">", lambda a: a > 0)
assert_negative = _sign("assert_negative", "<", lambda a: a < 0)
assert_non_negative = _sign("assert_non_negative", ">=", lambda a: a >= 0)
assert_non_positive = _sign("assert_non_positive", "<=", lambda a: a <= 0)


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None) -> None:
    """``tf.debugging.assert_near``: raises unless ``|x - y| <= atol + rtol * |y|`` element-wise;
    both tolerances default to 10 epsilons of ``x``'s dtype, as in TF."""
    a, b = _array(x), _array(y)
    eps = _np.finfo(a.dtype).eps if _np.issubdtype(a.dtype, _np.floating) else 0
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    if (_np.abs(a - b) <= atol + rtol * _np.abs(b)).all():
        return
    raise InvalidArgumentError(
        f"{message or ''}\nx and y not equal to tolerance rtol = {rtol}, atol = {atol}\n"
        f"x (shape={a.shape} dtype={a.dtype}) = \n{a}\ny (shape={b.shape} dtype={b.dtype}) = \n{b}")


def _rank(x, rank, at_least: bool, message) -> None:
    shape = _np.shape(_array(x))
    if len(shape) == rank or (at_least and len(shape) > rank):
        return
    raise ValueError(f"{_sentence(message)}Tensor  must have rank{' at least' if at_least else ''} {int(rank)}.  "
                     f"Received rank {len(shape)}, shape {shape}")


def assert_rank(x, rank, message=None, name=None) -> None:
    """``tf.debugging.assert_rank``: ``ValueError`` unless ``x`` has rank ``rank`` (known in eager code)."""
    _rank(x, int(_array(rank)), False, message)


def assert_rank_at_least(x, rank, message=None, name=None) -> None:
    """``tf.debugging.assert_rank_at_least``: ``ValueError`` unless ``x``'s rank is ``rank`` or more."""
    _rank(x, int(_array(rank)), True, message)


def assert_scalar(tensor, message=None, name=None) -> None:
    """``tf.debugging.assert_scalar``: ``ValueError`` unless ``tensor`` has rank 0."""
    shape = _np.shape(_array(tensor))
    if shape:
        raise ValueError(f"{_sentence(message)}Expected scalar shape, saw shape: {shape}.")


def _dtype_name(value) -> str:
    dtype = getattr(value, "dtype", None)
    return str(dtype) if dtype is not None else str(_array(value).dtype)


def assert_type(tensor, tf_type, message=None, name=None) -> None:
    """``tf.debugging.assert_type``: ``TypeError`` unless ``tensor``'s dtype is ``tf_type`` (a
    MindSpore dtype after conversion, or a NumPy one)."""
    import mindspore as ms

    got = getattr(tensor, "dtype", None)
    if not isinstance(got, ms.dtype.Type):
        got = ms.dtype.pytype_to_dtype(_array(tensor).dtype)
    want = tf_type if isinstance(tf_type, ms.dtype.Type) else ms.dtype.pytype_to_dtype(_np.dtype(tf_type))
    if got != want:
        raise TypeError(f"{_sentence(message)}tensor must be of type {want}; got {got}")


def assert_integer(x, message=None, name=None) -> None:
    """``tf.debugging.assert_integer``: ``TypeError`` unless ``x`` holds integers."""
    if not _np.issubdtype(_array(x).dtype, _np.integer):
        raise TypeError(f"{_sentence(message)}Expected integer type; got {_dtype_name(x)}")


def check_numerics(tensor, message, name=None):
    """``tf.debugging.check_numerics``: ``tensor`` itself, unless it holds a NaN or an infinity."""
    values = _array(tensor)
    if _np.issubdtype(values.dtype, _np.floating) or values.dtype.kind == "V":  # (bfloat16 reads back as void)
        values = values.astype(_np.float32) if values.dtype.kind == "V" else values
        nan, inf = bool(_np.isnan(values).any()), bool(_np.isinf(values).any())
        if nan or inf:
            what = "Inf and NaN" if nan and inf else "NaN" if nan else "Inf"
            raise InvalidArgumentError(f"{message} : Tensor had {what} values")
    return tensor


def assert_all_finite(x, message, name=None):
    """``tf.debugging.assert_all_finite``: ``check_numerics`` under its TF 2 name."""
    return check_numerics(x, message, name)


def Assert(condition, data, summarize=None, name=None) -> None:  # noqa: N802 (TF's name)
    """``tf.debugging.Assert``: raises unless ``condition`` is true, with ``data`` summarised."""
    if bool(_array(condition)):
        return
    n = 3 if summarize is None else int(summarize)
    shown = ", ".join(", ".join(str(v) for v in _array(d).reshape(-1)[:n]) if not isinstance(d, str) else d
                      for d in data)
    raise InvalidArgumentError(f"Expected '{condition}' to be true. Summarized data: {shown}")


def _v1(check, arity: int):
    """A TF 1 spelling: ``(x[, y], data=None, summarize=None, message=None, name=None)``."""
    def v1_check(*args, data=None, summarize=None, message=None, name=None):
        tensors, rest = args[:arity], list(args[arity:])
        data = rest.pop(0) if rest else data
        summarize = rest.pop(0) if rest else summarize
        message = rest.pop(0) if rest else message
        try:
            check(*tensors, message=None, summarize=summarize)
        except InvalidArgumentError as error:
            if data is None:
                raise InvalidArgumentError(_prefix(message) + str(error)) from None
            n = 3 if summarize is None else int(summarize)
            shown = "\n".join(str([str(v) for v in _array(d).reshape(-1)[:n]]) if not isinstance(d, str) else d
                              for d in data)
            raise InvalidArgumentError(_prefix(message) + shown) from None
    v1_check.__name__ = v1_check.__qualname__ = check.__name__
    return v1_check


v1 = _types.SimpleNamespace(
    **{f.__name__: _v1(f, 2) for f in (assert_equal, assert_none_equal, assert_less, assert_less_equal,
                                        assert_greater, assert_greater_equal)},
    **{f.__name__: _v1(f, 1) for f in (assert_positive, assert_negative, assert_non_negative, assert_non_positive)},
)
