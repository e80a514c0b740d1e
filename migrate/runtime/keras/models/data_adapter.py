"""What `fit`/`evaluate`/`predict` accept, cut into global batches, and each process's share of one.

Accepted: numpy arrays (or lists/dicts of them, MindSpore Tensors) with `y` and
`sample_weight`; an `(x, y)` / `(x, y, sample_weight)` tuple passed as `x`;
`mindspore.dataset` and `tf.data` datasets (already batched; elements `(x, y[, w])`);
plain iterables of such batches (a list is re-iterated every epoch, an iterator or
generator continues where it stopped).

Arrays are batched in order (`batch_size`, default 32, last batch partial); with
`shuffle=True` the examples are permuted every epoch from a generator seeded
identically on every process, so all processes see the same global batches (TF's
shuffle order cannot be reproduced).

In a launched job each global batch is split as TF splits it for a MirroredStrategy:
contiguous chunks of ceil(n / replicas) examples, the last replicas get fewer or none.
"""

from __future__ import annotations

import itertools

import numpy as np

from .. import initializers
from .._tensors import as_tensor, flatten, is_tensor, map_structure


def _is_dataset(value) -> bool:
    module = type(value).__module__ or ""
    return (module.startswith("mindspore") and hasattr(value, "create_tuple_iterator")) or (
        module.startswith("tensorflow") and hasattr(value, "as_numpy_iterator"))


def _is_array_leaf(value) -> bool:
    return isinstance(value, np.ndarray) or is_tensor(value) or (
        hasattr(value, "numpy") and hasattr(value, "shape") and not _is_dataset(value))


def _is_array_data(value) -> bool:
    leaves = flatten(value)
    return bool(leaves) and all(_is_array_leaf(leaf) or isinstance(leaf, list) for leaf in leaves) and not (
        isinstance(value, list) and value and isinstance(value[0], tuple))


def _host(leaf):
    if leaf is None:
        return None
    if is_tensor(leaf):
        return leaf.asnumpy()
    if hasattr(leaf, "numpy") and not isinstance(leaf, np.ndarray):
        return np.asarray(leaf.numpy())
    return np.asarray(leaf)


