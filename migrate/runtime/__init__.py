"""tf.distribute semantics on MindSpore: one replica per process, collectives over all processes.

Converted programs can say ``import migrate.runtime as tfd`` and keep calling
``tfd.MirroredStrategy()``, ``strategy.run``, ``strategy.reduce`` ... ; the codemod
also emits the SPMD helpers (``reduce``, ``all_reduce``, ``gather``,
``distribute_dataset``, ``aggregate_gradients``, ``broadcast_parameters``, ...) which
need no strategy object. Start the program with ``migrate run -n N train.py``;
started plainly (``python train.py``) it runs as a single replica.

Importing this package does not import MindSpore, except in msrun's scheduler
process, which only has to serve the cluster: it does so here and exits.
"""

import os as _os

from . import cluster_resolver, coordinator, experimental
from .cluster import ClusterSpec, TFConfigClusterResolver
from .collectives import CollectiveError, RankMismatchError
from .context import (experimental_set_strategy, get_cross_replica_context, get_replica_context, get_strategy,
                      has_strategy, in_cross_replica_context)
from .cross_device_ops import CrossDeviceOps, HierarchicalCopyAllReduce, NcclAllReduce, ReductionToOneDevice
from .data import (DistributedDataset, DistributedIterator, InputContext, InputIterator, InputOptions,
                   InputReplicationMode, ValueContext)
from .reduce_op import ReduceOp
from .spmd import (aggregate_gradients, all_reduce, broadcast_parameters, distribute_dataset,
                   distribute_datasets_from_function, distribute_values_from_function, gather, group_size,
                   initialize, rank, reduce)
from .server import Server
from .strategies import (CentralStorageStrategy, CollectiveAllReduceStrategy, MirroredStrategy,
                         MultiWorkerMirroredStrategy, OneDeviceStrategy, ParameterServerStrategy, ReplicaContext,
                         RunOptions, Strategy, StrategyExtended, TPUStrategy)
from .values import DistributedValues, Mirrored, PerReplica

__all__ = [
    # strategies
    "Strategy", "StrategyExtended", "MirroredStrategy", "OneDeviceStrategy", "MultiWorkerMirroredStrategy",
    "CollectiveAllReduceStrategy", "CentralStorageStrategy", "ParameterServerStrategy", "TPUStrategy",
    # contexts
    "ReduceOp", "ReplicaContext", "get_strategy", "has_strategy", "in_cross_replica_context",
    "get_replica_context", "get_cross_replica_context", "experimental_set_strategy", "RunOptions",
    # input and values
    "InputContext", "InputOptions", "InputReplicationMode", "ValueContext", "DistributedDataset",
    "DistributedIterator", "InputIterator", "DistributedValues", "PerReplica", "Mirrored",
    # cross-device ops, clusters, coordination
    "CrossDeviceOps", "NcclAllReduce", "HierarchicalCopyAllReduce", "ReductionToOneDevice",
    "TFConfigClusterResolver", "ClusterSpec", "Server", "experimental", "cluster_resolver", "coordinator",
    # SPMD helpers
    "initialize", "rank", "group_size", "reduce", "all_reduce", "gather", "distribute_dataset",
    "distribute_datasets_from_function", "distribute_values_from_function", "aggregate_gradients",
    "broadcast_parameters",
    # errors
    "CollectiveError", "RankMismatchError",
]

if _os.environ.get("MS_ROLE") == "MS_SCHED":
    # msrun runs the program in its scheduler process too; joining the cluster there serves
    # it until the workers finish and then exits, so the program body never runs twice.
    initialize()
