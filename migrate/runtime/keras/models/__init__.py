"""`tf.keras.models`: Model, Sequential (and `load_model`, which needs the architecture in code)."""

from .model import Functional, Model
from .sequential import Sequential


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    raise NotImplementedError(
        "migrate's Keras saves weights only (MindSpore checkpoints): build the model in code, then call "
        f"model.load_weights({str(filepath)!r})")


def clone_model(model, input_tensors=None, clone_function=None):
    raise NotImplementedError(
        "migrate's Keras models carry no architecture to copy (MindSpore checkpoints hold weights only): "
        "build the clone with the code that built the model")


__all__ = ["Model", "Sequential", "Functional", "load_model", "clone_model"]
