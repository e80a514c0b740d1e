"""Keras 3's serialized form of an initializer, regularizer or constraint, and back.

`serialize(obj)` gives `{"module": ..., "class_name": ..., "config": obj.get_config(),
"registered_name": ...}` as Keras does: a built-in's module is Keras's public one
(`keras.initializers`) and its registered name None; a class of the program's own gives its
module and its registered name (`Package>Name`, see `mk.utils.register_keras_serializable`).
`deserialize` takes that dict, Keras 2's `{"class_name", "config"}`, or a class name, and builds
the object with `from_config`, looking the class up in the program's `custom_objects`, the
registered classes, then the built-ins.
"""

from __future__ import annotations


def serialize(obj, module: str, builtins: dict):
    if obj is None:
        return None
    cls = type(obj)
    if builtins.get(cls.__name__) is cls:
        return {"module": module, "class_name": cls.__name__, "config": obj.get_config(), "registered_name": None}
    from .utils import get_registered_name

    return {"module": cls.__module__, "class_name": cls.__name__, "config": obj.get_config(),
            "registered_name": get_registered_name(cls)}


def deserialize(config, builtins: dict, what: str, custom_objects=None):
    from .utils import get_registered_object

    if config is None:
        return None
    if isinstance(config, str):
        name, options = config, {}
    elif isinstance(config, dict) and "class_name" in config:
        name, options = config.get("registered_name") or config["class_name"], config.get("config") or {}
    else:
        raise ValueError(f"Could not interpret serialized {what}: {config!r}")
    cls = (custom_objects or {}).get(name) or get_registered_object(name, custom_objects) or builtins.get(name)
    if cls is None and isinstance(config, dict):
        cls = builtins.get(config["class_name"])
    if cls is None:
        raise ValueError(f"Could not locate class '{name}'. Make sure custom classes are decorated with "
                         f"`@keras.saving.register_keras_serializable()` or passed in `custom_objects` ({what}).")
    return cls.from_config(options) if hasattr(cls, "from_config") else cls(**options)
