"""Keras's random image layers: what each image may become, how often, and inference, on both sides
(the draws are each framework's own)."""

import json
import subprocess
import sys

import numpy as np
import pytest

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
    done = subprocess.run([sys.executable, "-c", KERAS_SIDE], capture_output=True, text=True, timeout=300,
                          env={"TF_CPP_MIN_LOG_LEVEL": "3", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


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
