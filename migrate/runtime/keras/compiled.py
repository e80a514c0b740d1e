"""A shim model's forward pass compiled by MindSpore, where that cannot change what it computes.

The shim's Keras layers are Python over MindSpore operations, run one by one in PyNative
mode; a 3-layer MLP's forward and backward pass costs about twice its operations' time in
Python and queue waits. A ``Sequential`` or functional model made only of the shim's own
layers below does the same operations on every call with the same input shapes: no Python
decision depends on a tensor's values. Such a call is recorded once per input signature by
MindSpore's trace capture (``ms.jit(capture_mode="trace")``) and replayed as one compiled
graph afterwards, its backward pass compiled with it under ``value_and_grad``.

What keeps the numbers (each checked by ``tests/runtime/keras/test_compiled.py``):

- Only models whose every layer is one of :data:`_TRACEABLE` (exact classes, so a program's
  own subclass with its own ``call`` stays eager), with the shim's own activation functions,
  and no masks, take this path; a model that builds in its first call runs it eagerly first.
- Everything else that changes the recorded operations is part of the graph's name: the
  ``training`` flag, each layer's ``trainable`` flag and the autocast scope. The input
  shapes and dtypes are part of MindSpore's key. A model that has seen :data:`MAX_SIGNATURES`
  signatures (a ragged last batch is a second one) runs new ones eagerly.
- Recording runs the operations once eagerly, then MindSpore runs the new graph for the
  result. The model's non-trainable weights (BatchNormalization's moving statistics) are
  put back between the two, so their update is applied once; dropout's mask is the graph's.
- A softmax or sigmoid output's logits (``_keras_logits``, which the crossentropy losses
  compute from) are returned by the graph beside the outputs and attached again.
- BatchNormalization uses Keras's formula while recorded (the fused kernel's scratch
  statistics are not graph state); a synchronized one (an all-reduce in every call) runs eagerly.

A built-in loss is recorded the same way (:func:`call_loss`): its value depends only on its
inputs' shapes and dtypes and its own settings. Only the losses whose recording was checked
against the eager call take that path (``_RECORDED_LOSS_FUNCTIONS``).

This reaches into MindSpore's trace internals (``mindspore.graph.jit_trace``), so it is
gated to the MindSpore versions it was checked with and turned off by
``MIGRATE_SHIM_COMPILE=0``; a model whose recording fails raises what the eager call raises
and runs eagerly from then on.
"""

from __future__ import annotations

import functools
import itertools
import os
import re

NOT = object()  # "not compiled: call eagerly"
MAX_SIGNATURES = 8
_CHECKED_VERSIONS = ("2.10.",)
_uids = itertools.count()

# the shim's layers whose call is the same operations for the same input shapes (not
# Conv2DTranspose: its recorded primitive does not compile, MindSpore checks it as a Conv2D)
_TRACEABLE = (
    "Activation", "Add", "Average", "AveragePooling1D", "AveragePooling2D", "BatchNormalization", "Concatenate",
    "Conv1D", "Conv2D", "Dense", "DepthwiseConv2D", "Dropout", "Flatten",
    "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "Identity",
    "InputLayer", "LayerNormalization", "LeakyReLU", "MaxPooling1D", "MaxPooling2D", "Maximum", "Minimum",
    "Multiply", "Permute", "ReLU", "RepeatVector", "Rescaling", "Reshape", "SeparableConv2D", "Softmax",
    "Subtract", "TensorOperation", "UpSampling1D", "UpSampling2D", "UpSampling3D", "ZeroPadding2D", "Embedding",
)


@functools.lru_cache(maxsize=None)
def _trace():
    """MindSpore's trace internals, or None where this path is off."""
    if os.environ.get("MIGRATE_SHIM_COMPILE", "1") == "0":
        return None
    import mindspore

    if not mindspore.__version__.startswith(_CHECKED_VERSIONS):
        return None
    try:
        from mindspore.graph import jit_trace
        from mindspore.graph.jit_config import _DEFAULT_JIT_CONFIG
        from mindspore.graph.jit_context import jit_context, set_jit_context
    except ImportError:
        return None
    needed = ("_jit_trace_begin", "_jit_trace_end", "_trace_jit_context", "_trace_compile_cache", "_using_trace",
              "_set_compile_only", "_jit_executor", "tr")
    if not all(hasattr(jit_trace, name) for name in needed + ("_get_caller_lines",)):
        return None
    jit_trace._get_caller_lines = _caller_lines
    return jit_trace, _DEFAULT_JIT_CONFIG, jit_context, set_jit_context


_MINDSPORE_OWN = re.compile(r"mindspore/common/.*\.py|mindspore/ops/.*\.py|mindspore/nn/.*\.py")


