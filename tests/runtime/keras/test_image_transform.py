"""Keras 2's `image_preprocessing.transform` in mk (TFK204) against TF's ImageProjectiveTransformV3 with Keras 2's defaults."""

import json

import numpy as np
import pytest

from tests.helpers import python_json

ms = pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(3)
IMAGES = {"uint8": RNG.integers(0, 256, (2, 7, 9, 3)).tolist(), "float32": RNG.normal(size=(2, 7, 9, 3)).tolist()}
# a rotation with a shift and a shear, one per image, and one matrix for both
TRANSFORMS = {"each": [[0.9, -0.3, 1.5, 0.3, 0.9, -0.7, 0.0, 0.0], [1.0, 0.2, -2.0, 0.0, 1.1, 0.5, 0.01, -0.02]],
              "one": [[0.7, 0.2, 2.0, -0.1, 1.2, -1.0, 0.0, 0.0]]}
CASES = {  # name: (images, transforms, keyword arguments)
    "defaults_float": ("float32", "each", {}),
    "nearest_uint8": ("uint8", "each", {"interpolation": "nearest"}),
    "constant_fill_uint8": ("uint8", "one", {"fill_mode": "constant", "fill_value": 9.0}),
    "wrap_float": ("float32", "one", {"fill_mode": "wrap"}),
    "nearest_fill_bilinear_uint8": ("uint8", "each", {"fill_mode": "nearest"}),
}

TF_SIDE = r"""
import json, sys
import numpy as np
import tensorflow as tf
images, transforms, cases = (json.loads(a) for a in sys.argv[1:4])
out = {}
for name, (kind, which, kw) in cases.items():
    x = tf.constant(np.asarray(images[kind], dtype=kind))
    result = tf.raw_ops.ImageProjectiveTransformV3(  # what Keras 2's transform runs, with its defaults
        images=x, transforms=tf.constant(transforms[which], tf.float32), output_shape=tf.shape(x)[1:3],
        fill_value=tf.constant(kw.get("fill_value", 0.0), tf.float32), fill_mode=kw.get("fill_mode", "reflect").upper(),
        interpolation=kw.get("interpolation", "bilinear").upper())
    out[name] = [result.numpy().tolist(), result.dtype.name]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def tf_images():
    return python_json(TF_SIDE, json.dumps(IMAGES), json.dumps(TRANSFORMS), json.dumps(CASES))


@pytest.mark.parametrize("name", list(CASES))
def test_the_transformed_images_are_tfs(name, tf_images):
    kind, which, kw = CASES[name]
    result = mk.layers.augmentation.transform(ms.Tensor(np.asarray(IMAGES[kind], dtype=kind)),
                                              ms.Tensor(np.asarray(TRANSFORMS[which], np.float32)), **kw)
    want, dtype = tf_images[name]
    assert str(result.asnumpy().dtype) == dtype
    np.testing.assert_allclose(result.asnumpy(), np.asarray(want), rtol=1e-5, atol=1e-5 if kind == "float32" else 0)


def test_another_output_size_is_refused():
    with pytest.raises(NotImplementedError, match="output_shape"):
        mk.layers.augmentation.transform(ms.Tensor(np.zeros((1, 4, 4, 1), np.float32)), [1, 0, 0, 0, 1, 0, 0, 0],
                                         output_shape=[2, 2])
