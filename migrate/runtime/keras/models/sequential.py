"""`tf.keras.Sequential`: a stack of layers, each fed the previous one's output.

With a known input shape (a leading `Input`/`InputLayer`, or `input_shape=` on the first
layer) every layer is built at once, so the weights exist before the first call, as in
Keras; otherwise the first call builds them. `layers` excludes the InputLayer.
"""

from __future__ import annotations

from .. import compiled
from ..layers.base import Layer
from ..layers.core import InputLayer
from ..symbolic import KerasTensor
from .model import Model


class Sequential(Model):
    def __init__(self, layers=None, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable)
        self._stack: list = []
        self._input_layer = None
        for layer in layers or []:
            self.add(layer, build=False)
        self._build_if_shape_known()

    def add(self, layer, rebuild=True, build=True):
        compiled.forget(self)
        if isinstance(layer, KerasTensor):
            layer = layer.node.layer
        if isinstance(layer, InputLayer):
            if self._stack:
                raise ValueError("An InputLayer must be the first layer of a Sequential model")
            self._input_layer = layer
        else:
            if not isinstance(layer, Layer) and not hasattr(layer, "construct"):
                raise TypeError(f"Only layers can be added to a Sequential model, got {layer!r}")
            self._stack.append(layer)
            self.insert_child_to_cell(f"layer_{len(self._stack) - 1}", layer)
        if build and rebuild:
            self._build_if_shape_known()

    def pop(self):
        compiled.forget(self)
        layer = self._stack.pop()
        self._cells.pop(f"layer_{len(self._stack)}", None)
        return layer

    @property
    def layers(self) -> list:
        return list(self._stack)

    def _known_input_shape(self):
        if self._input_layer is not None:
            return self._input_layer.batch_shape
        if self._stack and getattr(self._stack[0], "_batch_input_shape", None) is not None:
            return self._stack[0]._batch_input_shape
        return None

    def _build_if_shape_known(self) -> None:
        shape = self._known_input_shape()
        if shape is not None and self._stack:
            self.build(shape)

    def build(self, input_shape=None) -> None:
        """Build every layer by running the stack on a symbolic input of `input_shape` (batch included)."""
        if input_shape is None:
            input_shape = self._known_input_shape()
        if input_shape is None:
            raise ValueError("Sequential.build needs an input shape")
        if self._input_layer is None:
            self._input_layer = InputLayer(batch_shape=tuple(input_shape))
        x = self._input_layer.output
        for layer in self._stack:
            x = layer(x)
        self._graph_outputs_shape = x.shape
        self.built = True

    def get_config(self) -> dict:
        from ..serialization import serialize_object

        layers = ([self._input_layer] if self._input_layer is not None else []) + list(self._stack)
        return {"name": self.name, "trainable": self.trainable, "layers": [serialize_object(l) for l in layers]}

    @classmethod
    def from_config(cls, config, custom_objects=None, safe_mode=True):
        from ..serialization import deserialize_value

        layers = deserialize_value(config.get("layers", []), custom_objects, safe_mode)
        return cls(layers, name=config.get("name"), trainable=config.get("trainable", True))

    def call(self, inputs, training=None, mask=None):
        x = inputs
        for layer in self._stack:
            x = layer(x)
        return x

    @property
    def input_shape(self):
        shape = self._known_input_shape()
        if shape is None:
            raise AttributeError("The model has not been built and has no defined input shape.")
        return shape

    @property
    def output_shape(self):
        if self._stack and self._stack[-1]._inbound_nodes:
            return self._stack[-1]._inbound_nodes[-1].output_shapes
        raise AttributeError("The model has not been built and has no defined output shape.")
