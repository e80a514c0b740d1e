"""`keras.mixed_precision`: dtype policies (`mixed_float16`, `mixed_bfloat16`) and dynamic loss scaling."""

import types as _types

from .dtype_policies import (DTypePolicy, ExperimentalPolicy, Policy, dtype_policy, global_policy, set_dtype_policy,
                             set_global_policy)
from .optimizers.loss_scale import Keras2LossScaleOptimizer, LossScaleOptimizer

# TF 2.1-2.3's `keras.mixed_precision.experimental`: a Policy with its loss scale, set_policy, and Keras 2's
# LossScaleOptimizer(optimizer, loss_scale).
experimental = _types.SimpleNamespace(Policy=ExperimentalPolicy, set_policy=set_global_policy,
                                      global_policy=global_policy, LossScaleOptimizer=Keras2LossScaleOptimizer)

__all__ = ["LossScaleOptimizer", "DTypePolicy", "Policy", "set_global_policy", "global_policy", "set_dtype_policy",
           "dtype_policy", "experimental"]
