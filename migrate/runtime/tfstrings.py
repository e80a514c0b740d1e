"""`tf.strings` on the values converted programs hold text in: NumPy arrays of bytes.

MindSpore tensors hold numbers only, so text stays where `tfdata` and `tfio` keep it, in NumPy
object arrays of ``bytes`` (a 0-d array for one string), and these functions give TF's results
on them element by element: the same bytes, the same shapes, TF's ASCII-only case mapping
(unless an encoding is given), RE2's rewrite spelling (``\\0`` is the whole match) and TF's
errors. What TF returns as numbers (`length`, `to_number`, `regex_full_match`) comes back as a
MindSpore tensor of TF's dtype; `split` of one string gives its pieces (of several strings TF
gives a RaggedTensor, which MindSpore has not: that raises, saying so).
"""

from __future__ import annotations

import re

import numpy as np

from .tferrors import InvalidArgumentError  # noqa: F401 (raised here, and read as tfstrings.InvalidArgumentError)
from .tfio import dtype_kind, parse_number

__all__ = ["StringTensor", "as_string", "constant", "join", "length", "lower", "reduce_join", "regex_full_match", "regex_replace", "split",
           "strip", "substr", "to_number", "upper"]

_len = len  # (`substr` takes a parameter `len`, as TF names it)


def _text(value) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    raise TypeError(f"Expected string, but got {value!r} of type '{type(value).__name__}'.")


def texts(value) -> np.ndarray:
    """``value`` (a string, bytes, nested lists of them or a NumPy array of them) as an object
    array of bytes, in its shape."""
    if hasattr(value, "asnumpy"):
        raise TypeError("a MindSpore tensor holds numbers, not strings: tf.strings functions take text "
                        "(bytes, str or NumPy arrays of them)")
    array = np.asarray(value, dtype=object)
    out = np.empty(array.shape, dtype=object)
    for index, item in np.ndenumerate(array):
        out[index] = _text(item)
    return out


class StringTensor(np.ndarray):
    """An object array of ``bytes`` that a program reads as TF's string tensor: ``numpy()`` gives
    the bytes (the one ``bytes`` of a 0-d array, as TF's scalar gives it), and it prints as
    ``tf.Tensor(b'hello', shape=(), dtype=string)``. Everything else is the array's own."""

    def numpy(self):
        plain = self.view(np.ndarray)
        return plain[()] if plain.ndim == 0 else plain.copy()

    def __str__(self) -> str:
        plain = self.view(np.ndarray)
        text = repr(plain[()]) if plain.ndim == 0 else np.array2string(plain, separator=" ")
        return f"tf.Tensor({chr(10) if chr(10) in text else ''}{text}, shape={tuple(plain.shape)}, dtype=string)"

    def __repr__(self) -> str:
        plain = self.view(np.ndarray)
        text = repr(plain[()]) if plain.ndim == 0 else repr(plain)
        return f"<tf.Tensor: shape={tuple(plain.shape)}, dtype=string, numpy={chr(10) if chr(10) in text else ''}{text}>"


def constant(value, dtype=None, name=None):
    """``tf.constant`` of text (a string, bytes or nested lists of them): TF's string tensor as a
    :class:`StringTensor`, each ``str`` encoded as UTF-8 as TF encodes it."""
    if dtype not in (None, "string") and getattr(dtype, "name", dtype) != "string":
        raise TypeError(f"a string value cannot be made a tensor of dtype {dtype!r}")
    return texts(value).view(StringTensor)


def _each(value, function, dtype=object) -> np.ndarray:
    array = texts(value)
    out = np.empty(array.shape, dtype=dtype)
    for index, item in np.ndenumerate(array):
        out[index] = function(item)
    return out


def _numbers(array: np.ndarray, dtype):
    import mindspore as ms

    return ms.Tensor(np.asarray(array, dtype=dtype))


def _case(text: bytes, encoding: str, upper: bool) -> bytes:
    if not encoding:  # (TF's default: ASCII letters only, other bytes as they are)
        return text.upper() if upper else text.lower()
    decoded = text.decode(encoding)
    return (decoded.upper() if upper else decoded.lower()).encode(encoding)


def lower(input, encoding="", name=None):  # noqa: A002 (TF's name)
    """``tf.strings.lower``: ASCII letters lower-cased; with ``encoding="utf-8"``, every letter."""
    return _each(input, lambda text: _case(text, encoding, upper=False))


