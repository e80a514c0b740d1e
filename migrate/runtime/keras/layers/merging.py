"""Merging layers: Concatenate, Add, Subtract, Multiply, Average, Maximum, Minimum (lists of same-shape inputs)."""

from __future__ import annotations

from .base import Layer


def _ops():
    from mindspore import ops

    return ops


class Concatenate(Layer):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return _ops().cat(list(inputs), axis=self.axis)


class _Merge(Layer):
    def _merge(self, inputs):
        raise NotImplementedError

    def call(self, inputs):
        inputs = list(inputs)
        if len(inputs) < 2:
            raise ValueError(f"A merge layer should be called on a list of at least 2 inputs. Got {len(inputs)}")
        return self._merge(inputs)


def _sum(inputs):
    out = inputs[0]
    for x in inputs[1:]:
        out = out + x
    return out


class Add(_Merge):
    def _merge(self, inputs):
        return _sum(inputs)


class Subtract(_Merge):
    def _merge(self, inputs):
        if len(inputs) != 2:
            raise ValueError("A `Subtract` layer should be called on exactly 2 inputs.")
        return inputs[0] - inputs[1]


class Multiply(_Merge):
    def _merge(self, inputs):
        out = inputs[0]
        for x in inputs[1:]:
            out = out * x
        return out


class Average(_Merge):
    def _merge(self, inputs):
        return _sum(inputs) / float(len(inputs))


class Maximum(_Merge):
    def _merge(self, inputs):
        out = inputs[0]
        for x in inputs[1:]:
            out = _ops().maximum(out, x)
        return out


class Minimum(_Merge):
    def _merge(self, inputs):
        out = inputs[0]
        for x in inputs[1:]:
            out = _ops().minimum(out, x)
        return out


def concatenate(inputs, axis=-1, **kwargs):
    return Concatenate(axis=axis, **kwargs)(inputs)


def add(inputs, **kwargs):
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    return Minimum(**kwargs)(inputs)
