"""`StringLookup` / `IntegerLookup` against Keras's on the same tokens: vocabularies (given and
adapted, with Keras's tie order and `max_tokens`), indices (OOV, mask), encodings and inversion."""

import json
import re
import string

import numpy as np
import pytest

from tests.helpers import python_json

ms = pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402
from migrate.runtime import tfstrings  # noqa: E402
from migrate.runtime.tferrors import InvalidArgumentError  # noqa: E402

pytestmark = pytest.mark.tf

TEXTS = ["The cat sat on the mat.", "The dog sat!", "A cat, a dog; and THE bird.", "it's the bird's"]
WORDS = ["b", "a", "c", "b", "d", "a", "b", "e", "c", "f"]
QUERY = [["a", "zz", "b"], ["", "f", "c"]]
CASES = {
    "adapted": ("StringLookup", {}, "adapt", WORDS, QUERY),
    "adapted_max": ("StringLookup", {"max_tokens": 4}, "adapt", WORDS, QUERY),
    "mask": ("StringLookup", {"mask_token": ""}, "adapt", WORDS, QUERY),
    "given": ("StringLookup", {"vocabulary": ["x", "a", "f"]}, None, None, QUERY),
    "one_hot": ("StringLookup", {"vocabulary": ["a", "b", "c"], "output_mode": "one_hot"}, None, None, ["a", "q", "c"]),
    "multi_hot": ("StringLookup", {"vocabulary": ["a", "b", "c"], "output_mode": "multi_hot"}, None, None, QUERY),
    "count": ("StringLookup", {"vocabulary": ["a", "b", "c"], "output_mode": "count", "pad_to_max_tokens": True,
                               "max_tokens": 6}, None, None, [["a", "a", "c"], ["b", "zz", "zz"]]),
    "invert": ("StringLookup", {"vocabulary": ["a", "b", "c"], "invert": True}, None, None, [[1, 3, 0, 9]]),
    "integers": ("IntegerLookup", {}, "adapt", [7, 3, 7, 9, 3, 7, 12], [[3, 5, 7], [12, 9, 0]]),
    "integers_mask": ("IntegerLookup", {"mask_token": 0, "vocabulary": [10, 20]}, None, None, [[0, 10, 20, 30]]),
    "integers_invert": ("IntegerLookup", {"vocabulary": [10, 20], "invert": True}, None, None, [[0, 1, 2, 3]]),
    "text_int": ("TextVectorization", {"max_tokens": 8}, "adapt", TEXTS, ["The cat, the DOG!", "a bird?  sat", ""]),
    "text_length": ("TextVectorization", {"output_sequence_length": 4}, "adapt", TEXTS,
                    [["the cat sat on the mat"], ["dog"]]),
    "text_ngrams": ("TextVectorization", {"ngrams": 2, "standardize": "lower"}, "adapt", TEXTS, ["The cat sat."]),
    "text_multi_hot": ("TextVectorization", {"output_mode": "multi_hot", "max_tokens": 6}, "adapt", TEXTS,
                       ["the the cat", "zebra"]),
    "text_count": ("TextVectorization", {"output_mode": "count", "vocabulary": ["the", "cat"],
                                         "standardize": "strip_punctuation"}, None, None, ["the The cat cat cat,"]),
    "text_characters": ("TextVectorization", {"split": "character", "standardize": None}, "adapt", ["abcab", "éa"],
                        ["aé", "cz"]),
    # a function of `tf.strings` calls (the text-classification tutorial's); "@custom" stands for it
    "text_custom": ("TextVectorization", {"standardize": "@custom", "max_tokens": 9}, "adapt",
                    TEXTS + ["a<br />b<br />The end."], ["The<br />CAT sat, on!", "it's a dog"]),
}

# `standardize="@custom"`: this function, over `S` (tf.strings on Keras's side, tfstrings on ours)
CUSTOM = r"""
def custom(S):
    def standardize(data):
        lowercase = S.lower(data)
        stripped_html = S.regex_replace(lowercase, "<br />", " ")
        return S.regex_replace(stripped_html, "[%s]" % re.escape(string.punctuation), "")
    return standardize


def standardizing(kwargs, S):
    return {**kwargs, "standardize": custom(S)} if kwargs.get("standardize") == "@custom" else kwargs
"""

KERAS_SIDE = r"""
import json, re, string, sys
import numpy as np
import tensorflow as tf
""" + CUSTOM + r"""

cases = json.loads(sys.argv[1])
out = {}
for name, (cls, kwargs, adapt, data, query) in cases.items():
    layer = getattr(tf.keras.layers, cls)(**standardizing(kwargs, tf.strings))
    if adapt:
        layer.adapt(np.array(data))
    result = np.asarray(layer(np.array(query)))
    if result.dtype == object:
        result = np.vectorize(lambda b: b.decode())(result)
    out[name] = {"vocabulary": [v if isinstance(v, (str, int)) else int(v) for v in layer.get_vocabulary()],
                 "size": int(layer.vocabulary_size()), "result": result.tolist(), "dtype": str(result.dtype)}
print(json.dumps(out))
"""


