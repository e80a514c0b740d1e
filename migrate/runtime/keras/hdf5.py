"""Keras's HDF5 weight files, read without TensorFlow: what TF/Keras trained carries over.

`model.load_weights(path)` on a file TF/Keras wrote reads it here (with h5py) into the
converted model's weights, which keep Keras's layouts, so the arrays go in unchanged:

- **Keras 2's format** (TF 2.x `model.save_weights("w.h5")`, the weights inside a whole
  `model.save("m.h5")`, and Keras's ImageNet weights of `keras.applications`): a
  `layer_names` list, and per layer its `weight_names`. Matched as Keras matches it
  (`legacy_h5_format.load_weights_from_hdf5_group`): by position over the layers that have
  weights, each layer's trainable then non-trainable weights (by name when the file names
  exactly the model's layers: a branched functional model's layer order differs across
  Keras versions); or, with `by_name=True`, by layer name, layers absent from the file left
  as they are. `skip_mismatch=True` skips
  (with a warning) a weight whose shape differs, as Keras does.
- **Keras 3's `.weights.h5`** of a Sequential or functional model (nested ones included): per
  layer `layers/<class in snake case, numbered>/vars/<i>`, matched as Keras 3's `saving_lib`
  matches it (by class and position, not by layer name).

Every shape is checked before anything is written: a file that does not fit changes no
weight. Layers that derive state from their weights (an adapted `Normalization`) derive it
again afterwards, as Keras's `finalize_state`.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def is_hdf5(path) -> bool:
    """Whether `path` is an HDF5 file (by its signature, whatever its suffix)."""
    try:
        with open(os.fspath(path), "rb") as handle:
            return handle.read(8) == _SIGNATURE
    except (IsADirectoryError, FileNotFoundError):
        return False


def _h5py():
    try:
        import h5py
    except ImportError:  # pragma: no cover - h5py comes with the runtime extra
        raise ImportError("Reading Keras HDF5 weight files needs h5py: pip install 'migrate-tf2ms[runtime]'") \
            from None
    return h5py


def load_attributes_from_hdf5_group(group, name: str) -> list:
    """Keras's reader of an attribute list (``layer_names``, ``weight_names``), which Keras splits
    into ``<name>0``, ``<name>1``, ... when it is long: bytes decoded, anything else as stored."""
    if name in group.attrs:
        values = list(group.attrs[name])
    else:
        values, chunk = [], 0
        while f"{name}{chunk}" in group.attrs:
            values.extend(group.attrs[f"{name}{chunk}"])
            chunk += 1
    return [v.decode("utf8") if hasattr(v, "decode") else v for v in values]


def _names(group, attribute: str) -> list[str]:
    return [str(v) for v in load_attributes_from_hdf5_group(group, attribute)]


def _legacy_weights(layer) -> list:
    """Keras 2's order of a layer's weights in its files: trainable, then non-trainable."""
    return list(layer.trainable_weights) + list(layer.non_trainable_weights)


def load_weights(model, path, by_name: bool = False, skip_mismatch: bool = False) -> None:
    h5py = _h5py()
    path = os.fspath(path)
    with h5py.File(path, "r") as handle:
        group = handle["model_weights"] if "layer_names" not in handle.attrs and "model_weights" in handle \
            else handle
        if "layer_names" in group.attrs or "layer_names0" in group.attrs:
            pairs = _legacy_pairs(group, model, by_name, skip_mismatch, path)
        elif "layers" in group or "vars" in group:
            pairs = _keras3_pairs(group, model, path)
        else:
            raise ValueError(f"{path!r} is an HDF5 file but not one of Keras's weight files (it has neither "
                             "`layer_names` nor `layers/`)")
        _assign(pairs, path, skip_mismatch)
    from .saving import finalize_layers

    finalize_layers(model)


def _values(layer_group) -> list:
    return [np.asarray(layer_group[name]) for name in _names(layer_group, "weight_names")]


def _legacy_pairs(group, model, by_name: bool, skip_mismatch: bool, path: str) -> list:
    saved = [name for name in _names(group, "layer_names") if _names(group[name], "weight_names")]
    if by_name:
        index: dict[str, list] = {}
        for layer in model.layers:
            index.setdefault(layer.name, []).append(layer)
        pairs = []
        for k, name in enumerate(saved):
            values = _values(group[name])
            for layer in index.get(name, []):
                weights = _legacy_weights(layer)
                if len(values) != len(weights):
                    _mismatch(f"Weight count mismatch for layer #{k} (named {layer.name}): the layer expects "
                              f"{len(weights)} weight(s), {path!r} holds {len(values)}", skip_mismatch)
                    continue
                pairs += [(w, v, f"layer #{k} (named {layer.name})") for w, v in zip(weights, values)]
        return pairs
    layers = [layer for layer in keras_layer_order(model) if _legacy_weights(layer)]
    names = [layer.name for layer in layers]
    if sorted(saved) == sorted(names) and len(set(names)) == len(names):
        # The file names exactly the model's layers: pair by name. A functional model with branches
        # (a residual shortcut) lists its layers in an order that differs across Keras versions.
        layers = [layers[names.index(name)] for name in saved]
    if len(saved) != len(layers):
        raise ValueError(f"Layer count mismatch when loading weights from {path!r}: the model has {len(layers)} "
                         f"layers with weights, the file {len(saved)}")
    pairs = []
    for k, (name, layer) in enumerate(zip(saved, layers)):
        values, weights = _values(group[name]), _legacy_weights(layer)
        if len(values) != len(weights):
            raise ValueError(f"Weight count mismatch for layer #{k} (named {layer.name} in the model, {name} in "
                             f"the file): the layer expects {len(weights)} weight(s), the file holds {len(values)}")
        pairs += [(w, v, f"layer #{k} (named {layer.name})") for w, v in zip(weights, values)]
    if "top_level_model_weights" in group:
        values = _values(group["top_level_model_weights"])
        inner = {id(w) for layer in layers for w in _legacy_weights(layer)}
        own = [w for w in _legacy_weights(model) if id(w) not in inner]
        if len(values) != len(own):
            raise ValueError(f"Weight count mismatch for the model's own weights in {path!r}: the model has "
                             f"{len(own)}, the file {len(values)}")
        pairs += [(w, v, "the top-level model") for w, v in zip(own, values)]
    return pairs


def keras_layer_order(model) -> list:
    """`model.layers` in the order Keras lists a functional model's layers, which is the order of
    its weight files: deepest from the outputs first, ties in the order a walk from the outputs
    meets them (Keras's ``map_graph``). `model.layers` here is the order the layers were called;
    the two differ where the graph branches (an Inception module's towers)."""
    if getattr(model, "_graph_inputs", None) is None:
        return list(model.layers)
    from .symbolic import flatten

    inputs = [id(t) for t in flatten(model._graph_inputs)]
    finished, in_decreasing_depth, index = set(), [], {}

    def walk(tensor):  # Keras's `_build_map_helper`, the parents first
        node = tensor.node
        if node is None or id(node) in finished:
            return
        is_input = type(node.layer).__name__ == "InputLayer"
        if not is_input and id(tensor) in inputs:
            finished.add(id(node))
            return
        index.setdefault(node.layer, len(index))
        if not is_input:
            for parent in node.inputs:
                walk(parent)
        finished.add(id(node))
        in_decreasing_depth.append(node)

    for output in flatten(model._graph_outputs):
        walk(output)
    in_graph = {id(node) for node in in_decreasing_depth}
    node_depth, layer_depth = {}, {}
    for node in reversed(in_decreasing_depth):
        depth = max(node_depth.setdefault(id(node), 0), layer_depth.get(node.layer, 0))
        layer_depth[node.layer] = node_depth[id(node)] = depth
        for parent in node.inputs:
            if parent.node is not None and id(parent.node) in in_graph:
                node_depth[id(parent.node)] = max(depth + 1, node_depth.get(id(parent.node), 0))
    for tensor in flatten(model._graph_inputs):
        if tensor.node is not None and tensor.node.layer not in layer_depth:
            layer_depth[tensor.node.layer], index[tensor.node.layer] = 0, -1
    ordered = sorted(layer_depth, key=lambda layer: (-layer_depth[layer], index[layer]))
    listed = set(map(id, model.layers))
    return [layer for layer in ordered if id(layer) in listed]


def _own_weights(layer) -> list:
    """A layer's own weights (not its sublayers'), trainable then not: Keras 3's `vars/<i>` order."""
    inner = {id(w) for sub in _sublayers(layer) for w in sub.weights}
    return [w for w in _legacy_weights(layer) if id(w) not in inner]


def _sublayers(layer) -> list:
    return list(getattr(layer, "layers", None) or []) if hasattr(layer, "get_layer") else []


def _class_key(layer) -> str:
    """What Keras 3 files a layer under: its class's name in snake case (a model built from inputs and
    outputs is Keras's `Functional`)."""
    if hasattr(layer, "get_layer") and getattr(layer, "_graph_inputs", None) is not None \
            and type(layer).__name__ == "Model":
        return "functional"
    from .layers.base import to_snake_case

    return to_snake_case(type(layer).__name__)


def _keras3_pairs(group, model, path: str) -> list:
    """Keras 3's `saving_lib` layout: a Sequential or functional model's layers under `layers/`, each
    by its class's snake-case name (`dense`, `dense_1`, ... in the order of `model.layers`), its own
    weights in `vars/0`, `vars/1`, ..."""
    pairs = []

    def visit(layer, node, where: str) -> None:
        own = _own_weights(layer)
        if own:
            stored = node["vars"] if "vars" in node else {}
            if len(stored) != len(own):
                raise ValueError(f"{path!r} holds {len(stored)} weight(s) for {where or 'the model'}, the layer "
                                 f"{layer.name!r} has {len(own)}")
            pairs.extend((w, np.asarray(stored[str(i)]), where) for i, w in enumerate(own))
        subs = _sublayers(layer)
        if not subs:
            if _legacy_weights(layer) and not own:
                raise ValueError(f"{path!r}: the weights of {layer.name!r} belong to objects inside it this reader "
                                 "does not walk (a subclassed layer's attributes); assign them with `set_weights`")
            return
        used: dict[str, int] = {}
        for sub in subs:
            key = _class_key(sub)
            if key in used:
                used[key] += 1
                key = f"{key}_{used[key]}"
            else:
                used[key] = 0
            if not sub.weights:
                continue
            inner = f"{where}/layers/{key}" if where else f"layers/{key}"
            if key not in node.get("layers", {}):
                raise ValueError(f"{path!r} has no weights for layer {sub.name!r} (Keras 3 files it under {inner})")
            visit(sub, node["layers"][key], inner)

    if not _sublayers(model) and _legacy_weights(model):
        raise ValueError(f"{path!r} is a Keras 3 weights file; this reader matches the layers of Sequential and "
                         f"functional models, and {model.name!r} is a subclassed model: assign its weights with "
                         "`set_weights`")
    visit(model, group, "")
    return pairs


def _mismatch(message: str, skip_mismatch: bool) -> None:
    """A weight that does not fit: skipped with a warning (`skip_mismatch`, as Keras), else an error."""
    if not skip_mismatch:
        raise ValueError(message)
    warnings.warn(f"Skipping loading weights: {message}", stacklevel=4)


def _assign(pairs: list, path: str, skip_mismatch: bool) -> None:
    import mindspore as ms

    from ._tensors import contiguous

    checked = []
    for weight, value, where in pairs:
        if tuple(value.shape) != tuple(weight.shape):
            _mismatch(f"Shape mismatch in {where} for weight {weight.name}: the weight has shape "
                      f"{tuple(weight.shape)}, {path!r} holds shape {tuple(value.shape)}", skip_mismatch)
            continue
        checked.append((weight, value))
    for weight, value in checked:
        weight.set_data(ms.Tensor(contiguous(value.astype(weight.asnumpy().dtype))))
