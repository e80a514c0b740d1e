"""``tf.nest`` without TensorFlow: the same walks over nested structures.

A structure is nested through sequences (lists, tuples and namedtuples, ``range``,
``deque``, any ``collections.abc.Sequence`` but ``str`` and ``bytes``), mappings and
their views (``d.keys()``, ``d.values()``, ``d.items()``) and ``attrs`` classes;
everything else is a leaf (``None``, strings, numpy arrays, tensors, sets). Leaves come
in TF's order: sequences and views in order, mappings by sorted key, attrs classes by
field. Rebuilding keeps each container's type and, for a mapping, its own key order
(a view or a ``range`` comes back as a list, as in TF). Mismatched structures raise what
TF raises (``ValueError`` for a different nesting, length or, when ``check_types``,
key set; ``TypeError`` for different container types when ``check_types``, a list
subclass counting as a list), with messages of the same sense.
"""

from __future__ import annotations

import collections.abc

from .tensors import is_namedtuple

__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]


def _is_attrs(value) -> bool:
    return hasattr(type(value), "__attrs_attrs__")


def is_nested(structure) -> bool:
    """Whether ``structure`` is a container ``tf.nest`` walks into (not a leaf)."""
    if isinstance(structure, (str, bytes)):
        return False
    return (isinstance(structure, (collections.abc.Sequence, collections.abc.Mapping, collections.abc.MappingView))
            or _is_attrs(structure))


def _children(structure) -> list:
    if isinstance(structure, collections.abc.Mapping):
        return [structure[key] for key in _sorted_keys(structure)]
    if isinstance(structure, collections.abc.MappingView):
        return list(structure)
    if _is_attrs(structure):
        return [getattr(structure, a.name) for a in type(structure).__attrs_attrs__]
    return list(structure)


def _sorted_keys(mapping) -> list:
    try:
        return sorted(mapping)
    except TypeError as exc:
        raise TypeError("nest only supports dicts with sortable keys.") from exc


def flatten(structure, expand_composites: bool = False) -> list:
    """The leaves of ``structure``, in TF's order; a leaf alone is ``[leaf]``."""
    if not is_nested(structure):
        return [structure]
    return [leaf for child in _children(structure) for leaf in flatten(child)]


def _rebuild(structure, children: list):
    if isinstance(structure, collections.abc.Mapping):
        by_key = dict(zip(_sorted_keys(structure), children))
        kind = type(structure)
        items = [(key, by_key[key]) for key in structure]
        if kind is dict:
            return dict(items)
        if isinstance(structure, collections.defaultdict):
            rebuilt = collections.defaultdict(structure.default_factory)
            rebuilt.update(items)
            return rebuilt
        return kind(items)
    if _is_attrs(structure) or is_namedtuple(structure):
        return type(structure)(*children)
    if isinstance(structure, (collections.abc.MappingView, range)):
        return list(children)
    try:
        return type(structure)(children)
    except TypeError:  # a sequence type that cannot be built from a list
        return list(children)


def pack_sequence_as(structure, flat_sequence, expand_composites: bool = False):
    """``structure`` with its leaves replaced, in order, by those of ``flat_sequence``."""
    if not is_nested(flat_sequence):
        raise TypeError(f"Attempted to pack value:\n  {flat_sequence!r}\ninto a structure, but found incompatible type "
                        f"`{type(flat_sequence).__name__}` instead.")
    flat = list(flat_sequence)
    if not is_nested(structure):
        if len(flat) != 1:
            raise ValueError(f"The target structure is of type `{type(structure).__name__}`\n  {structure!r}\nHowever the input "
                             f"is a sequence ({type(flat_sequence).__name__}) of length {len(flat)}.\n  {flat_sequence!r}\n"
                             "nest cannot guarantee that it is safe to map one to the other.")
        return flat[0]
    count = len(flatten(structure))
    if count != len(flat):
        raise ValueError(f"Could not pack sequence. Structure had {count} atoms, but flat_sequence had {len(flat)} items. "
                         f"Structure: {structure!r}, flat_sequence: {flat_sequence!r}.")
    leaves = iter(flat)

    def build(node):
        if not is_nested(node):
            return next(leaves)
        return _rebuild(node, [build(child) for child in _children(node)])

    return build(structure)


def _same_kind(a, b) -> bool:
    if isinstance(a, collections.abc.Mapping) and isinstance(b, collections.abc.Mapping):
        return True  # TF lets any two mappings match (their keys must)
    if is_namedtuple(a) or is_namedtuple(b):
        return type(a).__name__ == type(b).__name__ and getattr(type(a), "_fields", None) == getattr(type(b), "_fields", None)
    if isinstance(a, list) and isinstance(b, list):
        return True  # TF counts list subclasses (Keras's tracked lists) as lists
    return type(a) is type(b)


def assert_same_structure(nest1, nest2, check_types: bool = True, expand_composites: bool = False) -> None:
    """Raise unless ``nest1`` and ``nest2`` nest alike: ``ValueError`` for a different
    nesting or length, and with ``check_types`` for a different set of keys; ``TypeError``
    (with ``check_types``) for containers of different types."""
    def walk(a, b) -> None:
        nested_a, nested_b = is_nested(a), is_nested(b)
        if nested_a != nested_b:
            raise ValueError(f"The two structures don't have the same nested structure.\n\nFirst structure: {nest1!r}\n\n"
                             f"Second structure: {nest2!r}\n\nMore specifically: Substructure {a!r} and {b!r} differ in nesting.")
        if not nested_a:
            return
        if check_types and not _same_kind(a, b):
            raise TypeError(f"The two structures don't have the same sequence type. Input structure has type "
                            f"{type(a)!r}, while shallow structure has type {type(b)!r}.")
        if check_types and isinstance(a, collections.abc.Mapping) and isinstance(b, collections.abc.Mapping) and set(a) != set(b):
            raise ValueError(f"The two dictionaries don't have the same set of keys. First structure has keys {sorted(a)}, "
                             f"while second structure has keys {sorted(b)}.")
        ca, cb = _children(a), _children(b)
        if len(ca) != len(cb):
            raise ValueError(f"The two structures don't have the same nested structure.\n\nFirst structure: {nest1!r}\n\n"
                             f"Second structure: {nest2!r}\n\nMore specifically: Substructure {a!r} has length {len(ca)}, "
                             f"while {b!r} has length {len(cb)}.")
        for x, y in zip(ca, cb):
            walk(x, y)

    walk(nest1, nest2)


def map_structure(func, *structure, check_types: bool = True, expand_composites: bool = False):
    """``func`` applied to the leaves of one or more structures that nest alike; the
    result nests as the first."""
    if not callable(func):
        raise TypeError(f"func must be callable, got: {func}")
    if not structure:
        raise ValueError("Must provide at least one structure")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    leaves = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*args) for args in zip(*leaves)])
