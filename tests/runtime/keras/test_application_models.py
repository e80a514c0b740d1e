"""`mk.applications`' models against Keras's, and Keras's HDF5 weight files read without TensorFlow.

Keras builds each application with random weights (and random batch-normalization
statistics, so their order matters), writes them in the HDF5 layout of Keras's ImageNet
files, and predicts; ours builds the same application from that file (`weights=<path>`, or
`weights="imagenet"` from the Keras cache under `$KERAS_HOME`) and must predict the same.
Keras 3's `.weights.h5` and a whole Keras 2-style `model.save("m.h5")` load into the same
architecture built with ours.
"""

import json
import os

import numpy as np
import pytest

from tests.helpers import python_json

pytest.importorskip("mindspore")
pytest.importorskip("h5py")

from migrate.runtime import keras as mk  # noqa: E402

pytestmark = pytest.mark.tf

FEATURES = ["block_1_expand_relu", "block_3_expand_relu", "block_6_expand_relu"]
# name: (builder, keyword arguments, weights file under the folder, input shape)
CASES = {
    "vgg16": ("VGG16", {"input_shape": [32, 32, 3], "classes": 10, "classifier_activation": None}, "vgg16.h5",
              [32, 32, 3]),
    "vgg19_notop_max": ("VGG19", {"include_top": False, "input_shape": [32, 32, 3], "pooling": "max"}, "vgg19.h5",
                        [32, 32, 3]),
    "resnet50": ("ResNet50", {"input_shape": [32, 32, 3], "classes": 7}, "resnet50.h5", [32, 32, 3]),
    "resnet50v2_any_size": ("ResNet50V2", {"include_top": False, "pooling": "avg"}, "resnet50v2.h5", [32, 32, 3]),
    "mobilenet_v2_imagenet": ("MobileNetV2", {"input_shape": [96, 96, 3], "alpha": 0.35, "include_top": False},
                              "models/mobilenet_v2_weights_tf_dim_ordering_tf_kernels_0.35_96_no_top.h5",
                              [96, 96, 3]),
    "inception_v3_any_size": ("InceptionV3", {"include_top": False, "pooling": "avg"}, "inception_v3.h5",
                              [80, 80, 3]),
    "efficientnet_b0_any_size": ("EfficientNetB0", {"include_top": False, "pooling": "max"}, "efficientnetb0.h5",
                                 [48, 48, 3]),
    "efficientnet_b1_top": ("EfficientNetB1", {"input_shape": [32, 32, 3], "classes": 5}, "efficientnetb1.h5",
                            [32, 32, 3]),
}
# Small models written the same way on both sides (`K` is Keras there, ours here).
SMALL = """
def small(K):
    inputs = K.Input((6,))
    hidden = K.layers.Dense(5, activation="relu")(inputs)
    base = K.Model(inputs, K.layers.BatchNormalization()(hidden))
    return K.Sequential([K.Input((6,)), base, K.layers.Dense(4), K.layers.Dense(3)])
"""