def upper(input, encoding="", name=None):  # noqa: A002
    """``tf.strings.upper``: ASCII letters upper-cased; with ``encoding="utf-8"``, every letter."""
    return _each(input, lambda text: _case(text, encoding, upper=True))


def strip(input, name=None):  # noqa: A002
    """``tf.strings.strip``: leading and trailing ASCII whitespace removed."""
    return _each(input, lambda text: text.strip(b" \t\n\v\f\r"))


def _pattern(pattern) -> re.Pattern:
    return re.compile(_text(pattern))


def _rewrite(rewrite) -> bytes:
    """RE2's rewrite string in Python's spelling: ``\\0``..``\\9`` are groups (``\\0`` the match)."""
    return re.sub(rb"\\([0-9])", rb"\\g<\1>", _text(rewrite))


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """``tf.strings.regex_replace``: every match (or the first, without ``replace_global``)
    replaced by ``rewrite``, where ``\\1`` is a group and ``\\0`` the whole match."""
    compiled, template = _pattern(pattern), _rewrite(rewrite)
    return _each(input, lambda text: compiled.sub(template, text, count=0 if replace_global else 1))


def regex_full_match(input, pattern, name=None):  # noqa: A002
    """``tf.strings.regex_full_match``: whether the whole string matches, a bool tensor."""
    compiled = _pattern(pattern)
    return _numbers(_each(input, lambda text: compiled.fullmatch(text) is not None, bool), np.bool_)


def _utf8_chars(text: bytes) -> int:
    return sum(1 for byte in text if byte & 0xC0 != 0x80)


def length(input, unit="BYTE", name=None):  # noqa: A002
    """``tf.strings.length``: bytes, or with ``unit="UTF8_CHAR"`` code points, an int32 tensor."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be one of ['BYTE', 'UTF8_CHAR'], got {unit!r}")
    count = len if unit == "BYTE" else _utf8_chars
    return _numbers(_each(input, count, np.int32), np.int32)


def _number_text(text: bytes, kind: str):
    value = parse_number(text, kind)
    if value is None:
        raise InvalidArgumentError(f"StringToNumberOp could not correctly convert string: {text.decode('utf-8', 'replace')}")
    return value


def to_number(string_tensor, out_type=None, name=None):
    """``tf.strings.to_number``: each string read as TF reads numbers (surrounding whitespace
    allowed; ``inf``, ``nan``), a tensor of ``out_type`` (float32 unless given; float64, int32 or
    int64); text that is not one raises TF's ``InvalidArgumentError``."""
    kind = "float32" if out_type is None else dtype_kind(out_type)
    if kind not in ("float32", "float64", "int32", "int64"):
        raise TypeError(f"Value for attr 'out_type' of {out_type} is not in the list of allowed values: "
                        "float, double, int32, int64")
    return _numbers(_each(string_tensor, lambda text: _number_text(text, kind)), kind)


def _printf(array: np.ndarray, precision: int, scientific: bool, shortest: bool, width: int, fill: str) -> np.ndarray:
    """TF's AsString: C's printf with the flag ``fill``, ``width`` and ``precision``, ``%lld``
    for integers and ``%f``/``%e``/``%g`` for floats; booleans are ``true``/``false``."""
    kind = array.dtype.kind
    if kind in "biu" and (scientific or shortest):
        raise InvalidArgumentError(f"scientific and shortest format not supported for datatype {array.dtype.name}")
    if kind in "biu" and precision > -1:
        raise InvalidArgumentError(f"precision not supported for datatype {array.dtype.name}")
    spec = "%" + fill + (str(width) if width > -1 else "") + (f".{precision}" if precision > -1 else "")
    spec += "d" if kind in "iu" else ("e" if scientific else "g" if shortest else "f")
    out = np.empty(array.shape, dtype=object)
    for index, item in np.ndenumerate(array):
        text = ("true" if item else "false") if kind == "b" else spec % (int(item) if kind in "iu" else float(item))
        out[index] = text.encode()
    return out


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):  # noqa: A002
    """``tf.strings.as_string``: numbers and booleans as text, as TF's printf formats them:
    ``%f`` (six decimals, or ``precision``), ``%e`` with ``scientific``, ``%g`` with ``shortest``;
    ``width`` pads (on the left with spaces; ``fill`` is printf's flag: ``0``, ``-``, ``+``, space)."""
    from .tensors import tf_inferred

    if scientific and shortest:
        raise InvalidArgumentError("Cannot select both scientific and shortest notation")
    if len(fill) > 1:
        raise InvalidArgumentError(f"Fill string must be one or fewer characters: {fill}")
    # (TF's dtypes for Python values: a float is float32, an int int32)
    array = input.asnumpy() if hasattr(input, "asnumpy") else tf_inferred(input)
    if array.dtype.kind in "OSU":
        raise TypeError("Value for attr 'T' of string is not in the list of allowed values (as_string takes numbers)")
    return _printf(array, precision, scientific, shortest, width, fill)


