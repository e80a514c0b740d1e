"""A tf.data-compatible input pipeline in plain Python and numpy.

``tf.data.Dataset`` becomes :class:`Dataset` here, with the same constructors and
methods and TF's semantics: slicing, batching (``drop_remainder``), repeat, take,
skip, shard, map, filter, unbatch, zip and nested tuples/dicts all give the elements
tf.data gives, in the same order (tests compare them with TF itself). Because the
converted program keeps a dataset *object* with TF's methods, a dataset that is
returned from an input function, passed around or stored needs no static rewrite.

Elements are nests (tuples, dicts, namedtuples) of arrays. Iterating yields MindSpore
Tensors, as tf.data yields tf.Tensors (string columns stay numpy arrays: MindSpore
tensors do not hold text); ``as_numpy_iterator()`` yields numpy. Functions given to
``map`` and ``filter`` receive Tensors too, so code converted to ``mindspore.ops``
works in them; they run eagerly, one element at a time.

What differs from TF:

* ``shuffle`` draws from numpy's generator: with a ``seed`` the order is reproducible
  run to run, but it is not TF's order.
* ``prefetch``, ``num_parallel_calls``, ``deterministic`` and ``with_options`` change
  nothing: the pipeline runs in the training process, element by element, in order.
  Rows of in-memory arrays (``from_tensor_slices``, optionally shuffled) are batched a
  whole batch at a time: one slice or one gather per component, equal to stacking them.
* ``cache(filename)`` caches in memory only.
* ``interleave`` with ``cycle_length`` left to AUTOTUNE cycles over as many inputs as
  this process may use CPUs, as TF does; ``num_parallel_calls`` changes nothing.
* ``TFRecordDataset`` does not check the records' CRCs (TF reports a corrupt file).

A dataset is iterable any number of times (each iteration is an epoch), works with
``migrate.runtime.spmd.distribute_dataset`` (each rank takes its slice of every
global batch) and with ``fit`` of ``migrate.runtime.keras`` models.
"""

from __future__ import annotations

import enum
import itertools
import numbers
import os
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from . import orders
from .tensors import is_namedtuple, numpy_dtype, tf_inferred
from .tferrors import InvalidArgumentError
from .tfshape import TensorShape

__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "AutoShardPolicy", "Dataset", "Options",
           "TFRecordDataset", "TextLineDataset", "CsvDataset", "OutOfRangeError", "TensorSpec", "experimental"]

AUTOTUNE = -1


class OutOfRangeError(StopIteration):
    """`tf.errors.OutOfRangeError`: what `iterator.get_next()` raises at the end of the input.

    A `StopIteration`, so that a `for` loop or `next()` ends as usual; `except
    OutOfRangeError` catches the end of `get_next()` only, as in TF (where `next()`
    raises `StopIteration`).
    """


class DatasetIterator:
    """`iter(dataset)`: `next()` raises StopIteration at the end, `get_next()` OutOfRangeError, as TF's."""

    def __init__(self, elements):
        self._elements = iter(elements)

    def __iter__(self):
        return self

    def __next__(self):
        return _as_tensors(next(self._elements))

    def get_next(self):
        try:
            return next(self)
        except StopIteration:
            raise OutOfRangeError("End of sequence") from None
_END = object()
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


class AutoShardPolicy(enum.IntEnum):
    """``tf.data.experimental.AutoShardPolicy``: recorded in Options, no effect here.

    ``spmd.distribute_dataset`` splits every global batch across processes as
    MirroredStrategy does; there is no per-worker file or data sharding to choose.
    """

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class Options:
    """``tf.data.Options``: any option may be set (``options.experimental_distribute.auto_shard_policy = …``).

    Nothing is read back by the pipeline: the options TF has tune threading, prefetching
    and sharding, which this in-process pipeline does not have.
    """

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        group = Options()  # `options.experimental_optimization.x = …`: groups appear on first use
        object.__setattr__(self, name, group)
        return group

    def merge(self, other: "Options") -> "Options":
        merged = Options()
        merged.__dict__.update(self.__dict__)
        merged.__dict__.update(other.__dict__)
        return merged


class _Experimental:
    """``tf.data.experimental`` names this pipeline knows."""

    AUTOTUNE = AUTOTUNE
    INFINITE_CARDINALITY = INFINITE_CARDINALITY
    UNKNOWN_CARDINALITY = UNKNOWN_CARDINALITY
    AutoShardPolicy = AutoShardPolicy

    @staticmethod
    def cardinality(dataset: "Dataset") -> int:
        return cardinality(dataset)

    @staticmethod
    def Counter(start=0, step=1, dtype="int64", name=None) -> "Dataset":  # noqa: N802 - TF's name
        return Counter(start, step, dtype)

    @staticmethod
    def CsvDataset(*args, **kwargs) -> "Dataset":  # noqa: N802 - TF's name
        return CsvDataset(*args, **kwargs)

    @staticmethod
    def get_single_element(dataset: "Dataset"):
        return get_single_element(dataset)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=False) -> "Dataset":
        """``Dataset.choose_from_datasets``, which by default stops at the first empty input (TF's older
        spelling here does not)."""
        return Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False) -> "Dataset":
        return Dataset.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)

    @staticmethod
    def make_csv_dataset(*args, **kwargs) -> "Dataset":
        return make_csv_dataset(*args, **kwargs)

    @staticmethod
    def prefetch_to_device(device, buffer_size=None):
        return prefetch_to_device(device, buffer_size)


experimental = _Experimental()


def Counter(start=0, step=1, dtype="int64", name=None) -> "Dataset":  # noqa: N802 - TF's name
    """``tf.data.experimental.Counter``: ``Dataset.counter``."""
    return Dataset.counter(start, step, dtype)


def get_single_element(dataset: "Dataset"):
    """``tf.data.experimental.get_single_element(dataset)``: ``dataset.get_single_element()``."""
    return dataset.get_single_element()


def prefetch_to_device(device, buffer_size=None):
    """``tf.data.experimental.prefetch_to_device``: a transformation for ``Dataset.apply`` that
    changes nothing (elements are made in the training process when asked for, and each step
    copies its batch to the device)."""
    return lambda dataset: dataset


def cardinality(dataset: "Dataset") -> int:
    """``tf.data.experimental.cardinality(dataset)``: the number of elements, ``INFINITE_CARDINALITY``
    (-1) or ``UNKNOWN_CARDINALITY`` (-2), as ``dataset.cardinality()``."""
    return dataset.cardinality()


