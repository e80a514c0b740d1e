"""Input distribution: which examples each replica (process) sees, exactly as TF splits them.

`distribute_dataset` keeps TF's `experimental_distribute_dataset` split: every
global batch of n examples is cut into contiguous per-replica chunks of
ceil(n / replicas) examples; the last replicas get fewer, possibly none (verified
against TF 2.21 MirroredStrategy for 2 and 3 replicas, including partial batches).
The split is done here rather than by `mindspore.dataset` sharding, which pads
uneven shards by wrapping around and so changes the examples.

`distribute_datasets_from_function` calls the function once per input pipeline
with an `InputContext`; the replicas of one pipeline take its batches in turn, as
TF's replicas do.

What is a "worker" here: a TF worker task is one process driving all devices of
one machine; under `migrate run` it is a *node* (one `migrate run` invocation, one
TF_CONFIG task), and each of its processes is one replica. So a job launched as
``--nnodes 2 -n 1`` behaves like TF's MultiWorkerMirroredStrategy with two workers
of one device each (two input pipelines, ``num_input_pipelines == 2``), and
``-n 2`` on one node like one worker with two devices (one pipeline), whichever
strategy class the program uses. Checked against TensorFlow 2.21 with two real
workers on loopback (tests/runtime/test_multiworker.py):

* `experimental_distribute_dataset`: every global batch is split across all replicas
  of all workers exactly as on one worker (TF's AUTO/DATA sharding of an in-memory
  dataset), including partial and empty last batches. Sharding by file
  (AutoShardPolicy.FILE, or AUTO over files) and OFF are not reproduced: every rank
  reads every global batch and keeps its slice; a tf.data dataset asking for them
  gets a warning.
* `distribute_datasets_from_function`: each worker's pipeline feeds only its own
  replicas; iteration goes on while any worker has data, and a worker whose pipeline
  ran out gets an empty batch (one small all-reduce per step keeps the workers in
  step, as TF's does).
"""

from __future__ import annotations

import enum
import math
import os
import warnings
from dataclasses import dataclass, field

import numpy as np

from .collectives import Group
from .tfdata import OutOfRangeError
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


class DistributedIterator:
    """Iterator over a `DistributedDataset` (`tf.distribute.DistributedIterator`).

    `next()` / `get_next()` give this replica's input for the next step;
    `get_next_as_optional()` gives a `DistributedOptional` that is empty at the end.
    """

    def __init__(self, steps, element_spec=None):
        self._steps = steps
        self._element_spec = element_spec

    @property
    def element_spec(self):
        """The structure of an element, when the source dataset says (a tf.data dataset); else None."""
        return self._element_spec

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._steps)

    def get_next(self):
        try:
            return next(self._steps)
        except StopIteration:
            raise OutOfRangeError("End of sequence") from None

    def get_next_as_optional(self):
        try:
            return DistributedOptional(next(self._steps))
        except StopIteration:
            return DistributedOptional()


_NOTHING = object()


class DistributedOptional:
    """What `get_next_as_optional` returns: a value, or nothing at the end of the input."""

    def __init__(self, value=_NOTHING):
        self._value = value

    def has_value(self) -> bool:
        return self._value is not _NOTHING

    def get_value(self):
        if self._value is _NOTHING:
            raise ValueError("the optional has no value (the input is exhausted)")
        return self._value


class InputIterator(DistributedIterator):
    """TF1's `InputIterator` (from `make_dataset_iterator`): a `DistributedIterator` with `initialize()`."""

    def __init__(self, steps, element_spec=None):
        super().__init__(steps, element_spec)

    def initialize(self) -> list:
        """TF1: the ops that initialize the iterator; there are none in eager execution."""
        return []


