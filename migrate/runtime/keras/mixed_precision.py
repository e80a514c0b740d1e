"""`keras.mixed_precision`: dtype policies (`mixed_float16`, `mixed_bfloat16`) and dynamic loss scaling."""

from .dtype_policies import DTypePolicy, Policy, dtype_policy, global_policy, set_dtype_policy, set_global_policy
from .optimizers.loss_scale import LossScaleOptimizer

__all__ = ["LossScaleOptimizer", "DTypePolicy", "Policy", "set_global_policy", "global_policy", "set_dtype_policy",
           "dtype_policy"]
