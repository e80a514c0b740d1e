"""The shim's activations have Keras's gradients where the function has a kink: at 0 (and at
6, +-3 for relu6 and hard_sigmoid), TF's kernels pick one side; MindSpore's autodiff of a
clip or a minimum splits the gradient in half there. A pre-activation at exactly 0 is common
(a zero-padded input row through a Dense with zero bias), so the difference reaches training."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from tests.helpers import python_json

ms = pytest.importorskip("mindspore")
if importlib.util.find_spec("keras") is None:
    pytest.skip("Keras is not installed", allow_module_level=True)

POINTS = [-6.0, -3.0, -1e-3, 0.0, 1e-3, 0.5, 3.0, 6.0, 7.0]
# (tanh and mish are left to the layer suites' tolerances: in float32 their tails round apart, tanh's
# gradient at 6 is 2.5e-5 in TF and 0 here, where MindSpore's tanh is already exactly 1)
NAMES = ["relu", "relu6", "elu", "selu", "leaky_relu", "hard_sigmoid", "sigmoid", "softplus", "softsign", "silu",
         "gelu", "exponential"]

KERAS = r"""
import json, sys
import tensorflow as tf
import keras

points, names = json.loads(sys.argv[1])
x = tf.constant(points, tf.float32)
out = {}
for name in names:
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = keras.activations.get(name)(x)
    out[name] = [y.numpy().tolist(), tape.gradient(y, x).numpy().tolist()]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def keras_side():
    return python_json(KERAS, json.dumps([POINTS, NAMES]))


@pytest.mark.parametrize("name", NAMES)
def test_values_and_gradients_at_the_kinks_are_keras(name, keras_side):
    from migrate.runtime.keras import activations

    function = activations.get(name)
    x = ms.Tensor(np.array(POINTS, np.float32))
    values = function(x).asnumpy()
    gradients = ms.grad(lambda t: function(t).sum())(x).asnumpy()
    want_values, want_gradients = keras_side[name]
    np.testing.assert_allclose(values, want_values, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(gradients, want_gradients, rtol=1e-4, atol=1e-6)
