"""`keras.constraints`: projections the optimizer applies to a weight after each update, with
Keras 3's formulas (epsilon 1e-7) on MindSpore tensors."""

from __future__ import annotations

import inspect

from . import serialization

_EPSILON = 1e-7


def _ops():
    from mindspore import ops

    return ops


def _norms(w, axis):
    ops = _ops()
    return ops.sqrt(ops.sum(ops.square(w), dim=axis, keepdim=True))


class Constraint:
    def __call__(self, w):
        return w

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class MaxNorm(Constraint):
    """Each slice along `axis` rescaled to a norm of at most `max_value`."""

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        return w * (_ops().clamp(norms, 0, self.max_value) / (_EPSILON + norms))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    def __call__(self, w):
        return _ops().maximum(w, 0)


class UnitNorm(Constraint):
    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        return w / (_EPSILON + _norms(w, self.axis))

    def get_config(self):
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        desired = self.rate * _ops().clamp(norms, self.min_value, self.max_value) + (1 - self.rate) * norms
        return w * (desired / (_EPSILON + norms))

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


max_norm, non_neg, unit_norm, min_max_norm = MaxNorm, NonNeg, UnitNorm, MinMaxNorm

_BUILTINS = {cls.__name__: cls for cls in (Constraint, MaxNorm, MinMaxNorm, NonNeg, UnitNorm)}
_BY_NAME = {**_BUILTINS, "max_norm": MaxNorm, "non_neg": NonNeg, "unit_norm": UnitNorm, "min_max_norm": MinMaxNorm,
            "constraint": Constraint}


def serialize(constraint):
    return serialization.serialize(constraint, "keras.constraints", _BUILTINS)


def deserialize(config, custom_objects=None):
    return serialization.deserialize(config, _BY_NAME, "constraint", custom_objects)


def get(identifier):
    if identifier is None:
        return None
    obj = deserialize(identifier) if isinstance(identifier, dict) else (
        _BY_NAME.get(identifier) if isinstance(identifier, str) else identifier)
    if callable(obj):
        return obj() if inspect.isclass(obj) else obj
    raise ValueError(f"Could not interpret constraint identifier: {identifier}")
