"""`tf.nn.compute_average_loss` and `tf.nn.scale_regularization_loss` (the codemod maps them here).

TF divides by the *global* batch: `sum(per_example_loss * sample_weight) /
global_batch_size`, where `global_batch_size` defaults to this replica's batch times
`num_replicas_in_sync`. Here each process is a replica, so the default is the local
batch times the number of processes (`migrate.runtime.spmd.group_size()`); a zero
global batch gives 0. Summing gradients across replicas then yields the gradient of
the global mean.
"""

from __future__ import annotations

from . import losses as losses_module
from ._tensors import as_float


def _replicas() -> int:
    from .. import collectives

    return collectives.replicas().size


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    from mindspore import ops

    per_example_loss = as_float(per_example_loss)
    if per_example_loss.ndim == 0:
        raise ValueError("Invalid value passed for `per_example_loss`. Expected a tensor with at least rank 1.")
    if sample_weight is not None:
        weight = as_float(sample_weight)
        per_example_loss, weight = losses_module.squeeze_or_expand_to_same_rank(per_example_loss, weight,
                                                                                 expand_rank_1=False)
        per_example_loss = per_example_loss * weight
    if global_batch_size is None:
        global_batch_size = int(per_example_loss.shape[0]) * _replicas()
    else:
        global_batch_size = int(global_batch_size.asnumpy() if hasattr(global_batch_size, "asnumpy")
                                else global_batch_size)
        if global_batch_size < 0:
            raise ValueError("global_batch_size must be non-negative.")
    total = ops.sum(per_example_loss)
    return losses_module.divide_no_nan(total, float(global_batch_size))


def scale_regularization_loss(regularization_loss):
    """sum(regularization_loss) / num_replicas_in_sync."""
    from mindspore import ops

    return ops.sum(as_float(regularization_loss)) / float(_replicas())
