"""``keras.applications``: Keras's image models, their input scaling and ImageNet's class names.

- The models (`VGG16`, `VGG19`, `ResNet50`/`101`/`152` and their `V2` forms, `MobileNetV2`,
  `InceptionV3`, `EfficientNetB0`-`B7`)
  are Keras 3's builders on migrate's Keras layers: the same architecture, layer names and
  defaults, so `get_layer("block_13_expand_relu")`, `trainable = False` and a model built on
  `base.output` work as in Keras. `weights="imagenet"` reads the file Keras caches in
  ``~/.keras/models`` (it does not download); a path loads a Keras HDF5 weights file.
- ``<module>.preprocess_input`` is each model's ImageNet input scaling (``_preprocess``).
- ``decode_predictions`` names the top ImageNet classes of 1,000-way predictions.
"""

from __future__ import annotations

from types import SimpleNamespace

from ._common import decode_predictions
from ._preprocess import MODULES, preprocess_input, scaling_of
from .efficientnet import (EfficientNetB0, EfficientNetB1, EfficientNetB2, EfficientNetB3, EfficientNetB4,
                           EfficientNetB5, EfficientNetB6, EfficientNetB7)
from .inception_v3 import InceptionV3
from .mobilenet_v2 import MobileNetV2
from .resnet import ResNet50, ResNet50V2, ResNet101, ResNet101V2, ResNet152, ResNet152V2
from .vgg import VGG16, VGG19

_MODELS = {
    "vgg16": {"VGG16": VGG16},
    "vgg19": {"VGG19": VGG19},
    "resnet": {"ResNet50": ResNet50, "ResNet101": ResNet101, "ResNet152": ResNet152},
    "resnet50": {"ResNet50": ResNet50},
    "resnet_v2": {"ResNet50V2": ResNet50V2, "ResNet101V2": ResNet101V2, "ResNet152V2": ResNet152V2},
    "mobilenet_v2": {"MobileNetV2": MobileNetV2},
    "inception_v3": {"InceptionV3": InceptionV3},
    "efficientnet": {f"EfficientNetB{i}": b for i, b in enumerate(
        (EfficientNetB0, EfficientNetB1, EfficientNetB2, EfficientNetB3, EfficientNetB4, EfficientNetB5, EfficientNetB6,
         EfficientNetB7))},
}

imagenet_utils = SimpleNamespace(preprocess_input=preprocess_input, decode_predictions=decode_predictions)
for _module in MODULES:
    globals()[_module] = SimpleNamespace(preprocess_input=scaling_of(_module), decode_predictions=decode_predictions,
                                         **_MODELS.get(_module, {}))

__all__ = ["preprocess_input", "decode_predictions", "imagenet_utils", "VGG16", "VGG19", "ResNet50", "ResNet101",
           "ResNet152", "ResNet50V2", "ResNet101V2", "ResNet152V2", "MobileNetV2", "InceptionV3",
           *(f"EfficientNetB{i}" for i in range(8)), *MODULES]
