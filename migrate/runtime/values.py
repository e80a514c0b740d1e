"""Distributed values in a one-replica-per-process world.

In TensorFlow a `PerReplica` holds one component per local replica. Here every
process runs exactly one replica, so a distributed value holds this process's
component only; `values` is a 1-tuple. Functions that take distributed values
(`Strategy.run`, `reduce`, `gather`) unwrap them to the local component.
"""

from __future__ import annotations

from .tensors import map_structure


class DistributedValues:
    """Base class for values with one component per replica (this process's component here)."""

    def __init__(self, values):
        values = tuple(values)
        if len(values) != 1:
            raise ValueError(
                f"{type(self).__name__} holds this process's replica only (one replica per process); "
                f"got {len(values)} components")
        self._values = values

    @property
    def values(self) -> tuple:
        """Components on this process, as `experimental_local_results` returns them."""
        return self._values

    @property
    def local(self):
        return self._values[0]

    def __repr__(self) -> str:
        return f"{type(self).__name__}:{{ local: {self._values[0]!r} }}"


class PerReplica(DistributedValues):
    """Holds a map from replica to unsynchronized values (this process's replica only)."""


class Mirrored(DistributedValues):
    """Holds a value that is identical on every replica."""


def unwrap_local(structure):
    """Replace every DistributedValues in a nest by this process's component."""
    if isinstance(structure, DistributedValues):
        return unwrap_local(structure.local)
    if isinstance(structure, (list, tuple, dict)):
        return map_structure(lambda leaf: leaf.local if isinstance(leaf, DistributedValues) else leaf,
                             structure)
    return structure


def local_results(value) -> tuple:
    """`experimental_local_results`: the tuple of this process's components."""
    if isinstance(value, DistributedValues):
        return value.values
    return (value,)
