"""``keras.applications.ResNet50``/``101``/``152`` and their V2 (pre-activation) forms on migrate's
Keras layers.

Keras 3's builders (``keras.src.applications.resnet``/``resnet_v2``, Apache 2.0), ported for
channels-last images: the same layers, names, defaults and checks, and Keras's ImageNet
weights read from its cache (see ``_common``).
"""

from __future__ import annotations

from . import _common

_MD5 = {
    "resnet50": ("2cb95161c43110f7111970584f804107", "4d473c1dd8becc155b73f8504c6f6626"),
    "resnet101": ("f1aeb4b969a6efcfb50fad2f0c20cfc5", "88cf7a10940856eca736dc7b7e228a21"),
    "resnet152": ("100835be76be38e30d865e96f2aaae62", "ee4c566cf9a93f14d82f913c2dc6dd0c"),
    "resnet50v2": ("3ef43a0b657b3be2300d5770ece849e0", "fac2f116257151a9d068a22e544a4917"),
    "resnet101v2": ("6343647c601c52e1368623803854d971", "c0ed64b8031c3730f411d2eb4eea35b5"),
    "resnet152v2": ("a49b44d1979771252814e80f8ec446f9", "ed17cf2e0169df9d443503ef94b23b33"),
}
_EPSILON = 1.001e-5


def _layers():
    from ... import keras as mk

    return mk.layers


def _block_v1(x, filters, kernel_size=3, stride=1, conv_shortcut=True, name=None):
    layers = _layers()
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(x)
        shortcut = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=f"{name}_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=f"{name}_1_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.Conv2D(filters, kernel_size, padding="same", name=f"{name}_2_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=f"{name}_3_bn")(x)
    x = layers.Add(name=f"{name}_add")([shortcut, x])
    return layers.Activation("relu", name=f"{name}_out")(x)


def _stack_v1(x, filters, blocks, stride1=2, name=None):
    x = _block_v1(x, filters, stride=stride1, name=f"{name}_block1")
    for i in range(2, blocks + 1):
        x = _block_v1(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def _block_v2(x, filters, kernel_size=3, stride=1, conv_shortcut=False, name=None):
    layers = _layers()
    preact = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=f"{name}_preact_bn")(x)
    preact = layers.Activation("relu", name=f"{name}_preact_relu")(preact)
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=f"{name}_1_conv")(preact)
    x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=f"{name}_2_pad")(x)
    x = layers.Conv2D(filters, kernel_size, strides=stride, use_bias=False, name=f"{name}_2_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    return layers.Add(name=f"{name}_out")([shortcut, x])


def _stack_v2(x, filters, blocks, stride1=2, name=None):
    x = _block_v2(x, filters, conv_shortcut=True, name=f"{name}_block1")
    for i in range(2, blocks):
        x = _block_v2(x, filters, name=f"{name}_block{i}")
    return _block_v2(x, filters, stride=stride1, name=f"{name}_block{blocks}")


def _resnet(depths, preact, include_top, weights, input_tensor, input_shape, pooling, classes,
            classifier_activation, name, weights_name):
    from ..symbolic import unknown_dims_probed_at

    layers = _layers()
    img_input, _ = _common.start(weights, include_top, classes, input_tensor, input_shape)
    with unknown_dims_probed_at(32):
        x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
        x = layers.Conv2D(64, 7, strides=2, use_bias=True, name="conv1_conv")(x)
        if not preact:
            x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name="conv1_bn")(x)
            x = layers.Activation("relu", name="conv1_relu")(x)
        x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
        x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
        for index, (filters, blocks) in enumerate(zip((64, 128, 256, 512), depths)):
            if preact:
                x = _stack_v2(x, filters, blocks, stride1=1 if index == 3 else 2, name=f"conv{index + 2}")
            else:
                x = _stack_v1(x, filters, blocks, stride1=1 if index == 0 else 2, name=f"conv{index + 2}")
        if preact:
            x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name="post_bn")(x)
            x = layers.Activation("relu", name="post_relu")(x)
        if include_top:
            x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
            x = _common.classifier(layers, x, classes, classifier_activation, weights)
        else:
            x = _common.pooled(layers, x, pooling, names=("avg_pool", "max_pool"))
    model = _common.model_of(input_tensor, img_input, x, name)

    def imagenet_file():
        file = f"{weights_name}_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
        return _common.cached_file(file, f"{_common.BASE_URL}resnet/{file}", _MD5[weights_name][0 if include_top else 1],
                                   f"{name}(weights='imagenet')")

    return _common.finish(model, weights, imagenet_file)


def _builder(depths, preact, default_name, doc):
    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
              classes=1000, classifier_activation="softmax", name=default_name):
        return _resnet(depths, preact, include_top, weights, input_tensor, input_shape, pooling, classes,
                       classifier_activation, name, default_name)

    build.__name__ = build.__qualname__ = {"resnet50": "ResNet50", "resnet101": "ResNet101",
                                           "resnet152": "ResNet152", "resnet50v2": "ResNet50V2",
                                           "resnet101v2": "ResNet101V2", "resnet152v2": "ResNet152V2"}[default_name]
    build.__doc__ = doc
    return build


ResNet50 = _builder((3, 4, 6, 3), False, "resnet50", "Keras's ResNet50: bottleneck stacks of 3, 4, 6, 3 blocks.")
ResNet101 = _builder((3, 4, 23, 3), False, "resnet101", "Keras's ResNet101: bottleneck stacks of 3, 4, 23, 3 blocks.")
ResNet152 = _builder((3, 8, 36, 3), False, "resnet152", "Keras's ResNet152: bottleneck stacks of 3, 8, 36, 3 blocks.")
ResNet50V2 = _builder((3, 4, 6, 3), True, "resnet50v2", "Keras's ResNet50V2: pre-activation stacks of 3, 4, 6, 3.")
ResNet101V2 = _builder((3, 4, 23, 3), True, "resnet101v2", "Keras's ResNet101V2: pre-activation stacks of 3, 4, 23, 3.")
ResNet152V2 = _builder((3, 8, 36, 3), True, "resnet152v2", "Keras's ResNet152V2: pre-activation stacks of 3, 8, 36, 3.")
