"""SPMD helpers: tf.distribute semantics as plain functions over all processes.

These are what `migrate convert` emits where a strategy method cannot become plain
MindSpore code; none of them needs a strategy object. Each process is one replica;
with no launcher the program is a single replica and every collective is the
identity, so ``python train.py`` just works.
"""

from __future__ import annotations

from . import collectives, context, data, orders, parameters, reductions
from .fusion import AUTO, Packed
from .reduce_op import ReduceOp, resolve_reduce_op

__all__ = [
    "init", "initialize", "rank", "group_size", "reduce", "all_reduce", "gather", "distribute_dataset",
    "distribute_datasets_from_function", "distribute_values_from_function", "aggregate_gradients",
    "broadcast_parameters", "cross_replica_sum", "get_tpu_context",
]

_applied_context: dict | None = None


def initialize(**context) -> None:
    """Join the job's processes (idempotent) and configure data parallelism.

    Under a launcher (msrun sets MS_ROLE, MS_SCHED_HOST, MS_WORKER_NUM, ...) this calls
    ``mindspore.communication.init()`` once, after binding the process to its device;
    without one, the program runs as a single replica (``init()`` would raise there).
    With more than one process it then applies
    ``ms.set_auto_parallel_context(parallel_mode=DATA_PARALLEL, **context)``;
    ``gradients_mean`` defaults to False because TF sums replica gradients.
    """
    global _applied_context
    group = collectives.world()
    if group.size <= 1:
        return
    wanted = {"gradients_mean": False, **context}
    if _applied_context is not None and all(_applied_context.get(k) == v for k, v in wanted.items()):
        return
    import mindspore as ms

    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, **wanted)
    _applied_context = {**(_applied_context or {}), **wanted}


def rank() -> int:
    """This process's replica id: 0 .. group_size() - 1 (0 without a launcher)."""
    return collectives.world().rank


def group_size() -> int:
    """Number of replicas (processes) in sync (1 without a launcher)."""
    return collectives.world().size


def reduce(op, value, axis=None):
    """`strategy.reduce(op, value, axis)` across all processes.

    `op`: ReduceOp.SUM/MEAN, their names in any case, or ``mindspore.ops.ReduceOp.SUM``.
    `value`: a Tensor, numpy array, number, tf.Tensor or a nest of them; results keep
    the input's kind. ``axis=None`` reduces elementwise across replicas; an integer axis
    also reduces that dimension, and MEAN divides by the global example count.
    """
    context.require_cross_replica("reduce")
    return reductions.reduce_values(collectives.world(), op, value, axis)


def all_reduce(op, value):
    """`ReplicaContext.all_reduce(op, value)`: the same nest, reduced elementwise across replicas."""
    return reductions.reduce_values(collectives.world(), op, value, what="all_reduce")


def gather(value, axis):
    """`strategy.gather(value, axis)`: every replica's value concatenated along `axis`, rank order."""
    context.require_cross_replica("gather")
    return reductions.gather_values(collectives.world(), value, axis)


def cross_replica_sum(x, group_assignment=None, name=None):
    """`tf.compat.v1.tpu.cross_replica_sum(x, group_assignment)`: the elementwise sum over the
    replicas (processes); differentiable, as TF's is (the gradient is summed alike). A
    `group_assignment` of one group holding every replica is the same; sums within smaller groups
    are refused, since MindSpore's CPU collectives span the world group only."""
    group = collectives.replicas()
    if group_assignment is not None and [sorted(g) for g in group_assignment] != [list(range(group.size))]:
        raise NotImplementedError(f"cross_replica_sum over groups {group_assignment} of {group.size} replicas: sums "
                                  "within groups of replicas are not provided; sum over all of them (group_assignment"
                                  "=None) and scale by the group's share")
    return group.all_reduce_sum(x) if group.size > 1 else x


class _TPUContext:
    """What `tpu_function.get_tpu_context()` answers inside a replicated TPU computation: the
    number of replicas (`number_of_shards`), here the processes of the job."""

    @property
    def number_of_shards(self) -> int:
        return collectives.replicas().size

    @property
    def number_of_partitions(self) -> int:
        return 1


def get_tpu_context() -> _TPUContext:
    return _TPUContext()


def distribute_dataset(dataset, options=None):
    """`experimental_distribute_dataset`: iterate this rank's slice of every global batch."""
    return data.distribute_dataset(collectives.world(), dataset, options)


def distribute_datasets_from_function(dataset_fn, options=None):
    """`distribute_datasets_from_function`: per-pipeline datasets, batches taken in turn."""
    return data.distribute_datasets_from_function(collectives.world(), dataset_fn, options)


