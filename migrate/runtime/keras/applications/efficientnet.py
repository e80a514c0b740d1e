"""``keras.applications.EfficientNetB0`` ... ``B7`` on migrate's Keras layers.

Keras 3's builder (``keras.src.applications.efficientnet``, Apache 2.0), ported for
channels-last images: the same input scaling inside the model (rescaling, ImageNet
normalization), mobile inverted bottleneck blocks with squeeze-and-excitation, layer
names, width and depth scaling, defaults and checks, and Keras's ImageNet weights read from
its cache (see ``_common``).
"""

from __future__ import annotations

import copy
import math

from . import _common

_HASHES = {
    "b0": ("902e53a9f72be733fc0bcb005b3ebbac", "50bc09e76180e00e4465e1a485ddc09d"),
    "b1": ("1d254153d4ab51201f1646940f018540", "74c4e6b3e1f6a1eea24c589628592432"),
    "b2": ("b15cce36ff4dcbd00b6dd88e7857a6ad", "111f8e2ac8aa800a7a99e3239f7bfb39"),
    "b3": ("ffd1fdc53d0ce67064dc6a9c7960ede0", "af6d107764bb5b1abb91932881670226"),
    "b4": ("18c95ad55216b8f92d7e70b3a046e2fc", "ebc24e6d6c33eaebbd558eafbeedf1ba"),
    "b5": ("ace28f2a6363774853a83a0b21b9421a", "38879255a25d3c92d5e44e04ae6cec6f"),
    "b6": ("165f6e37dce68623721b423839de8be5", "9ecce42647a20130c1f39a5d4cb75743"),
    "b7": ("8c03f828fec3ef71311cd463b6759d99", "cbcfe4450ddf6f3ad90b1b398090fe4a"),
}
# (kernel_size, repeats, filters_in, filters_out, expand_ratio, strides) of Keras's default blocks;
# every block skips its input when it can (`id_skip`) and squeezes to a quarter (`se_ratio`).
_BLOCKS = ((3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2), (3, 3, 40, 80, 6, 2),
           (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2), (3, 1, 192, 320, 6, 1))
_STDDEV_RGB = (0.229, 0.224, 0.225)
_CONV_INIT = {"class_name": "VarianceScaling",
              "config": {"scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"}}
_DENSE_INIT = {"class_name": "VarianceScaling",
               "config": {"scale": 1.0 / 3.0, "mode": "fan_out", "distribution": "uniform"}}


def _initializer(spec):
    from ... import keras as mk

    return mk.initializers.VarianceScaling(**spec["config"])


