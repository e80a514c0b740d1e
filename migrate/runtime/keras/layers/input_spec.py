"""``keras.layers.InputSpec``: what a layer says about its inputs, checked as Keras checks it.

A layer that sets ``self.input_spec`` (in ``__init__`` or in ``build``) has the first
argument of every later call checked against it before the call runs: rank (``ndim``,
``min_ndim``, ``max_ndim``), dtype, the size of given axes and the whole shape, with
Keras's error text. A program that runs on Keras passes every check, so for it the spec is
description only; one that does not fails here as it fails there.
"""

from __future__ import annotations

import numpy as np

from .._tensors import flatten

__all__ = ["InputSpec", "assert_input_compatibility"]


def _dtype_name(dtype) -> str:
    """A dtype (MindSpore's, numpy's, a name) as Keras's standard name: ``"float32"``."""
    if isinstance(dtype, str):
        return np.dtype(dtype).name if dtype not in ("bfloat16",) else dtype
    try:
        import mindspore as ms

        if isinstance(dtype, ms.dtype.Type):
            return "bfloat16" if dtype == ms.bfloat16 else np.dtype(ms.dtype_to_nptype(dtype)).name
    except ImportError:  # pragma: no cover - the runtime needs MindSpore
        pass
    return np.dtype(dtype).name


def _shape_of(x) -> tuple:
    return tuple(None if d is None or (isinstance(d, int) and d < 0) else int(d) for d in x.shape)


class InputSpec:
    """Keras's ``InputSpec(dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
    axes=None, allow_last_axis_squeeze=False, name=None, optional=False)``."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None, axes=None,
                 allow_last_axis_squeeze=False, name=None, optional=False):
        self.dtype = _dtype_name(dtype) if dtype is not None else None
        if shape is not None:
            self.shape = tuple(None if d is None else int(d) for d in shape)
            self.ndim = len(shape)
        else:
            self.ndim = ndim
            self.shape = None
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.name = name
        self.optional = optional
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            axes = axes or {}
            self.axes = {int(k): axes[k] for k in axes}
        except (ValueError, TypeError):
            raise TypeError(f"Argument `axes` must be a dict with integer keys. Received: axes={axes}") from None
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            max_dim = (self.ndim if self.ndim else self.max_ndim) - 1
            max_axis = max(self.axes)
            if max_axis > max_dim:
                raise ValueError(f"Axis {max_axis} is greater than the maximum allowed value: {max_dim}")

    def __repr__(self):
        spec = [f"dtype={self.dtype}" if self.dtype else "", f"shape={self.shape}" if self.shape else "",
                f"ndim={self.ndim}" if self.ndim else "", f"max_ndim={self.max_ndim}" if self.max_ndim else "",
                f"min_ndim={self.min_ndim}" if self.min_ndim else "", f"axes={self.axes}" if self.axes else ""]
        return f"InputSpec({', '.join(x for x in spec if x)})"

    def get_config(self):
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim, "max_ndim": self.max_ndim,
                "min_ndim": self.min_ndim, "axes": self.axes}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def assert_input_compatibility(input_spec, inputs, layer_name: str) -> None:
    """Keras's check of ``inputs`` against a layer's ``input_spec`` (one spec or several), with
    Keras's messages."""
    if not input_spec:
        return
    specs = flatten(input_spec) if isinstance(input_spec, (list, tuple, dict)) else [input_spec]
    if isinstance(inputs, dict):
        names = [spec.name for spec in specs]
        if all(names):
            for name in names:
                if name not in inputs:
                    raise ValueError(f'Missing data for input "{name}". You passed a data dictionary with keys '
                                     f"{list(inputs.keys())}. Expected the following keys: {names}")
            inputs = [inputs[name] for name in names]
    inputs = flatten(inputs) if isinstance(inputs, (list, tuple, dict)) else [inputs]
    if len(inputs) != len(specs):
        names = [spec.name for spec in specs if spec is not None]
        if len(names) == len(specs) and all(names):
            raise ValueError(f'Layer "{layer_name}" expects {len(specs)} named input(s) with keys {names}, but it '
                             f"received {len(inputs)} input tensors. Pass inputs as a dict, e.g. `layer({{"
                             + ", ".join(f"'{n}': ..." for n in names) + "})`.")
        raise ValueError(f'Layer "{layer_name}" expects {len(specs)} input(s), but it received {len(inputs)} '
                         f"input tensors. Inputs received: {inputs}")
    for index, (x, spec) in enumerate(zip(inputs, specs)):
        if spec is None or (x is None and spec.optional):
            continue
        if not hasattr(x, "shape"):
            raise ValueError(f"Inputs to a layer should be tensors. Got '{x}' (of type {type(x)}) as input for "
                             f"layer '{layer_name}'.")
        shape = _shape_of(x)
        ndim = len(shape)
        where = f"Input {index} with name '{spec.name}' of layer '{layer_name}' is incompatible with the layer: "
        if spec.ndim is not None and not spec.allow_last_axis_squeeze and ndim != spec.ndim:
            raise ValueError(f"{where}expected ndim={spec.ndim}, found ndim={ndim}. Full shape received: {shape}")
        if spec.max_ndim is not None and ndim > spec.max_ndim:
            raise ValueError(f"{where}expected max_ndim={spec.max_ndim}, found ndim={ndim}")
        if spec.min_ndim is not None and ndim < spec.min_ndim:
            raise ValueError(f"{where}expected min_ndim={spec.min_ndim}, found ndim={ndim}. "
                             f"Full shape received: {shape}")
        if spec.dtype is not None and hasattr(x, "dtype"):
            dtype = _dtype_name(x.dtype)
            if dtype != spec.dtype:
                raise ValueError(f"{where}expected dtype={spec.dtype}, found dtype={dtype}")
        for axis, value in (spec.axes or {}).items():
            if value is not None and shape[axis] not in {value, None}:
                raise ValueError(f"{where}expected axis {axis} of input shape to have value {value}, but received "
                                 f"input with shape {shape}")
        if spec.shape is not None:
            spec_shape, got = spec.shape, shape
            if spec.allow_last_axis_squeeze:
                if got and got[-1] == 1:
                    got = got[:-1]
                if spec_shape and spec_shape[-1] == 1:
                    spec_shape = spec_shape[:-1]
            for spec_dim, dim in zip(spec_shape, got):
                if spec_dim is not None and dim is not None and spec_dim != dim:
                    raise ValueError(f"{where}expected shape={spec.shape}, found shape={got}")