def _broadcast_texts(inputs) -> list[np.ndarray]:
    arrays = [texts(item) for item in inputs]
    return list(np.broadcast_arrays(*arrays)) if arrays else arrays


def join(inputs, separator="", name=None):
    """``tf.strings.join``: the inputs joined element by element (scalars broadcast)."""
    arrays = _broadcast_texts(inputs)
    if not arrays:
        return np.array(b"", dtype=object)
    sep = _text(separator)
    out = np.empty(arrays[0].shape, dtype=object)
    for index in np.ndindex(out.shape):
        out[index] = sep.join(array[index] for array in arrays)
    return out


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """``tf.strings.reduce_join``: the strings along ``axis`` (all, when None) joined in order."""
    array, sep = texts(inputs), _text(separator)
    if axis is None:
        joined = np.array(sep.join(array.reshape(-1).tolist()), dtype=object)
        return joined.reshape((1,) * array.ndim) if keepdims else joined
    axes = sorted({a % array.ndim for a in (axis if isinstance(axis, (list, tuple)) else [axis])})
    moved = np.moveaxis(array, axes, list(range(array.ndim - len(axes), array.ndim)))
    flat = moved.reshape(moved.shape[:array.ndim - len(axes)] + (-1,))
    out = np.empty(flat.shape[:-1], dtype=object)
    for index in np.ndindex(out.shape):
        out[index] = sep.join(flat[index].tolist())
    if keepdims:
        out = out.reshape([1 if a in axes else n for a, n in enumerate(array.shape)])
    return out


def substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002 (TF's names)
    """``tf.strings.substr``: ``len`` bytes (or UTF-8 characters) from ``pos`` (from the end when
    negative), as TF cuts them; a position past the string raises TF's ``InvalidArgumentError``."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be one of ['BYTE', 'UTF8_CHAR'], got {unit!r}")
    array = texts(input)
    positions = np.asarray(pos.asnumpy() if hasattr(pos, "asnumpy") else pos)
    lengths = np.asarray(len.asnumpy() if hasattr(len, "asnumpy") else len)
    array, positions, lengths = np.broadcast_arrays(array, positions, lengths)
    out = np.empty(array.shape, dtype=object)
    for flat, index in enumerate(np.ndindex(array.shape)):
        text = array[index]
        units = text if unit == "BYTE" else text.decode("utf-8")
        size, at, count = _len(units), int(positions[index]), int(lengths[index])
        start = at + size if at < 0 else at
        if not 0 <= start <= size:
            raise InvalidArgumentError(f"pos {at} out of range for string b'{text.decode('utf-8', 'replace')}' "
                                       f"at index {flat}")
        piece = units[start:start + max(count, 0)]
        out[index] = piece if unit == "BYTE" else piece.encode("utf-8")
    return out



def split(input, sep=None, maxsplit=-1, name=None):  # noqa: A002
    """``tf.strings.split`` of one string: its pieces, a 1-D array (``sep`` None: runs of
    whitespace, none empty; else every ``sep``, empty pieces kept); at most ``maxsplit`` splits."""
    array = texts(input)
    if array.ndim != 0:
        raise NotImplementedError("tf.strings.split of several strings gives a RaggedTensor, which MindSpore has not: "
                                  "split each string (a scalar) or pad the pieces")
    text = array[()]
    if sep is None:
        pieces = text.split(None, maxsplit) if maxsplit >= 0 else text.split()
    else:
        pieces = text.split(_text(sep), maxsplit)
    out = np.empty(_len(pieces), dtype=object)
    out[:] = pieces
    return out