# --- nests: tuples, namedtuples and dicts of leaves (dict keys in sorted order, as tf.nest) ---

def _flatten(structure) -> list:
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in _flatten(structure[key])]
    if isinstance(structure, tuple):
        return [leaf for item in structure for leaf in _flatten(item)]
    return [structure]


def _pack(structure, leaves: Iterable):
    leaves = iter(leaves)

    def build(node):
        if isinstance(node, dict):
            built = {key: build(node[key]) for key in sorted(node)}
            return {key: built[key] for key in node}
        if is_namedtuple(node):
            return type(node)(*(build(item) for item in node))
        if isinstance(node, tuple):
            return tuple(build(item) for item in node)
        return next(leaves)

    return build(structure)


def _normalize(structure):
    """Lists inside a returned structure are tuples to tf.data; everything else is a leaf."""
    if isinstance(structure, dict):
        return {key: _normalize(value) for key, value in structure.items()}
    if is_namedtuple(structure):
        return type(structure)(*(_normalize(item) for item in structure))
    if isinstance(structure, (tuple, list)) and not _is_leaf_list(structure):
        return tuple(_normalize(item) for item in structure)
    return structure


def _is_leaf_list(value) -> bool:
    """A list of numbers is one tensor to tf.data; a list holding tensors or nests is a tuple."""
    return isinstance(value, list) and all(isinstance(v, (numbers.Number, str, bytes, list)) for v in value)


# --- leaves ----------------------------------------------------------------------------------

def _to_array(value) -> np.ndarray:
    """A leaf as numpy, with TF's conversions: Python floats are float32, ints int32 (int64
    past its range), text bytes."""
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    if _is_sparse(value):
        return value  # a parsed VarLenFeature: kept whole (batch combines them as TF does)
    module = type(value).__module__ or ""
    if module.startswith("mindspore") and hasattr(value, "asnumpy"):
        return value.asnumpy()
    if module.startswith("tensorflow") and hasattr(value, "numpy"):
        return np.asarray(value.numpy())
    array = tf_inferred(value)
    if array.dtype.kind == "U":
        return np.char.encode(array, "utf-8").astype(object)  # TF strings are bytes
    return array


def _is_sparse(value) -> bool:
    """A ``tfio.SparseTensor`` (by shape: tfio imports this module)."""
    return type(value).__name__ == "SparseTensor" and hasattr(value, "dense_shape") and hasattr(value, "indices")


def _to_tensor(array: np.ndarray):
    """A numpy leaf as a MindSpore Tensor (text stays numpy; a sparse tensor stays as it is)."""
    if not isinstance(array, np.ndarray):
        return array
    if array.dtype.kind in "OUS":
        return array
    import mindspore as ms

    return ms.Tensor(np.ascontiguousarray(array) if array.ndim else array)


def _as_arrays(element):
    return _pack(element, [_to_array(leaf) for leaf in _flatten(element)])


def _as_tensors(element):
    return _pack(element, [_to_tensor(leaf) for leaf in _flatten(element)])


def _call(fn: Callable, element):
    """tf.data's calling convention: a tuple element is spread over the arguments."""
    element = _as_tensors(element)
    if isinstance(element, tuple) and not is_namedtuple(element):
        return fn(*element)
    return fn(element)


def _truth(value) -> bool:
    array = _to_array(value)
    if array.size != 1:
        raise ValueError(f"a filter predicate must return a scalar boolean, not shape {array.shape}")
    return bool(array.reshape(()))


# --- the dataset -------------------------------------------------------------------------------


