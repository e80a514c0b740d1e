"""tf.distribute strategies on SPMD processes: one replica per process.

A TF strategy drives N replicas from one process; here N processes each run one
replica, started by `migrate run -n N` (msrun). So:

* ``run(fn, args)`` calls ``fn`` once, on this process's replica, in replica context;
* ``reduce``/``gather`` and ``ReplicaContext.all_reduce`` are collectives over all processes;
* ``num_replicas_in_sync`` is the number of processes;
* ``experimental_distribute_dataset`` yields this process's slice of every global batch;
* ``scope()`` makes the strategy current and, when it closes, broadcasts the parameters
  created inside it from rank 0 so that every replica starts from the same weights.

Constructor arguments that choose devices or communication algorithms have no effect
(the launcher chooses the devices, MindSpore the algorithm); each such argument is named
once in a warning.
"""

from __future__ import annotations

import contextlib
import warnings

from . import collectives, context, data, parameters, reductions
from .collectives import Group, LocalGroup
from .values import local_results, unwrap_local

_warned: set = set()


def warn_no_effect(owner: str, argument: str, why: str) -> None:
    """Warn once per process that `owner`'s `argument` has no effect here, and why."""
    if (owner, argument) in _warned:
        return
    _warned.add((owner, argument))
    warnings.warn(f"migrate.runtime.{owner}: argument '{argument}' has no effect: {why}", UserWarning,
                  stacklevel=4)


class RunOptions:
    """`tf.distribute.RunOptions` for `Strategy.run`; accepted, with no effect (no XLA/TPU dynamic shapes here)."""

    def __init__(self, experimental_enable_dynamic_batch_size=True, experimental_bucketizing_dynamic_shape=False,
                 experimental_xla_options=None):
        self.experimental_enable_dynamic_batch_size = experimental_enable_dynamic_batch_size
        self.experimental_bucketizing_dynamic_shape = experimental_bucketizing_dynamic_shape
        self.experimental_xla_options = experimental_xla_options

    def __repr__(self) -> str:
        return (f"RunOptions(experimental_enable_dynamic_batch_size={self.experimental_enable_dynamic_batch_size}, "
                f"experimental_bucketizing_dynamic_shape={self.experimental_bucketizing_dynamic_shape})")


_DEVICES_WHY = "one replica runs per process and `migrate run -n N --device ...` chooses the devices"
_COMM_WHY = "collectives go through MindSpore's communication layer (HCCL/NCCL/CPU), chosen by device"


class ReplicaContext:
    """`tf.distribute.ReplicaContext`: what code inside `run(fn)` can do with its peers."""

    def __init__(self, strategy, replica_id_in_sync_group: int, inside_run: bool = True):
        self._strategy = strategy
        self._replica_id_in_sync_group = replica_id_in_sync_group
        self._inside_run = inside_run

    @property
    def strategy(self):
        return self._strategy

    @property
    def num_replicas_in_sync(self) -> int:
        return self._strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self) -> int:
        """This process's replica id (a Python int; TF returns a scalar Tensor)."""
        return self._replica_id_in_sync_group

    @property
    def devices(self) -> tuple:
        return ()

    def all_reduce(self, reduce_op, value, options=None):
        """Reduce `value` (a nest) across replicas; every replica gets the result."""
        return reductions.reduce_values(self._strategy._group, reduce_op, value, what="all_reduce")

    def all_gather(self, value, axis, options=None):
        """Concatenate every replica's `value` along `axis`, in replica order."""
        return reductions.gather_values(self._strategy._group, value, axis)

    def merge_call(self, merge_fn, args=(), kwargs=None):
        """Call ``merge_fn(strategy, *args, **kwargs)`` in cross-replica context.

        With one replica per process, the values passed are this replica's; use
        `strategy.reduce` inside `merge_fn` to combine them across replicas.
        """
        with context.enter(self._strategy, None):
            return merge_fn(self._strategy, *args, **(kwargs or {}))

    def __enter__(self):
        self._entered = context.enter(self._strategy, self)
        return self._entered.__enter__()

    def __exit__(self, *exc):
        return self._entered.__exit__(*exc)


