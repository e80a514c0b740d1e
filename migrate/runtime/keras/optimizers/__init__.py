"""`tf.keras.optimizers`: SGD, Adam, AdamW, RMSprop, Nadam, Adagrad, Adadelta, Adamax, Ftrl with Keras 3's formulas, LossScaleOptimizer, schedules.

Optimizers bind lazily to MindSpore Parameters on the first `apply_gradients` and sum
gradients across processes in a launched job (see `base`).
"""

from . import schedules
from .adam import Adam, AdamW
from .adaptive import Adadelta, Adagrad, Adamax
from .base import Optimizer
from .ftrl import Ftrl
from .loss_scale import Keras2LossScaleOptimizer, LossScaleOptimizer
from .nadam import Nadam
from .rmsprop import RMSprop
from .sgd import SGD

_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "nadam": Nadam, "adagrad": Adagrad,
            "adadelta": Adadelta, "adamax": Adamax, "ftrl": Ftrl}
_BUILTINS = {cls.__name__: cls for cls in (*_BY_NAME.values(), LossScaleOptimizer, Keras2LossScaleOptimizer)}


def serialize(optimizer) -> dict:
    """Keras 3's ``{"module", "class_name", "config", "registered_name"}`` of an optimizer."""
    from .. import serialization

    return serialization.serialize(optimizer, "keras.optimizers", _BUILTINS)


def deserialize(config, custom_objects=None, **kwargs):
    """The optimizer a config describes (``serialize``'s, or Keras's: a class name in any case)."""
    from .. import serialization

    if isinstance(config, dict) and isinstance(config.get("class_name"), str) \
            and config["class_name"].lower() in _BY_NAME and not config.get("registered_name"):
        config = {**config, "class_name": _BY_NAME[config["class_name"].lower()].__name__}
    return serialization.deserialize(config, _BUILTINS, "optimizer", custom_objects)


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
        return deserialize(identifier)
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")


__all__ = ["Optimizer", "LossScaleOptimizer", "SGD", "Adam", "AdamW", "RMSprop", "Nadam", "Adagrad", "Adadelta", "Adamax",
           "Ftrl", "schedules", "get", "serialize", "deserialize"]