_HELPERS = {"re": re, "string": string}
exec(CUSTOM, _HELPERS)


@pytest.fixture(scope="module")
def keras():
    return python_json(KERAS_SIDE, json.dumps(CASES))


@pytest.mark.parametrize("name", sorted(CASES))
def test_lookups_are_kerass(name, keras):
    cls, kwargs, adapt, data, query = CASES[name]
    layer = getattr(mk.layers, cls)(**_HELPERS["standardizing"](kwargs, tfstrings))
    if adapt:
        layer.adapt(np.array(data))
    result = layer(np.array(query))
    array = result.asnumpy() if hasattr(result, "asnumpy") else np.vectorize(lambda b: b.decode())(result)
    want = keras[name]
    assert layer.get_vocabulary() == want["vocabulary"]
    assert layer.vocabulary_size() == want["size"]
    assert array.tolist() == want["result"]
    assert str(array.dtype) == want["dtype"] or (want["dtype"].startswith("<U") and array.dtype.kind == "U")


def test_what_keras_refuses_and_what_stays_tensorflow():
    with pytest.raises(ValueError, match="repeated term"):
        mk.layers.StringLookup(vocabulary=["a", "a"])
    with pytest.raises(ValueError, match="after setting a static vocabulary"):
        mk.layers.StringLookup(vocabulary=["a"]).adapt(np.array(["a"]))
    with pytest.raises(NotImplementedError, match="farmhash"):
        mk.layers.StringLookup(num_oov_indices=2)
    with pytest.raises(ValueError, match="all inputs should be in vocabulary"):
        mk.layers.StringLookup(vocabulary=["a"], num_oov_indices=0)(np.array(["b"]))


# name: (output_mode, inputs, count_weights); num_tokens is 4
ENCODINGS = {
    "one_hot": ("one_hot", [3, 2, 0, 1], None),
    "one_hot_column": ("one_hot", [[3], [2]], None),
    "one_hot_rows": ("one_hot", [[1, 2], [0, 7]], None),
    "one_hot_scalar": ("one_hot", 2, None),
    "multi_hot": ("multi_hot", [[0, 1], [0, 0], [1, 2], [3, 1]], None),
    "multi_hot_vector": ("multi_hot", [1, 3], None),
    "multi_hot_rank3": ("multi_hot", [[[1], [3]], [[0], [0]]], None),
    "count": ("count", [[0, 1, 1], [2, 2, 3]], None),
    "count_past_tokens": ("count", [1, 5], None),
    "count_weights": ("count", [[0, 1, 1], [2, 2, 3]], [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]),
    "count_rank3": ("count", [[[1, 1]], [[2, 0]]], None),
    "err_negative": ("multi_hot", [-1, 2], None),
}

ENCODING_SIDE = r"""
import json, sys
import numpy as np
import tensorflow as tf

out = {}
for name, (mode, inputs, weights) in json.loads(sys.argv[1]).items():
    layer = tf.keras.layers.CategoryEncoding(num_tokens=4, output_mode=mode)
    try:
        result = layer(np.array(inputs), count_weights=None if weights is None else np.array(weights))
        out[name] = {"value": np.asarray(result).tolist(), "dtype": str(np.asarray(result).dtype)}
    except Exception as error:
        out[name] = {"error": type(error).__name__}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def keras_encodings():
    return python_json(ENCODING_SIDE, json.dumps(ENCODINGS))


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_category_encoding_is_kerass(name, keras_encodings):
    mode, inputs, weights = ENCODINGS[name]
    layer = mk.layers.CategoryEncoding(num_tokens=4, output_mode=mode)
    want = keras_encodings[name]
    if "error" in want:
        assert want["error"] == "InvalidArgumentError"
        with pytest.raises(InvalidArgumentError, match="Input arr must be non-negative!"):
            layer(np.array(inputs))
        return
    result = layer(np.array(inputs), count_weights=None if weights is None else np.array(weights)).asnumpy()
    assert str(result.dtype) == want["dtype"]
    assert result.shape == np.array(want["value"]).shape
    np.testing.assert_allclose(result, np.array(want["value"]), rtol=1e-6)


def test_category_encoding_refuses_as_keras():
    with pytest.raises(ValueError, match="num_tokens must be set"):
        mk.layers.CategoryEncoding()
    with pytest.raises(ValueError, match="Unknown arg for output_mode: int"):
        mk.layers.CategoryEncoding(3, output_mode="int")
    with pytest.raises(ValueError, match="`count_weights` is not used"):
        mk.layers.CategoryEncoding(3, output_mode="one_hot")(np.array([1]), count_weights=np.array([1.0]))
