"""Merging layers: Concatenate, Add, Subtract, Multiply, Average, Maximum, Minimum (lists of same-shape inputs)."""

from __future__ import annotations

from .base import Layer


def _ops():
    from mindspore import ops

    return ops


def _masks_of(inputs, mask):
    """The inputs' masks, or None when none has one (a merge's masks, as Keras checks them)."""
    if mask is None:
        return None
    if not isinstance(mask, (tuple, list)):
        raise ValueError(f"`mask` should be a list. Received mask={mask}")
    if len(mask) != len(inputs):
        raise ValueError("The lists `inputs` and `mask` should have the same length. Received: inputs of length "
                         f"{len(inputs)}, and mask of length {len(mask)}")
    return None if all(m is None for m in mask) else list(mask)


class Concatenate(Layer):
    supports_masking = True

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return _ops().cat(list(inputs), axis=self.axis)

    def compute_mask(self, inputs, previous_mask=None):
        """Keras's: each input's mask (all true where it has none) widened to the input, concatenated, and
        any along the last axis."""
        ops = _ops()
        inputs = list(inputs)
        masks = _masks_of(inputs, previous_mask)
        if masks is None:
            return None
        full = []
        for value, mask in zip(inputs, masks):
            if mask is None:
                full.append(ops.ones_like(value).astype("bool"))
            elif mask.ndim < value.ndim:
                full.append(ops.logical_or(ops.expand_dims(mask, -1), ops.zeros_like(value).astype("bool")))
            else:
                full.append(mask)
        return ops.any(ops.cat(full, axis=self.axis), axis=-1)


class _Merge(Layer):
    supports_masking = True

    def _merge(self, inputs):
        raise NotImplementedError

    def compute_mask(self, inputs, previous_mask=None):
        """Keras 3's: true where any input's mask is, and no mask when an input has none."""
        masks = _masks_of(list(inputs), previous_mask)
        if masks is None or any(m is None for m in masks):
            return None
        output = masks[0]
        for mask in masks[1:]:
            output = _ops().logical_or(output, mask)
        return output

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
