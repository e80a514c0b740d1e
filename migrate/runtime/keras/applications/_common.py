"""What Keras's application builders share (``keras.src.applications.imagenet_utils``), and the
ImageNet files they read from Keras's cache.

Keras downloads an application's ImageNet weights (and `decode_predictions`' class index)
into ``~/.keras/models`` (``$KERAS_HOME/models``) on first use. The converted program reads
the same cached files and does not download: every worker of a launched job would, and
a weights file is tens to hundreds of megabytes. A missing file is an error that names the
file, the URL Keras fetches it from and the folder it belongs in; a file whose MD5 differs
from the one Keras checks is refused as not Keras's.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings

import numpy as np

BASE_URL = "https://storage.googleapis.com/tensorflow/keras-applications/"
CLASS_INDEX_URL = "https://storage.googleapis.com/download.tensorflow.org/data/imagenet_class_index.json"
_CLASS_INDEX_MD5 = "c2c37ea517e94d9795004a39431a14cb"
_class_index = None


def cached_file(name: str, url: str, md5: str | None, what: str) -> str:
    """The path of Keras's cached `name` (``<keras home>/models/<name>``), checked against `md5`."""
    from ..utils import file_digest, keras_home

    folder = os.path.join(keras_home(), "models")
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{what}: {path} is not there, and migrate's Keras does not download (every worker would). Fetch "
            f"it once, with Keras itself (the same call in TensorFlow) or from {url}, into {folder}")
    if md5 is not None:
        if file_digest(path, hashlib.md5()) != md5:
            raise ValueError(f"{what}: {path} is not the file Keras publishes (its MD5 differs from {md5}); "
                             f"delete it and fetch {url} again")
    return path


def check_weights(weights, include_top: bool, classes: int, quote: str = "'") -> None:
    if not (weights in {"imagenet", None} or os.path.exists(os.fspath(weights))):
        raise ValueError("The `weights` argument should be either `None` (random initialization), "
                         f"{quote}imagenet{quote} (pre-training on ImageNet), or the path to the weights file to be "
                         f"loaded.  Received: weights={weights}")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError("If using `weights='imagenet'` with `include_top=True`, `classes` should be 1000.  "
                         f"Received classes={classes}")


def obtain_input_shape(input_shape, default_size: int, min_size: int, require_flatten: bool, weights=None):
    """Keras's ``imagenet_utils.obtain_input_shape`` for channels-last images."""
    if weights != "imagenet" and input_shape and len(input_shape) == 3:
        if input_shape[-1] not in {1, 3}:
            warnings.warn("This model usually expects 1 or 3 input channels. However, it was passed an "
                          f"input_shape with {input_shape[-1]} input channels.", stacklevel=3)
        default_shape = (default_size, default_size, input_shape[-1])
    else:
        default_shape = (default_size, default_size, 3)
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and tuple(input_shape) != default_shape:
            raise ValueError("When setting `include_top=True` and loading `imagenet` weights, `input_shape` "
                             f"should be {default_shape}.  Received: input_shape={input_shape}")
        return default_shape
    if input_shape:
        if len(input_shape) != 3:
            raise ValueError("`input_shape` must be a tuple of three integers.")
        if input_shape[-1] != 3 and weights == "imagenet":
            raise ValueError(f"The input must have 3 channels; Received `input_shape={input_shape}`")
        if (input_shape[0] is not None and input_shape[0] < min_size) or \
                (input_shape[1] is not None and input_shape[1] < min_size):
            raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: "
                             f"input_shape={input_shape}")
    else:
        input_shape = default_shape if require_flatten else (None, None, 3)
    if require_flatten and None in input_shape:
        raise ValueError("If `include_top` is True, you should specify a static `input_shape`. "
                         f"Received: input_shape={input_shape}")
    return tuple(input_shape)


def validate_activation(classifier_activation, weights) -> None:
    """Pretrained weights with a top take only `None` or softmax as its activation (Keras's check)."""
    from .. import activations

    if weights is None:
        return
    activation = activations.get(classifier_activation)
    if activation not in {activations.get("softmax"), activations.get(None)}:
        raise ValueError("Only `None` and `softmax` activations are allowed for the `classifier_activation` "
                         "argument when using pretrained weights, with `include_top=True`; Received: "
                         f"classifier_activation={classifier_activation}")