KERAS_SIDE = r"""
import json, os, sys
import h5py
import numpy as np
import keras
from keras.src.legacy.saving import legacy_h5_format

cases, folder, features, small_code = json.loads(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]


def randomized(model, seed):
    rng = np.random.default_rng(seed)
    values = []
    for weight in model.weights:
        value = weight.numpy()
        if "moving_variance" in weight.path:
            value = rng.uniform(0.5, 1.5, value.shape)
        elif "moving_mean" in weight.path or "gamma" in weight.path or "beta" in weight.path:
            value = rng.normal(0.0, 0.2, value.shape) + (1.0 if "gamma" in weight.path else 0.0)
        values.append(value.astype(np.float32))
    model.set_weights(values)


out = {}
for name, (builder, kwargs, file, shape) in cases.items():
    keras.backend.clear_session()
    keras.utils.set_random_seed(1)
    model = getattr(keras.applications, builder)(weights=None, **kwargs)
    randomized(model, 0)
    path = os.path.join(folder, file)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with h5py.File(path, "w") as handle:
        legacy_h5_format.save_weights_to_hdf5_group(handle, model)
    x = np.random.default_rng(2).uniform(0, 255, [2] + shape).astype(np.float32)
    entry = {"y": model.predict(x, verbose=0).tolist(), "params": model.count_params(),
             "output_shape": list(model.output.shape),
             "weighted": sorted(layer.name for layer in model.layers if layer.weights)}
    if builder == "MobileNetV2":
        down = keras.Model(model.input, [model.get_layer(n).output for n in features])
        entry["features"] = [f.tolist() for f in down.predict(x, verbose=0)]
        entry["feature_shapes"] = [list(t.shape) for t in down.output]
    out[name] = entry

exec(small_code)
keras.utils.set_random_seed(3)
model = small(keras)
randomized(model, 4)
x = np.random.default_rng(5).normal(size=(4, 6)).astype(np.float32)
model.save_weights(os.path.join(folder, "small.weights.h5"))
model.save(os.path.join(folder, "small_model.h5"))
out["small"] = {"y": model.predict(x, verbose=0).tolist(), "x": x.tolist()}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def keras(tmp_path_factory):
    folder = tmp_path_factory.mktemp("keras_home")
    result = python_json(KERAS_SIDE, json.dumps(CASES), str(folder), json.dumps(FEATURES), SMALL, timeout=600)
    return folder, result


def _close(ours, theirs):
    theirs = np.asarray(theirs, np.float32)
    ours = np.asarray(ours.asnumpy() if hasattr(ours, "asnumpy") else ours)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4 * float(np.abs(theirs).max() or 1.0))


def _build(name, folder, monkeypatch):
    builder, kwargs, file, shape = CASES[name]
    kwargs = {k: tuple(v) if k == "input_shape" else v for k, v in kwargs.items()}
    if name.endswith("_imagenet"):
        monkeypatch.setenv("KERAS_HOME", str(folder))
        weights = "imagenet"
    else:
        weights = str(folder / file)
    mk.backend.clear_session()  # layer names count from zero, as in a fresh Keras session
    return getattr(mk.applications, builder)(weights=weights, **kwargs), shape


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_application_predicts_what_kerass_does_with_its_weights(name, keras, monkeypatch):
    folder, theirs = keras
    model, shape = _build(name, folder, monkeypatch)
    x = np.random.default_rng(2).uniform(0, 255, [2] + shape).astype(np.float32)
    _close(model.predict(x, verbose=0), theirs[name]["y"])
    assert model.count_params() == theirs[name]["params"]
    assert list(model.output.shape) == theirs[name]["output_shape"]
    assert sorted(layer.name for layer in model.layers if layer.weights) == theirs[name]["weighted"]


def test_a_feature_extractor_from_inner_layers_outputs_is_kerass(keras, monkeypatch):
    """The segmentation tutorial's encoder: `Model(base.input, [base.get_layer(n).output ...])`."""
    folder, theirs = keras
    base, shape = _build("mobilenet_v2_imagenet", folder, monkeypatch)
    down = mk.Model(base.input, [base.get_layer(n).output for n in FEATURES])
    assert [list(t.shape) for t in down.output] == theirs["mobilenet_v2_imagenet"]["feature_shapes"]
    x = np.random.default_rng(2).uniform(0, 255, [2] + shape).astype(np.float32)
    for ours, expected in zip(down(x), theirs["mobilenet_v2_imagenet"]["features"]):
        _close(ours, expected)


def _small():
    scope = {}
    exec(SMALL, scope)  # noqa: S102 - the test's own model code, shared with Keras's side
    return scope["small"](mk)


@pytest.mark.parametrize("file", ["small.weights.h5", "small_model.h5"])
def test_keras_weight_files_load_into_the_same_architecture(file, keras):
    """Keras 3's `.weights.h5` (layers by class, nested model inside) and the weights of a whole
    `model.save("m.h5")` (Keras 2's layout), into the model built with ours."""
    folder, theirs = keras
    model = _small()
    model.load_weights(str(folder / file))
    _close(model(np.asarray(theirs["small"]["x"], np.float32)), theirs["small"]["y"])