class Dataset:
    """``tf.data.Dataset`` on numpy: build with the static constructors, chain methods, iterate."""

    def __init__(self, elements: Callable[[], Iterator], cardinality: int = UNKNOWN_CARDINALITY,
                 options: Options | None = None):
        self._elements = elements  # a fresh iterator over numpy elements per call: one epoch
        self._cardinality = cardinality
        self._options = options or Options()
        # For rows of in-memory arrays (from_tensor_slices, then shuffle): (structure, leaves, order),
        # where order() gives one epoch's row indices. `batch` then slices whole batches at once.
        self._rows: tuple | None = None

    @staticmethod
    def _of_rows(structure, leaves: list, order: Callable[[], Iterator[int]], cardinality: int,
                 options: Options | None = None) -> "Dataset":
        def elements():
            for i in order():
                # (a slice, not leaf[i]: an element of a text column stays a 0-d array of bytes)
                yield _pack(structure, [leaf[i:i + 1].reshape(leaf.shape[1:]) for leaf in leaves])

        dataset = Dataset(elements, cardinality, options)
        dataset._rows = (structure, leaves, order)
        return dataset

    def _then(self, elements: Callable[[], Iterator], cardinality: int = UNKNOWN_CARDINALITY) -> "Dataset":
        return Dataset(elements, cardinality, self._options)

    # -- constructors --

    @staticmethod
    def from_tensor_slices(tensors, name=None) -> "Dataset":
        """One element per row of the leading dimension, shared by every component."""
        structure = _normalize(tensors)
        leaves = [_to_array(leaf) for leaf in _flatten(structure)]
        if any(leaf.ndim == 0 for leaf in leaves):
            raise ValueError("from_tensor_slices needs every component to have a leading dimension")
        sizes = {leaf.shape[0] for leaf in leaves}
        if len(sizes) != 1:
            raise ValueError(f"the components of from_tensor_slices have different lengths {sorted(sizes)}")
        count = sizes.pop()
        return Dataset._of_rows(structure, leaves, lambda: iter(range(count)), count)

    @staticmethod
    def counter(start=0, step=1, dtype="int64", name=None) -> "Dataset":
        """``start``, ``start + step``, ... without end (TF's ``Dataset.counter``)."""
        kind = _spec_dtype(dtype)
        return Dataset(lambda: (np.asarray(value, dtype=kind) for value in itertools.count(int(start), int(step))),
                       INFINITE_CARDINALITY)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None) -> "Dataset":
        """``Dataset.list_files``: every file matching the glob pattern(s), sorted together as TF's
        ``MatchingFiles`` sorts them, then shuffled unless ``shuffle=False`` (numpy's generator, as
        :meth:`shuffle`: with a ``seed`` reproducible, but not TF's order). None matching is TF's error."""
        patterns = _to_array(file_pattern).reshape(-1).tolist()
        patterns = [p.decode() if isinstance(p, bytes) else str(p) for p in patterns]
        found = _matching_files(patterns)
        if not found:
            raise InvalidArgumentError(f"No files matched pattern: {', '.join(patterns)}")
        names = np.empty(len(found), dtype=object)
        names[:] = found
        files = Dataset.from_tensor_slices(names)
        if shuffle is None or shuffle:
            files = files.shuffle(len(found), seed=seed)
        return files

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None) -> "Dataset":
        """``Dataset.from_generator``: the elements ``generator(*args)`` yields, called anew each epoch.

        Each yielded component is converted to its declared dtype as TF converts it
        (``np.asarray(value, dtype)``; text becomes bytes) and checked against its declared
        shape (``None`` matches any size); a component that does not fit raises TF's error.
        ``output_signature`` is a nest of ``TensorSpec``; the older ``output_types`` (with
        ``output_shapes``) are accepted too. ``args`` reach the generator as NumPy values.
        """
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        if output_signature is not None:
            if output_types is not None or output_shapes is not None:
                raise TypeError("The `output_types` and `output_shapes` arguments can not be used together "
                                "with the `output_signature` argument.")
            signature = _normalize(output_signature)
            specs = _flatten(signature)
            if not all(isinstance(spec, TensorSpec) for spec in specs):
                raise TypeError("`output_signature` must contain objects that are subclass of `tf.TypeSpec`")
            dtypes = [spec.numpy_dtype for spec in specs]
            shapes = [spec.shape for spec in specs]
        else:
            if output_types is None:
                raise TypeError("To specify the output signature you need to provide either the "
                                "`output_signature` argument or the `output_types` argument.")
            signature = _normalize(output_types)
            dtypes = [_spec_dtype(dtype) for dtype in _flatten(signature)]
            shapes = ([TensorShape(None)] * len(dtypes) if output_shapes is None
                      else [TensorShape(shape) for shape in _flatten_up_to(signature, _normalize(output_shapes))])
        call_args = tuple(_to_array(arg) for arg in (args or ()))

        def elements():
            for value in generator(*call_args):
                leaves = _flatten_up_to(signature, _normalize(value))
                converted = []
                for leaf, dtype, shape in zip(leaves, dtypes, shapes):
                    array = _generator_value(leaf, dtype)
                    if not shape.is_compatible_with(array.shape):
                        raise TypeError(f"`generator` yielded an element of shape {TensorShape(array.shape)} "
                                        f"where an element of shape {shape} was expected.")
                    converted.append(array)
                yield _pack(signature, converted)

        return Dataset(elements, UNKNOWN_CARDINALITY)

    @staticmethod
    def from_tensors(tensors, name=None) -> "Dataset":
        """A dataset of exactly one element: ``tensors`` as it is."""
        element = _as_arrays(_normalize(tensors))
        return Dataset(lambda: iter([element]), 1)

    @staticmethod
    def range(*args, dtype=None, name=None) -> "Dataset":
        """``range(stop)``, ``range(start, stop[, step])``; int64 elements, as TF's default."""
        bounds = range(*args)
        element_dtype = np.dtype(getattr(dtype, "as_numpy_dtype", None) or numpy_dtype(dtype) or np.int64)
        return Dataset(lambda: (np.asarray(v, dtype=element_dtype) for v in bounds), len(bounds))

    @staticmethod
    def zip(*datasets, name=None) -> "Dataset":
        """Elements side by side, as long as the shortest; ``zip((a, b))`` and ``zip(a, b)`` both work."""
        structure = datasets[0] if len(datasets) == 1 and not isinstance(datasets[0], Dataset) else datasets
        members = _flatten(structure)
        if not all(isinstance(d, Dataset) for d in members):
            raise TypeError("Dataset.zip takes datasets (or a tuple/dict of datasets)")

        def elements():
            for parts in zip(*(d._elements() for d in members)):
                yield _pack(structure, parts)

        counts = [d._cardinality for d in members]
        known = [c for c in counts if c >= 0]
        if known:
            cardinality = min(known)
        elif all(c == INFINITE_CARDINALITY for c in counts):
            cardinality = INFINITE_CARDINALITY
        else:
            cardinality = UNKNOWN_CARDINALITY
        return Dataset(elements, cardinality, members[0]._options if members else None)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True) -> "Dataset":
        """TF's ``choose_from_datasets``: the next element of ``datasets[i]`` for each int64 ``i`` of
        ``choice_dataset``. An input that has run out ends it (``stop_on_empty_dataset``) or is skipped."""
        datasets = list(datasets)
        if not datasets:
            raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
        if not isinstance(choice_dataset, Dataset):
            raise TypeError(f"Invalid `choice_dataset`. `choice_dataset` should be a `tf.data.Dataset` but is "
                            f"{type(choice_dataset)}.")

        def choices():
            for choice in choice_dataset._elements():
                choice = np.asarray(choice.asnumpy() if hasattr(choice, "asnumpy") else choice)
                if choice.shape or choice.dtype != np.int64:  # (TF checks the element spec when it is built)
                    raise TypeError("Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar `tf.int64` "
                                    f"tensors but are of shape {choice.shape} and dtype {choice.dtype}.")
                yield int(choice)

        return Dataset._directed(datasets, choices, bool(stop_on_empty_dataset), UNKNOWN_CARDINALITY)

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None) -> "Dataset":
        """TF's ``sample_from_datasets``: each element from an input drawn with probability proportional
        to ``weights`` (uniform when None), exhausted inputs skipped (or ending it with
        ``stop_on_empty_dataset``). Inputs of weight 0 are left out, as TF does. The draws are NumPy's:
        with a seed the sequence is fixed, but it is not TF's."""
        datasets = list(datasets)
        if not datasets:
            raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
        weights = [1.0] * len(datasets) if weights is None else \
            np.asarray(weights.asnumpy() if hasattr(weights, "asnumpy") else weights, dtype=np.float64).tolist()
        if len(weights) != len(datasets):
            raise ValueError("Invalid `weights`. `weights` should have the same length as `datasets` but got "
                             f"`len(weights)={len(weights)}` vs. `len(datasets)={len(datasets)}`.")
        kept = [(d, w) for d, w in zip(datasets, weights) if w != 0]
        if len(kept) == 1:
            return kept[0][0]
        datasets, weights = [d for d, _ in kept], np.asarray([w for _, w in kept])
        draws = np.random.default_rng(orders.order_seed(seed))
        every_epoch = int(draws.integers(1 << 63))
        rerandomize = rerandomize_each_iteration is None or bool(rerandomize_each_iteration)

        def choices():
            rng = np.random.default_rng(int(draws.integers(1 << 63)) if rerandomize else every_epoch)
            probabilities = weights / weights.sum()
            while True:
                yield int(rng.choice(len(datasets), p=probabilities))

        infinite = all(d._cardinality == INFINITE_CARDINALITY for d in datasets)
        return Dataset._directed(datasets, choices, bool(stop_on_empty_dataset),
                                 INFINITE_CARDINALITY if infinite else UNKNOWN_CARDINALITY)

    @staticmethod
    def _directed(datasets, choices, stop_on_empty: bool, cardinality: int) -> "Dataset":
        """TF's DirectedInterleave: the element of the input each choice names."""
        if not all(isinstance(d, Dataset) for d in datasets):
            raise TypeError("Invalid `datasets`. `datasets` should be a list of `tf.data.Dataset`s")

        def elements():
            inputs = [d._elements() for d in datasets]
            active = [True] * len(inputs)
            for choice in choices():
                if not 0 <= choice < len(inputs):
                    raise InvalidArgumentError(f"Selector index out of range: {choice} >= {len(inputs)}")
                if not active[choice]:
                    if not any(active):
                        return
                    continue
                try:
                    yield next(inputs[choice])
                except StopIteration:
                    active[choice] = False
                    if stop_on_empty or not any(active):
                        return

        return Dataset(elements, cardinality, datasets[0]._options)

    # -- transformations --

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None) -> "Dataset":
        """Consecutive elements stacked along a new leading dimension; a short last batch unless dropped."""
        size = int(batch_size)
        if size <= 0:
            raise ValueError("batch_size must be positive")

        def elements():
            return _grouped(self._elements(), size, drop_remainder, _stack)

        rows = None if self._rows is None else _batches_of_rows(*self._rows, size, drop_remainder)
        return self._then(rows or elements, _batched(self._cardinality, size, drop_remainder))

    def unbatch(self, name=None) -> "Dataset":
        """Each batch split back into its rows."""

        def elements():
            for element in self._elements():
                leaves = _flatten(element)
                for i in range(leaves[0].shape[0] if leaves else 0):
                    yield _pack(element, [leaf[i] for leaf in leaves])

        return self._then(elements)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None) -> "Dataset":
        """TF's buffer shuffle: fill ``buffer_size`` elements, emit a random one, refill from the input.

        The generator is numpy's, so even with a seed the order is not TF's.
        """
        size = int(buffer_size)
        if size == AUTOTUNE:
            size = 1 << 30
        if size <= 0:
            raise ValueError("buffer_size must be positive")
        epochs = np.random.default_rng(orders.order_seed(seed))
        every_epoch = int(epochs.integers(1 << 63))  # the one order used when epochs are not reshuffled

        def shuffled(items: Iterator):
            reshuffle = reshuffle_each_iteration is None or bool(reshuffle_each_iteration)
            rng = np.random.default_rng(int(epochs.integers(1 << 63)) if reshuffle else every_epoch)
            buffer = []
            for item in items:
                if len(buffer) < size:
                    buffer.append(item)
                    continue
                i = int(rng.integers(len(buffer)))
                yield buffer[i]
                buffer[i] = item
            while buffer:
                i = int(rng.integers(len(buffer)))
                buffer[i], buffer[-1] = buffer[-1], buffer[i]
                yield buffer.pop()

        if self._rows is not None:  # shuffle the row indices: the same order, drawn by the same calls
            structure, leaves, order = self._rows
            return Dataset._of_rows(structure, leaves, lambda: shuffled(order()), self._cardinality, self._options)
        return self._then(lambda: shuffled(self._elements()), self._cardinality)

    def repeat(self, count=None, name=None) -> "Dataset":
        """The input ``count`` times over (forever for ``None`` or -1)."""
        times = None if count is None or int(count) < 0 else int(count)

        def elements():
            for _ in itertools.count() if times is None else range(times):
                yield from self._elements()

        if times is None:
            cardinality = INFINITE_CARDINALITY if self._cardinality != 0 else 0
        else:
            cardinality = self._cardinality * times if self._cardinality >= 0 else self._cardinality
        return self._then(elements, cardinality)

    def take(self, count, name=None) -> "Dataset":
        """The first ``count`` elements (all for -1)."""
        n = int(count)
        if n < 0:
            return self._then(self._elements, self._cardinality)
        card = n if self._cardinality == INFINITE_CARDINALITY else (min(n, self._cardinality) if self._cardinality >= 0 else UNKNOWN_CARDINALITY)
        return self._then(lambda: itertools.islice(self._elements(), n), card)

    def skip(self, count, name=None) -> "Dataset":
        """All but the first ``count`` elements (none for -1)."""
        n = int(count)
        if n < 0:
            return self._then(lambda: iter(()), 0)
        card = max(0, self._cardinality - n) if self._cardinality >= 0 else self._cardinality
        return self._then(lambda: itertools.islice(self._elements(), n, None), card)

    def shard(self, num_shards, index, name=None) -> "Dataset":
        """Every ``num_shards``-th element, starting at ``index``."""
        shards, start = int(num_shards), int(index)
        if not 0 <= start < shards:
            raise ValueError(f"shard index {start} is not in [0, {shards})")
        card = self._cardinality
        if card >= 0:
            card = len(range(start, card, shards))
        return self._then(lambda: itertools.islice(self._elements(), start, None, shards), card)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None) -> "Dataset":
        """``map_func`` on every element (Tensors in, anything array-like out), in order."""

        def elements():
            for element in self._elements():
                yield _as_arrays(_normalize(_call(map_func, element)))

        return self._then(elements, self._cardinality)

    def filter(self, predicate, name=None) -> "Dataset":
        """The elements for which ``predicate`` is true."""

        def elements():
            for element in self._elements():
                if _truth(_call(predicate, element)):
                    yield element

        return self._then(elements)

    def enumerate(self, start=0, name=None) -> "Dataset":
        """``(index, element)`` pairs, the index int64."""
        return self._then(lambda: ((np.asarray(i, dtype=np.int64), e) for i, e in enumerate(self._elements(), start)),
                          self._cardinality)

    def concatenate(self, dataset: "Dataset", name=None) -> "Dataset":
        first, second = self._cardinality, dataset._cardinality
        card = first + second if first >= 0 and second >= 0 else (
            INFINITE_CARDINALITY if INFINITE_CARDINALITY in (first, second) else UNKNOWN_CARDINALITY)
        return self._then(lambda: itertools.chain(self._elements(), dataset._elements()), card)

    def cache(self, filename="", name=None) -> "Dataset":
        """The first complete pass is kept (in memory) and replayed by every later one."""
        kept: list = []
        complete = []

        def elements():
            if complete:
                yield from kept
                return
            seen = []
            for element in self._elements():
                seen.append(element)
                yield element
            kept[:] = seen
            complete.append(True)

        return self._then(elements, self._cardinality)

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                   deterministic=None, name=None) -> "Dataset":
        """TF's order: ``map_func`` makes a dataset of each of ``cycle_length`` input elements at
        a time, and ``block_length`` elements are taken from each in turn; an exhausted one is
        replaced by the dataset of the next input element."""
        cycle = _cycle_length(cycle_length)
        block = 1 if block_length in (None, AUTOTUNE) else int(block_length)

        def elements():  # TF's InterleaveDataset, step for step
            inputs, end_of_input = self._elements(), False
            current: list = [None] * cycle
            at = block_index = open_count = 0
            while not end_of_input or open_count:
                if current[at] is not None:
                    item = next(current[at], _END)
                    if item is not _END:
                        block_index += 1
                        if block_index == block:
                            at, block_index = (at + 1) % cycle, 0
                        yield item
                        continue
                    current[at] = None
                    open_count -= 1
                    at, block_index = (at + 1) % cycle, 0
                elif not end_of_input:
                    element = next(inputs, _END)
                    if element is _END:
                        end_of_input = True
                    else:
                        current[at] = iter(_dataset_of(_call(map_func, element))._elements())
                        open_count += 1
                else:
                    at, block_index = (at + 1) % cycle, 0

        return self._then(elements)

    def flat_map(self, map_func, name=None) -> "Dataset":
        """The elements of the dataset ``map_func`` makes of each element, one dataset after another."""

        def elements():
            for element in self._elements():
                yield from _dataset_of(_call(map_func, element), "flat_map")._elements()

        return self._then(elements)

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None) -> "Dataset":
        """Windows of ``size`` elements, ``stride`` apart within a window, a new window every ``shift``
        elements (``size`` by default), as TF's ``window``: each window is the element's structure
        with a dataset of its values at every component (``flat_map(lambda w: w.batch(size))`` makes
        them tensors again). Windows start while elements remain; the last may be short unless
        ``drop_remainder``."""
        size, stride = int(size), int(stride)
        shift = size if shift is None else int(shift)
        if size <= 0 or shift <= 0 or stride <= 0:
            raise ValueError("`size`, `shift` and `stride` of a window must be positive")
        span = (size - 1) * stride + 1  # elements a full window covers

        def elements():
            buffer: list = []  # the elements from the current window's start on
            source, exhausted = self._elements(), False
            while True:
                while not exhausted and len(buffer) < span:
                    item = next(source, _END)
                    if item is _END:
                        exhausted = True
                    else:
                        buffer.append(item)
                if not buffer or (drop_remainder and len(buffer) < span):
                    return
                picked = buffer[:span:stride]
                yield _pack(picked[0], [Dataset.from_tensor_slices(np.stack(column)) if not _is_sparse(column[0])
                                        else Dataset(lambda column=column: iter(column), len(column))
                                        for column in zip(*(_flatten(e) for e in picked))])
                del buffer[:shift]
                skip = shift - span  # a shift past the window's end skips elements in between
                while skip > 0 and not exhausted:
                    if next(source, _END) is _END:
                        exhausted = True
                    skip -= 1

        count = self._cardinality
        if count >= 0:
            full = count - span
            count = (full // shift + 1 if full >= 0 else 0) if drop_remainder else -(-count // shift)
        return self._then(elements, count)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False,
                     name=None) -> "Dataset":
        """``batch`` of elements padded at the end of every dimension: to ``padded_shapes`` where a
        component's shape gives a size, else (``None``/-1, or no ``padded_shapes``) to the largest in
        the batch; with ``padding_values`` (0, text ``b""`` by default), as TF's ``padded_batch``."""
        size = int(batch_size)
        if size <= 0:
            raise ValueError("batch_size must be positive")

        def padded(group):
            structure = group[0]
            leaves = _flatten(structure)
            shapes = [None] * len(leaves) if padded_shapes is None else _padding_leaves(structure, padded_shapes, "padded_shapes")
            values = [None] * len(leaves) if padding_values is None else _padding_leaves(structure, padding_values, "padding_values")
            columns = list(zip(*(_flatten(element) for element in group)))
            out = []
            for column, shape, value in zip(columns, shapes, values):
                ranks = {leaf.ndim for leaf in column}
                if len(ranks) != 1:
                    raise ValueError(f"padded_batch cannot combine components of ranks {sorted(ranks)}")
                largest = np.max([leaf.shape for leaf in column], axis=0) if column[0].ndim else np.zeros(0, int)
                if shape is not None:
                    shape = [None if d is None or int(d) < 0 else int(d) for d in _shape_list(shape)]
                    if len(shape) != column[0].ndim:
                        raise ValueError(f"padded shape {shape} does not have the rank of a component "
                                         f"({column[0].ndim})")
                    for want, have in zip(shape, largest):
                        if want is not None and have > want:
                            raise ValueError(f"a component of shape {tuple(int(h) for h in largest)} is larger than "
                                             f"its padded shape {shape}")
                    target = [int(have) if want is None else want for want, have in zip(shape, largest)]
                else:
                    target = [int(d) for d in largest]
                fill = (b"" if column[0].dtype.kind in "OSU" else 0) if value is None else _to_array(value).item()
                batch = np.full([len(column), *target], fill, dtype=column[0].dtype)
                for i, leaf in enumerate(column):
                    batch[(i, *(slice(0, d) for d in leaf.shape))] = leaf
                out.append(batch)
            return _pack(structure, out)

        return self._then(lambda: _grouped(self._elements(), size, drop_remainder, padded),
                          _batched(self._cardinality, size, drop_remainder))

    def apply(self, transformation_func) -> "Dataset":
        """``transformation_func(self)``: a function from dataset to dataset, as TF's ``apply``."""
        return transformation_func(self)

    def get_single_element(self, name=None):
        """The dataset's one element (Tensors); TF's errors for none or more than one."""
        items = iter(self._elements())
        first = next(items, _END)
        if first is _END:
            raise ValueError("Dataset was empty.")
        if next(items, _END) is not _END:
            raise ValueError("Dataset had more than one element.")
        return _as_tensors(first)

    def prefetch(self, buffer_size, name=None) -> "Dataset":
        """No effect: elements are produced when asked for."""
        return self._same(self._options)

    def with_options(self, options: Options, name=None) -> "Dataset":
        """Options are recorded (``options()``) and otherwise have no effect."""
        return self._same(self._options.merge(options))

    def _same(self, options: Options) -> "Dataset":
        dataset = Dataset(self._elements, self._cardinality, options)
        dataset._rows = self._rows
        return dataset

    def options(self) -> Options:
        return self._options

    # -- reading --

    def cardinality(self) -> int:
        """The element count, or INFINITE_CARDINALITY (-1) / UNKNOWN_CARDINALITY (-2), as TF."""
        return self._cardinality

    def __len__(self) -> int:
        if self._cardinality == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if self._cardinality < 0:
            raise TypeError("The dataset length is unknown.")
        return self._cardinality

    def __iter__(self):
        return DatasetIterator(self._elements())

    def as_numpy_iterator(self):
        """Elements as numpy arrays (TF's strings are bytes here too)."""
        for element in self._elements():
            yield _pack(element, [leaf.item() if leaf.dtype.kind == "O" and leaf.ndim == 0 else leaf
                                  for leaf in _flatten(element)])

    def __repr__(self) -> str:
        return f"<migrate.runtime.tfdata.Dataset cardinality={self._cardinality}>"


