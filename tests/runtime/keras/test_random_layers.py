"""Keras's random image layers: what each image may become, how often, and inference, on both sides
(the draws are each framework's own)."""

import json

import numpy as np
import pytest

from tests.helpers import python_json

ms = pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402

pytestmark = pytest.mark.tf

IMAGES = np.random.default_rng(0).normal(size=(400, 3, 4, 2)).astype(np.float32)
MODES = ("horizontal", "vertical", "horizontal_and_vertical")


def _kinds(out: np.ndarray) -> dict:
    """The share of images left as they were, and flipped each way."""
    h, v = np.flip(IMAGES, 2), np.flip(IMAGES, 1)
    kinds = {"same": IMAGES, "h": h, "v": v, "hv": np.flip(h, 1)}
    return {k: float(np.mean(np.all(out == image, axis=(1, 2, 3)))) for k, image in kinds.items()}


KERAS_SIDE = r"""
import json, sys
import numpy as np
import tensorflow as tf

images = np.random.default_rng(0).normal(size=(400, 3, 4, 2)).astype(np.float32)
out = {}
for mode in ("horizontal", "vertical", "horizontal_and_vertical"):
    layer = tf.keras.layers.RandomFlip(mode, seed=1)
    flipped = np.asarray(layer(images, training=True))
    h, v = np.flip(images, 2), np.flip(images, 1)
    kinds = {"same": images, "h": h, "v": v, "hv": np.flip(h, 1)}
    out[mode] = {k: float(np.mean(np.all(flipped == image, axis=(1, 2, 3)))) for k, image in kinds.items()}
    out[mode + "/inference"] = bool(np.array_equal(np.asarray(layer(images, training=False)), images))
    out[mode + "/single"] = list(np.asarray(layer(images[0])).shape)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def keras():
    return python_json(KERAS_SIDE)


@pytest.mark.parametrize("mode", MODES)
def test_random_flip_makes_what_kerass_makes_as_often(mode, keras):
    layer = mk.layers.RandomFlip(mode)
    ours, theirs = _kinds(layer(IMAGES, training=True).asnumpy()), keras[mode]
    # the same kinds of image come out (with both ways, one draw flips both: never one way alone)
    assert {k for k, share in ours.items() if share > 0} == {k for k, share in theirs.items() if share > 0}
    assert ours["same"] + max(ours["h"], ours["v"], ours["hv"]) == pytest.approx(1.0)
    assert ours["same"] == pytest.approx(0.5, abs=0.08) and theirs["same"] == pytest.approx(0.5, abs=0.08)
    assert np.array_equal(layer(IMAGES, training=False).asnumpy(), IMAGES) and keras[mode + "/inference"]
    assert list(layer(IMAGES[0]).shape) == keras[mode + "/single"] == [3, 4, 2]


def test_a_model_with_random_flip_predicts_without_flipping():
    model = mk.Sequential([mk.Input(shape=(3, 4, 2)), mk.layers.RandomFlip("horizontal"), mk.layers.Flatten()])
    np.testing.assert_array_equal(model.predict(IMAGES[:8], verbose=0), IMAGES[:8].reshape(8, -1))


# -- RandomRotation and RandomZoom: given the draw (a range of one value), the image Keras makes --

AFFINE_CASES = {
    "rotation": ("RandomRotation", {"factor": (0.1, 0.1)}),
    "rotation-back": ("RandomRotation", {"factor": (-0.3, -0.3), "fill_mode": "wrap", "interpolation": "nearest"}),
    "rotation-constant": ("RandomRotation", {"factor": (0.6, 0.6), "fill_mode": "constant", "fill_value": 7.0}),
    "zoom-out": ("RandomZoom", {"height_factor": (0.4, 0.4)}),
    "zoom-in": ("RandomZoom", {"height_factor": (-0.35, -0.35), "width_factor": (0.25, 0.25),
                               "fill_mode": "nearest"}),
    "zoom-nearest": ("RandomZoom", {"height_factor": (0.5, 0.5), "interpolation": "nearest", "fill_mode": "constant"}),
}
PICTURES = np.random.default_rng(4).integers(0, 255, size=(2, 9, 11, 3)).astype(np.uint8)

KERAS_AFFINE = r"""
import json, sys
import numpy as np
import tensorflow as tf

cases = json.loads(sys.argv[1])
pictures = np.random.default_rng(4).integers(0, 255, size=(2, 9, 11, 3)).astype(np.uint8)
out = {}
for key, (name, kwargs) in cases.items():
    layer = getattr(tf.keras.layers, name)(**kwargs)
    out[key] = [np.asarray(layer(pictures, training=True)).tolist(), np.asarray(layer(pictures[0], training=True)).tolist()]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def keras_affine():
    return python_json(KERAS_AFFINE, json.dumps(AFFINE_CASES))


@pytest.mark.parametrize("key", sorted(AFFINE_CASES))
def test_rotation_and_zoom_make_kerass_image_for_the_same_draw(key, keras_affine):
    name, kwargs = AFFINE_CASES[key]
    layer = getattr(mk.layers, name)(**kwargs)
    batched, single = keras_affine[key]
    got = layer(ms.Tensor(PICTURES), training=True)
    assert got.dtype == ms.float32 and got.shape == (2, 9, 11, 3)
    np.testing.assert_allclose(got.asnumpy(), batched, rtol=0, atol=1e-3)
    np.testing.assert_allclose(layer(ms.Tensor(PICTURES[0]), training=True).asnumpy(), single, rtol=0, atol=1e-3)


def test_rotation_and_zoom_draw_per_image_and_pass_in_inference():
    same = ms.Tensor(np.repeat(PICTURES[:1], 8, axis=0))
    for layer in (mk.layers.RandomRotation(0.2), mk.layers.RandomZoom(0.3, 0.3)):
        out = layer(same, training=True).asnumpy()
        assert len({out[i].tobytes() for i in range(8)}) > 1  # one draw per image
        np.testing.assert_array_equal(layer(same, training=False).asnumpy(), same.asnumpy().astype(np.float32))
    with pytest.raises(ValueError, match="factor"):
        mk.layers.RandomRotation(1.5)
    with pytest.raises(NotImplementedError, match="fill_mode"):
        mk.layers.RandomZoom(0.1, fill_mode="mirror")