def _caller_lines():
    """MindSpore's ``jit_trace._get_caller_lines`` (where each recorded operation was called, for
    the graph's debug information) without ``inspect.stack()``: that reads every frame's source
    line, once per recorded operation, and fails on a frame whose source cannot be read (a
    program run from a string)."""
    import sys

    files, lines = [], []
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith("<") and not _MINDSPORE_OWN.search(name):
            files.append(name)
            lines.append(frame.f_lineno)
        frame = frame.f_back
    return files, lines


def recording() -> bool:
    """Inside a recorded (compiled) call, or any other trace MindSpore is taking."""
    trace = _trace()
    if trace is None:
        from mindspore.graph.jit_context import jit_context

        return jit_context() is not None
    jit_trace, _, jit_context, _ = trace
    return jit_context() is not None or jit_trace._using_trace


@functools.lru_cache(maxsize=None)
def _traceable_classes() -> frozenset:
    from . import layers
    from .models.sequential import Sequential
    from .models.model import Model

    return frozenset({getattr(layers, name) for name in _TRACEABLE} | {Sequential, Model})


@functools.lru_cache(maxsize=None)
def _own_activations() -> frozenset:
    from . import activations

    return frozenset(id(fn) for fn in vars(activations).values() if callable(fn))


class _Plan:
    """A compilable model's record: its layers (whose ``trainable`` flags name the graph), the
    input signatures seen, each graph's output form, and whether a recording failed."""

    def __init__(self, layers: list) -> None:
        self.uid = next(_uids)
        self.variants: dict = {}  # (training, trainable flags, autocast) -> its number in graph names
        self.layers = layers
        self.signatures: set = set()
        self.broken = False
        self.shapes: dict = {}  # graph name -> (which outputs carry logits, the outputs' sequence type)


def _why_not(model, seen: set) -> str | None:
    """Why ``model`` cannot be compiled (None: it can)."""
    from .models.model import Model
    from .models.sequential import Sequential

    if type(model) not in (Model, Sequential) or model._graph_inputs is None and type(model) is Model:
        return "a subclassed model"
    if type(model) is Model and not _flat_tensors(model._graph_outputs, symbolic=True):
        return "its outputs are not a tensor or a list of tensors"
    for layer in (model._stack if type(model) is Sequential else model._functional_layers):
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        if type(layer) not in _traceable_classes():
            return f"layer {getattr(layer, 'name', layer)!r} ({type(layer).__name__})"
        if isinstance(layer, (Model,)):
            why = _why_not(layer, seen)
            if why:
                return why
            continue
        activation = getattr(layer, "activation", None)
        if activation is not None and id(activation) not in _own_activations():
            return f"layer {layer.name!r} has its own activation function"
        if getattr(layer, "synchronized", False):  # (its statistics cross processes: a collective per call)
            return f"layer {layer.name!r} synchronizes its statistics across replicas"
        if getattr(layer, "mask_zero", False) or type(layer).__name__ == "Masking" or (
                type(layer).__name__ == "Lambda" and getattr(layer, "mask", None) is not None):
            return f"layer {layer.name!r} makes a mask"  # (it travels on the tensors, which a recorded graph drops)
    return None


def _layers(model) -> list:
    return [cell for _, cell in model.cells_and_names()]


def _flat_tensors(value, symbolic: bool = False) -> bool:
    if symbolic:
        from .symbolic import KerasTensor as kind
    else:
        from mindspore import Tensor as kind
    if isinstance(value, (list, tuple)):
        return bool(value) and all(isinstance(v, kind) for v in value)
    return isinstance(value, kind)


def plan_for(model):
    """The model's plan, or None if it cannot be compiled (kept until its layers change)."""
    plan = model.__dict__.get("_compiled_plan")
    if plan is None:
        plan = False if _why_not(model, set()) else _Plan(_layers(model))
        model.__dict__["_compiled_plan"] = plan
    return plan or None


def forget(model) -> None:
    """The model's layers changed (``Sequential.add``/``pop``): decide again at the next call."""
    model.__dict__.pop("_compiled_plan", None)