def _cycle_length(cycle_length) -> int:
    if cycle_length in (None, AUTOTUNE):
        import os

        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return int(cycle_length)


def _dataset_of(value, what: str = "interleave") -> "Dataset":
    if not isinstance(value, Dataset):
        raise TypeError(f"{what}'s map_func must return a dataset, not {type(value).__name__}")
    return value


def _padding_leaves(structure, given, what: str) -> list:
    """``padded_batch``'s `padded_shapes` or `padding_values` at the element's leaves: the element's
    nest (a shape is one leaf: a list or tuple of sizes, a TensorShape or a tensor)."""
    if what == "padded_shapes":
        given = _shapes_as_leaves(given)
    elif not isinstance(given, (tuple, list, dict)):
        return [given] * len(_flatten(structure))  # one padding value for every component
    try:
        return _flatten_up_to(structure, given)
    except TypeError:
        raise ValueError(f"padded_batch's `{what}` {given!r} does not match the structure of the dataset's "
                         f"elements") from None


def _shapes_as_leaves(given):
    """A nest of shapes with each shape (a list or tuple of sizes, or a TensorShape) made one leaf."""
    if isinstance(given, dict):
        return {key: _shapes_as_leaves(value) for key, value in given.items()}
    if isinstance(given, (tuple, list)) and not all(d is None or isinstance(d, (int, np.integer)) for d in given):
        return tuple(_shapes_as_leaves(item) for item in given)
    return _ShapeLeaf(given)


