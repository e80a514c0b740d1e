"""Keras 3's serialized form of Keras objects, and back.

`serialize(obj)` gives `{"module": ..., "class_name": ..., "config": obj.get_config(),
"registered_name": ...}` as Keras does: a built-in's module is Keras's public one
(`keras.initializers`) and its registered name None; a class of the program's own gives its
module and its registered name (`Package>Name`, see `mk.utils.register_keras_serializable`).
`deserialize` takes that dict, Keras 2's `{"class_name", "config"}`, or a class name, and builds
the object with `from_config`, looking the class up in the program's `custom_objects`, the
registered classes, then the built-ins. Below them, the same for every Keras object, with its
configuration made JSON (`serialize_object`/`deserialize_object`, what `model.save`, `load_model`
and `clone_model` use).
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import functools
import importlib
import inspect
import marshal
import sys
import types

import numpy as np


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


# --- every Keras object: configs as JSON, and back (what `model.save` and `load_model` use) ------

@functools.lru_cache(maxsize=None)
def _kinds():
    """(Keras's public module of a kind, its base class, its built-in classes by name), in the order
    tried (a schedule is not an optimizer, an optimizer is not a layer); found once."""
    from . import constraints, initializers, losses, metrics, optimizers, regularizers
    from . import layers as layers_module
    from .layers.base import Layer
    from .models import Functional, Model, Sequential
    from .optimizers import schedules

    def public(module, base):
        return {name: value for name, value in vars(module).items()
                if isinstance(value, type) and issubclass(value, base)}

    return [
        ("keras.layers", Layer, {**public(layers_module, Layer), "Model": Model, "Functional": Functional,
                                 "Sequential": Sequential}),
        ("keras.initializers", initializers.Initializer, public(initializers, initializers.Initializer)),
        ("keras.regularizers", regularizers.Regularizer, public(regularizers, regularizers.Regularizer)),
        ("keras.constraints", constraints.Constraint, public(constraints, constraints.Constraint)),
        ("keras.optimizers.schedules", schedules.LearningRateSchedule,
         public(schedules, schedules.LearningRateSchedule)),
        ("keras.optimizers", optimizers.Optimizer, public(optimizers, optimizers.Optimizer)),
        ("keras.losses", losses.Loss, public(losses, losses.Loss)),
        ("keras.metrics", metrics.Metric, public(metrics, metrics.Metric)),
    ]


class AutoConfig:
    """Keeps the arguments an object was constructed with (the outermost constructor's), so that
    a class with no `get_config` of its own, a program's custom layer among them, still has one:
    Keras 3's auto-config."""

    def __new__(cls, *args, **kwargs):
        parent = super().__new__
        this = parent(cls) if parent is object.__new__ else parent(cls, *args, **kwargs)
        this.__dict__["_init_args"] = (args, kwargs)
        return this


def auto_config(obj) -> dict:
    """The constructor arguments `obj` was made with, by name (`**kwargs` spread); {} when unknown."""
    args, kwargs = obj.__dict__.get("_init_args", ((), {}))
    signature = inspect.signature(type(obj).__init__)
    try:
        bound = signature.bind(None, *args, **kwargs)
    except TypeError:
        return {}
    config = {}
    for name, value in list(bound.arguments.items())[1:]:
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            config.update(value)
        elif kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.POSITIONAL_ONLY):
            if kind is inspect.Parameter.POSITIONAL_ONLY or value:
                raise TypeError(f"{type(obj).__name__} was made with positional-only or variadic positional "
                                "arguments, which a config cannot pass back by name: give the class a "
                                "`get_config()` (and `from_config()`)")
        else:
            config[name] = value
    return config


def _own_get_config(obj) -> bool:
    """Whether a class of the program's own defines the `get_config` in use (Keras 3 then leaves the
    constructor's arguments to it; this package's classes add theirs to the captured ones)."""
    for cls in type(obj).__mro__:
        if "get_config" in vars(cls):
            return not cls.__module__.startswith("migrate.runtime")
    return False


def with_auto_config(obj, base: dict) -> dict:
    """`base` (the attributes every object of the kind has: name, dtype, ...) over the constructor's
    arguments; of `base`, only what the constructor takes when it takes no `**kwargs` (Keras 3's rule).
    A program's own `get_config` gets `base` alone, as in Keras 3."""
    if _own_get_config(obj):
        return dict(base)
    config = {**{k: _serialized_or_raw(v) for k, v in auto_config(obj).items()}, **base}
    parameters = inspect.signature(type(obj).__init__).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        config = {k: v for k, v in config.items() if k in parameters}
    return config


def _serialized_or_raw(value):
    try:
        return serialize_value(value)
    except TypeError:
        return value  # (saving says which argument cannot be written)


def serialize_object(obj) -> dict:
    """Keras 3's `{"module", "class_name", "config", "registered_name"}` of any Keras object."""
    from .utils import get_registered_name

    cls = getattr(obj, "_config_class", type(obj))  # (a wrapper names the class it wraps)
    for module, base, builtins in _kinds():
        if isinstance(obj, base):
            if builtins.get(cls.__name__) is cls:
                return {"module": module, "class_name": cls.__name__, "config": serialize_value(obj.get_config()),
                        "registered_name": None}
            break
    if not hasattr(obj, "get_config"):
        raise TypeError(f"Cannot serialize {obj!r}: it has no `get_config()`")
    return {"module": cls.__module__, "class_name": cls.__name__, "config": serialize_value(obj.get_config()),
            "registered_name": get_registered_name(cls)}


def serialize_value(value):
    """A configuration value as JSON can hold it, objects as Keras 3 writes them (tuples and arrays
    tagged `__tuple__`/`__numpy__`, functions by module and name, lambdas as bytecode)."""
    from . import activations
    from .dtype_policies import DTypePolicy

    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return {"class_name": "__numpy__", "config": {"value": value.tolist(), "dtype": str(value.dtype)}}
    if hasattr(value, "asnumpy"):  # a MindSpore tensor comes back as one
        array = value.asnumpy()
        return {"class_name": "__tensor__", "config": {"value": array.tolist(), "dtype": str(array.dtype)}}
    if isinstance(value, slice):
        return {"class_name": "__slice__", "config": {"value": [serialize_value(v) for v in
                                                                (value.start, value.stop, value.step)]}}
    if value is Ellipsis:
        return {"class_name": "__ellipsis__", "config": {}}
    if isinstance(value, tuple):
        return {"class_name": "__tuple__", "config": {"value": [serialize_value(v) for v in value]}}
    if isinstance(value, list):
        return [serialize_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): serialize_value(v) for k, v in value.items()}
    if isinstance(value, DTypePolicy):
        return value.name
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
        # a built-in activation by its name, as Keras writes it
        return activations.builtin_name(value) or _serialize_function(value)
    if isinstance(value, np.ufunc):  # np.tanh and the like
        return {"module": "numpy", "class_name": "function", "config": value.__name__,
                "registered_name": None}
    if hasattr(value, "get_config"):
        return serialize_object(value)
    if type(value).__module__.startswith("mindspore") and "dtype" in type(value).__module__.lower():
        return str(value).lower()
    raise TypeError(f"Cannot serialize {value!r} ({type(value).__name__}): a Keras configuration holds numbers, "
                    "strings, lists, dicts, arrays, functions and Keras objects")