def call(model, args: tuple, kwargs: dict):
    """The model's output for ``model(*args, **kwargs)`` from its compiled graph, or :data:`NOT`."""
    if len(args) != 1 or (kwargs and set(kwargs) != {"training"}):
        return NOT
    trace = _trace()
    if trace is None:
        return NOT
    jit_trace, config, jit_context, set_jit_context = trace
    if recording():
        return NOT
    import mindspore as ms

    from .. import draws
    from .autodiff import is_building
    from .layers.base import _convert_inputs
    from . import dtype_policies

    # (a forward pass repeated for another gradient draws the recorded values: eagerly)
    if is_building() or draws.active() or not model.built or ms.get_context("mode") != ms.PYNATIVE_MODE:
        return NOT
    plan = plan_for(model)
    if plan is None or plan.broken or any(layer._pending_restore is not None or not layer.built
                                          for layer in plan.layers if hasattr(layer, "_pending_restore")):
        return NOT
    inputs = _convert_inputs(args[0])
    if not _flat_tensors(inputs):
        return NOT
    tensors = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
    training = model._call_training(kwargs.get("training"))
    training = None if training is None else bool(training)
    flags = tuple(layer._trainable for layer in plan.layers if hasattr(layer, "_trainable"))
    variant = (training, flags, dtype_policies.autocast_dtype())
    signature = (variant, tuple((tuple(t.shape), t.dtype) for t in tensors))
    if signature not in plan.signatures:
        if len(plan.signatures) >= MAX_SIGNATURES:
            return NOT
        plan.signatures.add(signature)
    rebuild = type(inputs) if isinstance(inputs, (list, tuple)) else None
    name = f"migrate.keras.{type(model).__name__}#{plan.uid}#{plan.variants.setdefault(variant, len(plan.variants))}"

    from .layers.base import Layer

    count = len(tensors)

    def forward(*values):
        values = values[:count]
        out = Layer.__call__(model, rebuild(values) if rebuild else values[0], training=training)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        mask = tuple(getattr(o, "_keras_logits", None) is not None for o in outs)
        plan.shapes[name] = (mask, type(out) if isinstance(out, (list, tuple)) else None)
        return tuple(outs) + tuple(o._keras_logits for o, m in zip(outs, mask) if m)

    return _run(plan, name, tensors, forward, model.weights, model.non_trainable_weights, trace)


def _run(plan: _Plan, name: str, tensors: tuple, forward, weights, state, trace):
    """Replay the graph `name` recorded for `forward` on `tensors` and `weights` (graph inputs, so
    that `set_data` on a weight reaches the graph), or record it now; `state` (Parameters the
    call moves, such as moving statistics) is put back after the eager recording pass."""
    import mindspore as ms
    from mindspore import ops

    jit_trace, config, jit_context, set_jit_context = trace
    tensors = tensors + tuple(weights)
    replayed = _replay(jit_trace, config, name, tensors)
    if replayed is not NOT:
        return _outputs(plan, name, replayed)
    state = list(state)
    saved = [parameter.asnumpy().copy() for parameter in state]  # (host copies: no operation to record)
    try:
        if not jit_trace._jit_trace_begin(name, *tensors, jit_config=config):
            return _outputs(plan, name, jit_trace._jit_trace_end(None, jit_config=config))
    except Exception:
        _abandon(jit_trace, set_jit_context, config, None)
        plan.broken = True
        return NOT
    try:
        out = forward(*tensors)
        if not _flat_tensors(out):
            raise _Untraceable()
        moved = [parameter.asnumpy().copy() for parameter in state]  # the state after the eager pass, then as before it
        set_jit_context(None)  # (an `Assign` outside the recording)
        for parameter, value in zip(state, saved):
            ops.assign(parameter, ms.Tensor(value))
        set_jit_context(jit_trace._trace_jit_context)
    except BaseException as error:
        _abandon(jit_trace, set_jit_context, config, tensors[0])
        plan.broken = True
        if isinstance(error, _Untraceable):
            return _outputs(plan, name, out)
        raise
    try:
        return _outputs(plan, name, jit_trace._jit_trace_end(out, jit_config=config))
    except Exception:  # MindSpore could not compile the recording: the eager pass's result stands
        _abandon(jit_trace, set_jit_context, config, None)
        plan.broken = True
        for parameter, value in zip(state, moved):
            ops.assign(parameter, ms.Tensor(value))
        return _outputs(plan, name, out)


def _replay(jit_trace, config, name: str, tensors: tuple):
    """The recorded graph's result, or NOT where it is not recorded yet: ``_jit_trace_begin``'s
    lookup and run without its debug logging, whose messages print every argument's values
    (waiting for the queued work) even when nobody logs them."""
    from mindspore.graph.api import _PyNativeExecutor, _convert_python_data

    phase = f"{name}.{jit_trace._jit_executor.generate_arguments_key(None, tensors, {}, False)}"
    if _PyNativeExecutor().requires_grad():
        phase += ".grad"
    if phase not in jit_trace._trace_compile_cache:
        return NOT
    return _convert_python_data(jit_trace.tr.get_instance().run_graph(phase, config, tensors))


class _Untraceable(Exception):
    """The recorded call returned something other than a tensor or a list of tensors."""