class _ShapeLeaf:
    """One padded shape inside a nest (so that flattening keeps it whole)."""

    def __init__(self, shape) -> None:
        self.shape = shape


def _shape_list(shape) -> list:
    if isinstance(shape, _ShapeLeaf):
        shape = shape.shape
    if hasattr(shape, "as_list"):
        return list(shape.as_list())
    if hasattr(shape, "asnumpy"):
        shape = shape.asnumpy()
    return [None if d is None else int(d) for d in np.asarray(shape, dtype=object).reshape(-1).tolist()]


def _matching_files(patterns) -> list[bytes]:
    """The paths matching the glob patterns, sorted together as TF's `MatchingFiles` sorts them (hidden
    files included)."""
    import glob

    return sorted(os.fsencode(path) for pattern in patterns for path in glob.glob(pattern, include_hidden=True))


def _file_names(filenames) -> list:
    if hasattr(filenames, "_elements"):  # a dataset of file names
        return [leaf.item() if isinstance(leaf, np.ndarray) else leaf for leaf in filenames._elements()]
    if hasattr(filenames, "asnumpy"):
        filenames = filenames.asnumpy()
    names = np.asarray(filenames, dtype=object).reshape(-1).tolist()
    return [n.decode("utf-8") if isinstance(n, bytes) else str(n) for n in names]


