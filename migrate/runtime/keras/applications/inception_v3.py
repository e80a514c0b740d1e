"""``keras.applications.InceptionV3`` on migrate's Keras layers.

Keras 3's builder (``keras.src.applications.inception_v3``, Apache 2.0), ported for
channels-last images: the same Inception modules (`mixed0` to `mixed10`), layer names,
defaults (299x299 inputs, 75 at least) and checks, and Keras's ImageNet weights read from
its cache (see ``_common``).
"""

from __future__ import annotations

from . import _common

_FILES = (("inception_v3_weights_tf_dim_ordering_tf_kernels.h5", "9a0d58056eeedaa3f26cb7ebd46da564"),
          ("inception_v3_weights_tf_dim_ordering_tf_kernels_notop.h5", "bcbd6486424b2319ff4ef7d526e38f63"))


def _conv2d_bn(layers, x, filters, num_row, num_col, padding="same", strides=(1, 1), name=None):
    """Keras's `conv2d_bn`: a bias-free convolution, batch normalization without scale, ReLU."""
    x = layers.Conv2D(filters, (num_row, num_col), strides=strides, padding=padding, use_bias=False,
                      name=None if name is None else f"{name}_conv")(x)
    x = layers.BatchNormalization(axis=3, scale=False, name=None if name is None else f"{name}_bn")(x)
    return layers.Activation("relu", name=name)(x)


def _average_branch(layers, x, filters):
    pooled = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x)
    return _conv2d_bn(layers, pooled, filters, 1, 1)


def _module_a(layers, x, pool_filters, name):
    branch1x1 = _conv2d_bn(layers, x, 64, 1, 1)
    branch5x5 = _conv2d_bn(layers, _conv2d_bn(layers, x, 48, 1, 1), 64, 5, 5)
    branch3x3dbl = _conv2d_bn(layers, x, 64, 1, 1)
    branch3x3dbl = _conv2d_bn(layers, _conv2d_bn(layers, branch3x3dbl, 96, 3, 3), 96, 3, 3)
    branch_pool = _average_branch(layers, x, pool_filters)
    return layers.concatenate([branch1x1, branch5x5, branch3x3dbl, branch_pool], axis=3, name=name)


def _module_c(layers, x, width, name):
    branch1x1 = _conv2d_bn(layers, x, 192, 1, 1)
    branch7x7 = _conv2d_bn(layers, x, width, 1, 1)
    branch7x7 = _conv2d_bn(layers, branch7x7, width, 1, 7)
    branch7x7 = _conv2d_bn(layers, branch7x7, 192, 7, 1)
    branch7x7dbl = _conv2d_bn(layers, x, width, 1, 1)
    for filters, (rows, cols) in ((width, (7, 1)), (width, (1, 7)), (width, (7, 1)), (192, (1, 7))):
        branch7x7dbl = _conv2d_bn(layers, branch7x7dbl, filters, rows, cols)
    branch_pool = _average_branch(layers, x, 192)
    return layers.concatenate([branch1x1, branch7x7, branch7x7dbl, branch_pool], axis=3, name=name)


def InceptionV3(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax", name="inception_v3"):
    """Keras's InceptionV3: a convolutional stem, then Inception modules `mixed0` to `mixed10`."""
    from ... import keras as mk
    from ..symbolic import unknown_dims_probed_at

    layers = mk.layers
    img_input, _ = _common.start(weights, include_top, classes, input_tensor, input_shape, default_size=299,
                                 min_size=75, quote="`")
    with unknown_dims_probed_at(96):
        x = _conv2d_bn(layers, img_input, 32, 3, 3, strides=(2, 2), padding="valid")
        x = _conv2d_bn(layers, x, 32, 3, 3, padding="valid")
        x = _conv2d_bn(layers, x, 64, 3, 3)
        x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
        x = _conv2d_bn(layers, x, 80, 1, 1, padding="valid")
        x = _conv2d_bn(layers, x, 192, 3, 3, padding="valid")
        x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
        x = _module_a(layers, x, 32, "mixed0")
        x = _module_a(layers, x, 64, "mixed1")
        x = _module_a(layers, x, 64, "mixed2")
        branch3x3 = _conv2d_bn(layers, x, 384, 3, 3, strides=(2, 2), padding="valid")
        branch3x3dbl = _conv2d_bn(layers, _conv2d_bn(layers, x, 64, 1, 1), 96, 3, 3)
        branch3x3dbl = _conv2d_bn(layers, branch3x3dbl, 96, 3, 3, strides=(2, 2), padding="valid")
        branch_pool = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
        x = layers.concatenate([branch3x3, branch3x3dbl, branch_pool], axis=3, name="mixed3")
        x = _module_c(layers, x, 128, "mixed4")
        for i in range(2):
            x = _module_c(layers, x, 160, f"mixed{5 + i}")
        x = _module_c(layers, x, 192, "mixed7")
        branch3x3 = _conv2d_bn(layers, _conv2d_bn(layers, x, 192, 1, 1), 320, 3, 3, strides=(2, 2), padding="valid")
        branch7x7x3 = _conv2d_bn(layers, x, 192, 1, 1)
        branch7x7x3 = _conv2d_bn(layers, branch7x7x3, 192, 1, 7)
        branch7x7x3 = _conv2d_bn(layers, branch7x7x3, 192, 7, 1)
        branch7x7x3 = _conv2d_bn(layers, branch7x7x3, 192, 3, 3, strides=(2, 2), padding="valid")
        branch_pool = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
        x = layers.concatenate([branch3x3, branch7x7x3, branch_pool], axis=3, name="mixed8")
        for i in range(2):
            branch1x1 = _conv2d_bn(layers, x, 320, 1, 1)
            branch3x3 = _conv2d_bn(layers, x, 384, 1, 1)
            branch3x3 = layers.concatenate([_conv2d_bn(layers, branch3x3, 384, 1, 3),
                                            _conv2d_bn(layers, branch3x3, 384, 3, 1)], axis=3, name=f"mixed9_{i}")
            branch3x3dbl = _conv2d_bn(layers, _conv2d_bn(layers, x, 448, 1, 1), 384, 3, 3)
            branch3x3dbl = layers.concatenate([_conv2d_bn(layers, branch3x3dbl, 384, 1, 3),
                                               _conv2d_bn(layers, branch3x3dbl, 384, 3, 1)], axis=3)
            branch_pool = _average_branch(layers, x, 192)
            x = layers.concatenate([branch1x1, branch3x3, branch3x3dbl, branch_pool], axis=3, name=f"mixed{9 + i}")
        if include_top:
            x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
            x = _common.classifier(layers, x, classes, classifier_activation, weights)
        else:
            x = _common.pooled(layers, x, pooling)
    model = _common.model_of(input_tensor, img_input, x, name)

    def imagenet_file():
        file, md5 = _FILES[0 if include_top else 1]
        return _common.cached_file(file, f"{_common.BASE_URL}inception_v3/{file}", md5,
                                   "InceptionV3(weights='imagenet')")

    return _common.finish(model, weights, imagenet_file)
