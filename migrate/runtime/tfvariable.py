"""``tf.Variable`` as a MindSpore ``Parameter``.

``Variable(...)`` returns a real ``mindspore.Parameter``: MindSpore's ops, ``value_and_grad``
and optimizers take it as they take any parameter. It also answers TF's variable methods
(``assign``, ``assign_add``, ``assign_sub``, ``read_value``, ``trainable``), set on the
instance, so code that keeps ``self.kernel = tf.Variable(...)`` and later calls
``self.step.assign_add(1)`` runs unchanged. ``numpy()``, ``value()``, ``shape`` and
``dtype`` are the Parameter's own.

The initial value's dtype is inferred as TF infers it: Python ``int`` → int32 (int64 when
it does not fit), ``float`` → float32, ``bool`` → bool, NumPy arrays and tensors keep
theirs. A callable initial value is called, as TF calls it.

Under data parallelism each process holds its own copy of every variable, as each TF
replica holds its copy of a mirrored variable: an update every replica makes alike (a step
counter's ``assign_add(1)``) leaves every copy equal and counts once per step. So
``aggregation=ONLY_FIRST_REPLICA`` or ``NONE`` and ``synchronization=AUTO``/``ON_WRITE``/
``NONE`` (:class:`VariableAggregation`, :class:`VariableSynchronization`) are taken and
kept on the variable, and change nothing. Variables TF aggregates across replicas
(``aggregation=SUM/MEAN``, ``synchronization=ON_READ``) are not created here: the rules
leave them for a person (TFD308), and passed here they are an error.
"""

from __future__ import annotations

import enum
import itertools
import threading
import types

import numpy as np

from .tensors import tf_inferred

_names: dict[str, itertools.count] = {}
_lock = threading.Lock()


def _ms():
    import mindspore as ms

    return ms


def _unique(name: str) -> str:
    """``name``, then ``name_1``, ``name_2`` ...: MindSpore keys checkpoints and optimizer
    state by parameter name, so two variables never share one."""
    with _lock:
        counter = _names.setdefault(name, itertools.count())
        n = next(counter)
    return name if n == 0 else f"{name}_{n}"


def _initial(value, dtype):
    ms = _ms()
    if callable(value) and not isinstance(value, ms.Tensor):
        value = value()
    if isinstance(value, ms.Tensor):
        tensor = ms.Tensor(value.asnumpy())  # a copy: the variable never aliases its initial value
    else:
        tensor = ms.Tensor(tf_inferred(value))
    if dtype is not None and tensor.dtype != dtype:
        tensor = tensor.astype(dtype)
    return tensor


def _as_value(variable, value):
    ms = _ms()
    if isinstance(value, ms.Tensor):
        return value if value.dtype == variable.dtype else value.astype(variable.dtype)
    return ms.Tensor(np.asarray(value), variable.dtype)


def _check_shape(variable, value) -> None:
    if tuple(value.shape) != tuple(variable.shape):
        raise ValueError(f"Cannot assign value of shape {tuple(value.shape)} to variable "
                         f"{variable.name!r} of shape {tuple(variable.shape)}")


def _assign(self, value, use_locking=None, name=None, read_value=True):
    """``v.assign(value)``: the new value in place; returns the variable (None if ``read_value=False``)."""
    from mindspore import ops

    value = _as_value(self, value)
    _check_shape(self, value)
    ops.assign(self, value)
    return self if read_value else None


def _assign_add(self, delta, use_locking=None, name=None, read_value=True):
    """``v.assign_add(delta)``: ``v + delta`` in place."""
    from mindspore import ops

    ops.assign_add(self, _as_value(self, delta))
    return self if read_value else None


def _assign_sub(self, delta, use_locking=None, name=None, read_value=True):
    """``v.assign_sub(delta)``: ``v - delta`` in place."""
    from mindspore import ops

    ops.assign_sub(self, _as_value(self, delta))
    return self if read_value else None


def _read_value(self):
    """``v.read_value()``: the current value as a new tensor (a gradient flows through it)."""
    from mindspore import ops

    return ops.identity(self)


class VariableAggregation(enum.Enum):
    """``tf.VariableAggregation``: how TF combines the replicas' updates of a mirrored variable."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


class VariableSynchronization(enum.Enum):
    """``tf.VariableSynchronization``: when TF makes a distributed variable's copies agree."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


def Variable(initial_value=None, trainable=None, name=None, dtype=None, shape=None,  # noqa: N802 - TF's name
             synchronization=VariableSynchronization.AUTO, aggregation=VariableAggregation.NONE):
    """``tf.Variable(initial_value, trainable, name=, dtype=, shape=)`` → a ``mindspore.Parameter``;
    ``synchronization``/``aggregation`` as every process updating its own copy alike gives them."""
    ms = _ms()
    if initial_value is None:
        raise ValueError("The initial_value must be specified.")
    if aggregation in (VariableAggregation.SUM, VariableAggregation.MEAN) or \
            synchronization is VariableSynchronization.ON_READ:
        raise NotImplementedError(f"a variable that TF aggregates across replicas ({synchronization}, {aggregation}) "
                                  "is per process here: keep a plain variable and all-reduce its value where it is "
                                  "read (spmd.reduce)")
    tensor = _initial(initial_value, dtype)
    if shape is not None:
        wanted = tuple(shape)
        if None not in wanted and wanted != tuple(tensor.shape):
            raise ValueError(f"The initial value's shape ({tuple(tensor.shape)}) is not compatible with "
                             f"the explicitly supplied `shape` argument ({wanted}).")
    trainable = True if trainable is None else bool(trainable)
    # MindSpore differentiates floating parameters only; TF's flag is kept as `trainable`.
    differentiable = trainable and (ms.dtype.is_float(tensor.dtype) if hasattr(ms.dtype, "is_float")
                                    else tensor.dtype in (ms.float16, ms.float32, ms.float64, ms.bfloat16))
    base = (name or "Variable").split(":")[0]
    parameter = ms.Parameter(tensor, name=_unique(base), requires_grad=differentiable)
    parameter.trainable = trainable
    parameter.synchronization, parameter.aggregation = synchronization, aggregation
    return with_variable_methods(parameter)