def _file_dataset(read, filenames, compression_type, num_parallel_reads) -> "Dataset":
    from . import tfio

    names = _file_names(filenames)
    if num_parallel_reads not in (None, 0, 1):
        # TF reads that many files at once and interleaves their records one by one.
        files = Dataset(lambda: (np.array(n, dtype=object) for n in names), len(names))
        return files.interleave(lambda n: _file_dataset(read, n, compression_type, None),
                                cycle_length=num_parallel_reads, block_length=1)

    def elements():
        for n in names:
            for item in getattr(tfio, read)(n, compression_type):
                yield np.array(item, dtype=object)

    return Dataset(elements)


def TFRecordDataset(filenames, compression_type=None, buffer_size=None, num_parallel_reads=None,  # noqa: N802
                    name=None) -> Dataset:
    """``tf.data.TFRecordDataset``: every record of the files, in order, as a bytes scalar."""
    return _file_dataset("records", filenames, compression_type, num_parallel_reads)


def TextLineDataset(filenames, compression_type=None, buffer_size=None, num_parallel_reads=None,  # noqa: N802
                    name=None) -> Dataset:
    """``tf.data.TextLineDataset``: every line of the files, without its newline, as a bytes scalar."""
    return _file_dataset("lines", filenames, compression_type, num_parallel_reads)