def test_a_file_that_does_not_fit_changes_no_weight(keras):
    folder, _ = keras
    model = mk.applications.VGG16(input_shape=(32, 32, 3), classes=11, weights=None)
    before = [w.copy() for w in model.get_weights()]
    with pytest.raises(ValueError, match=r"Shape mismatch in .*predictions.* \(4096, 11\).*\(4096, 10\)"):
        model.load_weights(str(folder / "vgg16.h5"))
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
    with pytest.warns(UserWarning, match="Skipping loading weights"):
        model.load_weights(str(folder / "vgg16.h5"), skip_mismatch=True)
    assert not np.array_equal(before[0], model.get_weights()[0])  # the rest loaded
    assert np.array_equal(before[-1], model.get_weights()[-1])  # the head that does not fit kept


def test_by_name_loads_the_layers_the_file_names(keras):
    folder, _ = keras
    model = mk.Sequential([mk.Input((32, 32, 3)), mk.layers.Conv2D(64, 3, padding="same", name="block1_conv1"),
                           mk.layers.Conv2D(8, 3, name="mine")])
    mine = model.get_layer("mine").get_weights()
    with pytest.raises(ValueError, match="Layer count mismatch"):
        model.load_weights(str(folder / "vgg16.h5"))
    model.load_weights(str(folder / "vgg16.h5"), by_name=True)
    reference = mk.applications.VGG16(input_shape=(32, 32, 3), classes=10, classifier_activation=None,
                                      weights=str(folder / "vgg16.h5"))
    for ours, theirs in zip(model.get_layer("block1_conv1").get_weights(),
                            reference.get_layer("block1_conv1").get_weights()):
        assert np.array_equal(ours, theirs)
    assert all(np.array_equal(a, b) for a, b in zip(mine, model.get_layer("mine").get_weights()))


def test_imagenet_weights_are_read_from_kerass_cache_and_never_downloaded(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError) as missing:
        mk.applications.ResNet50(include_top=False, input_shape=(32, 32, 3))
    text = str(missing.value)
    assert os.path.join(str(tmp_path), "models", "resnet50_weights_tf_dim_ordering_tf_kernels_notop.h5") in text
    assert "https://storage.googleapis.com/tensorflow/keras-applications/resnet/" in text and "does not download" in text
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5").write_bytes(b"not Keras's file")
    with pytest.raises(ValueError, match="not the file Keras publishes .*MD5"):
        mk.applications.VGG16(include_top=False, input_shape=(32, 32, 3))
    with pytest.raises(FileNotFoundError, match="imagenet_class_index.json"):
        mk.applications.mobilenet_v2.decode_predictions(np.zeros((1, 1000), np.float32))


@pytest.mark.parametrize("call, message", [
    (lambda: mk.applications.VGG16(classes=10), "`classes` should be 1000"),
    (lambda: mk.applications.ResNet50(weights="nowhere.h5"), "The `weights` argument should be either"),
    (lambda: mk.applications.VGG19(include_top=True, input_shape=(64, 64, 3)), "`input_shape` should be"),
    (lambda: mk.applications.MobileNetV2(alpha=0.6), "alpha must be one of"),
    (lambda: mk.applications.ResNet50(weights=None, input_shape=(16, 16, 3), include_top=False),
     "Input size must be at least 32x32"),
    (lambda: mk.applications.ResNet50(weights=os.curdir, input_shape=(32, 32, 3), classes=10,
                                      classifier_activation="relu"), "Only `None` and `softmax` activations"),
    (lambda: mk.applications.imagenet_utils.decode_predictions(np.zeros((2, 10))), "expects a batch of predictions"),
])
def test_bad_arguments_get_kerass_errors(call, message, tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(ValueError, match=message):
        call()