class StrategyExtended:
    """`tf.distribute.StrategyExtended`: the lower-level strategy API."""

    def __init__(self, container_strategy):
        self._container_strategy_ref = container_strategy

    def _container_strategy(self):
        return self._container_strategy_ref

    def call_for_each_replica(self, fn, args=(), kwargs=None):
        """Run `fn` on this process's replica (same as `Strategy.run`)."""
        return self._container_strategy_ref.run(fn, args=args, kwargs=kwargs)

    def reduce_to(self, reduce_op, value, destinations, options=None):
        """Reduce across replicas; `destinations` has no effect (every rank gets the result)."""
        return self._container_strategy_ref.reduce(reduce_op, value, axis=None)

    def batch_reduce_to(self, reduce_op, value_destination_pairs, options=None):
        return [self.reduce_to(reduce_op, value, dest) for value, dest in value_destination_pairs]

    def broadcast_to(self, tensor, destinations):
        return tensor

    def update(self, var, fn, args=(), kwargs=None, group=True):
        return fn(var, *args, **(kwargs or {}))

    def value_container(self, value):
        return value

    def variable_created_in_scope(self, v) -> bool:
        return False

    @contextlib.contextmanager
    def colocate_vars_with(self, colocate_with_variable):
        yield

    @property
    def experimental_require_static_shapes(self) -> bool:
        return False

    @property
    def worker_devices(self) -> tuple:
        return (f"/replica:0/task:0/device:{self._container_strategy_ref._group.rank}",)

    parameter_devices = worker_devices

    @property
    def should_checkpoint(self) -> bool:
        return True

    @property
    def should_save_summary(self) -> bool:
        return True


