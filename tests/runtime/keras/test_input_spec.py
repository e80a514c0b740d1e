"""A custom layer's ``self.input_spec`` (``keras.layers.InputSpec``) is checked as Keras checks it:
the first argument of each call, before the layer builds and again after (``build`` may set it),
with Keras's error text. Each case runs on Keras and on ``mk`` in its own interpreter."""

from __future__ import annotations

import pytest

from tests.helpers import python_json

pytest.importorskip("mindspore")

PROGRAM = r"""
import json, sys
import numpy as np
if sys.argv[1] == "tf":
    import tensorflow as tf
    Layer, InputSpec, tensor = tf.keras.layers.Layer, tf.keras.layers.InputSpec, tf.constant
else:
    import mindspore as ms
    from migrate.runtime import keras as mk
    Layer, InputSpec, tensor = mk.layers.Layer, mk.layers.InputSpec, ms.Tensor


class Checked(Layer):
    def __init__(self, spec, in_build, **kwargs):
        super().__init__(**kwargs)
        self.spec = spec
        if not in_build:
            self.input_spec = InputSpec(**spec)

    def build(self, input_shape):
        self.input_spec = InputSpec(**self.spec)

    def call(self, x):
        return x * 2


def outcome(layer, shape, dtype):
    try:
        layer(tensor(np.ones(shape, dtype)))
        return "ok"
    except ValueError as error:
        return str(error)


cases = [
    ({"min_ndim": 3, "axes": {-1: 4}}, [(2, 3, 4), (2, 4), (2, 3, 5)]),
    ({"ndim": 2}, [(2, 4), (2, 3, 4)]),
    ({"max_ndim": 2}, [(2, 4), (1, 2, 4)]),
    ({"shape": (None, 4)}, [(3, 4), (3, 5), (3, 4, 1)]),
    ({"shape": (None, 4, 1), "allow_last_axis_squeeze": True}, [(3, 4), (3, 4, 1), (3, 5)]),
    ({"dtype": "float32"}, [(2, 2)]),
    ({"dtype": "int32"}, [(2, 2)]),
]
out = []
for in_build in (True, False):
    for spec, shapes in cases:
        layer = Checked(spec, in_build, name="checked")
        out.append([outcome(layer, shape, np.float32) for shape in shapes])
# float64 inputs are cast to the compute dtype before the check; the first argument by its name
float32_spec = Checked({"dtype": "float32", "ndim": 2}, False, name="checked")
out.append([outcome(float32_spec, (2, 3), np.float64)])
try:
    float32_spec(x=tensor(np.ones((2, 3), np.float32)))
    out.append("ok")
except ValueError as error:
    out.append(str(error))
try:
    float32_spec(x=tensor(np.ones((2, 3, 1), np.float32)))
    out.append("ok")
except ValueError as error:
    out.append(str(error))
print(json.dumps(out))
"""


def test_input_specs_check_calls_as_keras_does():
    keras = python_json(PROGRAM, "tf")
    ours = python_json(PROGRAM, "ms")
    assert any(message != "ok" for row in keras for message in row)  # (the cases reach Keras's errors)
    assert ours == keras
