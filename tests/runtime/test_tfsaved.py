"""`tfsaved.save`/`load` against `tf.saved_model`'s for Keras models: the serving signature's outputs
(keys and values) on the same weights, the input forms it takes, and TF's directories refused."""

import json

import numpy as np
import pytest

from tests.helpers import python_json

pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402
from migrate.runtime import tfsaved  # noqa: E402

pytestmark = pytest.mark.tf

MODELS = """
def sequential(K):
    return K.Sequential([K.Input((4,)), K.layers.Dense(3, activation="relu"), K.layers.Dense(2)])


def two_heads(K):
    inputs = K.Input((4,), name="features")
    hidden = K.layers.Dense(3, activation="relu")(inputs)
    return K.Model(inputs, [K.layers.Dense(2)(hidden), K.layers.Dense(1, activation="sigmoid")(hidden)])
"""

TF_SIDE = r"""
import json, os, sys
import numpy as np
import tensorflow as tf
exec(sys.argv[1])
weights, x, folder = json.loads(sys.argv[2]), np.asarray(json.loads(sys.argv[3]), np.float32), sys.argv[4]
out = {}
for name in ("sequential", "two_heads"):
    model = globals()[name](tf.keras)
    model.set_weights([np.asarray(w, np.float32) for w in weights[name]])
    path = os.path.join(folder, name)
    tf.saved_model.save(model, path)
    serve = tf.saved_model.load(path).signatures[tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
    result = serve(tf.constant(x))
    out[name] = {key: value.numpy().tolist() for key, value in result.items()}
    out[name + "_keyword"] = list(serve(inputs=tf.constant(x)).keys())
print(json.dumps(out))
"""


def _weights(model, seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=w.shape).astype(np.float32) for w in model.get_weights()]


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    scope = {}
    exec(MODELS, scope)  # noqa: S102 - the test's own model code, shared with TF's side
    models = {name: scope[name](mk) for name in ("sequential", "two_heads")}
    weights = {name: _weights(model, seed) for seed, (name, model) in enumerate(models.items())}
    for name, model in models.items():
        model.set_weights(weights[name])
    x = np.random.default_rng(9).normal(size=(3, 4)).astype(np.float32)
    folder = tmp_path_factory.mktemp("tf_saved")
    theirs = python_json(TF_SIDE, MODELS, json.dumps({k: [w.tolist() for w in v] for k, v in weights.items()}),
                         json.dumps(x.tolist()), str(folder))
    return models, x, folder, theirs


@pytest.mark.parametrize("name", ["sequential", "two_heads"])
def test_the_serving_signature_gives_tfs_outputs(name, both, tmp_path):
    models, x, _, theirs = both
    tfsaved.save(models[name], str(tmp_path / "export"))
    assert tfsaved.contains_saved_model(str(tmp_path / "export"))
    loaded = tfsaved.load(str(tmp_path / "export"))
    serve = loaded.signatures[tfsaved.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
    for result in (serve(x), serve(inputs=x)):
        assert sorted(result) == sorted(theirs[name]) == sorted(theirs[name + "_keyword"])
        for key, value in result.items():
            np.testing.assert_allclose(value.asnumpy(), np.asarray(theirs[name][key]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(loaded(x)[0].asnumpy() if name == "two_heads" else loaded(x).asnumpy()),
                               np.asarray(theirs[name]["output_0"]), rtol=1e-5, atol=1e-6)
    assert len(loaded.variables) == len(models[name].weights)


def test_a_directory_tensorflow_wrote_is_refused_and_other_objects_are_not_saved(both, tmp_path):
    _, _, folder, _ = both
    assert tfsaved.contains_saved_model(str(folder / "sequential"))
    with pytest.raises(ValueError, match="SavedModel TensorFlow wrote .*only TensorFlow reads"):
        tfsaved.load(str(folder / "sequential"))
    with pytest.raises(TypeError, match="is not a Keras model"):
        tfsaved.save(object(), str(tmp_path / "x"))
    assert not (tmp_path / "x").exists()
    assert not tfsaved.contains_saved_model(str(tmp_path))