def correct_pad(inputs, kernel_size):
    """Keras's ``imagenet_utils.correct_pad``: zero padding before a strided 'valid' convolution."""
    input_size = inputs.shape[1:3]
    if isinstance(kernel_size, int):
        kernel_size = (kernel_size, kernel_size)
    adjust = (1, 1) if input_size[0] is None else (1 - input_size[0] % 2, 1 - input_size[1] % 2)
    correct = (kernel_size[0] // 2, kernel_size[1] // 2)
    return (correct[0] - adjust[0], correct[0]), (correct[1] - adjust[1], correct[1])


def image_input(input_tensor, input_shape):
    """The model's input: a new `Input`, or the KerasTensor given as `input_tensor`."""
    from ..symbolic import Input, KerasTensor

    if input_tensor is None:
        return Input(shape=input_shape)
    if not isinstance(input_tensor, KerasTensor):
        raise ValueError("`input_tensor` must be a Keras tensor (the output of `keras.Input` or of a layer); "
                         f"Received {input_tensor!r}")
    return input_tensor


def source_inputs(tensor) -> list:
    """The `Input`s a KerasTensor comes from (Keras's ``operation_utils.get_source_inputs``)."""
    found, stack, seen = [], [tensor], set()
    while stack:
        current = stack.pop()
        node = current.node
        if node is None or id(current) in seen:
            continue
        seen.add(id(current))
        if type(node.layer).__name__ == "InputLayer":
            found.append(current)
        else:
            stack.extend(node.inputs)
    return found[0] if len(found) == 1 else found


def start(weights, include_top: bool, classes: int, input_tensor, input_shape, default_size: int = 224,
          min_size: int = 32, quote: str = "'"):
    """The checks every builder starts with, and its input: Keras's `(image input, input shape)`."""
    check_weights(weights, include_top, classes, quote=quote)
    input_shape = obtain_input_shape(input_shape, default_size=default_size, min_size=min_size,
                                     require_flatten=include_top, weights=weights)
    return image_input(input_tensor, input_shape), input_shape


def pooled(layers, x, pooling, names=(None, None)):
    """No top: the feature map, or its global average (`"avg"`) or maximum (`"max"`)."""
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=names[0])(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=names[1])(x)
    return x


def classifier(layers, x, classes, classifier_activation, weights):
    """The `predictions` layer of a top (its activation checked against pretrained weights first)."""
    validate_activation(classifier_activation, weights)
    return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)


def model_of(input_tensor, img_input, x, name):
    """The functional model from the builder's input (the sources of `input_tensor` when given) to `x`."""
    from ..models.model import Model

    return Model(source_inputs(input_tensor) if input_tensor is not None else img_input, x, name=name)


def finish(model, weights, imagenet_file) -> object:
    """Load `weights` into a built application: Keras's ImageNet file from the cache (`imagenet_file()`
    gives its path), or a weights file's path."""
    if weights == "imagenet":
        model.load_weights(imagenet_file())
    elif weights is not None:
        model.load_weights(weights)
    return model


def decode_predictions(preds, top=5):
    """Keras's ``imagenet_utils.decode_predictions``: the `top` ImageNet classes of each row of `preds`
    as `(class_name, class_description, score)`, from the class index Keras caches."""
    global _class_index

    preds = np.asarray(preds.asnumpy() if hasattr(preds, "asnumpy") else preds)
    if len(preds.shape) != 2 or preds.shape[1] != 1000:
        raise ValueError("`decode_predictions` expects a batch of predictions (i.e. a 2D array of shape "
                         f"(samples, 1000)). Received array with shape: {preds.shape}")
    if _class_index is None:
        path = cached_file("imagenet_class_index.json", CLASS_INDEX_URL, _CLASS_INDEX_MD5, "decode_predictions")
        with open(path, encoding="utf-8") as handle:
            _class_index = json.load(handle)
    results = []
    for pred in preds:
        top_indices = pred.argsort()[-top:][::-1]
        result = [tuple(_class_index[str(i)]) + (pred[i],) for i in top_indices]
        result.sort(key=lambda x: x[2], reverse=True)
        results.append(result)
    return results
