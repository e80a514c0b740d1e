"""``tf.saved_model.save`` / ``load`` of Keras models, on the converted program's own model files.

TF writes a SavedModel directory (a graph, variables, signatures) that only TensorFlow
reads. The converted program saves the model as `model.save(export_dir)` does: the
architecture (Keras 3's config), the weights and the optimizer's state in one MindSpore
checkpoint inside the directory, written by rank 0 atomically. `load` rebuilds it and
gives what TF 2.16+ gives for a Keras model: an object whose
``signatures["serving_default"]`` runs the model in inference mode and returns
``{"output_0": ...}`` (``output_1``, ... for more outputs), taking the input by position
or as ``inputs=`` (a model of several inputs: in order, or by their names). The loaded
object is also callable (``loaded(x)``), as TF's was before Keras 3, and keeps the rebuilt
model as ``loaded.keras_model``.

A directory TensorFlow wrote (``saved_model.pb``: a TF Hub model, a model exported by a TF
program) cannot be read without TensorFlow: `load` says so. A subclassed model is saved
when it has a ``get_config`` (Keras's rule for saving), as `model.save` does.
"""

from __future__ import annotations

import os

DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
SERVING = "serve"


class SaveOptions:
    """`tf.saved_model.SaveOptions`: accepted and kept; none changes what is written here (device
    placement, function aliases and namespace whitelists are TF graph matters)."""

    def __init__(self, **options) -> None:
        self.__dict__.update(options)


class LoadOptions(SaveOptions):
    """`tf.saved_model.LoadOptions`: accepted and kept; none changes what is read."""


def _is_keras_model(obj) -> bool:
    from .keras.models.model import Model

    return isinstance(obj, Model)


def save(obj, export_dir, signatures=None, options=None) -> None:
    """Write the Keras model `obj` into the directory `export_dir` (created), as `obj.save(export_dir)`.
    `signatures` are not written: `load` serves the model's own call (TF's default signature)."""
    if not _is_keras_model(obj):
        raise TypeError(f"tf.saved_model.save: {type(obj).__name__} is not a Keras model. The converted program "
                        "saves Keras models (architecture, weights, optimizer); save another object's weights with "
                        "a checkpoint (`tf.train.Checkpoint`)")
    from .keras import saving

    path = os.fspath(export_dir)
    saving.save_model(obj, path if path.endswith(("/", os.sep)) else path + os.sep)


def contains_saved_model(export_dir) -> bool:
    """Whether `export_dir` holds a saved model: one this program's `save` wrote, or TensorFlow's."""
    from .keras import saving

    path = os.fspath(export_dir)
    return os.path.isdir(path) and (os.path.isfile(saving.model_file(path, writing=False))
                                    or os.path.isfile(os.path.join(path, "saved_model.pb")))


class _Signature:
    """The serving function of a loaded model: inference, outputs as ``{"output_<i>": tensor}``."""

    def __init__(self, model) -> None:
        self._model = model
        inputs = model.inputs or []
        self._input_names = [getattr(t, "name", None) for t in inputs]

    def __call__(self, *args, **kwargs):
        from .keras._tensors import flatten

        if args and kwargs:
            raise TypeError("A serving signature takes its inputs by position or by name, not both")
        if kwargs:
            if set(kwargs) == {"inputs"}:
                values = kwargs["inputs"]
            elif len(self._input_names) > 1 and set(kwargs) == set(self._input_names):
                values = [kwargs[name] for name in self._input_names]
            else:
                expected = "inputs" if len(self._input_names) <= 1 else ", ".join(self._input_names)
                raise TypeError(f"The serving signature takes {expected}; received {', '.join(sorted(kwargs))}")
        else:
            values = args[0] if len(args) == 1 else list(args)
        outputs = self._model(values, training=False)
        return {f"output_{index}": value for index, value in enumerate(flatten(outputs))}


class _Loaded:
    """What `load` returns: `signatures`, a call, and the rebuilt Keras model."""

    def __init__(self, model) -> None:
        self.keras_model = model
        self.signatures = {DEFAULT_SERVING_SIGNATURE_DEF_KEY: _Signature(model)}

    def __call__(self, *args, **kwargs):
        kwargs.setdefault("training", False)
        return self.keras_model(*args, **kwargs)

    @property
    def variables(self):
        return self.keras_model.weights

    @property
    def trainable_variables(self):
        return self.keras_model.trainable_weights


def load(export_dir, tags=None, options=None):
    """The model `save` (or `model.save(export_dir)`) wrote into `export_dir`, rebuilt and served."""
    from .keras import saving

    path = os.fspath(export_dir)
    if os.path.isfile(os.path.join(path, "saved_model.pb")) and not os.path.isfile(
            saving.model_file(path, writing=False)):
        raise ValueError(
            f"{path!r} is a SavedModel TensorFlow wrote (saved_model.pb): only TensorFlow reads its graph. Save the "
            "model from the converted program (`tf.saved_model.save`/`model.save` there), or carry its weights over "
            "(`model.load_weights` of a Keras HDF5 file)")
    return _Loaded(saving.load_model(path, compile=False))