def distribute_values_from_function(value_fn):
    """`experimental_distribute_values_from_function`: value_fn(ValueContext) for this rank."""
    return data.distribute_values_from_function(collectives.world(), value_fn)


def aggregate_gradients(grads, op="sum", bucket_bytes=AUTO):
    """Reduce a tuple of gradient Tensors across replicas, fused into buckets.

    SUM by default, as TF's optimizers sum replica gradients (the loss is divided by
    the global batch); ``op="mean"`` averages. Tensors are packed into flat buckets of
    at most `bucket_bytes` (like Horovod's fusion buffer; "auto": 25 MB) so that a model
    with many parameters needs few collectives; 0 gives one collective per tensor. Each
    bucket's pack, sum and unpack is one compiled graph (see `fusion`). `None` entries
    stay None. Returns a tuple in the input order.

    Every rank must pass gradients of the same dtypes and shapes (it does when every
    rank trains the same model). That is checked like every other collective: the first
    steps agree before summing; once the step repeats, the check rides in-band with the
    sum itself (see `collectives`), so a steady training loop pays for the sums and one
    look at the first summed element.
    """
    reduce_op = resolve_reduce_op(op)
    group = collectives.world()
    grads = tuple(grads)
    if group.size == 1:
        return grads
    present = [g for g in grads if g is not None]
    layout = tuple(None if g is None else (g.dtype, tuple(g.shape)) for g in grads)
    description = _gradient_descriptions.get((reduce_op, bucket_bytes, layout))
    if description is None:
        description = "aggregate_gradients(%s, bucket_bytes=%s) %s" % (
            reduce_op.name, bucket_bytes,
            " ".join("None" if g is None else f"{str(g[0]).lower()}{list(g[1])}" for g in layout))
        if len(_gradient_descriptions) > 256:
            _gradient_descriptions.clear()
        _gradient_descriptions[(reduce_op, bucket_bytes, layout)] = description
    packed = Packed(present, bucket_bytes, group.host_packing)
    scale = 1.0 / group.size if reduce_op is ReduceOp.MEAN else None
    summed = iter(group.checked_sum(description, "aggregate_gradients", packed.plan,
                                    lambda: packed.run_graph(group, scale)))
    return tuple(None if g is None else next(summed) for g in grads)


_gradient_descriptions: dict = {}


def broadcast_parameters(params, root=0):
    """Make every rank's parameters equal rank `root`'s (a Cell, or an iterable of Parameters)."""
    parameters.broadcast_parameters(collectives.world(), params, root)


def launched() -> bool:
    """True when this process was started by a launcher (msrun / `migrate run`, mpirun, a rank table)."""
    return collectives.launched_by_launcher()


def init() -> None:
    """``mindspore.communication.init()`` when a launcher started this process; nothing otherwise.

    What `migrate convert` emits where a strategy is created, before
    ``ms.set_auto_parallel_context(parallel_mode=DATA_PARALLEL, ...)``. Under msrun
    (`migrate run -n N`), mpirun or an Ascend rank table it binds the process to its device
    and calls MindSpore's ``init()``, once. Started plainly (``python train.py``), where
    MindSpore's ``init()`` raises, the program is one process and one replica, as the TF
    original is on one device, and every collective is the identity. In a launched run it
    also gives numpy's and Python's global generators one seed in every process, where the
    program has not touched them (:func:`orders.align_global_generators`).
    """
    collectives.world()
    orders.align_global_generators()
    if not collectives.launched_by_launcher():
        _one_process_broadcasts()


def _one_process_broadcasts() -> None:
    """Started without a launcher, ``parameter_broadcast=True`` (which the conversion sets beside
    DATA_PARALLEL) makes GRAPH_MODE broadcast a compiled cell's parameters over a communication
    group MindSpore never initialized, and the compile fails (on CPU: "Broadcast only support
    mccl_world_group"). With one process a broadcast from rank 0 is the identity: this skips it.
    The hook is MindSpore's internal ``mindspore.graph.api._parameter_broadcast``; where a
    MindSpore version has none, nothing is changed."""
    import importlib

    try:
        api = importlib.import_module("mindspore.graph.api")
    except ImportError:
        return
    broadcast = getattr(api, "_parameter_broadcast", None)
    if broadcast is None or getattr(broadcast, "_migrate_one_process", False):
        return

    def skipped(obj):
        if collectives.launched_by_launcher():
            return broadcast(obj)
        return None

    skipped._migrate_one_process = True
    api._parameter_broadcast = skipped
