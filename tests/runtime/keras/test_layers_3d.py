"""Keras's 3-D layers (Conv3D, Conv3DTranspose, 3-D pooling, global 3-D pooling) and `TimeDistributed` in `mk`,
against Keras on the same weights and inputs (the video tutorials' layers)."""

import numpy as np
import pytest
from keras_helpers import assert_case_is_kerass, keras_cases

pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402

pytestmark = pytest.mark.tf

CASES = '''
def conv3d_same_strided(K):
    return K.Sequential([K.Input((5, 7, 9, 4)), K.layers.Conv3D(3, (2, 3, 3), strides=(1, 2, 2), padding="same",
                                                               activation="relu")])


def conv3d_dilated_groups(K):
    return K.Sequential([K.Input((5, 7, 9, 4)), K.layers.Conv3D(4, 3, dilation_rate=(1, 2, 1), groups=2)])


def conv2plus1d(K):
    # The video classification tutorial's (2+1)D convolution: space, then time.
    return K.Sequential([K.Input((5, 7, 9, 4)),
                         K.layers.Conv3D(6, (1, 3, 3), padding="same"),
                         K.layers.Conv3D(6, (3, 1, 1), padding="same"),
                         K.layers.GlobalAveragePooling3D()])


def pools_same(K):
    inputs = K.Input((5, 7, 9, 4))
    return K.Model(inputs, [K.layers.MaxPooling3D(2, padding="same")(inputs),
                            K.layers.AveragePooling3D((1, 2, 2), strides=(1, 2, 2), padding="same")(inputs),
                            K.layers.AveragePooling3D(2)(inputs),
                            K.layers.GlobalMaxPooling3D(keepdims=True)(inputs)])


def time_distributed(K):
    inputs = K.Input((5, 7, 9, 4))
    frames = K.layers.TimeDistributed(K.layers.Conv2D(2, 3, padding="same"))(inputs)
    pooled = K.layers.TimeDistributed(K.layers.GlobalAveragePooling2D())(frames)
    return K.Model(inputs, K.layers.TimeDistributed(K.layers.Dense(3))(pooled))


def conv3d_transpose(K):
    inputs = K.Input((5, 7, 9, 4))
    return K.Model(inputs, [K.layers.Conv3DTranspose(3, (2, 3, 3), strides=2)(inputs),
                            K.layers.Conv3DTranspose(2, 3, strides=(1, 2, 2), padding="same", activation="relu")(inputs),
                            K.layers.Conv3DTranspose(2, 1, strides=2, padding="same", use_bias=False)(inputs)])


def time_distributed_batch_norm(K):
    return K.Sequential([K.Input((5, 7, 9, 4)), K.layers.TimeDistributed(K.layers.BatchNormalization())])
'''
NAMES = ["conv3d_same_strided", "conv3d_dilated_groups", "conv2plus1d", "pools_same", "time_distributed",
         "time_distributed_batch_norm", "conv3d_transpose"]


def _inputs():
    return np.random.default_rng(3).normal(size=(2, 5, 7, 9, 4)).astype(np.float32)


@pytest.fixture(scope="module")
def keras():
    return keras_cases(CASES, NAMES, _inputs(), training=True)


@pytest.mark.parametrize("name", NAMES)
def test_3d_layers_and_time_distributed_compute_kerass_outputs(name, keras):
    # (a batch normalization's moving statistics move as Keras's too, one update per step)
    assert_case_is_kerass(CASES, name, keras, _inputs(), training=True, rtol=1e-4, atol=1e-5)


def test_time_distributed_checks_its_layer_and_input():
    with pytest.raises(ValueError, match="with a `keras.layers.Layer` instance"):
        mk.layers.TimeDistributed(lambda x: x)
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        mk.layers.TimeDistributed(mk.layers.Dense(2))(np.ones((2, 3), np.float32))


def test_conv3d_transpose_differentiates():
    import mindspore as ms

    layer = mk.layers.Conv3DTranspose(2, 3, strides=2, padding="same")
    x = ms.Tensor(_inputs()[:1])
    layer(x)

    def loss():
        return (layer(x) ** 2).sum()

    grads = ms.value_and_grad(loss, None, layer.trainable_weights)()[1]
    assert [tuple(g.shape) for g in grads] == [(3, 3, 3, 2, 4), (2,)] and all(g.asnumpy().any() for g in grads)
