"""`tf.keras.layers.Layer` as a MindSpore Cell.

What follows Keras:
- lazy build: the first call builds the layer from its input's shape (`build(input_shape)`),
  so no input width is needed up front; `input_shape=`/`input_dim=` build it at once;
- weights are MindSpore Parameters stored in Keras layouts (a Dense kernel is `(in, out)`,
  a Conv2D kernel `(kh, kw, in, out)`), so `trainable_variables`, `get_weights()` and
  shapes are what TF shows; a layer transposes internally where MindSpore wants another
  layout;
- `weights` lists a layer's own trainable then non-trainable weights, then its
  sub-layers' (in the order they were assigned), as Keras does;
- `training`: an explicit `training=` wins, otherwise the value of the enclosing call
  propagates (Keras's call context); `None` means inference. An explicit value at the
  outermost call also runs `set_train(training)`, so plain MindSpore cells inside
  (nn.Dropout, nn.BatchNorm) follow it;
- called on symbolic `Input`s the layer records a node for a functional `Model`.

Parameter names are `<layer name>/<weight name>`, with Keras's unique layer names
(`dense`, `dense_1`, ...), so they are unique in a process.
"""

from __future__ import annotations

import collections
import contextlib
import inspect
import re
import threading
import warnings

import numpy as np
from mindspore import Parameter as ms_Parameter
from mindspore import nn

from .. import dtype_policies
from .. import initializers as initializers_module
from ..autodiff import LiveWeights
from .. import constraints as constraints_module
from .. import regularizers as regularizers_module
from ...tfvariable import with_variable_methods
from ..serialization import AutoConfig, with_auto_config
from .._tensors import _ms_dtype, as_tensor, contiguous, flatten, map_structure, tensor_of

_name_counters: collections.Counter = collections.Counter()
_context = threading.local()


def reset_name_counters() -> None:
    _name_counters.clear()


def to_snake_case(name: str) -> str:
    """Keras's `naming.to_snake_case` (`Conv2D` -> `conv2d`, `GlobalAveragePooling2D` ->
    `global_average_pooling2d`), without a leading underscore."""
    name = re.sub(r"\W+", "", name)
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    name = re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()
    return name[1:] if name.startswith("_") else name


def unique_name(base: str) -> str:
    """Keras's auto names: `dense`, `dense_1`, `dense_2`, ..."""
    count = _name_counters[base]
    _name_counters[base] += 1
    return base if count == 0 else f"{base}_{count}"


# Keras 2's global learning phase (`backend.set_learning_phase`): the `training` of an outermost
# call that is given none; None while unset.
_learning_phase: list = [None]


def current_training():
    """The `training` value of the innermost enclosing layer call (outside any call, the global
    learning phase Keras 2's `set_learning_phase` sets; None when it is unset)."""
    stack = getattr(_context, "training", None)
    return stack[-1] if stack else _learning_phase[0]


@contextlib.contextmanager
def training_scope(training):
    stack = getattr(_context, "training", None)
    if stack is None:
        stack = _context.training = []
    stack.append(training)
    try:
        yield
    finally:
        stack.pop()


def _in_call() -> bool:
    return bool(getattr(_context, "training", None))


def shape_of(value):
    """The shape (tuple) of a tensor-like, or a nest of shapes for a nest."""
    if isinstance(value, (list, tuple)) and not hasattr(value, "shape"):
        return type(value)(shape_of(v) for v in value) if not hasattr(value, "_fields") else tuple(
            shape_of(v) for v in value)
    if isinstance(value, dict):
        return {k: shape_of(v) for k, v in value.items()}
    shape = getattr(value, "shape", None)
    if shape is None:
        shape = np.shape(value)
    return tuple(None if d is None else int(d) for d in shape)


def _convert_inputs(value):
    def convert(leaf):
        if isinstance(leaf, (np.ndarray, np.generic, float, int, list)) and not isinstance(leaf, bool):
            return as_tensor(leaf)
        return leaf

    if isinstance(value, list) and value and not any(isinstance(v, (list, tuple)) for v in value) and all(
            isinstance(v, (int, float)) for v in value):
        return as_tensor(value)
    return map_structure(convert, value)


def _keras_mask(value):
    """The mask a tensor carries (`tensor._keras_mask`, as Keras sets it), or those of a list's tensors."""
    if isinstance(value, (list, tuple)):
        masks = [getattr(v, "_keras_mask", None) for v in value]
        return masks if any(m is not None for m in masks) else None
    return getattr(value, "_keras_mask", None)