class Strategy:
    """`tf.distribute.Strategy` base: a distribution policy over this job's processes."""

    _group_kind = "world"

    def __init__(self, extended: StrategyExtended | None = None):
        self._extended = extended or StrategyExtended(self)
        self._cluster_resolver = None
        self._default_replica_context = ReplicaContext(self, 0, inside_run=False)
        if self._group_kind == "world":
            from . import orders, spmd

            spmd.initialize()
            orders.align_global_generators()

    @property
    def _group(self) -> Group:
        return collectives.world() if self._group_kind == "world" else LocalGroup()

    @property
    def extended(self) -> StrategyExtended:
        return self._extended

    @property
    def num_replicas_in_sync(self) -> int:
        """Number of replicas gradients are aggregated over: the number of processes."""
        return self._group.size

    @property
    def cluster_resolver(self):
        return self._cluster_resolver

    @contextlib.contextmanager
    def scope(self):
        """Make this strategy current (cross-replica context).

        Parameters created inside are broadcast from rank 0 when the scope closes, so
        every replica starts from the same values, like TF's mirrored variables.
        """
        recorded = parameters.start_recording() if not isinstance(self._group, LocalGroup) else None
        try:
            with context.enter(self, None):
                yield self
        finally:
            if recorded is not None:
                created = parameters.stop_recording(recorded)
                import sys

                if sys.exc_info()[0] is None:
                    parameters.broadcast_parameters(self._group, created, root=0)

    def run(self, fn, args=(), kwargs=None, options=None):
        """Call `fn` on this process's replica, in replica context; returns its local result.

        Distributed values in `args`/`kwargs` are replaced by this replica's component.
        `options` (tf.distribute.RunOptions) has no effect.
        """
        replica_context = ReplicaContext(self, self._group.rank)
        args = unwrap_local(tuple(args))
        kwargs = unwrap_local(dict(kwargs or {}))
        with context.enter(self, replica_context):
            return fn(*args, **kwargs)

    def experimental_run_v2(self, fn, args=(), kwargs=None, options=None):
        """Deprecated TF alias of `run`."""
        return self.run(fn, args=args, kwargs=kwargs, options=options)

    def reduce(self, reduce_op, value, axis):
        """Reduce `value` across replicas; with `axis`, also over that (batch) dimension.

        SUM or MEAN (enum or name in any case). `axis=None` reduces across replicas
        elementwise; `axis=0` also reduces the batch, and MEAN then divides by the true
        global number of examples (a partial last batch or an empty local batch count
        correctly). Difference from TF: a value that is not a PerReplica is treated as
        this replica's value (TF rejects SUM of a non-distributed value).
        """
        context.require_cross_replica("strategy.reduce")
        return reductions.reduce_values(self._group, reduce_op, value, axis)

    def gather(self, value, axis):
        """Concatenate every replica's `value` along `axis`, in replica order."""
        context.require_cross_replica("strategy.gather")
        return reductions.gather_values(self._group, value, axis)

    def experimental_local_results(self, value) -> tuple:
        """This process's components of `value` (a 1-tuple: one replica per process)."""
        return local_results(value)

    def experimental_distribute_dataset(self, dataset, options=None):
        """Iterate this replica's contiguous slice of every global batch, as TF splits it."""
        return data.distribute_dataset(self._group, dataset, options)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        """Call `dataset_fn(InputContext)` per input pipeline; replicas take its batches in turn."""
        return data.distribute_datasets_from_function(self._group, dataset_fn, options)

    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def experimental_distribute_values_from_function(self, value_fn):
        """`value_fn(ValueContext)` evaluated for this process's replica."""
        return data.distribute_values_from_function(self._group, value_fn)

    def experimental_make_numpy_dataset(self, numpy_input, session=None):
        """A dataset of the examples in `numpy_input` (sliced along axis 0); `session` is ignored."""
        return data.make_numpy_dataset(numpy_input)

    # --- TF1 (tf.compat.v1.distribute.Strategy) methods --------------------------------------

    def experimental_run(self, fn, input_iterator=None):
        """TF1: run `fn` on this replica with the next input of `input_iterator` (if given)."""
        if input_iterator is None:
            return self.run(fn)
        return self.run(fn, args=(next(input_iterator),))

    def make_dataset_iterator(self, dataset):
        """TF1: an iterator over this replica's part of `dataset` (`initialize()` is a no-op)."""
        return data.InputIterator(iter(self.experimental_distribute_dataset(dataset)))

    def make_input_fn_iterator(self, input_fn, replication_mode=data.InputReplicationMode.PER_WORKER):
        """TF1: an iterator over `input_fn(InputContext)`'s dataset, split as
        `distribute_datasets_from_function` splits it."""
        if replication_mode not in (data.InputReplicationMode.PER_WORKER, "PER_WORKER"):
            raise ValueError(f"make_input_fn_iterator supports InputReplicationMode.PER_WORKER only, got "
                             f"{replication_mode!r}")
        return data.InputIterator(iter(self.distribute_datasets_from_function(input_fn)))

    def unwrap(self, value) -> tuple:
        """TF1: this process's components of `value` (same as `experimental_local_results`)."""
        return self.experimental_local_results(value)

    def group(self, value, name=None):
        """TF1: group the ops of `value`; eager execution has nothing to group (like `tf.group`, None)."""
        return None

    def configure(self, session_config=None, cluster_spec=None, task_type=None, task_id=None):
        """TF1: configure for a cluster; the launcher configures the cluster here, so this does nothing."""
        if cluster_spec is not None or task_type is not None or task_id is not None:
            warn_no_effect(type(self).__name__, "configure(cluster_spec/task_type/task_id)",
                           "`migrate run` forms the cluster (--nnodes/--node-rank or TF_CONFIG)")

    @contextlib.contextmanager
    def colocate_vars_with(self, colocate_with_variable):
        """TF1: place new variables with another; every replica holds every variable here."""
        yield

    def experimental_assign_to_logical_device(self, tensor, logical_device_id):
        return tensor

    def experimental_split_to_logical_devices(self, tensor, partition_dimensions):
        return tensor

    def experimental_replicate_to_logical_devices(self, tensor):
        return tensor

    def update_config_proto(self, config_proto):
        return config_proto

    def __repr__(self) -> str:
        return f"<migrate.runtime.{type(self).__name__} replicas={self.num_replicas_in_sync}>"


class _DefaultStrategy(Strategy):
    """What `get_strategy()` returns outside any scope: one replica, no communication."""

    _group_kind = "local"


_default = None


def default_strategy() -> Strategy:
    global _default
    if _default is None:
        _default = _DefaultStrategy()
    return _default


