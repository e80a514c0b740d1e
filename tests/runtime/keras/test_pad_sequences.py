"""`mk.utils.pad_sequences` against Keras's on the same sequences: values, dtypes, shapes, errors."""

import json

import numpy as np
import pytest

from tests.helpers import python_json

pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402

pytestmark = pytest.mark.tf

RAGGED = [[1, 2, 3], [4], [], [5, 6, 7, 8, 9]]
# name: (sequences as code, keyword arguments)
CASES = {
    "default": ("RAGGED", {}),
    "post": ("RAGGED", {"padding": "post"}),
    "maxlen_pre": ("RAGGED", {"maxlen": 2}),
    "maxlen_post": ("RAGGED", {"maxlen": 2, "truncating": "post", "padding": "post"}),
    "float_value": ("RAGGED", {"dtype": "float32", "value": -1.5, "maxlen": 6}),
    "vectors": ("[[[1, 2], [3, 4]], [[5, 6]]]", {}),
    "texts": ("[['a', 'b'], ['c']]", {"dtype": object, "value": ''}),
    "err_value_text": ("RAGGED", {"value": "x"}),
    "err_padding": ("RAGGED", {"padding": "middle"}),
    "err_truncating": ("RAGGED", {"maxlen": 1, "truncating": "middle"}),
    "err_shapes": ("[[[1, 2]], [[1, 2, 3]]]", {}),
    "err_not_iterable": ("[[1], 3]", {}),
}

KERAS_SIDE = r"""
import json, sys
import numpy as np
import tensorflow as tf
RAGGED = json.loads(sys.argv[2])
out = {}
for name, (code, kwargs) in json.loads(sys.argv[1]).items():
    kwargs = {k: (object if v == "object" else v) for k, v in kwargs.items()}
    try:
        array = tf.keras.utils.pad_sequences(eval(code), **kwargs)
        out[name] = {"value": array.tolist(), "dtype": str(array.dtype)}
    except ValueError as error:
        out[name] = {"error": str(error)}
print(json.dumps(out))
"""


def _json_kwargs(kwargs):
    return {k: ("object" if v is object else v) for k, v in kwargs.items()}


@pytest.fixture(scope="module")
def keras():
    return python_json(KERAS_SIDE, json.dumps({k: (c, _json_kwargs(kw)) for k, (c, kw) in CASES.items()}),
                       json.dumps(RAGGED))


@pytest.mark.parametrize("name", sorted(CASES))
def test_pad_sequences_is_kerass(name, keras):
    code, kwargs = CASES[name]
    want = keras[name]
    if "error" in want:
        with pytest.raises(ValueError) as raised:
            mk.utils.pad_sequences(eval(code), **kwargs)
        assert str(raised.value) == want["error"]
        return
    array = mk.utils.pad_sequences(eval(code), **kwargs)
    assert str(array.dtype) == want["dtype"]
    assert array.tolist() == want["value"]
    assert isinstance(array, np.ndarray)