def CsvDataset(filenames, record_defaults, compression_type=None, buffer_size=None, header=False,  # noqa: N802
               field_delim=",", use_quote_delim=True, na_value="", select_cols=None, exclude_cols=None,
               name=None) -> Dataset:
    """``tf.data.experimental.CsvDataset``: one tuple of scalars per CSV record of the files (a line,
    or more where a quoted field holds line breaks), split and typed as TF's reader does: a column
    per ``record_defaults`` entry (a dtype or an empty tensor: required; else its default), the
    first line skipped with ``header``, ``select_cols`` or ``exclude_cols`` choosing columns."""
    from . import tfio

    elements = tfio.csv_elements(_file_names(filenames), record_defaults, compression_type, header, field_delim,
                                 use_quote_delim, na_value, select_cols, exclude_cols)
    return Dataset(elements)


def _csv_probe(paths, field_delim, use_quote_delim, encoding, compression_type):
    """TF's probing reader (Python's csv module, as `make_csv_dataset` reads headers and infers types)."""
    import csv
    import gzip

    quoting = csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE
    for path in paths:
        opened = gzip.open(path, "rt", encoding=encoding) if compression_type == "GZIP" else \
            open(path, encoding=encoding, newline="")
        with opened as handle:
            yield csv.reader(handle, delimiter=field_delim, quoting=quoting)


