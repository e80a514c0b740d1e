"""Keras's 3-D layers (Conv3D, Conv3DTranspose, 3-D pooling, global 3-D pooling) and `TimeDistributed` in `mk`,
against Keras on the same weights and inputs (the video tutorials' layers)."""

import json

import numpy as np
import pytest

from tests.helpers import python_json

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


KERAS_SIDE = r"""
import json, sys
import numpy as np
import keras
exec(sys.argv[1])
x = np.asarray(json.loads(sys.argv[3]), np.float32)
out = {}
for name in json.loads(sys.argv[2]):
    model = globals()[name](keras)
    rng = np.random.default_rng(11)
    weights = [rng.normal(scale=0.5, size=w.shape).astype(np.float32) for w in model.get_weights()]
    model.set_weights(weights)
    result = model(x, training=True)
    results = result if isinstance(result, (list, tuple)) else [result]
    out[name] = {"weights": [w.tolist() for w in weights], "outputs": [np.asarray(r).tolist() for r in results],
                 "after": [w.tolist() for w in model.get_weights()]}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def keras():
    return python_json(KERAS_SIDE, CASES, json.dumps(NAMES), json.dumps(_inputs().tolist()))


@pytest.mark.parametrize("name", NAMES)
def test_3d_layers_and_time_distributed_compute_kerass_outputs(name, keras):
    scope = {}
    exec(CASES, scope)  # noqa: S102 - the test's own model code, shared with Keras's side
    model = scope[name](mk)
    model.set_weights([np.asarray(w, np.float32) for w in keras[name]["weights"]])
    result = model(_inputs(), training=True)
    results = result if isinstance(result, (list, tuple)) else [result]
    assert len(results) == len(keras[name]["outputs"])
    for ours, theirs in zip(results, keras[name]["outputs"]):
        np.testing.assert_allclose(ours.asnumpy(), np.asarray(theirs, np.float32), rtol=1e-4, atol=1e-5)
    # (the batch normalization's moving statistics move as Keras's, one update per step)
    for ours, theirs in zip(model.get_weights(), keras[name]["after"]):
        np.testing.assert_allclose(ours, np.asarray(theirs, np.float32), rtol=1e-4, atol=1e-5)


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