def _block(layers, inputs, activation, drop_rate, name, filters_in, filters_out, kernel_size, strides, expand_ratio,
           se_ratio=0.25, id_skip=True):
    filters = filters_in * expand_ratio
    if expand_ratio != 1:
        x = layers.Conv2D(filters, 1, padding="same", use_bias=False, kernel_initializer=_initializer(_CONV_INIT),
                          name=f"{name}expand_conv")(inputs)
        x = layers.BatchNormalization(axis=3, name=f"{name}expand_bn")(x)
        x = layers.Activation(activation, name=f"{name}expand_activation")(x)
    else:
        x = inputs
    if strides == 2:
        x = layers.ZeroPadding2D(padding=_common.correct_pad(x, kernel_size), name=f"{name}dwconv_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=strides, padding="valid" if strides == 2 else "same",
                               use_bias=False, depthwise_initializer=_initializer(_CONV_INIT), name=f"{name}dwconv")(x)
    x = layers.BatchNormalization(axis=3, name=f"{name}bn")(x)
    x = layers.Activation(activation, name=f"{name}activation")(x)
    if 0 < se_ratio <= 1:
        filters_se = max(1, int(filters_in * se_ratio))
        se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
        se = layers.Reshape((1, 1, filters), name=f"{name}se_reshape")(se)
        se = layers.Conv2D(filters_se, 1, padding="same", activation=activation,
                           kernel_initializer=_initializer(_CONV_INIT), name=f"{name}se_reduce")(se)
        se = layers.Conv2D(filters, 1, padding="same", activation="sigmoid", kernel_initializer=_initializer(_CONV_INIT),
                           name=f"{name}se_expand")(se)
        x = layers.multiply([x, se], name=f"{name}se_excite")
    x = layers.Conv2D(filters_out, 1, padding="same", use_bias=False, kernel_initializer=_initializer(_CONV_INIT),
                      name=f"{name}project_conv")(x)
    x = layers.BatchNormalization(axis=3, name=f"{name}project_bn")(x)
    if id_skip and strides == 1 and filters_in == filters_out:
        if drop_rate > 0:
            x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def EfficientNet(width_coefficient, depth_coefficient, default_size, dropout_rate=0.2, drop_connect_rate=0.2,
                 depth_divisor=8, activation="swish", blocks_args="default", name="efficientnet", include_top=True,
                 weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
                 classifier_activation="softmax", weights_name=None):
    """Keras's EfficientNet builder: the stem, the scaled blocks and the top."""
    from ... import keras as mk
    from ..symbolic import unknown_dims_probed_at

    layers = mk.layers
    if blocks_args == "default":
        blocks_args = [dict(kernel_size=k, repeats=r, filters_in=i, filters_out=o, expand_ratio=e, strides=s)
                       for k, r, i, o, e, s in _BLOCKS]
    img_input, _ = _common.start(weights, include_top, classes, input_tensor, input_shape, default_size=default_size,
                                 quote="`")

    def round_filters(filters, divisor=depth_divisor):
        filters *= width_coefficient
        new_filters = max(divisor, int(filters + divisor / 2) // divisor * divisor)
        if new_filters < 0.9 * filters:
            new_filters += divisor
        return int(new_filters)

    def round_repeats(repeats):
        return int(math.ceil(depth_coefficient * repeats))

    with unknown_dims_probed_at(32):
        x = layers.Rescaling(1.0 / 255.0)(img_input)
        x = layers.Normalization(axis=3)(x)
        if weights == "imagenet":
            x = layers.Rescaling([1.0 / math.sqrt(stddev) for stddev in _STDDEV_RGB])(x)
        x = layers.ZeroPadding2D(padding=_common.correct_pad(x, 3), name="stem_conv_pad")(x)
        x = layers.Conv2D(round_filters(32), 3, strides=2, padding="valid", use_bias=False,
                          kernel_initializer=_initializer(_CONV_INIT), name="stem_conv")(x)
        x = layers.BatchNormalization(axis=3, name="stem_bn")(x)
        x = layers.Activation(activation, name="stem_activation")(x)
        blocks_args = copy.deepcopy(blocks_args)
        b = 0
        blocks = float(sum(round_repeats(args["repeats"]) for args in blocks_args))
        for i, args in enumerate(blocks_args):
            if args["repeats"] <= 0:
                raise ValueError(f"The number of repeats in `EfficientNet` must be > 0. Received: "
                                 f"repeats={args['repeats']}")
            args["filters_in"] = round_filters(args["filters_in"])
            args["filters_out"] = round_filters(args["filters_out"])
            for j in range(round_repeats(args.pop("repeats"))):
                if j > 0:
                    args["strides"] = 1
                    args["filters_in"] = args["filters_out"]
                x = _block(layers, x, activation, drop_connect_rate * b / blocks, f"block{i + 1}{chr(j + 97)}_", **args)
                b += 1
        x = layers.Conv2D(round_filters(1280), 1, padding="same", use_bias=False,
                          kernel_initializer=_initializer(_CONV_INIT), name="top_conv")(x)
        x = layers.BatchNormalization(axis=3, name="top_bn")(x)
        x = layers.Activation(activation, name="top_activation")(x)
        if include_top:
            x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
            if dropout_rate > 0:
                x = layers.Dropout(dropout_rate, name="top_dropout")(x)
            _common.validate_activation(classifier_activation, weights)
            x = layers.Dense(classes, activation=classifier_activation, kernel_initializer=_initializer(_DENSE_INIT),
                             name="predictions")(x)
        else:
            x = _common.pooled(layers, x, pooling, names=("avg_pool", "max_pool"))
    model = _common.model_of(input_tensor, img_input, x, name)

    def imagenet_file():
        file = name + (".h5" if include_top else "_notop.h5")
        md5 = _HASHES[weights_name][0 if include_top else 1]
        return _common.cached_file(file, f"https://storage.googleapis.com/keras-applications/{file}", md5,
                                   f"EfficientNet{weights_name.upper()}(weights='imagenet')")

    return _common.finish(model, weights, imagenet_file)


def _variant(label: str, width: float, depth: float, size: int, dropout: float):
    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
              classifier_activation="softmax", name=f"efficientnet{label}"):
        return EfficientNet(width, depth, size, dropout, name=name, include_top=include_top, weights=weights,
                            input_tensor=input_tensor, input_shape=input_shape, pooling=pooling, classes=classes,
                            classifier_activation=classifier_activation, weights_name=label)

    build.__name__ = build.__qualname__ = f"EfficientNet{label.upper()}"
    build.__doc__ = f"Keras's EfficientNet{label.upper()}: width x{width}, depth x{depth}, {size}-pixel images."
    return build


EfficientNetB0 = _variant("b0", 1.0, 1.0, 224, 0.2)
EfficientNetB1 = _variant("b1", 1.0, 1.1, 240, 0.2)
EfficientNetB2 = _variant("b2", 1.1, 1.2, 260, 0.3)
EfficientNetB3 = _variant("b3", 1.2, 1.4, 300, 0.3)
EfficientNetB4 = _variant("b4", 1.4, 1.8, 380, 0.4)
EfficientNetB5 = _variant("b5", 1.6, 2.2, 456, 0.4)
EfficientNetB6 = _variant("b6", 1.8, 2.6, 528, 0.5)
EfficientNetB7 = _variant("b7", 2.0, 3.1, 600, 0.5)