def _abandon(jit_trace, set_jit_context, config, anything) -> None:
    """Leave MindSpore's trace state as it was before a recording that did not finish: the
    recording is ended (as a graph returning an input, compiled and never run) and forgotten."""
    phase = getattr(jit_trace._trace_jit_context, "phase", "")
    jit_trace._set_compile_only(True)
    try:
        if anything is not None and phase:
            set_jit_context(jit_trace._trace_jit_context)
            jit_trace._jit_trace_end(anything, jit_config=config)
    except Exception:  # (the recorder is reset at the next recording's start)
        pass
    finally:
        jit_trace._set_compile_only(False)
        if anything is not None:  # (a recording that began: its phase is this one)
            jit_trace._trace_compile_cache.discard(phase)
        jit_trace._trace_jit_context.compiled = False
        jit_trace._trace_jit_context.phase = ""
        jit_trace._trace_jit_context.args = None
        jit_trace._using_trace = False
        set_jit_context(None)


def _outputs(plan: _Plan, name: str, result):
    """The model's outputs from the recorded call's flat results: a list (or tuple) of outputs
    as the model gives them, and the logits a softmax or sigmoid output carries for the
    crossentropy losses (``_keras_logits``, which the graph returns after the outputs)."""
    from .activations import _remember_logits

    mask, kind = plan.shapes[name]
    results = list(result) if isinstance(result, (list, tuple)) else [result]
    outs, logits = results[:len(mask)], iter(results[len(mask):])
    for out, carries in zip(outs, mask):
        if carries:
            _remember_logits(out, next(logits))
    return kind(outs) if kind is not None else outs[0]


# --- losses ------------------------------------------------------------------------------


# The loss functions whose recorded graph gives the eager values and gradients
# (tests/runtime/keras/test_compiled_losses.py): the same kernels on the same operands. Not
# bit for bit in every process: PyNative's own eager value of a crossentropy moves by one
# float32 step within a process (the same call, earlier and later), where the recorded one
# does not.
_RECORDED_LOSS_FUNCTIONS = ("sparse_categorical_crossentropy", "categorical_crossentropy", "binary_crossentropy",
                            "mean_squared_error", "mean_absolute_error", "huber")


def _loss_compilable(loss) -> bool:
    """A built-in loss class of the shim's around one of the functions above (a program's own
    subclass, or a wrapper of its own function, may decide in Python on values: eager)."""
    from . import losses

    kind = type(loss)
    return (kind.__module__ == losses.__name__ and issubclass(kind, losses.LossFunctionWrapper)
            and kind.__call__ is losses.Loss.__call__ and kind.call is losses.LossFunctionWrapper.call
            and any(loss.fn is getattr(losses, name) for name in _RECORDED_LOSS_FUNCTIONS))


def call_loss(loss, y_true, y_pred, sample_weight):
    """``loss(y_true, y_pred, sample_weight)`` from a recorded graph, or :data:`NOT`.

    The same recording as a model's call: a built-in loss's value depends on its inputs'
    shapes and dtypes and its own settings only, so it is recorded once per signature and
    replayed (under ``value_and_grad`` with its backward pass), one launch instead of a
    dozen operations. The logits a softmax or sigmoid output carries are a graph input.
    """
    trace = _trace()
    if trace is None or not _loss_compilable(loss) or recording():
        return NOT
    import mindspore as ms

    from .. import draws
    from ._tensors import is_tensor
    from .autodiff import is_building
    from .losses import Loss, _with_logits, num_replicas

    if is_building() or draws.active() or ms.get_context("mode") != ms.PYNATIVE_MODE:
        return NOT
    logits = getattr(y_pred, "_keras_logits", None)
    tensors = tuple(t for t in (y_true, y_pred, logits, sample_weight) if t is not None)
    if not all(is_tensor(t) for t in tensors):
        return NOT
    plan = loss.__dict__.get("_compiled_plan")
    if plan is None:
        plan = loss.__dict__["_compiled_plan"] = _Plan([])
    if plan.broken:
        return NOT
    variant = (logits is not None, sample_weight is not None, num_replicas())
    signature = (variant, tuple((tuple(t.shape), t.dtype) for t in tensors))
    if signature not in plan.signatures:
        if len(plan.signatures) >= MAX_SIGNATURES:
            return NOT
        plan.signatures.add(signature)
    name = f"migrate.keras.{type(loss).__name__}#{plan.uid}#{plan.variants.setdefault(variant, len(plan.variants))}"

    def forward(*values):
        values = list(values)
        truth, predicted = values.pop(0), values.pop(0)
        if logits is not None:
            predicted = _with_logits(predicted, values.pop(0))
        weight = values.pop(0) if sample_weight is not None else None
        plan.shapes[name] = ((False,), None)
        return (Loss.__call__(loss, truth, predicted, weight, _compiled=False),)

    return _run(plan, name, tensors, forward, (), (), trace)
