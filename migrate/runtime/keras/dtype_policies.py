"""Keras 3's dtype policies: `mixed_float16` and `mixed_bfloat16` compute in half precision.

A layer's policy (its ``dtype=`` argument, else the global policy when it was made) gives
a variable dtype and a compute dtype. Where they differ, as in Keras 3:

- floating inputs are cast to the compute dtype on the way into the layer;
- while the layer (and every layer it calls) runs, its trainable float weights are read
  in the compute dtype (the cast is differentiable, so gradients reach the float32
  weights), except the weights Keras keeps in float32 (``add_weight(autocast=False)``: the
  normalization layers', which compute in float32 and cast their output back).
  Non-trainable state is read as stored, so that a layer's ``ops.assign`` to it in
  ``call`` updates the Parameter (Keras casts those reads too; assignments reach the
  variable there either way);
- losses and metrics compute in float32;
- ``Model.compile`` wraps the optimizer in a ``LossScaleOptimizer`` under
  ``mixed_float16`` (``auto_scale_loss=True``), and ``fit`` scales the loss.

MindSpore's float16 matrix products and convolutions accumulate in float32 and round
once, as TF's CPU kernels do. bfloat16 has no MindSpore CPU kernels (Ascend has them).
"""

from __future__ import annotations

import contextlib
import threading

_FLOATS = ("float16", "bfloat16", "float32", "float64")


class DTypePolicy:
    """`keras.DTypePolicy` / `keras.mixed_precision.Policy`: a (compute dtype, variable dtype) pair by name."""

    def __init__(self, name=None):
        if name is None:
            name = dtype_policy().name
        if not isinstance(name, str):
            raise TypeError(f"'name' must be a string, such as 'mixed_float16'. Received: name={name} "
                            f"(of type {type(name)})")
        self._name = name
        self._compute_dtype, self._variable_dtype = _parse(name)

    @property
    def name(self) -> str:
        return self._name

    @property
    def compute_dtype(self) -> str:
        return self._compute_dtype

    @property
    def variable_dtype(self) -> str:
        return self._variable_dtype

    @property
    def quantization_mode(self):
        return None

    def get_config(self) -> dict:
        return {"name": self._name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __eq__(self, other):
        return isinstance(other, DTypePolicy) and other._name == self._name

    def __hash__(self):
        return hash(self._name)

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'


Policy = DTypePolicy  # Keras's legacy name


class ExperimentalPolicy(DTypePolicy):
    """TF 2.1-2.3's ``keras.mixed_precision.experimental.Policy(name, loss_scale="auto")``: a policy
    that carries the loss scale ``compile`` gives the optimizer. ``"auto"`` is dynamic scaling for
    ``mixed_float16`` and none otherwise; ``"dynamic"`` is dynamic scaling (initial 2**15, doubled
    after 2,000 finite steps, halved and the step skipped on an overflow) whatever the name;
    ``None`` is none; a number scales the loss by that fixed factor."""

    def __init__(self, name, loss_scale="auto"):
        super().__init__(name)
        if loss_scale == "auto":
            loss_scale = "dynamic" if name == "mixed_float16" else None
        fixed = isinstance(loss_scale, (int, float)) and not isinstance(loss_scale, bool)
        if not (loss_scale is None or loss_scale == "dynamic" or fixed):
            raise ValueError(f"loss_scale must be 'auto', 'dynamic', None or a number; got {loss_scale!r} "
                             "(a LossScale object: pass its initial scale as a number, or 'dynamic')")
        self.loss_scale = float(loss_scale) if fixed else loss_scale

    def get_config(self) -> dict:
        return {"name": self._name, "loss_scale": self.loss_scale}

    def __repr__(self):
        return f'<Policy "{self._name}", loss_scale={self.loss_scale!r}>'


def _parse(name: str) -> tuple[str, str]:
    if name == "mixed_float16":
        return "float16", "float32"
    if name == "mixed_bfloat16":
        return "bfloat16", "float32"
    standard = {"half": "float16", "float": "float32", "double": "float64"}.get(name, name)
    if not standard or not standard.replace("_", "").isalnum():
        raise ValueError(f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid policies include "
                         "'mixed_float16', 'mixed_bfloat16', and the name of any float dtype such as 'float32'.")
    return standard, standard


_global: DTypePolicy | None = None


def set_dtype_policy(policy) -> None:
    """`keras.config.set_dtype_policy` / `keras.mixed_precision.set_global_policy`: layers made from now on use it."""
    global _global
    if isinstance(policy, str):
        policy = DTypePolicy(policy)
    elif policy is not None and not isinstance(policy, DTypePolicy):
        raise ValueError(f"Invalid `policy` argument. Expected the string name of a policy (such as "
                         f"'mixed_float16') or a `DTypePolicy` instance. Received: policy={policy} "
                         f"(of type {type(policy)})")
    _global = policy


def dtype_policy() -> DTypePolicy:
    """`keras.config.dtype_policy` / `keras.mixed_precision.global_policy`: the global policy (float32 by default)."""
    global _global
    if _global is None:
        _global = DTypePolicy("float32")
    return _global


set_global_policy = set_dtype_policy
global_policy = dtype_policy


def get(identifier) -> DTypePolicy:
    """A policy from a name, a policy, a {'name': ...} config, or None (the global policy)."""
    if identifier is None:
        return dtype_policy()
    if isinstance(identifier, DTypePolicy):
        return identifier
    if isinstance(identifier, dict):
        return DTypePolicy(identifier.get("config", identifier).get("name"))
    if not isinstance(identifier, str):  # a numpy or MindSpore dtype
        identifier = dtype_name(identifier)
    return DTypePolicy(identifier)


def dtype_name(dtype) -> str:
    """A numpy, MindSpore or named dtype as its lower-case name ("float32", "bfloat16", ...)."""
    if isinstance(dtype, type) or type(dtype).__module__ == "numpy":
        import numpy as np

        try:
            return np.dtype(dtype).name
        except TypeError:
            pass
    text = str(dtype).lower().replace("mindspore.", "")
    return {"float": "float32", "half": "float16", "double": "float64"}.get(text, text)


# --- autocasting while a mixed layer runs ----------------------------------------------------------

_state = threading.local()


def autocast_dtype() -> str | None:
    """The dtype float variables are read in now (None: as stored)."""
    return getattr(_state, "dtype", None)


@contextlib.contextmanager
def autocast_scope(dtype: str | None):
    previous = getattr(_state, "dtype", None)
    _state.dtype = dtype
    try:
        yield
    finally:
        _state.dtype = previous


def is_float(dtype) -> bool:
    return dtype_name(dtype) in _FLOATS


_HALF_OR_64 = ("Float16", "BFloat16", "Float64")


def needs_cast(value, compute: str) -> bool:
    """Whether Keras would cast a floating input of a layer computing in `compute` (cheap for the common case)."""
    if compute not in _FLOATS:
        return False
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        name = str(dtype)
        return (name in _HALF_OR_64 or name == "Float32") and dtype_name(dtype) != compute
    return isinstance(value, (list, tuple, dict)) and compute != "float32"


def cast_floats(value, dtype: str):
    """`value` (a Tensor or a nest of them) with its floating tensors in `dtype`; integers untouched."""
    from ._tensors import _ms_dtype, map_structure

    target = _ms_dtype(dtype)

    def cast(leaf):
        if hasattr(leaf, "astype") and hasattr(leaf, "dtype") and is_float(leaf.dtype) and leaf.dtype != target:
            return leaf.astype(target)
        return leaf

    return map_structure(cast, value)
