"""`mk.applications.<model>.preprocess_input` against Keras's on the same images: every
model module, NumPy arrays (float, scaled in place as Keras does, and integer) and tensors,
channels last and first, and `imagenet_utils.preprocess_input`'s modes."""

import json

import numpy as np
import pytest

from tests.helpers import python_json

ms = pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402

pytestmark = pytest.mark.tf

MODULES = ["mobilenet", "mobilenet_v2", "inception_v3", "inception_resnet_v2", "xception", "nasnet", "resnet_v2",
           "vgg16", "vgg19", "resnet", "resnet50", "densenet", "mobilenet_v3", "efficientnet", "efficientnet_v2",
           "convnext"]
IMAGES = np.random.default_rng(4).integers(0, 256, size=(2, 3, 4, 3)).astype(np.uint8)

KERAS_SIDE = r"""
import json, sys
import numpy as np
import tensorflow as tf

modules, images = json.loads(sys.argv[1]), np.array(json.loads(sys.argv[2]), np.uint8)
out = {}
for name in modules:
    fn = getattr(tf.keras.applications, name).preprocess_input
    floats = images.astype(np.float32)
    got = fn(floats)
    out[name + "/float"] = [np.asarray(got).tolist(), bool(np.shares_memory(np.asarray(got), floats)),
                            floats.tolist()]
    out[name + "/uint8"] = [np.asarray(fn(images.copy())).tolist(), False, images.tolist()]
    out[name + "/tensor"] = [np.asarray(fn(tf.constant(images.astype(np.float32)))).tolist(), False, None]
for mode in ("caffe", "tf", "torch"):
    for data_format in ("channels_last", "channels_first"):
        for rank in (3, 4):
            array = images.astype(np.float32).transpose(0, 3, 1, 2) if data_format == "channels_first" else images.astype(np.float32)
            array = array[0] if rank == 3 else array
            key = f"utils/{mode}/{data_format}/{rank}"
            numpy = tf.keras.applications.imagenet_utils.preprocess_input(array.copy(), data_format=data_format, mode=mode)
            tensor = tf.keras.applications.imagenet_utils.preprocess_input(tf.constant(array), data_format=data_format, mode=mode)
            out[key] = [np.asarray(numpy).tolist(), np.asarray(tensor).tolist()]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def keras():
    return python_json(KERAS_SIDE, json.dumps(MODULES), json.dumps(IMAGES.tolist()))


@pytest.mark.parametrize("name", MODULES)
def test_each_models_scaling_is_kerass(name, keras):
    fn = getattr(mk.applications, name).preprocess_input
    floats = IMAGES.astype(np.float32)
    got = fn(floats)
    want, shared, after = keras[name + "/float"]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-5)
    assert np.shares_memory(got, floats) == shared  # (Keras scales a float array in place, or not at all)
    np.testing.assert_allclose(floats, after, rtol=1e-6, atol=1e-5)
    integers = IMAGES.copy()
    np.testing.assert_allclose(np.asarray(fn(integers)), keras[name + "/uint8"][0], rtol=1e-6, atol=1e-5)
    assert (integers == IMAGES).all()
    tensor = fn(ms.Tensor(IMAGES.astype(np.float32)))
    assert isinstance(tensor, ms.Tensor) or name in ("mobilenet_v3", "efficientnet", "efficientnet_v2", "convnext")
    np.testing.assert_allclose(np.asarray(tensor.asnumpy()), keras[name + "/tensor"][0], rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("mode", ["caffe", "tf", "torch"])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
@pytest.mark.parametrize("rank", [3, 4])
def test_imagenet_utils_modes_and_layouts_are_kerass(keras, mode, data_format, rank):
    array = IMAGES.astype(np.float32).transpose(0, 3, 1, 2) if data_format == "channels_first" else IMAGES.astype(np.float32)
    array = array[0] if rank == 3 else array
    numpy, tensor = keras[f"utils/{mode}/{data_format}/{rank}"]
    fn = mk.applications.imagenet_utils.preprocess_input
    np.testing.assert_allclose(fn(array.copy(), data_format=data_format, mode=mode), numpy, rtol=1e-6, atol=1e-5)
    got = fn(ms.Tensor(array), data_format=data_format, mode=mode)
    np.testing.assert_allclose(got.asnumpy(), tensor, rtol=1e-6, atol=1e-5)


def test_bad_arguments_get_kerass_errors():
    with pytest.raises(ValueError, match="Expected mode to be one of"):
        mk.applications.imagenet_utils.preprocess_input(IMAGES, mode="other")
    with pytest.raises(ValueError, match="Expected data_format to be one of"):
        mk.applications.vgg16.preprocess_input(IMAGES, data_format="nhwc")