def _attach_masks(outputs, masks) -> None:
    """Set each output's `_keras_mask` (where it has none yet) to its mask, as Keras's `_set_mask_metadata`."""
    if masks is None:
        return
    flat_outputs = flatten(outputs)
    flat_masks = flatten(masks) if isinstance(masks, (list, tuple)) else [masks]
    if all(getattr(o, "_keras_mask", None) is not None for o in flat_outputs):
        return
    for tensor, mask in zip(flat_outputs, flat_masks):
        if mask is not None and getattr(tensor, "_keras_mask", None) is None:
            try:
                tensor._keras_mask = mask
            except AttributeError:  # (a NumPy array or a Python number carries no attributes)
                pass


def _autocast_for(layer, compute: str):
    """Keras 3's rule for the autocast scope a layer's call runs in (a no-op context when it keeps the current one)."""
    current = dtype_policies.autocast_dtype()
    if current is not None:
        if not layer.autocast or not dtype_policies.is_float(compute):
            return dtype_policies.autocast_scope(None)
        if current != compute:
            return dtype_policies.autocast_scope(compute)
    elif compute != layer.dtype_policy.variable_dtype:
        return dtype_policies.autocast_scope(compute)
    return contextlib.nullcontext()


class Layer(AutoConfig, nn.Cell):
    """Base class of every Keras layer and model here (a MindSpore Cell).

    Subclass as in Keras: create weights in `build(input_shape)` with `add_weight`,
    compute in `call(inputs, training=None)`. `construct` dispatches to `call`.
    """

    def __init__(self, trainable=True, name=None, dtype=None, input_shape=None, input_dim=None,
                 batch_input_shape=None, batch_size=None, autocast=True, **kwargs):
        super().__init__(auto_prefix=True)
        kwargs.pop("dynamic", None)
        kwargs.pop("input_length", None)
        for key in ("activity_regularizer",):
            kwargs.pop(key, None)
        if kwargs:
            raise TypeError(f"{type(self).__name__} got unexpected keyword arguments: {sorted(kwargs)}")
        self.name = name or unique_name(to_snake_case(type(self).__name__))
        self.built = False
        self._trainable = bool(trainable)
        self._own_weights: list = []          # Parameters in creation order
        self._weight_regularizers: list = []  # (regularizer, Parameter)
        self._added_losses: list = []
        self._layer_attrs: list = []          # names of sub-layer attributes in assignment order
        self.dtype_policy = dtype_policies.get(dtype)
        self.dtype = self.dtype_policy.variable_dtype
        self.autocast = bool(autocast)
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        if batch_input_shape is not None:
            self._batch_input_shape = tuple(batch_input_shape)
        elif input_shape is not None:
            self._batch_input_shape = (batch_size,) + tuple(input_shape)
        else:
            self._batch_input_shape = None
        parameters = inspect.signature(self.call).parameters
        self._call_takes_training = "training" in parameters or any(
            p.kind is p.VAR_KEYWORD for p in parameters.values())
        self._call_takes_mask = "mask" in parameters
        positional = [name for name, p in parameters.items() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self._first_argument = positional[0] if positional else "inputs"  # (what Keras checks an input spec on)
        self._inbound_nodes: list = []

    # --- attribute tracking ------------------------------------------------------------

    def __setattr__(self, name, value):
        from ..metrics import Metric

        if isinstance(value, Metric) and not name.startswith("_") and "_cells" in self.__dict__:
            tracked = self.__dict__.setdefault("_tracked_metrics", [])
            if value not in tracked:
                tracked.append(value)
        if isinstance(value, (list, tuple)) and value and any(isinstance(v, nn.Cell) for v in value) \
                and "_cells" in self.__dict__:
            for index, cell in enumerate(value):
                if isinstance(cell, nn.Cell):
                    self.insert_child_to_cell(f"{name}_{index}", cell)
            self.__dict__[name] = value
            return
        if isinstance(value, dict) and value and any(isinstance(v, nn.Cell) for v in value.values()) \
                and "_cells" in self.__dict__:
            for key, cell in value.items():
                if isinstance(cell, nn.Cell):
                    self.insert_child_to_cell(f"{name}_{key}", cell)
            self.__dict__[name] = value
            return
        super().__setattr__(name, value)

    # --- weights -------------------------------------------------------------------------

    @property
    def compute_dtype(self) -> str:
        return self.dtype_policy.compute_dtype

    @property
    def variable_dtype(self) -> str:
        return self.dtype_policy.variable_dtype

    def __getattr__(self, name):
        value = super().__getattr__(name)
        dtype = dtype_policies.autocast_dtype()
        # A trainable float weight is read in the compute dtype (a differentiable cast). State a layer
        # updates in place (non-trainable: counters, statistics) is read as it is, so that an
        # `ops.assign` to it in `call` reaches the Parameter rather than a cast copy.
        if dtype is not None and isinstance(value, ms_Parameter) and getattr(value, "_keras_autocast", False) \
                and getattr(value, "_keras_trainable", True) and dtype_policies.is_float(value.dtype) \
                and dtype_policies.dtype_name(value.dtype) != dtype:
            return value.astype(_ms_dtype(dtype))
        return value

    def add_weight(self, *args, shape=None, initializer=None, dtype=None, trainable=True, regularizer=None,
                   constraint=None, name=None, autocast=True, **kwargs):
        """Create a Parameter (Keras 3 order: shape, initializer, dtype, trainable, ..., name).

        A first positional string is taken as the name (Keras 2's order). Float weights
        default to glorot_uniform, others to zeros, as in Keras.
        """
        args = list(args)
        if args and isinstance(args[0], str):
            name = args.pop(0)
        if args:
            shape = args.pop(0)
        if args:
            initializer = args.pop(0)
        if args:
            dtype = args.pop(0)
        import mindspore as ms

        dtype = dtype or self.dtype or "float32"
        shape = tuple(int(d) for d in (shape or ()))
        if initializer is None:
            initializer = "glorot_uniform" if "float" in str(dtype) else "zeros"
        values = initializers_module.get(initializer)(shape, dtype=dtype)
        attr = self._free_attribute(name or "weight")
        parameter = ms.Parameter(ms.Tensor(contiguous(values)), name=f"{self.name}/{name or attr}",
                                 requires_grad=bool(trainable) and self._trainable)
        parameter._keras_trainable = bool(trainable)
        parameter._keras_constraint = constraints_module.get(constraint)
        parameter._keras_autocast = bool(autocast)
        with_variable_methods(parameter)  # (a subclass's own code calls `self.w.assign_add(...)`)
        super().__setattr__(attr, parameter)
        self._own_weights.append(parameter)
        if regularizer is not None:
            self._weight_regularizers.append((regularizers_module.get(regularizer), parameter))
        return parameter

    def _free_attribute(self, base: str) -> str:
        attr, index = base, 1
        while attr in self.__dict__ or attr in self._params or attr in self._cells or hasattr(type(self), attr):
            attr, index = f"{base}_{index}", index + 1
        return attr

    def _sublayers(self) -> list:
        """Direct sub-cells in assignment order (lists of layers expanded)."""
        return list(self._cells.values())

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self._trainable = bool(value)
        for parameter in self._own_weights:
            parameter.requires_grad = self._trainable and parameter._keras_trainable
        for cell in self._sublayers():
            if isinstance(cell, Layer):
                cell.trainable = value
            else:
                for parameter in cell.get_parameters():
                    parameter.requires_grad = bool(value)

    @property
    def weights(self) -> list:
        """Own trainable, own non-trainable, then each sub-layer's weights (Keras's order)."""
        own = [p for p in self._own_weights if p._keras_trainable] + [
            p for p in self._own_weights if not p._keras_trainable]
        out, seen = [], set()
        for parameter in own + [p for cell in self._sublayers() for p in _cell_weights(cell)]:
            if id(parameter) not in seen:
                seen.add(id(parameter))
                out.append(parameter)
        return out

    def _trainable_list(self) -> list:
        if not self._trainable:
            return []
        return [p for p in self.weights if getattr(p, "_keras_trainable", True) and _requires_grad(p)]

    @property
    def trainable_weights(self) -> LiveWeights:
        """The trainable Parameters, as a list that remembers this layer: handed to
        `mk.value_and_grad` before the first call, it still finds the weights the call
        creates (TF reads `trainable_variables` after the forward pass)."""
        return LiveWeights(self, Layer._trainable_list)

    @property
    def non_trainable_weights(self) -> list:
        trainable = {id(p) for p in self._trainable_list()}
        return [p for p in self.weights if id(p) not in trainable]

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def variables(self) -> list:
        return self.weights

    def get_weights(self) -> list:
        """numpy copies of `weights`, in Keras layouts."""
        return [p.asnumpy().copy() for p in self.weights]

    def set_weights(self, weights) -> None:
        """Assign numpy arrays (Keras layouts, `weights` order); shapes must match."""
        import mindspore as ms

        params = self.weights
        weights = list(weights)
        if len(weights) != len(params):
            raise ValueError(f"You called `set_weights(weights)` on layer {self.name!r} with a weight list of "
                             f"length {len(weights)}, but the layer was expecting {len(params)} weights.")
        for parameter, value in zip(params, weights):
            array = np.asarray(value.asnumpy() if hasattr(value, "asnumpy") else value)
            if tuple(array.shape) != tuple(parameter.shape):
                raise ValueError(f"Layer {self.name!r} weight shape {tuple(parameter.shape)} is not compatible "
                                 f"with provided weight shape {tuple(array.shape)}.")
            parameter.set_data(ms.Tensor(contiguous(array.astype(parameter.asnumpy().dtype))))

    def count_params(self) -> int:
        return int(sum(int(np.prod(p.shape)) for p in self.weights))

    @property
    def losses(self) -> list:
        """Regularization losses of this layer and its sub-layers, computed from current weights."""
        out = [reg(p) for reg, p in self._weight_regularizers] + list(self._added_losses)
        for cell in self._sublayers():
            if isinstance(cell, Layer):
                out.extend(cell.losses)
        return out

    def add_loss(self, loss) -> None:
        self._added_losses.append(loss)

    # --- building and calling ----------------------------------------------------------

    def build(self, input_shape) -> None:
        self.built = True

    def _maybe_build(self, inputs) -> None:
        if self.built:
            return
        shape = shape_of(inputs)
        self.__dict__["_build_input_shape"] = shape  # what a loaded model is built with (`load_model`)
        self.build(shape)
        self.built = True

    def call(self, inputs, *args, **kwargs):
        return inputs

    def construct(self, *args, **kwargs):
        return self.call(*args, **kwargs)

    def _check_input_spec(self, args, kwargs) -> None:
        """Keras's check of the call's first argument (by position or by its name in `call`'s
        signature) against `input_spec`, after Keras's cast of floating inputs to the compute dtype."""
        if self.input_spec:
            from .input_spec import assert_input_compatibility

            first = args[0] if args else kwargs.get(getattr(self, "_first_argument", "inputs"), kwargs.get("inputs"))
            compute = self.dtype_policy.compute_dtype
            if first is not None and self.autocast and dtype_policies.needs_cast(first, compute):
                first = dtype_policies.cast_floats(first, compute)
            assert_input_compatibility(self.input_spec, first, self.name)

    def _call_training(self, explicit):
        """The `training` of a call given `explicit` (None: the enclosing call's); an explicit value at
        the outermost call also sets the cells' own mode (`set_train`)."""
        if explicit is not None and not _in_call() and bool(explicit) != bool(self.training):
            self.set_train(bool(explicit))
        return explicit if explicit is not None else current_training()

    def __call__(self, *args, **kwargs):
        from .. import symbolic

        if symbolic.any_symbolic((args, kwargs)):
            return symbolic.call_layer(self, args, kwargs)
        explicit = kwargs.pop("training", None)
        if args:
            args = (_convert_inputs(args[0]),) + tuple(args[1:])
        elif "inputs" in kwargs:
            kwargs["inputs"] = _convert_inputs(kwargs["inputs"])
        training = self._call_training(explicit)
        self._check_input_spec(args, kwargs)  # (Keras checks the first argument before building)
        if not self.built:
            self._maybe_build(args[0] if args else kwargs.get("inputs"))
            self._check_input_spec(args, kwargs)  # (and again after: `build` may set the spec)
        if self._pending_restore is not None:
            self._restore_pending()
        if self._call_takes_training and training is not None:
            kwargs["training"] = bool(training)
        first = args[0] if args else kwargs.get("inputs")
        previous_mask = _keras_mask(first)
        if self._call_takes_mask:
            if kwargs.get("mask") is None and previous_mask is not None:
                kwargs["mask"] = previous_mask  # Keras hands a layer the mask its input carries
            previous_mask = kwargs.get("mask")
        else:
            kwargs.pop("mask", None)
        compute = self.dtype_policy.compute_dtype
        if self.autocast and args and dtype_policies.needs_cast(args[0], compute):
            args = (dtype_policies.cast_floats(args[0], compute),) + tuple(args[1:])
        scope = _autocast_for(self, compute)
        with training_scope(training), scope:
            out = super().__call__(*args, **kwargs)
        if self._pending_restore is not None:  # a model whose layers build in `call`
            self._restore_pending()
        if self.supports_masking or type(self).compute_mask is not Layer.compute_mask:
            _attach_masks(out, self.compute_mask(first, previous_mask))
        elif previous_mask is not None:
            warnings.warn(f"Layer '{self.name}' (of type {type(self).__name__}) was passed an input with a mask "
                          "attached to it. However, this layer does not support masking and will therefore destroy "
                          "the mask information. Downstream layers will not see the mask.", stacklevel=2)
        return out

    # --- masks (Keras's): a layer's output carries the mask `compute_mask` gives -------------

    supports_masking = False
    input_spec = None  # a `keras.layers.InputSpec` (or several) the first argument of a call must fit

    def compute_mask(self, inputs, previous_mask=None):
        """The mask of the layer's output: by default the input's, passed on (when `supports_masking`)."""
        return previous_mask

    # Checkpoint values restored before the layer had weights: TF restores a variable when it
    # is created; here the values wait for the build (or, for a model whose layers build in
    # `call`, the end of its first call).
    _pending_restore: tuple | None = None

    def _defer_restore(self, prefix: str, entries: dict) -> None:
        self.__dict__["_pending_restore"] = (prefix, entries)

    def _restore_pending(self) -> None:
        from .. import saving

        weights = self.weights
        if not weights:
            return
        prefix, entries = self._pending_restore
        self.__dict__["_pending_restore"] = None
        saving.assign_by_position(prefix, weights, entries, "Checkpoint.restore")

    # --- misc Keras API ------------------------------------------------------------------

    def get_config(self) -> dict:
        """The constructor's arguments (as given; a subclass adds what it changed since) with the
        layer's name, trainability and dtype policy."""
        return with_auto_config(self, {"name": self.name, "trainable": self._trainable,
                                       "dtype": self.dtype_policy.name})

    @classmethod
    def from_config(cls, config):
        from ..serialization import deserialize_value

        return cls(**deserialize_value(config))

    def compute_output_shape(self, input_shape):
        from .. import symbolic

        return symbolic.infer_output_shape(self, input_shape)

    @property
    def input_shape(self):
        if self._inbound_nodes:
            return self._inbound_nodes[0].input_shapes
        if self._batch_input_shape is not None:
            return self._batch_input_shape
        raise AttributeError(f"The layer {self.name!r} has never been called and thus has no defined input shape.")

    @property
    def output_shape(self):
        if self._inbound_nodes:
            return self._inbound_nodes[0].output_shapes
        raise AttributeError(f"The layer {self.name!r} has never been called and thus has no defined output shape.")

    @property
    def input(self):
        """The symbolic input(s) of the layer's first call on KerasTensors (Keras's `layer.input`)."""
        inputs = self._first_node("input").inputs
        return inputs[0] if len(inputs) == 1 else inputs

    @property
    def output(self):
        """The symbolic output(s) of the layer's first call on KerasTensors (Keras's `layer.output`): what
        `Model(base.input, base.get_layer(name).output)` builds a feature extractor from."""
        return self._first_node("output").outputs

    def _first_node(self, what: str):
        if not self._inbound_nodes:
            raise AttributeError(f"The layer {self.name} has never been called and thus has no defined {what}.")
        return self._inbound_nodes[0]

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


def _requires_grad(parameter) -> bool:
    """`parameter.requires_grad` without waiting for the queued work.

    MindSpore's `Parameter.param_info` first waits for every operation queued before it, so a
    training step that reads its trainable weights would stall once per step. The flag is set
    from Python only, so the stored info is read directly where this MindSpore keeps it.
    """
    info = getattr(parameter, "_param_info", None)
    flag = getattr(info, "requires_grad", None)
    return parameter.requires_grad if flag is None else bool(flag)


def _cell_weights(cell) -> list:
    if isinstance(cell, Layer):
        return cell.weights
    return list(cell.get_parameters())


def tensor_or_none(value):
    return None if value is None else tensor_of(value)


class KernelLayer(Layer):
    """A layer with a kernel, an optional bias and an activation (Dense, the convolutions): Keras's
    options for them, and `build_kernel_and_bias` to make both weights."""

    def _kernel_options(self, activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                        bias_regularizer, kernel_constraint, bias_constraint) -> None:
        from .. import activations

        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers_module.get(kernel_initializer)
        self.bias_initializer = initializers_module.get(bias_initializer)
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint

    def build_kernel_and_bias(self, kernel_shape: tuple, units: int) -> None:
        self.kernel = self.add_weight(name="kernel", shape=kernel_shape, initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.bias = self.add_weight(name="bias", shape=(units,), initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.built = True