def unpack_x_y_sample_weight(data):
    """(x, y, sample_weight) from a batch: x alone, (x,), (x, y) or (x, y, sample_weight)."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data[0], data[1], data[2]
    raise ValueError(f"Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, "
                     f"found: {data}")


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    if y is None:
        return (x,)
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def batch_size_of(batch) -> int:
    for leaf in flatten(batch):
        if leaf is not None and getattr(leaf, "shape", None) is not None and len(leaf.shape):
            return int(leaf.shape[0])
    return 0


class DataAdapter:
    """Global batches `(x, y, sample_weight)` (host numpy arrays) for each epoch."""

    def __init__(self, x, y=None, sample_weight=None, batch_size=None, shuffle=False, steps_per_epoch=None,
                 peek: bool = True):
        if y is None and sample_weight is None and isinstance(x, tuple) and len(x) in (2, 3) and all(
                _is_array_data(part) for part in x if part is not None):
            x, y, sample_weight = unpack_x_y_sample_weight(x)
        self.steps_per_epoch = steps_per_epoch
        self._shuffle = shuffle
        from ..utils import PyDataset

        if isinstance(x, PyDataset):
            for given, name, what in ((y, "y", "the targets"), (sample_weight, "sample_weights", "the sample weights")):
                if given is not None:
                    raise ValueError(f"When providing `x` as a PyDataset, `{name}` should not be passed. Instead, "
                                     f"{what} should be included as part of the PyDataset.")
            self._kind = "py_dataset"  # (a batch_size is ignored, as Keras ignores it: the dataset batches)
            self._source = x
            self._class_weight = None
            self._indices, self._seen = None, 0  # what `steps_per_epoch` carries from one epoch to the next
            # Keras's TF backend reads the first batches once to learn their structure
            # (NUM_BATCHES_FOR_TENSOR_SPEC): a batch's reading may draw random numbers, so
            # it is read here too, at the same time, and dropped.
            count = x.num_batches
            for index in range(2 if count is None else min(2, count)) if peek else ():
                x[index]
            return
        if _is_array_data(x) and not _is_dataset(x):
            self._kind = "arrays"
            self._arrays = (map_structure(_host, x), map_structure(_host, y), map_structure(_host, sample_weight))
            self._length = batch_size_of(self._arrays[0])
            self._batch_size = int(batch_size or 32)
        else:
            if batch_size is not None and _is_dataset(x):
                raise ValueError("The `batch_size` argument must not be specified when using a dataset as input: "
                                 "datasets generate batches.")
            self._kind = "iterable"
            self._source = x
            self._iterator = None
        self._class_weight = None

    def settle(self) -> None:
        """Before ``fit``'s and ``evaluate``'s first epoch Keras's TF backend ends an epoch of a
        PyDataset once (``on_epoch_end``), which a dataset that reshuffles there notices."""
        if self._kind == "py_dataset":
            self._source.on_epoch_end()

    def apply_class_weight(self, class_weight: dict) -> None:
        """Keras's `class_weight`: each training example weighs `class_weight[its class]` (1 if absent)."""
        if self._kind == "arrays":
            x, y, w = self._arrays
            _check_class_weight(y, w)
            self._arrays = (x, y, class_weight_to_sample_weights(y, class_weight))
        else:
            self._class_weight = dict(class_weight)

    def validation_split(self, fraction: float):
        """Split off the last `fraction` of array data (before shuffling), as Keras does."""
        if self._kind != "arrays":
            raise ValueError("`validation_split` is only supported for arrays and tensors")
        split = int(self._length * (1.0 - fraction))
        head = map_structure(lambda a: None if a is None else a[:split], self._arrays)
        tail = map_structure(lambda a: None if a is None else a[split:], self._arrays)
        self._arrays, self._length = head, split
        return tail

    @property
    def num_batches(self):
        if self._kind == "arrays":
            batches = -(-self._length // self._batch_size)
            return min(batches, self.steps_per_epoch) if self.steps_per_epoch else batches
        if self._kind == "py_dataset" and self._source.num_batches is not None:
            batches = self._source.num_batches
            return min(batches, self.steps_per_epoch) if self.steps_per_epoch else batches
        return self.steps_per_epoch

    def epoch(self, epoch: int = 0):
        if self._kind == "arrays":
            yield from self._array_batches(epoch)
        elif self._kind == "py_dataset":
            yield from self._py_dataset_batches()
        else:
            yield from self._iterable_batches()

    def _py_dataset_batches(self):
        """A PyDataset's batches by index, as Keras 3 reads them (its PyDatasetAdapter and
        EpochIterator): each pass over the indices mixed by Python's ``random.shuffle`` when
        shuffling (drawn when the pass reads its first batch); with ``steps_per_epoch`` one pass
        goes on from epoch to epoch and a new one starts once every batch was read; without,
        each epoch is one pass; ``on_epoch_begin``/``on_epoch_end`` around the epoch (the end
        also when the loop stops early)."""
        source = self._source
        count = source.num_batches
        steps = self.steps_per_epoch or count
        source.on_epoch_begin()
        try:
            if steps is None:  # endless and no steps given: until the loop stops
                yield from self._standardized(source[i] for i in itertools.count())
                return
            if self._indices is None or not self.steps_per_epoch:
                self._indices, self._seen = self._pass(count), 0
            for _ in range(steps):
                if count and self._seen >= count:
                    break
                self._seen += 1
                index = next(self._indices, None)
                if index is None:
                    break
                yield from self._standardized([source[index]])
            if count and self._seen >= count:
                self._indices, self._seen = self._pass(count), 0
        finally:
            source.on_epoch_end()

    def _pass(self, count):
        """The indices of one pass over a PyDataset, shuffled when its first is asked for."""
        import random

        indices = itertools.count() if count is None else list(range(count))
        if self._shuffle and count is not None:
            random.shuffle(indices)
        yield from indices

    def _array_batches(self, epoch):
        x, y, w = self._arrays
        order = None
        if self._shuffle:
            order = np.random.default_rng((initializers.global_seed(), epoch)).permutation(self._length)
        for step, start in enumerate(range(0, self._length, self._batch_size)):
            if self.steps_per_epoch and step >= self.steps_per_epoch:
                return
            index = slice(start, start + self._batch_size) if order is None else order[start:start + self._batch_size]
            yield map_structure(lambda a: None if a is None else a[index], (x, y, w))

    def _elements(self):
        source = self._source
        if _is_dataset(source):
            from ...data import iterate_elements

            return iter(iterate_elements(source))
        if iter(source) is source:  # an iterator/generator: keep consuming it across epochs
            if self._iterator is None:
                self._iterator = source
            return self._iterator
        return iter(source)

    def _iterable_batches(self):
        yield from self._standardized(self._elements())

    def _standardized(self, elements):
        """Each element as host ``(x, y, sample_weight)``, up to ``steps_per_epoch`` of them."""
        elements = iter(elements)
        step = 0
        while not self.steps_per_epoch or step < self.steps_per_epoch:
            try:
                element = next(elements)
            except StopIteration:
                return
            step += 1
            x, y, w = unpack_x_y_sample_weight(element)
            x, y, w = map_structure(_host, x), map_structure(_host, y), map_structure(_host, w)
            if self._class_weight is not None:
                _check_class_weight(y, w)
                w = class_weight_to_sample_weights(y, self._class_weight)
            yield x, y, w


def _check_class_weight(y, sample_weight) -> None:
    if sample_weight is not None:
        raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
    if isinstance(y, (list, tuple, dict)):
        raise ValueError("`class_weight` is only supported for Models with a single output.")


def class_weight_to_sample_weights(y, class_weight: dict) -> np.ndarray:
    """Keras 3's conversion: one-hot labels by argmax, (n, 1) squeezed, rounded to int classes."""
    labels = np.asarray(y)
    weights = np.ones((labels.shape[0],), dtype=np.float32)
    if labels.ndim > 1:
        labels = np.argmax(labels, axis=-1) if labels.shape[-1] != 1 else np.squeeze(labels, axis=-1)
    labels = np.round(labels).astype("int32")
    for i in range(labels.shape[0]):
        weights[i] = class_weight.get(int(labels[i]), 1.0)
    return weights


def local_share(batch, rank: int, replicas: int):
    """This replica's contiguous slice of a global batch `(x, y, w)` (numpy), and its size."""
    from ...data import replica_slice

    n = batch_size_of(batch)
    if replicas <= 1:
        return batch, n
    part = replica_slice(n, rank, replicas)
    local = map_structure(lambda a: None if a is None else a[part], batch)
    return local, part.stop - part.start


def to_device(batch):
    """numpy leaves → MindSpore Tensors (float64 → float32, int64 → int32)."""
    return map_structure(lambda a: None if a is None else as_tensor(a), batch)


def predict_outputs(batches, forward, network, group):
    """Keras's `predict` loop: `forward(x)` on every global batch's inputs, the outputs as NumPy,
    concatenated (arrays, or lists/tuples/dicts of them as the model returns).

    On several processes, a network with non-trainable parameters (BatchNorm's moving
    statistics) predicts as TF's replicas do: each replica keeps its own statistics, and TF
    computes each replica's contiguous slice of every global batch with that replica's. So
    each process computes its slice of every batch, and one gather at the end puts the rows
    back in TF's order. A network whose parameters are all trained (kept equal on every
    process) computes every batch on each process, with no collective."""
    from ...data import replica_slice
    from ...reductions import gather_values

    split = group.size > 1 and any(not p.requires_grad for p in network.get_parameters())
    outputs, sizes = [], []
    for batch in batches:
        x = batch[0]
        if split:
            n = batch_size_of(x)
            part = replica_slice(n, group.rank, group.size)
            sizes.append(n)
            if part.start == part.stop:  # this replica gets no rows: run one, keep none
                out = forward(to_device(map_structure(lambda a: a[:1], x)))
                outputs.append(map_structure(lambda t: t.asnumpy()[:0], out))
                continue
            x = map_structure(lambda a: a[part], x)
        outputs.append(map_structure(lambda t: t.asnumpy(), forward(to_device(x))))
    if not outputs:
        raise ValueError("Expected input data to be non-empty.")
    joined = _concatenate(outputs)
    if not split:
        return joined
    gathered = gather_values(group, joined, 0)  # every process's rows, rank after rank
    starts = np.cumsum([0] + [sum(_count(n, r, group.size) for n in sizes) for r in range(group.size)])
    order, seen = [], list(starts[:-1])
    for n in sizes:
        for r in range(group.size):
            count = _count(n, r, group.size)
            order.extend(range(seen[r], seen[r] + count))
            seen[r] += count
    rows = np.asarray(order, dtype=np.int64)
    return map_structure(lambda a: np.take(a, rows, axis=0), gathered)


def _count(n: int, replica: int, replicas: int) -> int:
    from ...data import replica_slice

    part = replica_slice(n, replica, replicas)
    return part.stop - part.start


def _concatenate(outputs: list):
    first = outputs[0]
    if isinstance(first, (list, tuple)):
        return type(first)(np.concatenate([o[i] for o in outputs]) for i in range(len(first)))
    if isinstance(first, dict):
        return {k: np.concatenate([o[k] for o in outputs]) for k in first}
    return np.concatenate(outputs)
