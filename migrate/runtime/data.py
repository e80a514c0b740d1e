"""Input distribution: which examples each replica (process) sees, exactly as TF splits them.

`distribute_dataset` keeps TF's `experimental_distribute_dataset` split: every
global batch of n examples is cut into contiguous per-replica chunks of
ceil(n / replicas) examples; the last replicas get fewer, possibly none (verified
against TF 2.21 MirroredStrategy for 2 and 3 replicas, including partial batches).
The split is done here rather than by `mindspore.dataset` sharding, which pads
uneven shards by wrapping around and so changes the examples.

`distribute_datasets_from_function` calls the function once per input pipeline
(one per worker, i.e. per node) with an `InputContext`; the replicas of one
pipeline take its batches in turn, as TF's replicas do.
"""

from __future__ import annotations

import enum
import math
import os
from dataclasses import dataclass, field

import numpy as np

from .collectives import Group
from .tensors import contiguous, flatten, pack_as, value_kind


class InputReplicationMode(enum.Enum):
    """How input is replicated across workers (only PER_WORKER is meaningful here)."""

    PER_WORKER = "PER_WORKER"
    PER_REPLICA = "PER_REPLICA"


@dataclass
class InputOptions:
    """Options for distributed input (`tf.distribute.InputOptions`).

    Device placement and prefetch options have no effect: each process feeds its own
    replica from host memory.
    """

    experimental_fetch_to_device: bool | None = None
    experimental_replication_mode: InputReplicationMode = InputReplicationMode.PER_WORKER
    experimental_place_dataset_on_device: bool = False
    experimental_per_replica_buffer_size: int = 1
    extra: dict = field(default_factory=dict)


class InputContext:
    """Information for an input function (`tf.distribute.InputContext`)."""

    def __init__(self, num_input_pipelines: int = 1, input_pipeline_id: int = 0, num_replicas_in_sync: int = 1):
        self._num_input_pipelines = num_input_pipelines
        self._input_pipeline_id = input_pipeline_id
        self._num_replicas_in_sync = num_replicas_in_sync

    @property
    def num_replicas_in_sync(self) -> int:
        return self._num_replicas_in_sync

    @property
    def input_pipeline_id(self) -> int:
        return self._input_pipeline_id

    @property
    def num_input_pipelines(self) -> int:
        return self._num_input_pipelines

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        """Global batch size divided by the replicas; ValueError (TF's text) if it does not divide."""
        if global_batch_size % self._num_replicas_in_sync != 0:
            raise ValueError(
                f"The `global_batch_size` {global_batch_size} is not divisible by "
                f"`num_replicas_in_sync` {self._num_replicas_in_sync} ")
        return global_batch_size // self._num_replicas_in_sync

    def __str__(self) -> str:
        return (f"tf.distribute.InputContext(input pipeline id {self.input_pipeline_id}, "
                f"total: {self.num_input_pipelines})")


class ValueContext:
    """Context for `experimental_distribute_values_from_function` (`tf.distribute.experimental.ValueContext`)."""

    def __init__(self, replica_id_in_sync_group: int = 0, num_replicas_in_sync: int = 1):
        self._replica_id_in_sync_group = replica_id_in_sync_group
        self._num_replicas_in_sync = num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self) -> int:
        return self._replica_id_in_sync_group

    @property
    def num_replicas_in_sync(self) -> int:
        return self._num_replicas_in_sync


def replica_slice(batch_size: int, replica: int, replicas: int) -> slice:
    """TF's split of one global batch: contiguous chunks of ceil(n / replicas) examples."""
    per_replica = math.ceil(batch_size / replicas) if batch_size else 0
    return slice(min(replica * per_replica, batch_size), min((replica + 1) * per_replica, batch_size))


def _batch_size(element) -> int:
    sizes = set()
    for leaf in flatten(element):
        shape = leaf.shape if hasattr(leaf, "shape") else np.shape(leaf)
        if len(shape) == 0:
            raise ValueError(
                "experimental_distribute_dataset needs a batched dataset: every element must have a "
                "leading batch dimension (call .batch(global_batch_size) first)")
        sizes.add(int(shape[0]))
    if len(sizes) != 1:
        raise ValueError(f"the components of a batch have different batch sizes {sorted(sizes)}")
    return sizes.pop()


def shard_global_batch(element, replica: int, replicas: int):
    """This replica's contiguous slice of one global batch (a nest of arrays/tensors)."""
    part = replica_slice(_batch_size(element), replica, replicas)
    return pack_as(element, [leaf[part] for leaf in flatten(element)])


def _empty_like_batch(element):
    return pack_as(element, [leaf[0:0] for leaf in flatten(element)])


# --- sources ---------------------------------------------------------------------------

def _is_tf_dataset(dataset) -> bool:
    module = type(dataset).__module__ or ""
    return module.startswith("tensorflow") and hasattr(dataset, "as_numpy_iterator")


def _is_ms_dataset(dataset) -> bool:
    module = type(dataset).__module__ or ""
    return module.startswith("mindspore") and hasattr(dataset, "create_tuple_iterator")


