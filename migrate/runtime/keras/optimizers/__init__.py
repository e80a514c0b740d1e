"""`tf.keras.optimizers`: SGD, Adam, AdamW, RMSprop, Nadam, Adagrad, Adadelta, Adamax with Keras 3's formulas, LossScaleOptimizer, schedules.

Optimizers bind lazily to MindSpore Parameters on the first `apply_gradients` and sum
gradients across processes in a launched job (see `base`).
"""

from . import schedules
from .adam import Adam, AdamW
from .adaptive import Adadelta, Adagrad, Adamax
from .base import Optimizer
from .loss_scale import LossScaleOptimizer
from .nadam import Nadam
from .rmsprop import RMSprop
from .sgd import SGD

_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "nadam": Nadam, "adagrad": Adagrad,
            "adadelta": Adadelta, "adamax": Adamax}


def get(identifier):
    """An optimizer from a name ("sgd", "adam", "adamw", "rmsprop", any case) or an instance."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str):
        try:
            return _BY_NAME[identifier.lower()]()
        except KeyError:
            raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}") from None
    if isinstance(identifier, dict):
        return _BY_NAME[identifier["class_name"].lower()](**identifier.get("config", {}))
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")


__all__ = ["Optimizer", "LossScaleOptimizer", "SGD", "Adam", "AdamW", "RMSprop", "Nadam", "Adagrad", "Adadelta", "Adamax",
           "schedules", "get"]
