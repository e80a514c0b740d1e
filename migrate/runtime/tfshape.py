"""``tf.TensorShape`` in plain Python: a rank and sizes, each an int or None (unknown), as TF 2 has it.

Converted code builds shapes where TF code did (``tf.TensorShape(input_shape)`` in a
layer's ``build``, the shapes of a generator's signature) and reads them the same way:
indexing gives an int or None (a slice gives a shape), ``as_list()``, ``rank``,
``num_elements()``, ``concatenate``, ``merge_with``, ``is_compatible_with``, equality with
shapes and lists. ``dims`` gives ints and Nones where TF 2 gives ``Dimension`` objects.
"""

from __future__ import annotations


class TensorShape:
    """``tf.TensorShape(dims)``: ``None`` for an unknown rank, an int for a shape of rank 1."""

    def __init__(self, dims):
        if isinstance(dims, TensorShape):
            self._dims = None if dims._dims is None else tuple(dims._dims)
        elif dims is None:
            self._dims = None
        elif isinstance(dims, (bytes, str)):
            raise TypeError(f"Failed to convert '{dims!r}' to a shape: '{dims!r}' could not be interpreted as a "
                            "TensorShape.")
        else:
            if hasattr(dims, "asnumpy"):
                dims = dims.asnumpy().tolist()
            elif hasattr(dims, "shape") and hasattr(dims, "tolist") and not hasattr(dims, "__iter__"):
                dims = dims.tolist()
            if isinstance(dims, int) or (hasattr(dims, "__index__") and not hasattr(dims, "__iter__")):
                dims = [dims]
            self._dims = tuple(_dimension(d) for d in dims)

    # -- reading --

    @property
    def rank(self):
        return None if self._dims is None else len(self._dims)

    ndims = rank

    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    def as_list(self) -> list:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(list(self._dims[key]))
        return self._dims[key]

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        count = 1
        for d in self._dims:
            count *= d
        return count

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d is not None for d in self._dims)

    def assert_is_fully_defined(self) -> None:
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    # -- combining --

    def concatenate(self, other) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(list(self._dims) + list(other._dims))

    __add__ = concatenate

    def __radd__(self, other) -> "TensorShape":
        return as_shape(other).concatenate(self)

    def is_compatible_with(self, other) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        return len(self._dims) == len(other._dims) and all(
            a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def assert_is_compatible_with(self, other) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def merge_with(self, other) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def with_rank(self, rank: int) -> "TensorShape":
        if self._dims is None:
            return TensorShape([None] * rank)
        if len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def assert_has_rank(self, rank: int) -> None:
        if self._dims is not None and len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    # -- comparing and printing --

    def __eq__(self, other) -> bool:
        try:
            other = as_shape(other)
        except TypeError:
            return NotImplemented
        return self._dims == other._dims

    def __ne__(self, other) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._dims)

    def __repr__(self) -> str:
        return "TensorShape(None)" if self._dims is None else f"TensorShape({list(self._dims)})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join("None" if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"


def as_shape(shape) -> TensorShape:
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def _dimension(value):
    if value is None:
        return None
    if hasattr(value, "asnumpy"):
        value = value.asnumpy().item()
    if hasattr(value, "value") and not isinstance(value, int):  # a TF Dimension
        value = value.value
        if value is None:
            return None
    number = int(value)
    if number != value:
        raise TypeError(f"Dimension value must be integer or None, got {value!r}")
    if number < 0:
        raise ValueError(f"Dimension {number} must be >= 0")
    return number