class DistributedDataset:
    """Iterable over this replica's part of each step's input (`tf.distribute.DistributedDataset`).

    Iterating it yields plain local values (this process's replica). When the data runs
    out, all ranks check that they ran the same number of steps; a rank-dependent
    dataset raises a clear error instead of leaving ranks waiting for each other.
    """

    def __init__(self, make_steps, group: Group, description: str, checked_steps: bool = False,
                 element_spec=None):
        self._make_steps = make_steps
        self._group = group
        self._description = description
        self._checked_steps = checked_steps  # the steps keep the ranks in step themselves
        self._element_spec = element_spec

    @property
    def element_spec(self):
        """The structure of an element, when the source dataset says (a tf.data dataset); else None."""
        return self._element_spec

    def _steps(self):
        steps = 0
        for local in self._make_steps():
            steps += 1
            yield local
        if not self._checked_steps:
            self._group.agree(f"end of {self._description} after {steps} steps", "end of input")

    def __iter__(self):
        return DistributedIterator(self._steps(), self._element_spec)

    def __len__(self):
        raise TypeError("the number of steps of a distributed dataset is not known in advance")

    def reduce(self, initial_state, reduce_func):
        """Fold this replica's inputs: ``state = reduce_func(state, element)`` for every step."""
        state = initial_state
        for element in self:
            state = reduce_func(state, element)
        return state


def _warn_unreproduced_sharding(dataset) -> None:
    """Warn when a tf.data dataset asks for a multi-worker auto-shard policy other than DATA/AUTO."""
    if not _is_tf_dataset(dataset):
        return
    try:
        policy = dataset.options().experimental_distribute.auto_shard_policy
    except Exception:  # noqa: BLE001 - options are advisory here
        return
    name = getattr(policy, "name", str(policy))
    if name in ("FILE", "OFF", "HINT"):
        warnings.warn(
            f"migrate.runtime: the dataset's auto_shard_policy {name} is not reproduced across workers: every rank "
            "reads every global batch and keeps its slice (TF's AutoShardPolicy.DATA)", UserWarning, stacklevel=4)


def distribute_dataset(group: Group, dataset, options: InputOptions | None = None) -> DistributedDataset:
    """`experimental_distribute_dataset`: this rank's contiguous slice of every global batch."""
    if input_pipelines(group)[0] > 1:
        _warn_unreproduced_sharding(dataset)

    def steps():
        for element in iterate_elements(dataset):
            yield shard_global_batch(element, group.rank, group.size)

    return DistributedDataset(steps, group, "distributed dataset", element_spec=getattr(dataset, "element_spec", None))


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
    as in TF. With several pipelines (nodes), each feeds its own replicas and the steps
    go on while any pipeline has data; a replica whose pipeline ran out gets an empty
    batch.
    """
    pipelines, pipeline_id, per_pipeline, index = input_pipelines(group)
    context = InputContext(pipelines, pipeline_id, group.size)
    dataset = dataset_fn(context)

    def local_steps():
        """This replica's element of each step of its pipeline, then an `_End`."""
        iterator = iter(iterate_elements(dataset))
        template = None
        while True:
            step = []
            for _ in range(per_pipeline):
                try:
                    step.append(next(iterator))
                except StopIteration:
                    break
            if not step:
                yield _End(template)
                return
            template = step[0]
            yield step[index] if index < len(step) else _empty_like_batch(step[0])

    def steps():
        if pipelines == 1:  # every replica reads the same pipeline: the same number of steps
            for element in local_steps():
                if isinstance(element, _End):
                    return
                yield element
            return
        local, end = local_steps(), None
        while True:
            element = None
            if end is None:
                element = next(local)
                if isinstance(element, _End):
                    end, element = element, None
            if not _any_rank_has_data(group, element is not None):
                return
            if element is None:
                if end.template is None:
                    raise ValueError(
                        f"rank {group.rank}: the input pipeline of worker {pipeline_id} produced no batch at all "
                        "while other workers still have data, so there is no batch structure to make an empty "
                        "batch from; give every worker at least one batch")
                element = _empty_like_batch(end.template)
            yield element

    return DistributedDataset(steps, group, "dataset from function", checked_steps=pipelines > 1,
                              element_spec=getattr(dataset, "element_spec", None))


class _End:
    """End of a pipeline, carrying its last batch (the structure of an empty batch)."""

    def __init__(self, template):
        self.template = template


def _any_rank_has_data(group: Group, has_data: bool) -> bool:
    """One tiny all-reduce: does any rank still have input for this step? (Same answer on every rank.)"""
    import mindspore as ms

    flag = np.array([1.0 if has_data else 0.0], np.float32)
    plan = (("float32", 1),)

    def run():
        total = group.all_reduce_sum(ms.Tensor.from_numpy(flag.copy()))
        return [total], total

    total = group.checked_sum("input step of dataset from function", "input steps", plan, run)[0]
    return float(total.asnumpy().reshape(-1)[0]) > 0


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
