"""`tf.keras.Model`: subclassed (`call`), functional (`Model(inputs, outputs)`), and the base of Sequential.

A subclassed model defines its layers in `__init__` and its computation in
`call(self, inputs, training=False)`; `construct` (MindSpore's entry point) dispatches
to `call`. A functional model replays the graph recorded by calling layers on `Input`s.
`layers` lists the InputLayers first for functional models, as Keras 3 does.
"""

from __future__ import annotations

from .. import compiled
from .. import saving
from .. import symbolic
from . import functional
from .._tensors import flatten
from ..layers.base import Layer, unique_name
from ..layers.core import InputLayer
from .training import Trainer


class Model(Trainer, Layer):
    def __init__(self, *args, **kwargs):
        inputs = kwargs.pop("inputs", None)
        outputs = kwargs.pop("outputs", None)
        args = list(args)
        if args:
            inputs = args.pop(0)
        if args:
            outputs = args.pop(0)
        functional = inputs is not None and outputs is not None
        name = kwargs.pop("name", None)
        if functional and name is None:
            name = unique_name("functional")
        Layer.__init__(self, name=name, trainable=kwargs.pop("trainable", True), dtype=kwargs.pop("dtype", None),
                       **{k: v for k, v in kwargs.items() if k in ("input_shape", "input_dim", "batch_input_shape")})
        self._init_trainer()
        self._graph_inputs = None
        self._graph_outputs = None
        self._nodes: list = []
        if functional:
            self._init_graph(inputs, outputs)

    def __call__(self, *args, **kwargs):
        out = compiled.call(self, args, kwargs)  # (a model of the shim's own layers: its compiled graph)
        return Layer.__call__(self, *args, **kwargs) if out is compiled.NOT else out

    # --- functional graph ---------------------------------------------------------------------

    def _init_graph(self, inputs, outputs) -> None:
        if isinstance(inputs, (list, tuple)) and len(inputs) == 1:  # Keras unwraps a one-input list
            inputs = inputs[0]
        self._graph_inputs = inputs
        self._graph_outputs = outputs
        self._nodes = symbolic.graph_nodes(inputs, outputs)
        input_layers = [t.node.layer for t in flatten(inputs)]
        ordered = list(input_layers)
        for node in self._nodes:
            if node.layer not in ordered and node.layer is not self:
                ordered.append(node.layer)
        self._functional_layers = ordered
        self.built = True
        self._called_once = False

    @property
    def inputs(self):
        return None if self._graph_inputs is None else list(flatten(self._graph_inputs))

    @property
    def outputs(self):
        return None if self._graph_outputs is None else list(flatten(self._graph_outputs))

    @property
    def input(self):
        return self._graph_inputs

    @property
    def output(self):
        return self._graph_outputs

    def call(self, inputs, training=None, mask=None):
        if self._graph_inputs is None:
            raise NotImplementedError(f"Model {type(self).__name__} has no `call` method and no functional graph")
        values = inputs
        graph_inputs = self._graph_inputs
        if isinstance(values, dict) and not isinstance(graph_inputs, dict):
            by_name = {t.name: t for t in flatten(graph_inputs)}
            values = [values[t.name] for t in flatten(graph_inputs)] if set(values) >= set(by_name) else values
        if not isinstance(graph_inputs, (list, tuple, dict)) and isinstance(values, (list, tuple)) and \
                len(values) == 1:
            values = values[0]
        return symbolic.run_graph(self._nodes, graph_inputs, self._graph_outputs, values)

    # --- structure --------------------------------------------------------------------------------

    @property
    def layers(self) -> list:
        if self._graph_inputs is not None:
            return list(self._functional_layers)
        return [cell for cell in self._sublayers() if isinstance(cell, Layer)]

    def get_layer(self, name=None, index=None):
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: {[layer.name for layer in self.layers]}.")

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False, show_trainable=False,
                layer_range=None):
        """Print layers, output shapes and parameter counts (Keras's table, plain text)."""
        print_fn = print_fn or print
        width = line_length or 80
        rows = []
        for layer in self.layers:
            try:
                shape = str(layer.output_shape)
            except AttributeError:
                shape = "?"
            rows.append((f"{layer.name} ({type(layer).__name__})", shape, str(layer.count_params())))
        trainable = sum(int(p.size) for p in self.trainable_weights)
        total = self.count_params()
        lines = [f'Model: "{self.name}"', "-" * width,
                 f"{'Layer (type)':<40}{'Output Shape':<25}{'Param #':>15}", "=" * width]
        lines += [f"{a:<40}{b:<25}{c:>15}" for a, b, c in rows]
        lines += ["=" * width, f"Total params: {total:,}", f"Trainable params: {trainable:,}",
                  f"Non-trainable params: {total - trainable:,}", "-" * width]
        for line in lines:
            print_fn(line)

    # --- saving -----------------------------------------------------------------------------------

    def save_weights(self, filepath, overwrite=True, save_format=None, options=None) -> None:
        """Write the weights (Keras order and layouts) as a MindSpore checkpoint at exactly `filepath`.

        Rank 0 writes, atomically (temporary file + rename); every process waits for it.
        """
        saving.save_weights(self, filepath)

    def load_weights(self, filepath, skip_mismatch=False, by_name=False, options=None):
        """Read weights written by `save_weights` (matched by position, shapes checked), or a Keras HDF5
        weight file TF/Keras wrote (Keras's matching: see `migrate.runtime.keras.hdf5`)."""
        from .. import hdf5

        if hdf5.is_hdf5(filepath):
            hdf5.load_weights(self, filepath, by_name=by_name, skip_mismatch=skip_mismatch)
        else:
            saving.load_weights(self, filepath)
        return _LoadStatus()

    def save(self, filepath, overwrite=True, save_format=None, include_optimizer=True, **kwargs) -> None:
        """Write the model: its architecture (Keras 3's config), compile arguments, weights and optimizer
        state, in one MindSpore checkpoint at `filepath` (a directory path: a file inside it), which
        `load_model` reads back. Rank 0 writes, atomically; every process waits for it."""
        saving.save_model(self, filepath, include_optimizer=include_optimizer)

    def to_json(self, **kwargs) -> str:
        import json

        from ..serialization import serialize_object

        return json.dumps(serialize_object(self), **kwargs)

    # --- configuration (what `save`, `to_json` and `clone_model` rebuild from) -------------------

    _config_holds_layers = True  # `from_config` takes the raw config: its layers come with their links

    def get_config(self) -> dict:
        """A functional model's layers and their links (Keras 3's form); a subclassed model's
        constructor arguments."""
        if self._graph_inputs is None or type(self).__init__ is not Model.__init__:
            return Layer.get_config(self)  # (a class that builds its own graph is made by its constructor)
        return functional.graph_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None, safe_mode=True):
        from ..serialization import deserialize_value

        if "input_layers" in config and "layers" in config:
            return functional.graph_from_config(cls, config, custom_objects, safe_mode)
        try:
            return cls(**deserialize_value(config, custom_objects, safe_mode))
        except TypeError as error:
            raise TypeError(
                f"Unable to revive model {cls.__name__} from its config ({error}). A subclassed model is rebuilt by "
                "calling its constructor with its config: its `get_config()` must return the constructor's "
                "arguments.") from None

    def _compile_config(self) -> dict:
        return {"optimizer": self.optimizer, "loss": self._loss_spec, "loss_weights": self._loss_weights,
                "metrics": self._metric_specs or None, "weighted_metrics": self._weighted_metric_specs or None}

    def _build_for_restore(self, input_shape) -> None:
        """Create the weights of a model whose layers build at their first call (a loaded subclassed
        model), by running it once on zeros of `input_shape`, as Keras builds it from its build config."""
        if type(self).build is not Layer.build:
            self.build(input_shape)
        if not self.built or not self.weights:
            from ..layers.base import training_scope

            with training_scope(False):
                self(_zeros_of(input_shape), training=False)


def _zeros_of(shapes):
    """Zeros of a shape, or of a dict/list/tuple of shapes (unknown sizes as the symbolic probe makes them)."""
    if isinstance(shapes, dict):
        return {key: _zeros_of(value) for key, value in shapes.items()}
    if isinstance(shapes, (list, tuple)) and shapes and all(isinstance(d, int) or d is None for d in shapes):
        return symbolic.zeros_like_symbolic(symbolic.KerasTensor(shapes))
    return type(shapes)(_zeros_of(value) for value in shapes)


class _LoadStatus:
    def expect_partial(self):
        return self

    def assert_consumed(self):
        return self

    def assert_existing_objects_matched(self):
        return self


Functional = Model
__all__ = ["Model", "Functional", "InputLayer"]
