"""A ragged tensor made dense at once: ``tf.RaggedTensor.from_row_lengths(values, lengths).to_tensor(...)``.

MindSpore has no ragged tensors. A program that builds one only to pad it into a dense
tensor at once (a batch of variable-length id lists, predictions grouped by a key) needs
none: :class:`RaggedTensor` here holds the flat values and the row partition, answers
``to_tensor`` with TF's result (rows padded with ``default_value`` to the longest row, or
cut or padded to ``shape``), and a few questions about its rows. Nothing else takes one;
the rule (TFT135) converts a construction only where ``.to_tensor(...)`` follows it.
"""

from __future__ import annotations

import numpy as np

from .tensors import contiguous, tf_inferred


def _array(value) -> np.ndarray:
    """A tensor's, array's or (nested) list's values, lists with the dtypes TF infers."""
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    return value if isinstance(value, np.ndarray) else tf_inferred(value)


def _tensor(array: np.ndarray):
    import mindspore as ms

    return ms.Tensor(contiguous(array))


def _vector(value, what: str) -> np.ndarray:
    array = _array(value)
    if array.ndim != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {array.ndim} for {what}")
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{what} must be an integer tensor, got {array.dtype}")
    return array.astype(np.int64)


class RaggedTensor:
    """Flat ``values`` (their first axis split into rows) and the rows' ``row_splits``."""

    def __init__(self, values: np.ndarray, row_splits: np.ndarray) -> None:
        self._values, self._splits = values, row_splits

    # -- TF's constructors (validate=True checks what TF's does) --------------------------------

    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        splits = _vector(row_splits, "row_splits")
        flat = _array(values)
        if validate:
            if splits.size == 0 or splits[0] != 0:
                raise ValueError("Arguments to from_row_splits do not form a valid RaggedTensor: first element "
                                 "of row_splits must be zero")
            if np.any(np.diff(splits) < 0):
                raise ValueError("Arguments to from_row_splits do not form a valid RaggedTensor: row_splits must "
                                 "be sorted in ascending order")
            if splits[-1] != flat.shape[0]:
                raise ValueError("Arguments to from_row_splits do not form a valid RaggedTensor: last element of "
                                 "row_splits must be nvals")
        return cls(flat, splits)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        lengths = _vector(row_lengths, "row_lengths")
        if validate and np.any(lengths < 0):
            raise ValueError("Arguments to from_row_lengths do not form a valid RaggedTensor: row_lengths must "
                             "be non-negative")
        splits = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        flat = _array(values)
        if validate and splits[-1] != flat.shape[0]:
            raise ValueError("Arguments to from_row_lengths do not form a valid RaggedTensor: sum of row_lengths "
                             "must equal nvals")
        return cls(flat, splits)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        rowids = _vector(value_rowids, "value_rowids")
        flat = _array(values)
        if nrows is not None:
            rows = int(_array(nrows))
        else:
            rows = int(rowids[-1]) + 1 if rowids.size else 0
        if validate:
            if rowids.size != flat.shape[0]:
                raise ValueError("Arguments to from_value_rowids do not form a valid RaggedTensor: "
                                 "len(values) != len(value_rowids)")
            if np.any(rowids < 0):
                raise ValueError("Arguments to from_value_rowids do not form a valid RaggedTensor: value_rowids "
                                 "must be non-negative")
            if np.any(np.diff(rowids) < 0):
                raise ValueError("Arguments to from_value_rowids do not form a valid RaggedTensor: value_rowids "
                                 "must be sorted in ascending order")
            if rowids.size and rowids[-1] >= rows:
                raise ValueError("Arguments to from_value_rowids do not form a valid RaggedTensor: nrows must be "
                                 "greater than value_rowids[-1]")
        lengths = np.bincount(rowids, minlength=rows)[:rows] if rowids.size else np.zeros(rows, np.int64)
        return cls(flat, np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))

    # -- what a program asks of it ------------------------------------------------------------

    def nrows(self):
        return _tensor(np.asarray(len(self._splits) - 1, np.int64))

    def row_lengths(self):
        return _tensor(np.diff(self._splits))

    @property
    def row_splits(self):
        return _tensor(self._splits)

    @property
    def values(self):
        return _tensor(self._values)

    flat_values = values

    def to_tensor(self, default_value=None, name=None, shape=None):
        """The rows padded with ``default_value`` (zero, False or empty) to the longest row; a
        ``shape`` fixes any dimension it gives (rows cut or padded), None keeping the natural one."""
        lengths = np.diff(self._splits)
        inner = self._values.shape[1:]
        natural = [len(lengths), int(lengths.max()) if lengths.size else 0, *inner]
        if shape is not None:
            wanted = list(shape.as_list() if hasattr(shape, "as_list") else shape.asnumpy().tolist()
                          if hasattr(shape, "asnumpy") else shape)
            if len(wanted) != len(natural):
                raise ValueError(f"shape {wanted} must have rank {len(natural)}")
            natural = [n if w is None or w == -1 else int(w) for n, w in zip(natural, wanted)]
        fill = np.zeros((), self._values.dtype) if default_value is None else \
            _array(default_value).astype(self._values.dtype)
        dense = np.empty(natural, self._values.dtype)
        dense[...] = np.broadcast_to(fill, natural[2:]) if fill.ndim else fill
        rows, width = min(natural[0], len(lengths)), natural[1]
        inner_cut = tuple(slice(0, min(a, b)) for a, b in zip(natural[2:], inner))
        for row in range(rows):
            start = self._splits[row]
            take = min(int(lengths[row]), width)
            dense[(row, slice(0, take), *inner_cut)] = self._values[(slice(start, start + take), *inner_cut)]
        return _tensor(dense)

    @property
    def shape(self):
        lengths = np.diff(self._splits)
        return (len(lengths), None, *self._values.shape[1:])

    def __repr__(self) -> str:
        return f"<RaggedTensor rows={len(self._splits) - 1} values={self._values.shape}>"
