"""Cross-device reduction algorithms (`tf.distribute.CrossDeviceOps` and subclasses).

TF lets a strategy choose NCCL, hierarchical copy or reduction-to-one-device. Here
MindSpore's communication layer picks the algorithm for the device, so all classes
reduce the same way (an all-reduce over every process); their tuning arguments
have no effect.
"""

from __future__ import annotations

from . import collectives, reductions


class CrossDeviceOps:
    """Reduce and broadcast values across replicas (every process)."""

    def reduce(self, reduce_op, per_replica_value, destinations=None, options=None):
        return reductions.reduce_values(collectives.world(), reduce_op, per_replica_value)

    def batch_reduce(self, reduce_op, value_destination_pairs, options=None):
        return [self.reduce(reduce_op, value, destinations) for value, destinations in value_destination_pairs]

    def broadcast(self, tensor, destinations=None):
        return tensor

    # TF's subclass hooks; here they are the operations themselves.
    def reduce_implementation(self, reduce_op, per_replica_value, destinations, options=None):
        return self.reduce(reduce_op, per_replica_value, destinations, options)

    def batch_reduce_implementation(self, reduce_op, value_destination_pairs, options=None):
        return self.batch_reduce(reduce_op, value_destination_pairs, options)

    def broadcast_implementation(self, tensor, destinations):
        return self.broadcast(tensor, destinations)


class ReductionToOneDevice(CrossDeviceOps):
    """TF: reduce to one device, then broadcast. Here: an all-reduce."""

    def __init__(self, reduce_to_device=None, accumulation_fn=None):
        super().__init__()


class NcclAllReduce(CrossDeviceOps):
    """TF: NCCL all-reduce. Here: MindSpore's all-reduce for the device (NCCL on GPU)."""

    def __init__(self, num_packs=1):
        super().__init__()


class HierarchicalCopyAllReduce(CrossDeviceOps):
    """TF: hierarchical copy all-reduce. Here: MindSpore's all-reduce for the device."""

    def __init__(self, num_packs=1):
        super().__init__()
