"""`tf.keras.models`: Model, Sequential, and whole models saved and rebuilt (`load_model`,
`clone_model`, `model_from_json`, `model_from_config`)."""

from ..saving import load_model
from .functional import clone_model
from .model import Functional, Model
from .sequential import Sequential


def save_model(model, filepath, overwrite=True, **kwargs):
    """`keras.models.save_model(model, path)`: `model.save(path)`."""
    model.save(filepath, overwrite=overwrite, **kwargs)


def model_from_config(config, custom_objects=None):
    """A model from `{"class_name", "config"}` (what `serialize` gives; Keras 2's form too)."""
    from ..serialization import deserialize_object

    if "module" not in config:
        config = {"module": "keras.layers", "registered_name": None, **config}
    return deserialize_object(config, custom_objects)


def model_from_json(json_string, custom_objects=None):
    """The model `model.to_json()` described (new weights)."""
    import json

    return model_from_config(json.loads(json_string), custom_objects)


__all__ = ["Model", "Sequential", "Functional", "load_model", "save_model", "clone_model", "model_from_config", "model_from_json"]