def _serialize_function(fn) -> dict:
    from .utils import get_registered_name

    if fn.__name__ == "<lambda>" or "<locals>" in fn.__qualname__:
        code = base64.b64encode(marshal.dumps(fn.__code__)).decode("ascii")
        closure = [serialize_value(cell.cell_contents) for cell in fn.__closure__ or ()]
        return {"class_name": "__lambda__", "config": {
            "code": code, "defaults": serialize_value(fn.__defaults__), "closure": closure,
            "module": fn.__module__}}
    return {"module": fn.__module__, "class_name": "function", "config": fn.__qualname__,
            "registered_name": get_registered_name(fn)}


def deserialize_value(value, custom_objects=None, safe_mode=True):
    """The inverse of `serialize_value`: tagged dicts become tuples, arrays, functions and objects."""
    if isinstance(value, list):
        return [deserialize_value(v, custom_objects, safe_mode) for v in value]
    if not isinstance(value, dict):
        return value
    tag = value.get("class_name") if "config" in value else None
    if tag == "__tuple__":
        return tuple(deserialize_value(v, custom_objects, safe_mode) for v in value["config"]["value"])
    if tag == "__slice__":
        return slice(*value["config"]["value"])
    if tag == "__ellipsis__":
        return Ellipsis
    if tag == "__numpy__":
        return np.asarray(value["config"]["value"], dtype=value["config"]["dtype"])
    if tag == "__tensor__":
        import mindspore as ms

        return ms.Tensor(np.asarray(value["config"]["value"], dtype=value["config"]["dtype"]))
    if tag == "__lambda__":
        return _deserialize_lambda(value["config"], custom_objects, safe_mode)
    if tag is not None and "module" in value:
        return deserialize_object(value, custom_objects, safe_mode)
    return {k: deserialize_value(v, custom_objects, safe_mode) for k, v in value.items()}


