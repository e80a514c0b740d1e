"""``keras.applications.VGG16`` and ``VGG19`` on migrate's Keras layers.

Keras 3's builders (``keras.src.applications.vgg16``/``vgg19``, Apache 2.0), ported for
channels-last images: the same layers, names, defaults and checks, and Keras's ImageNet
weights read from its cache (see ``_common``).
"""

from __future__ import annotations

from . import _common

_FILES = {
    "vgg16": (("vgg16_weights_tf_dim_ordering_tf_kernels.h5", "64373286793e3c8b2b4e3219cbf3544b"),
              ("vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5", "6d6bbae143d832006294945121d1f1fc")),
    "vgg19": (("vgg19_weights_tf_dim_ordering_tf_kernels.h5", "cbe5617147190e668d6c5d5026f83318"),
              ("vgg19_weights_tf_dim_ordering_tf_kernels_notop.h5", "253f8cb515780f3b799900260a226db6")),
}


def _vgg(convs_per_block, include_top, weights, input_tensor, input_shape, pooling, classes,
         classifier_activation, name, family):
    from ... import keras as mk

    layers = mk.layers
    img_input, _ = _common.start(weights, include_top, classes, input_tensor, input_shape)
    x = img_input
    from ..symbolic import unknown_dims_probed_at

    with unknown_dims_probed_at(32):
        for block, (filters, count) in enumerate(zip((64, 128, 256, 512, 512), convs_per_block), start=1):
            for index in range(1, count + 1):
                x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same",
                                  name=f"block{block}_conv{index}")(x)
            x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
        if include_top:
            x = layers.Flatten(name="flatten")(x)
            x = layers.Dense(4096, activation="relu", name="fc1")(x)
            x = layers.Dense(4096, activation="relu", name="fc2")(x)
            x = _common.classifier(layers, x, classes, classifier_activation, weights)
        else:
            x = _common.pooled(layers, x, pooling)
    model = _common.model_of(input_tensor, img_input, x, name)

    def imagenet_file():
        file, md5 = _FILES[family][0 if include_top else 1]
        return _common.cached_file(file, f"{_common.BASE_URL}{family}/{file}", md5, f"{family.upper()}(weights='imagenet')")

    return _common.finish(model, weights, imagenet_file)


def VGG16(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
          classifier_activation="softmax", name="vgg16"):
    """Keras's VGG16: five blocks of 2, 2, 3, 3, 3 3x3 convolutions, and a 4096-4096 head."""
    return _vgg((2, 2, 3, 3, 3), include_top, weights, input_tensor, input_shape, pooling, classes,
                classifier_activation, name, "vgg16")


def VGG19(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
          classifier_activation="softmax", name="vgg19"):
    """Keras's VGG19: five blocks of 2, 2, 4, 4, 4 3x3 convolutions, and a 4096-4096 head."""
    return _vgg((2, 2, 4, 4, 4), include_top, weights, input_tensor, input_shape, pooling, classes,
                classifier_activation, name, "vgg19")