def _to_ms(array):
    import mindspore as ms

    return ms.Tensor(contiguous(array))


def iterate_elements(dataset):
    """Elements of a tf.data / mindspore.dataset / plain iterable.

    tf.data and mindspore.dataset elements arrive as MindSpore Tensors (the converted
    program computes with MindSpore); elements of a plain iterable keep their kind.
    """
    if _is_tf_dataset(dataset):
        for element in dataset.as_numpy_iterator():
            yield pack_as(element, [_to_ms(leaf) for leaf in flatten(element)])
        return
    if _is_ms_dataset(dataset):
        for columns in dataset.create_tuple_iterator(output_numpy=True, num_epochs=1):
            tensors = [_to_ms(column) for column in columns]
            yield tensors[0] if len(tensors) == 1 else tuple(tensors)
        return
    for element in dataset:
        for leaf in flatten(element):
            value_kind(leaf)  # unsupported leaf types fail here with a clear message
        yield element


class DistributedDataset:
    """Iterable over this replica's part of each step's input (`tf.distribute.DistributedDataset`).

    Iterating it yields plain local values (this process's replica). When the data runs
    out, all ranks check that they ran the same number of steps; a rank-dependent
    dataset raises a clear error instead of leaving ranks waiting for each other.
    """

    def __init__(self, make_steps, group: Group, description: str):
        self._make_steps = make_steps
        self._group = group
        self._description = description
        self.element_spec = None

    def __iter__(self):
        steps = 0
        for local in self._make_steps():
            steps += 1
            yield local
        self._group.agree(f"end of {self._description} after {steps} steps", "end of input")

    def __len__(self):
        raise TypeError("the number of steps of a distributed dataset is not known in advance")


def distribute_dataset(group: Group, dataset, options: InputOptions | None = None) -> DistributedDataset:
    """`experimental_distribute_dataset`: this rank's contiguous slice of every global batch."""

    def steps():
        for element in iterate_elements(dataset):
            yield shard_global_batch(element, group.rank, group.size)

    return DistributedDataset(steps, group, "distributed dataset")


def input_pipelines(group: Group) -> tuple[int, int, int, int]:
    """(pipelines, pipeline id, replicas per pipeline, replica index in pipeline).

    One pipeline per node, as TF runs one per worker; `migrate run` tells each process
    the node count and its node rank through MIGRATE_NNODES / MIGRATE_NODE_RANK.
    """
    nodes = max(1, int(os.environ.get("MIGRATE_NNODES", "1")))
    if group.size % nodes:
        nodes = 1
    per_node = group.size // nodes
    return nodes, group.rank // per_node, per_node, group.rank % per_node


def distribute_datasets_from_function(group: Group, dataset_fn, options: InputOptions | None = None
                                      ) -> DistributedDataset:
    """`distribute_datasets_from_function`: one dataset per pipeline, replicas take batches in turn.

    With one pipeline (a single node), step k gives replica i the pipeline's batch
    k * replicas + i; a replica left without a batch in the last step gets an empty one,
    as in TF.
    """
    pipelines, pipeline_id, per_pipeline, index = input_pipelines(group)
    context = InputContext(pipelines, pipeline_id, group.size)

    def steps():
        iterator = iter(iterate_elements(dataset_fn(context)))
        while True:
            step = []
            for _ in range(per_pipeline):
                try:
                    step.append(next(iterator))
                except StopIteration:
                    break
            if not step:
                return
            yield step[index] if index < len(step) else _empty_like_batch(step[0])

    return DistributedDataset(steps, group, "dataset from function")


def distribute_values_from_function(group: Group, value_fn):
    """`experimental_distribute_values_from_function`: value_fn(ValueContext) for this replica."""
    return value_fn(ValueContext(group.rank, group.size))


class NumpyDataset:
    """What `experimental_make_numpy_dataset` returns: examples sliced along axis 0.

    Supports the `batch(batch_size, drop_remainder=False)` call that usually follows,
    so `strategy.experimental_make_numpy_dataset(x).batch(8)` keeps working.
    """

    def __init__(self, arrays, batch_size: int | None = None, drop_remainder: bool = False):
        self._arrays = arrays
        self._batch_size = batch_size
        self._drop_remainder = drop_remainder
        self._length = _batch_size(arrays)

    def batch(self, batch_size: int, drop_remainder: bool = False) -> "NumpyDataset":
        return NumpyDataset(self._arrays, batch_size, drop_remainder)

    def __iter__(self):
        step = self._batch_size or 1
        for start in range(0, self._length, step):
            stop = min(start + step, self._length)
            if self._drop_remainder and stop - start < step:
                return
            part = slice(start, stop) if self._batch_size else start
            yield pack_as(self._arrays, [np.asarray(leaf)[part] for leaf in flatten(self._arrays)])


def make_numpy_dataset(numpy_input) -> NumpyDataset:
    """`experimental_make_numpy_dataset`: a dataset of the examples in `numpy_input`."""
    return NumpyDataset(numpy_input)