_IN_MEMORY = contextvars.ContextVar("keras_config_in_memory", default=False)


@contextlib.contextmanager
def in_memory():
    """Configs made and read in this process (`clone_model`): a lambda in them is the process's own."""
    token = _IN_MEMORY.set(True)
    try:
        yield
    finally:
        _IN_MEMORY.reset(token)


def _deserialize_lambda(config, custom_objects, safe_mode):
    if safe_mode and not _IN_MEMORY.get():
        raise ValueError(
            "Requested the deserialization of a `lambda` object. This carries a potential risk of arbitrary code "
            "execution and thus it is disallowed by default. If you trust the source of the saved model, you can "
            "pass `safe_mode=False` to the loading function in order to allow `lambda` loading.")
    code = marshal.loads(base64.b64decode(config["code"]))
    module = sys.modules.get(config.get("module") or "__main__")
    closure = tuple(types.CellType(deserialize_value(v, custom_objects, safe_mode)) for v in config["closure"])
    defaults = deserialize_value(config["defaults"], custom_objects, safe_mode)
    return types.FunctionType(code, vars(module) if module else {}, code.co_name, defaults, closure or None)


def _lookup(name: str, module: str | None, custom_objects):
    from .utils import get_registered_object

    found = get_registered_object(name, custom_objects)
    if found is not None or not module:
        return found
    try:
        owner = importlib.import_module(module)
    except ImportError:
        return None
    for part in name.split("."):
        owner = getattr(owner, part, None)
    return owner


def deserialize_object(config: dict, custom_objects=None, safe_mode=True):
    """An object from Keras 3's serialized form: the program's `custom_objects`, the registered
    classes, Keras's built-ins, then the class's own module."""
    module, class_name = config.get("module"), config["class_name"]
    inner = config.get("config")
    if class_name == "function":
        fn = (_lookup(config.get("registered_name") or inner, None, custom_objects)
              or _lookup(inner, module, custom_objects))
        if fn is None:
            raise ValueError(f"Could not locate function '{inner}' (module {module!r}); pass it in `custom_objects`.")
        return fn
    cls = _lookup(config.get("registered_name") or class_name, None, custom_objects) or \
        _lookup(class_name, None, custom_objects)
    if cls is None:
        for kind_module, _base, builtins in _kinds():
            if module == kind_module:
                cls = builtins.get(class_name)
                break
    if cls is None:
        cls = _lookup(class_name, module, custom_objects)
    if cls is None:
        raise ValueError(f"Could not locate class '{class_name}'. Make sure custom classes are decorated with "
                         "`@register_keras_serializable()` or passed in `custom_objects`.")
    if getattr(cls, "_config_holds_layers", False):  # a model: its layers come with their graph links
        return cls.from_config(inner or {}, custom_objects=custom_objects, safe_mode=safe_mode)
    options = deserialize_value(inner or {}, custom_objects, safe_mode)
    return cls.from_config(options) if hasattr(cls, "from_config") else cls(**options)