class OneDeviceStrategy(Strategy):
    """One replica; collectives are the identity even when several processes run."""

    _group_kind = "local"

    def __init__(self, device=None):
        super().__init__()
        if device is not None:
            warn_no_effect("OneDeviceStrategy", "device", _DEVICES_WHY)


class MirroredStrategy(Strategy):
    """Synchronous data parallelism over all processes of the job (one device each)."""

    def __init__(self, devices=None, cross_device_ops=None):
        super().__init__()
        if devices is not None:
            warn_no_effect(type(self).__name__, "devices", _DEVICES_WHY)
        if cross_device_ops is not None:
            warn_no_effect(type(self).__name__, "cross_device_ops", _COMM_WHY)


class MultiWorkerMirroredStrategy(Strategy):
    """Synchronous data parallelism across nodes: same as MirroredStrategy over all processes.

    `migrate run --nnodes/--node-rank` (or a TF_CONFIG it translates) forms the cluster;
    `cluster_resolver` is kept for `strategy.cluster_resolver` (task type/id) only.
    """

    def __init__(self, communication_options=None, cluster_resolver=None, communication=None):
        super().__init__()
        owner = type(self).__name__
        if communication_options is not None:
            warn_no_effect(owner, "communication_options", _COMM_WHY)
        if communication is not None:
            warn_no_effect(owner, "communication", _COMM_WHY)
        if cluster_resolver is None:
            from .cluster import TFConfigClusterResolver

            cluster_resolver = TFConfigClusterResolver()  # as TF: empty without a TF_CONFIG
        else:
            warn_no_effect(owner, "cluster_resolver",
                           "the launcher forms the cluster; the resolver only answers task_type/task_id")
        self._cluster_resolver = cluster_resolver


CollectiveAllReduceStrategy = MultiWorkerMirroredStrategy


class CentralStorageStrategy(Strategy):
    """Runs as synchronous data parallelism: variables live on every device, not one central one."""

    def __init__(self, compute_devices=None, parameter_device=None):
        super().__init__()
        if compute_devices is not None:
            warn_no_effect("CentralStorageStrategy", "compute_devices", _DEVICES_WHY)
        if parameter_device is not None:
            warn_no_effect("CentralStorageStrategy", "parameter_device",
                           "every replica keeps a full copy of the parameters (mirrored)")


class ParameterServerStrategy(Strategy):
    """Limited: runs as *synchronous* data parallelism over the worker processes.

    There are no parameter-server processes, no asynchronous updates and no
    `ClusterCoordinator`; `ps` and `chief` tasks of a TF_CONFIG are not launched.
    Training converges like MirroredStrategy, not like asynchronous PS training.
    """

    def __init__(self, cluster_resolver=None, variable_partitioner=None):
        super().__init__()
        warn_no_effect("ParameterServerStrategy", "(strategy)",
                       "runs as synchronous data parallelism: no parameter servers, no asynchronous "
                       "updates, no ClusterCoordinator")
        if variable_partitioner is not None:
            warn_no_effect("ParameterServerStrategy", "variable_partitioner",
                           "variables are not partitioned; every replica holds a full copy")
        self._cluster_resolver = cluster_resolver


class TPUStrategy(Strategy):
    """Synchronous data parallelism on whatever devices the launcher chose (Ascend/GPU/CPU)."""

    def __init__(self, tpu_cluster_resolver=None, experimental_device_assignment=None,
                 experimental_spmd_xla_partitioning=False, device_assignment=None, steps_per_run=None):
        super().__init__()
        for name, value in (("tpu_cluster_resolver", tpu_cluster_resolver),
                            ("experimental_device_assignment", experimental_device_assignment),
                            ("device_assignment", device_assignment),
                            ("steps_per_run", steps_per_run)):
            if value is not None:
                warn_no_effect("TPUStrategy", name, "there is no TPU; " + _DEVICES_WHY)
        if experimental_spmd_xla_partitioning:
            warn_no_effect("TPUStrategy", "experimental_spmd_xla_partitioning", "there is no XLA SPMD here")
        self._cluster_resolver = tpu_cluster_resolver