def _csv_type(text: str, na_value: str, previous):
    """TF's `_infer_type`: the least permissive of int32, int64, float32, float64, string that the text
    and the column's earlier values allow."""
    if text in ("", na_value):
        return previous
    order = ["int32", "int64", "float32", "float64", "string"]

    def fits(kind: str) -> bool:
        try:
            if kind == "int32":
                return np.int32(text) == np.int64(text)
            if kind == "int64":
                np.int64(text)
                return True
            if kind in ("float32", "float64"):
                return np.dtype(kind).type(text) < np.inf
            return True
        except (ValueError, OverflowError):
            return False

    for i, kind in enumerate(order):
        if fits(kind) and (previous is None or previous in order[:i + 1]):
            return kind
    return "string"


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None, label_name=None,
                     select_columns=None, field_delim=",", use_quote_delim=True, na_value="", header=True,
                     num_epochs=None, shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False, num_rows_for_inference=100,
                     compression_type=None, ignore_errors=False, encoding="utf-8") -> "Dataset":
    """``tf.data.experimental.make_csv_dataset``: batches of ``{column: values}`` (and the label column
    apart, with ``label_name``) read from CSV files as TF reads them: the files in sorted order
    (shuffled with ``shuffle``), column names from the header, column types inferred from the first
    ``num_rows_for_inference`` rows (int32, int64, float32, float64 or string; an empty field then
    reads 0 or ""), ``num_parallel_reads`` files interleaved record by record, then records shuffled,
    repeated ``num_epochs`` times (forever when None, when the last partial batch is dropped) and
    batched. The shuffles draw from NumPy's generator (`Dataset.shuffle`)."""
    import collections

    patterns = file_pattern if isinstance(file_pattern, (list, tuple)) else [file_pattern]
    if isinstance(file_pattern, (list, tuple)) and not file_pattern:
        raise ValueError("Argument `file_pattern` should not be empty.")
    names = [os.fsdecode(name) for name in _matching_files(os.fspath(pattern) for pattern in patterns)]
    if not names:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    compression = compression_type or ""
    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` arguments. Neither is provided.")
        headers = []
        for name, reader in zip(names, _csv_probe(names, field_delim, use_quote_delim, encoding, compression)):
            try:
                headers.append(next(reader))
            except StopIteration:
                raise ValueError(f"Failed when reading the header line of {name}. Is it an empty file?") from None
            if headers[-1] != headers[0]:
                raise ValueError("All input CSV files should have the same column names in the header row. "
                                 f"File {name} has different column names.")
        column_names = headers[0]
    column_names = list(column_names)
    if len(column_names) != len(set(column_names)):
        duplicates = {n for n in column_names if column_names.count(n) > 1}
        raise ValueError("Either `column_names` argument or CSV header row contains duplicate column names: "
                         f"{duplicates}.")
    if select_columns is not None:
        index = {n: i for i, n in enumerate(column_names)}
        chosen = []
        for column in select_columns:
            if isinstance(column, int):
                if not 0 <= column < len(column_names):
                    raise ValueError(f"Column index {column} specified in `select_columns` should be > 0  and <= "
                                     f"{len(column_names)}, which is the number of columns.")
                chosen.append(column)
            elif column not in index:
                raise ValueError(f"Column {column} specified in `select_columns` must be of one of the columns: "
                                 f"{index.keys()}.")
            else:
                chosen.append(index[column])
        select_columns = sorted(set(chosen))
    if column_defaults is None:
        columns = select_columns if select_columns is not None else range(len(column_names))
        kinds = [None] * len(columns)
        seen = 0
        for reader in _csv_probe(names, field_delim, use_quote_delim, encoding, compression):
            if header:
                next(reader, None)
            for row in reader:
                if num_rows_for_inference is not None and seen >= num_rows_for_inference:
                    break
                if len(row) != len(column_names):
                    raise ValueError(f"Problem inferring types: CSV row {seen + 1 + bool(header)} has {len(row)} "
                                     f"number of fields. Expected: {len(column_names)}.")
                kinds = [_csv_type(row[c], na_value, kind) for c, kind in zip(columns, kinds)]
                seen += 1
            if num_rows_for_inference is not None and seen >= num_rows_for_inference:
                break
        column_defaults = [np.array([""], dtype=object) if (k or "string") == "string" else np.zeros([1], dtype=k)
                           for k in kinds]
    if select_columns is not None and len(column_defaults) != len(select_columns):
        raise ValueError("If specified, `column_defaults` and `select_columns` must have the same length: "
                         f"`column_defaults` has length {len(column_defaults)}, `select_columns` has length "
                         f"{len(select_columns)}.")
    if select_columns is not None and len(column_names) > len(select_columns):
        column_names = [column_names[i] for i in select_columns]
    if label_name is not None and label_name not in column_names:
        raise ValueError(f"`label_name` provided must be one of the columns: {column_names}. Received: {label_name}.")

    def read(name) -> "Dataset":
        from . import tfio

        path = name.item() if isinstance(name, np.ndarray) else name
        path = path.decode() if isinstance(path, bytes) else path
        return Dataset(tfio.csv_elements([path], column_defaults, compression_type, header, field_delim,
                                         use_quote_delim, na_value, select_columns, None, ignore_errors))

    files = Dataset(lambda: (np.array(n, dtype=object) for n in names), len(names))
    if shuffle:
        files = files.shuffle(len(names), shuffle_seed)
    records = files.interleave(read, cycle_length=num_parallel_reads or 1, block_length=1)
    if shuffle:
        records = records.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        records = records.repeat(num_epochs)
    batches = records.batch(batch_size, drop_remainder=num_epochs is None)

    def organize(*columns):
        features = collections.OrderedDict(zip(column_names, columns))
        if label_name is not None:
            label = features.pop(label_name)
            return features, label
        return features

    return batches.map(organize)


class TensorSpec:
    """``tf.TensorSpec``: the shape (a ``TensorShape``: ``None`` for unknown sizes, or an unknown rank) and
    dtype of a tensor."""

    def __init__(self, shape, dtype="float32", name=None):
        self.shape = TensorShape(shape)
        self.dtype = dtype
        self.name = name

    @property
    def numpy_dtype(self) -> np.dtype:
        return _spec_dtype(self.dtype)

    @classmethod
    def from_tensor(cls, tensor, name=None) -> "TensorSpec":
        array = _to_array(tensor)
        return cls(array.shape, array.dtype, name)

    def is_compatible_with(self, other) -> bool:
        other_shape = other.shape if isinstance(other, TensorSpec) else _to_array(other).shape
        other_dtype = other.numpy_dtype if isinstance(other, TensorSpec) else _to_array(other).dtype
        return self.numpy_dtype == other_dtype and self.shape.is_compatible_with(other_shape)

    def __eq__(self, other) -> bool:
        return isinstance(other, TensorSpec) and (self.shape, self.numpy_dtype, self.name) == (
            other.shape, other.numpy_dtype, other.name)

    def __hash__(self) -> int:
        return hash((self.shape, str(self.numpy_dtype), self.name))

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape}, dtype={_dtype_name(self.numpy_dtype)}, name={self.name!r})"


def _dtype_name(dtype: np.dtype) -> str:
    return "tf.string" if dtype == np.dtype(object) else f"tf.{np.dtype(dtype).name}"


def _spec_dtype(dtype) -> np.dtype:
    """A declared dtype (numpy, a name, a MindSpore or TF type; ``string`` for text) as numpy."""
    if dtype is None:
        return np.dtype(np.float32)
    name = getattr(dtype, "name", None) if type(dtype).__module__.startswith("tensorflow") else None
    text = name or (dtype if isinstance(dtype, str) else None)
    if text in ("string", "str"):
        return np.dtype(object)
    if dtype in (str, bytes):
        return np.dtype(object)
    if hasattr(dtype, "as_numpy_dtype"):
        return np.dtype(dtype.as_numpy_dtype)
    return np.dtype(numpy_dtype(text or dtype))


def _generator_value(value, dtype: np.dtype) -> np.ndarray:
    """TF's conversion of a generated value: ``np.asarray(value, dtype)``; text becomes bytes."""
    if dtype == np.dtype(object):
        array = _to_array(value) if not isinstance(value, (str, bytes, list, tuple)) else np.asarray(value)
        if array.dtype.kind == "U":
            array = np.char.encode(array, "utf-8")
        if array.size == 0:  # (an empty list is an empty string tensor to TF)
            array = array.astype(object)
        if array.dtype.kind not in ("S", "O"):
            raise TypeError(f"`generator` yielded an element that could not be converted to the expected type. "
                            f"The expected type was string, but the yielded element was {value!r}.")
        return array.astype(object)
    try:
        return np.asarray(_to_array(value) if not isinstance(value, (list, tuple, int, float, bool)) else value,
                          dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`generator` yielded an element that could not be converted to the expected type. The "
                        f"expected type was {np.dtype(dtype).name}, but the yielded element was {value!r}.") from exc


def _flatten_up_to(structure, value) -> list:
    """``value``'s components at ``structure``'s leaves (a component may itself be a list: one tensor)."""
    if isinstance(structure, dict):
        if not isinstance(value, dict) or set(value) != set(structure):
            raise TypeError(f"`generator` yielded an element that did not match the expected structure. The "
                            f"expected structure was {structure}, but the yielded element was {value}.")
        return [leaf for key in sorted(structure) for leaf in _flatten_up_to(structure[key], value[key])]
    if isinstance(structure, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(structure):
            raise TypeError(f"`generator` yielded an element that did not match the expected structure. The "
                            f"expected structure was {structure}, but the yielded element was {value}.")
        return [leaf for item, part in zip(structure, value) for leaf in _flatten_up_to(item, part)]
    return [value]


def _stack(group: list):
    structure = group[0]
    columns = zip(*(_flatten(element) for element in group))
    stacked = []
    for column in columns:
        if _is_sparse(column[0]):
            from .tfio import batch_sparse

            stacked.append(batch_sparse(column))
            continue
        shapes = {leaf.shape for leaf in column}
        if len(shapes) != 1:
            raise ValueError(f"cannot batch elements of different shapes {sorted(shapes)}; pad them first")
        stacked.append(np.stack(column))
    return _pack(structure, stacked)


def _grouped(elements: Iterator, size: int, drop_remainder: bool, combine: Callable) -> Iterator:
    """``combine`` of every ``size`` consecutive elements; a short last group unless dropped."""
    group = []
    for element in elements:
        group.append(element)
        if len(group) == size:
            yield combine(group)
            group = []
    if group and not drop_remainder:
        yield combine(group)


def _batches_of_rows(structure, leaves: list, order: Callable[[], Iterator[int]], size: int,
                     drop_remainder: bool) -> Callable[[], Iterator]:
    """`batch` over rows of arrays: each batch is one slice (consecutive rows) or one gather per leaf,
    equal to stacking the rows one by one."""

    def elements():
        rows = order()
        while True:
            indices = list(itertools.islice(rows, size))
            if not indices or (len(indices) < size and drop_remainder):
                return
            first, count = indices[0], len(indices)
            if indices == list(range(first, first + count)):
                yield _pack(structure, [leaf[first:first + count].copy() for leaf in leaves])
            else:
                picked = np.asarray(indices)
                yield _pack(structure, [leaf[picked] for leaf in leaves])

    return elements


def _batched(cardinality: int, size: int, drop_remainder: bool) -> int:
    if cardinality < 0:
        return cardinality
    return cardinality // size if drop_remainder else -(-cardinality // size)
