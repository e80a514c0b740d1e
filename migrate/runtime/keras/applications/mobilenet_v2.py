"""``keras.applications.MobileNetV2`` on migrate's Keras layers.

Keras 3's builder (``keras.src.applications.mobilenet_v2``, Apache 2.0), ported for
channels-last images: the same inverted residual blocks, layer names, width multiplier
(`alpha`), checks and warnings, and Keras's ImageNet weights (one file per `alpha` and
input size) read from its cache (see ``_common``).
"""

from __future__ import annotations

import warnings

from . import _common

_SIZES = (96, 128, 160, 192, 224)
# (filters, stride, expansion) of blocks 0..16
_BLOCKS = ((16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6), (64, 2, 6), (64, 1, 6),
           (64, 1, 6), (64, 1, 6), (96, 1, 6), (96, 1, 6), (96, 1, 6), (160, 2, 6), (160, 1, 6), (160, 1, 6),
           (320, 1, 6))


def _make_divisible(v, divisor, min_value=None):
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:  # round down by no more than 10 %
        new_v += divisor
    return new_v


def _inverted_res_block(inputs, expansion, stride, alpha, filters, block_id):
    from ... import keras as mk

    layers = mk.layers
    in_channels = inputs.shape[-1]
    pointwise_filters = _make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_"
    if block_id:
        x = layers.Conv2D(expansion * in_channels, kernel_size=1, padding="same", use_bias=False, activation=None,
                          name=f"{prefix}expand")(x)
        x = layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=f"{prefix}expand_BN")(x)
        x = layers.ReLU(6.0, name=f"{prefix}expand_relu")(x)
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(padding=_common.correct_pad(x, 3), name=f"{prefix}pad")(x)
    x = layers.DepthwiseConv2D(kernel_size=3, strides=stride, activation=None, use_bias=False,
                               padding="same" if stride == 1 else "valid", name=f"{prefix}depthwise")(x)
    x = layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=f"{prefix}depthwise_BN")(x)
    x = layers.ReLU(6.0, name=f"{prefix}depthwise_relu")(x)
    x = layers.Conv2D(pointwise_filters, kernel_size=1, padding="same", use_bias=False, activation=None,
                      name=f"{prefix}project")(x)
    x = layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=f"{prefix}project_BN")(x)
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=f"{prefix}add")([inputs, x])
    return x


def MobileNetV2(input_shape=None, alpha=1.0, include_top=True, weights="imagenet", input_tensor=None, pooling=None,
                classes=1000, classifier_activation="softmax", name=None):
    """Keras's MobileNetV2: inverted residual blocks of ReLU6 depthwise convolutions, `alpha` the width."""
    from ... import keras as mk
    from ..symbolic import KerasTensor, unknown_dims_probed_at

    layers = mk.layers
    _common.check_weights(weights, include_top, classes, quote="`")
    if input_shape is not None and input_tensor is not None:
        if not isinstance(input_tensor, KerasTensor):
            raise ValueError(f"input_tensor is not a Keras tensor; Received `input_tensor={input_tensor}`")
        if input_tensor.shape[2] != input_shape[1]:
            raise ValueError("input_tensor.shape[2] must equal input_shape[1]; Received "
                             f"`input_tensor.shape={input_tensor.shape}`, `input_shape={input_shape}`")
    if input_shape is None and isinstance(input_tensor, KerasTensor):
        rows, cols = input_tensor.shape[1], input_tensor.shape[2]
        default_size = rows if rows == cols and rows in _SIZES else 224
    elif input_shape is None:
        default_size = 224
    else:
        rows, cols = input_shape[0], input_shape[1]
        default_size = rows if rows == cols and rows in _SIZES else 224
    input_shape = _common.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                             require_flatten=include_top, weights=weights)
    rows, cols = input_shape[0], input_shape[1]
    if weights == "imagenet":
        if alpha not in [0.35, 0.50, 0.75, 1.0, 1.3, 1.4]:
            raise ValueError("If imagenet weights are being loaded, alpha must be one of `0.35`, `0.50`, `0.75`, "
                             f"`1.0`, `1.3` or `1.4` only; Received `alpha={alpha}`")
        if rows != cols or rows not in _SIZES:
            rows = 224
            warnings.warn("`input_shape` is undefined or non-square, or `rows` is not in [96, 128, 160, 192, 224]. "
                          "Weights for input shape (224, 224) will be loaded as the default.", stacklevel=2)
    img_input = _common.image_input(input_tensor, input_shape)
    with unknown_dims_probed_at(32):
        x = layers.Conv2D(_make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2), padding="same",
                          use_bias=False, name="Conv1")(img_input)
        x = layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name="bn_Conv1")(x)
        x = layers.ReLU(6.0, name="Conv1_relu")(x)
        for block_id, (filters, stride, expansion) in enumerate(_BLOCKS):
            x = _inverted_res_block(x, filters=filters, alpha=alpha, stride=stride, expansion=expansion,
                                    block_id=block_id)
        last_block_filters = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
        x = layers.Conv2D(last_block_filters, kernel_size=1, use_bias=False, name="Conv_1")(x)
        x = layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name="Conv_1_bn")(x)
        x = layers.ReLU(6.0, name="out_relu")(x)
        if include_top:
            x = _common.classifier(layers, layers.GlobalAveragePooling2D()(x), classes, classifier_activation, weights)
        else:
            x = _common.pooled(layers, x, pooling)
    model = _common.model_of(input_tensor, img_input, x, name or f"mobilenetv2_{alpha:0.2f}_{rows}")

    def imagenet_file():
        file = f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}{'' if include_top else '_no_top'}.h5"
        return _common.cached_file(file, f"{_common.BASE_URL}mobilenet_v2/{file}", None,
                                   "MobileNetV2(weights='imagenet')")

    return _common.finish(model, weights, imagenet_file)
