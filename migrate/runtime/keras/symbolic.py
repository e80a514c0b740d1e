"""Symbolic tensors for the functional API: `Input(shape=...)`, layers called on them, `Model(inputs, outputs)`.

Calling a layer on `KerasTensor`s records a `Node`. To build the layer and learn its
output shape the layer is run once on a zero batch of two examples in inference mode
(so no layer needs a hand-written `compute_output_shape`); the batch dimension of the
result is reported as None again. Arithmetic on KerasTensors (`+ - * / @`, indexing)
records small operation layers, as Keras does.
"""

from __future__ import annotations

import contextlib
import itertools

import numpy as np

from ._tensors import flatten, map_structure

_node_ids = itertools.count()
_PROBE_BATCH = 2


class KerasTensor:
    """A placeholder with a shape (batch dimension None) and a dtype, produced by `Input` or a layer."""

    def __init__(self, shape, dtype="float32", name=None, node=None, index=0):
        self.shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = dtype
        self.name = name
        self.node = node
        self.index = index

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, name={self.name}>"

    # arithmetic records operation layers (saveable: each is a `TensorOperation` of a named operation)
    def __add__(self, other):
        return _binary("add", self, other)

    def __radd__(self, other):
        return _binary("add", self, other, reverse=True)

    def __sub__(self, other):
        return _binary("subtract", self, other)

    def __rsub__(self, other):
        return _binary("subtract", self, other, reverse=True)

    def __mul__(self, other):
        return _binary("multiply", self, other)

    def __rmul__(self, other):
        return _binary("multiply", self, other, reverse=True)

    def __truediv__(self, other):
        return _binary("divide", self, other)

    def __matmul__(self, other):
        return _binary("matmul", self, other)

    def __neg__(self):
        from .layers.core import TensorOperation

        return TensorOperation("negative")(self)

    def __getitem__(self, item):
        from .layers.core import TensorOperation

        return TensorOperation("getitem", item)(self)


def _binary(operation, left, right, reverse=False):
    from .layers.core import TensorOperation

    if isinstance(right, KerasTensor):
        return TensorOperation(operation, reverse=reverse)([left, right])
    return TensorOperation(operation, right, reverse=reverse)(left)


class Node:
    """One layer call in a functional graph: the layer, its (symbolic) arguments and outputs."""

    def __init__(self, layer, args, kwargs, outputs):
        self.id = next(_node_ids)
        self.layer = layer
        self.args = args
        self.kwargs = kwargs
        self.outputs = outputs

    @property
    def inputs(self) -> list:
        return [t for t in flatten((self.args, list(self.kwargs.values()))) if isinstance(t, KerasTensor)]

    @property
    def input_shapes(self):
        shapes = [t.shape for t in self.inputs]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shapes(self):
        shapes = [t.shape for t in flatten(self.outputs)]
        return shapes[0] if len(shapes) == 1 else shapes


def any_symbolic(value) -> bool:
    return any(isinstance(leaf, KerasTensor) for leaf in flatten(value))


# The size an unknown non-batch dimension is probed at: 1, unless a builder needs more (an image
# model whose strided layers need a few pixels: `unknown_dims_probed_at`).
_unknown_size = 1


@contextlib.contextmanager
def unknown_dims_probed_at(size: int):
    """Probe unknown non-batch dimensions (an image model's `(None, None, 3)`) at `size` and at twice
    it: an output dimension that differs between the two is unknown (None) too, as Keras reports it.
    Each output remembers the shapes its two probes had, so the next layer is probed at those (a
    deep layer at the few pixels that reach it, not at `size` again)."""
    global _unknown_size
    saved, _unknown_size = _unknown_size, size
    try:
        yield
    finally:
        _unknown_size = saved


def _probe_shape(shape, scale: int = 1):
    return tuple(_PROBE_BATCH if (d is None and i == 0) else (_unknown_size * scale if d is None else d)
                 for i, d in enumerate(shape))


def zeros_like_symbolic(tensor: KerasTensor, scale: int = 1):
    import mindspore as ms

    dtype = np.dtype(tensor.dtype if isinstance(tensor.dtype, str) else "float32")
    probed = getattr(tensor, "_probed", None)
    shape = probed[scale - 1] if probed is not None else _probe_shape(tensor.shape, scale)
    if np.prod(shape) > 4096 and dtype.kind == "f":  # (filled where it lives: no host array copied over)
        from mindspore import ops

        return ops.zeros(shape, ms.float64 if dtype == np.float64 else ms.float16 if dtype == np.float16 else ms.float32)
    return ms.Tensor(np.zeros(shape, dtype=dtype))


