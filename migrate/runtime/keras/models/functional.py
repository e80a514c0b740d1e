"""A functional model's graph as configuration, and back; and `clone_model`.

The config has Keras 3's shape: `layers` (each layer's serialized form with its `name` and
its `inbound_nodes`, the arguments of each call with every symbolic tensor written as
`{"class_name": "__keras_tensor__", "config": {"keras_history": [layer, node, index]}}`),
`input_layers` and `output_layers` (the same references, in the model's structure).
Each call also records its place in the order the calls were made; rebuilding makes them again
in that order (so the layers, and their weights, come in the same order), each on the tensors
its links name, then makes the model of the result.
"""

from __future__ import annotations

from .._tensors import flatten, map_structure
from ..serialization import deserialize_object, deserialize_value, serialize_object, serialize_value
from ..symbolic import KerasTensor

_TENSOR = "__keras_tensor__"


def _links(value, where):
    """`value` with each KerasTensor written as its reference; the rest serialized."""
    if isinstance(value, KerasTensor):
        layer, node = where[value.node.id]
        return {"class_name": _TENSOR, "config": {"keras_history": [layer, node, value.index]}}
    if isinstance(value, list):
        return [_links(v, where) for v in value]
    if isinstance(value, tuple):
        return {"class_name": "__tuple__", "config": {"value": [_links(v, where) for v in value]}}
    if isinstance(value, dict):
        return {str(k): _links(v, where) for k, v in value.items()}
    return serialize_value(value)


def graph_config(model) -> dict:
    names = [layer.name for layer in model._functional_layers]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"The model {model.name!r} has layers of the same name ({', '.join(repeated)}); a saved "
                         "graph refers to layers by name, so each needs its own.")
    where, calls = {}, {id(layer): [] for layer in model._functional_layers}
    for tensor in flatten(model._graph_inputs):
        where[tensor.node.id] = (tensor.node.layer.name, 0)
    for node in model._nodes:
        own = calls.setdefault(id(node.layer), [])
        where[node.id] = (node.layer.name, len(own))
        own.append(node)
    order = {node.id: index for index, node in enumerate(model._nodes)}  # the calls' order, replayed on load
    layers = [{**serialize_object(layer), "name": layer.name,
               "inbound_nodes": [{"args": _links(list(node.args), where), "kwargs": _links(node.kwargs, where),
                                  "order": order[node.id]} for node in calls[id(layer)]]}
              for layer in model._functional_layers]
    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": _links(model._graph_inputs, where), "output_layers": _links(model._graph_outputs, where)}


class _NotYet(Exception):
    """A call's input is made by a call not replayed yet."""


def _resolve(value, produced, custom_objects, safe_mode):
    if isinstance(value, list):
        return [_resolve(v, produced, custom_objects, safe_mode) for v in value]
    if isinstance(value, dict):
        if value.get("class_name") == _TENSOR:
            layer, node, index = value["config"]["keras_history"]
            if (layer, node) not in produced:
                raise _NotYet
            return produced[(layer, node)][index]
        if value.get("class_name") == "__tuple__" and "config" in value:
            return tuple(_resolve(v, produced, custom_objects, safe_mode) for v in value["config"]["value"])
        if "class_name" in value and "config" in value:
            return deserialize_value(value, custom_objects, safe_mode)
        return {k: _resolve(v, produced, custom_objects, safe_mode) for k, v in value.items()}
    return value


def graph_from_config(cls, config, custom_objects=None, safe_mode=True):
    from ..layers.core import InputLayer

    layers, recorded, produced, calls_made = {}, [], {}, {}
    for entry in config["layers"]:
        layer = deserialize_object({k: entry[k] for k in ("module", "class_name", "config", "registered_name")
                                    if k in entry}, custom_objects, safe_mode)
        layers[entry["name"]] = layer
        calls_made[entry["name"]] = 0
        if isinstance(layer, InputLayer):
            produced[(entry["name"], 0)] = [layer.output]
            calls_made[entry["name"]] = 1
        recorded.append((entry["name"], entry.get("inbound_nodes", [])))

    calls = [(call.get("order"), name, call) for name, entries in recorded for call in entries]
    if any(order is None for order, _, _ in calls):
        raise ValueError(f"The graph config of {config.get('name')!r} does not say the order of its layers' calls "
                         "(it was not written by `model.save`/`to_json` here)")
    # the calls in the order they were made: the same layers in the same order, so the same weights
    for _, name, call in sorted(calls, key=lambda c: c[0]):
        try:
            args = _resolve(call["args"], produced, custom_objects, safe_mode)
            kwargs = _resolve(call["kwargs"], produced, custom_objects, safe_mode)
        except _NotYet:
            raise ValueError(f"The saved graph of {config.get('name')!r} has a call whose inputs no earlier call "
                             "makes") from None
        produced[(name, calls_made[name])] = list(flatten(layers[name](*args, **kwargs)))
        calls_made[name] += 1
    inputs = _resolve(config["input_layers"], produced, custom_objects, safe_mode)
    outputs = _resolve(config["output_layers"], produced, custom_objects, safe_mode)
    model = cls(inputs=inputs, outputs=outputs, name=config.get("name"))
    model._trainable = bool(config.get("trainable", True))  # (its layers' configs carry their own)
    return model


def _default_clone(layer):
    from ..serialization import in_memory

    with in_memory():  # (a Lambda's function is this process's own: no safe mode to pass)
        return type(layer).from_config(layer.get_config())


def clone_model(model, input_tensors=None, clone_function=None, **kwargs):
    """Keras's `clone_model`: the same architecture with new weights (each layer made again from
    its config, or by `clone_function(layer)`); a subclassed model from its own config."""
    from ..layers.core import InputLayer
    from ..symbolic import Input
    from .sequential import Sequential

    clone = clone_function or _default_clone
    if isinstance(model, Sequential):
        layers = [clone(layer) for layer in model.layers]
        if input_tensors is not None:
            layers = [input_tensors] + layers
        elif model._input_layer is not None:
            layers = [InputLayer(batch_shape=model._input_layer.batch_shape, name=model._input_layer.name)] + layers
        return Sequential(layers, name=model.name, trainable=model.trainable)
    if model._graph_inputs is None:
        return type(model).from_config(model.get_config())
    new_inputs = input_tensors if input_tensors is not None else map_structure(
        lambda t: Input(batch_shape=t.shape, dtype=t.dtype, name=t.node.layer.name), model._graph_inputs)
    memo = {id(old): new for old, new in zip(flatten(model._graph_inputs), flatten(new_inputs))}
    made = {}

    def mapped(value):
        if isinstance(value, KerasTensor):
            return memo[id(value)]
        if isinstance(value, (list, tuple)):
            return type(value)(mapped(v) for v in value)
        if isinstance(value, dict):
            return {k: mapped(v) for k, v in value.items()}
        return value

    for node in model._nodes:
        if id(node.layer) not in made:
            made[id(node.layer)] = clone(node.layer)
        outputs = made[id(node.layer)](*mapped(list(node.args)), **mapped(node.kwargs))
        for old, new in zip(flatten(node.outputs), flatten(outputs)):
            memo[id(old)] = new
    return type(model)(inputs=new_inputs, outputs=mapped(model._graph_outputs), name=model.name)