def with_variable_methods(parameter):
    """``parameter`` answering TF's ``assign``, ``assign_add``, ``assign_sub`` and ``read_value``
    (in place): what a converted program's own code calls on its variables, Keras weights too."""
    parameter.assign = types.MethodType(_assign, parameter)
    parameter.assign_add = types.MethodType(_assign_add, parameter)
    parameter.assign_sub = types.MethodType(_assign_sub, parameter)
    parameter.read_value = types.MethodType(_read_value, parameter)
    return parameter


def _snake(name: str) -> str:
    import re

    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)).lower()


class _NameScope:
    """``module.name_scope``: a context manager that only carries the name (MindSpore has no op names)."""

    def __init__(self, name: str) -> None:
        self.name = name + "/"

    def __enter__(self):
        return self.name

    def __exit__(self, *exc) -> bool:
        return False


class Module:
    """``tf.Module``: a container that finds the variables and submodules its attributes hold.

    ``variables``, ``trainable_variables``, ``non_trainable_variables`` and ``submodules``
    walk the instance's attributes in sorted order, into lists, tuples and dicts, as TF's
    walk does: the module's own values first, then each submodule's, every object once.
    A variable is a ``mindspore.Parameter`` (what ``tfvariable.Variable`` makes); a
    MindSpore ``Cell`` held by an attribute (a converted Keras layer or model) counts as a
    submodule whose variables are its parameters. A subclass need not call ``__init__``
    (TF's modules work without it too); the name is then the class's, in snake case.
    """

    def __init__(self, name=None):
        if name is not None and not (isinstance(name, str) and name.isidentifier()):
            raise ValueError(f"{name!r} is not a valid module name. Module names must be valid Python 3 identifiers.")
        self._module_name = name or _snake(type(self).__name__)

    @property
    def name(self) -> str:
        return self.__dict__.get("_module_name") or _snake(type(self).__name__)

    @property
    def name_scope(self) -> _NameScope:
        return _NameScope(self.name)

    @classmethod
    def with_name_scope(cls, method):
        """TF's decorator that enters the module's name scope: names mean nothing here, so the method as it is."""
        return method

    def _walk(self, seen=None):
        """(leaf, is a submodule) for every value the attributes hold, TF's order (a module's own values,
        then each submodule's, depth first), each object once."""
        seen = set() if seen is None else seen
        submodules = []
        for key in sorted(vars(self)):
            for leaf in _leaves(vars(self)[key]):
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
                module = _is_module(leaf)
                yield leaf, module
                if module:
                    submodules.append(leaf)
        for submodule in submodules:
            if isinstance(submodule, Module):
                yield from submodule._walk(seen)
                continue
            for parameter in submodule.get_parameters():  # a MindSpore Cell: its parameters
                if id(parameter) not in seen:
                    seen.add(id(parameter))
                    yield parameter, False

    @property
    def variables(self) -> tuple:
        ms = _ms()
        return tuple(leaf for leaf, _ in self._walk() if isinstance(leaf, ms.Parameter))

    @property
    def trainable_variables(self) -> tuple:
        return tuple(v for v in self.variables if getattr(v, "trainable", v.requires_grad))

    @property
    def non_trainable_variables(self) -> tuple:
        return tuple(v for v in self.variables if not getattr(v, "trainable", v.requires_grad))

    @property
    def submodules(self) -> tuple:
        return tuple(leaf for leaf, module in self._walk() if module)


def _is_module(value) -> bool:
    if isinstance(value, Module):
        return True
    try:
        from mindspore import nn
    except ImportError:  # pragma: no cover - the runtime needs MindSpore
        return False
    return isinstance(value, nn.Cell)


def _leaves(value):
    """The values a list, tuple or dict (sorted by key, as TF's nest) holds, depth first; else the value."""
    if isinstance(value, dict):
        try:
            keys = sorted(value)
        except TypeError:  # keys of mixed types
            keys = sorted(value, key=repr)
        for key in keys:
            yield from _leaves(value[key])
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


_global_step: list = []
_global_step_lock = threading.Lock()  # (not `_lock`, which Variable takes for its name)


def get_or_create_global_step(graph=None):
    """TF 1's ``tf.compat.v1.train.get_or_create_global_step`` run eagerly: one int64 step counter,
    not trainable, made on the first call and the same variable on every later one."""
    if graph is not None:
        raise ValueError("graph is not supported: there are no TF graphs here")
    with _global_step_lock:
        if not _global_step:
            _global_step.append(Variable(0, trainable=False, name="global_step", dtype=_ms().int64))
        return _global_step[0]


def get_global_step(graph=None):
    """TF 1's ``tf.compat.v1.train.get_global_step``: the step counter made so far, or None."""
    if graph is not None:
        raise ValueError("graph is not supported: there are no TF graphs here")
    return _global_step[0] if _global_step else None