def _to_symbolic(value, batch_is_none: bool):
    shape = tuple(int(d) for d in value.shape)
    if batch_is_none and shape and shape[0] == _PROBE_BATCH:
        shape = (None,) + shape[1:]
    dtype = str(value.dtype).lower().replace("mindspore.", "")
    return KerasTensor(shape, dtype=dtype)


def call_layer(layer, args, kwargs):
    """Record `layer(*args, **kwargs)` on KerasTensors; return symbolic outputs of the right shapes."""
    from .layers.base import training_scope

    symbolic_inputs = [t for t in flatten((args, list(kwargs.values()))) if isinstance(t, KerasTensor)]
    batch_is_none = any(t.shape and t.shape[0] is None for t in symbolic_inputs)

    def probe(scale: int):
        def concrete(leaf):
            return zeros_like_symbolic(leaf, scale) if isinstance(leaf, KerasTensor) else leaf

        concrete_args = map_structure(concrete, args)
        concrete_kwargs = {k: map_structure(concrete, v) for k, v in kwargs.items()}
        concrete_kwargs.pop("training", None)
        with training_scope(False):
            return layer(*concrete_args, training=False, **concrete_kwargs) if layer._call_takes_training \
                else layer(*concrete_args, **concrete_kwargs)

    outputs = probe(1)
    symbolic_outputs = map_structure(lambda o: _to_symbolic(o, batch_is_none), outputs)
    if any(None in t.shape[1:] and (_unknown_size > 1 or getattr(t, "_probed", None)) for t in symbolic_inputs):
        for tensor, first, other in zip(flatten(symbolic_outputs), flatten(outputs), flatten(probe(2))):
            tensor._probed = (tuple(first.shape), tuple(other.shape))
            tensor.shape = tuple(d if i == 0 or d == int(o) else None for i, (d, o) in
                                 enumerate(zip(tensor.shape, other.shape)))
    node = Node(layer, args, dict(kwargs), symbolic_outputs)
    for index, tensor in enumerate(flatten(symbolic_outputs)):
        tensor.node, tensor.index = node, index
        tensor.name = layer.name if index == 0 else f"{layer.name}_{index}"
    layer._inbound_nodes.append(node)
    return symbolic_outputs


def infer_output_shape(layer, input_shape):
    """Output shape of `layer` for `input_shape` (batch dimension included, may be None)."""
    if isinstance(input_shape, (list, tuple)) and input_shape and isinstance(input_shape[0], (list, tuple)):
        inputs = [KerasTensor(s) for s in input_shape]
    else:
        inputs = KerasTensor(input_shape)
    outputs = call_layer(layer, (inputs,), {})
    layer._inbound_nodes.pop()
    return map_structure(lambda t: t.shape, outputs)


def Input(shape=None, batch_size=None, dtype=None, name=None, batch_shape=None, sparse=None, tensor=None,
          ragged=None, optional=False):
    """`tf.keras.Input`: a KerasTensor fed by an `InputLayer` (shape excludes the batch dimension)."""
    from .layers.core import InputLayer

    layer = InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, name=name, batch_shape=batch_shape)
    return layer.output


def graph_nodes(inputs, outputs) -> list:
    """The nodes between `inputs` and `outputs`, in creation (hence topological) order."""
    input_ids = {id(t) for t in flatten(inputs)}
    found, stack = {}, [t for t in flatten(outputs)]
    while stack:
        tensor = stack.pop()
        if id(tensor) in input_ids or tensor.node is None:
            continue
        node = tensor.node
        if node.id in found:
            continue
        found[node.id] = node
        stack.extend(node.inputs)
    return [found[k] for k in sorted(found)]


def run_graph(nodes, inputs, outputs, values):
    """Evaluate a recorded graph on real values for `inputs` (same structure)."""
    memo = {}
    flat_inputs = flatten(inputs)
    flat_values = flatten(values)
    if len(flat_inputs) != len(flat_values):
        raise ValueError(f"The model expects {len(flat_inputs)} input(s), but it received {len(flat_values)} "
                         "input tensors.")
    for tensor, value in zip(flat_inputs, flat_values):
        memo[id(tensor)] = value

    def lookup(leaf):
        return memo[id(leaf)] if isinstance(leaf, KerasTensor) else leaf

    for node in nodes:
        if type(node.layer).__name__ == "InputLayer":
            continue
        args = map_structure(lookup, node.args)
        kwargs = {k: map_structure(lookup, v) for k, v in node.kwargs.items()}
        result = node.layer(*args, **kwargs)
        for tensor, value in zip(flatten(node.outputs), flatten(result)):
            memo[id(tensor)] = value
    return map_structure(lookup, outputs)
