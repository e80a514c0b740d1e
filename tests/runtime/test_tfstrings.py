"""`tfstrings` (the converted `tf.strings.*`) against TF's on the same inputs: values, dtypes and
shapes, TF's errors and their messages."""

import json

import numpy as np
import pytest

from tests.helpers import PLAIN_JSON, plain, python_json

ms = pytest.importorskip("mindspore")

from migrate.runtime import tfstrings  # noqa: E402

pytestmark = pytest.mark.tf

# name: a call, with `S` for the module (tf.strings on TF's side, tfstrings on ours) and `tf` for dtypes
CASES = {
    "lower_ascii": "S.lower(['ÀBC dEf', b'X'])",
    "lower_utf8": "S.lower('ÀBC', encoding='utf-8')",
    "upper_ascii": "S.upper([['àbc'], ['q']])",
    "upper_utf8": "S.upper('àbc', encoding='utf-8')",
    "strip": "S.strip(['  a b \\n', '\\tx', '', ' '])",
    "regex_replace": "S.regex_replace(['a<br />b', 'c'], '<br />', ' ')",
    "regex_replace_first": "S.regex_replace('aaa', 'a', 'b', replace_global=False)",
    "regex_replace_groups": "S.regex_replace('abcb', '(b)', r'[\\1\\0]')",
    "regex_replace_class": "S.regex_replace('Hi, there! (ok)', '[%s]' % re.escape(string.punctuation), '')",
    "regex_full_match": "S.regex_full_match(['abc', 'ab', 'axc'], 'a.c')",
    "length": "S.length(['héllo', '', 'ab'])",
    "length_chars": "S.length([['héllo'], ['€']], unit='UTF8_CHAR')",
    "length_scalar": "S.length('abc')",
    "to_number": "S.to_number(['1.5', ' 2', '1e3', '-inf', '+7'])",
    "to_number_int32": "S.to_number(['12', ' -3 '], tf.int32)",
    "to_number_int64": "S.to_number([['12345678901']], out_type=tf.int64)",
    "to_number_float64": "S.to_number('0.1', tf.float64)",
    "err_to_number_text": "S.to_number(['1', 'abc'])",
    "err_to_number_int": "S.to_number(['1.5'], tf.int32)",
    "err_to_number_empty": "S.to_number([''])",
    "err_to_number_range": "S.to_number(['12345678901'], tf.int32)",
    "as_string_float": "S.as_string([1.5, 2.0, 1e-7, 123456789.0])",
    "as_string_int": "S.as_string([3, -4])",
    "as_string_bool": "S.as_string([True, False])",
    "as_string_precision": "S.as_string(1.5, precision=2)",
    "as_string_scientific": "S.as_string([1.5, 1e-7], scientific=True, precision=1)",
    "as_string_shortest": "S.as_string([1.5, 1e-7, 123456.0, 1e20], shortest=True)",
    "as_string_width": "S.as_string([7, -7], width=4)",
    "as_string_zero_fill": "S.as_string([7, -7], width=4, fill='0')",
    "as_string_left": "S.as_string(7, width=4, fill='-')",
    "as_string_float64": "S.as_string(np.array([0.1], np.float64))",
    "err_as_string_precision_int": "S.as_string(7, precision=2)",
    "err_as_string_shortest_int": "S.as_string(7, shortest=True)",
    "err_as_string_both": "S.as_string(1.5, shortest=True, scientific=True)",
    "join": "S.join(['a', 'b'], separator='-')",
    "join_columns": "S.join([['a', 'b'], ['c', 'd']], separator='-')",
    "join_broadcast": "S.join([['a', 'b'], 'c'])",
    "reduce_join_all": "S.reduce_join([['a', 'b'], ['c', 'd']])",
    "reduce_join_axis": "S.reduce_join([['a', 'b'], ['c', 'd']], axis=1, separator=',')",
    "reduce_join_keepdims": "S.reduce_join([['a', 'b'], ['c', 'd']], axis=0, keepdims=True)",
    "reduce_join_last": "S.reduce_join([['a', 'b'], ['c', 'd']], axis=-1)",
    "substr": "S.substr('hello', 1, 3)",
    "substr_each": "S.substr(['hello', 'ab'], [1, 0], [10, 1])",
    "substr_negative": "S.substr('hello', -2, 2)",
    "substr_chars": "S.substr('héllo', 1, 2, unit='UTF8_CHAR')",
    "err_substr_range": "S.substr(['ab', 'hello'], 7, 2)",
    "split_sep": "S.split('a/b//c', '/')",
    "split_whitespace": "S.split('  a b  c ')",
    "split_max": "S.split('a,b,c', ',', maxsplit=1)",
    "split_path": "S.split('/data/flowers/roses/1.jpg', os.path.sep)[-2]",
}


TF_SIDE = r"""
import json, os, re, string, sys
import numpy as np
import tensorflow as tf
S = tf.strings
""" + PLAIN_JSON + r"""
out = {}
for name, code in json.loads(sys.argv[1]).items():
    try:
        value = eval(code)
        out[name] = plain(value.numpy() if hasattr(value, "numpy") else value)
    except Exception as error:
        out[name] = {"error": type(error).__name__, "message": str(error)}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def tf_results():
    return python_json(TF_SIDE, json.dumps(CASES))


class _TF:  # the dtypes as converted code spells them
    float32, float64, int32, int64 = ms.float32, ms.float64, ms.int32, ms.int64


def _message(text: str) -> str:
    """TF's message without its op's decoration."""
    return text.split("}} ")[-1].split(" [Op:")[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_tfstrings_is_tfs(name, tf_results):
    import os
    import re
    import string

    want = tf_results[name]
    scope = {"S": tfstrings, "tf": _TF, "np": np, "os": os, "re": re, "string": string}
    try:
        got = plain(eval(CASES[name], scope))
    except tfstrings.InvalidArgumentError as error:
        assert isinstance(want, dict) and "error" in want, f"TF gave {want}, we raised {error}"
        assert want["error"] == "InvalidArgumentError" and _message(want["message"]) == str(error)
        return
    assert "error" not in want, f"TF raised {want}, we gave {got}"
    assert got == want


def test_split_of_several_strings_says_why():
    with pytest.raises(NotImplementedError, match="RaggedTensor"):
        tfstrings.split(["a b", "c"])


def test_a_tensor_is_not_text():
    with pytest.raises(TypeError, match="holds numbers, not strings"):
        tfstrings.lower(ms.Tensor([1]))


CONSTANTS = ["hello world", ["a", "b"], [["x", "yé"], ["z", "w"]], b"raw", ("t", "u")]
SHOW = """
import json, sys
values = json.loads(sys.argv[1])
values[3] = values[3].encode()
values[4] = tuple(values[4])
out = []
for value in values:
    made = make(value)
    got = made.numpy()
    out.append([str(made), repr(made), repr(got), type(got).__name__, list(made.shape)])
print(json.dumps(out))
"""


def test_a_string_constant_prints_and_reads_as_tfs():
    """`tf.constant("hello world")` (TensorFlow-Examples' hello world): what print shows, its
    repr, what `.numpy()` gives and the shape, for one string, lists, nested lists and bytes."""
    given = json.dumps([v.decode() if isinstance(v, bytes) else v for v in CONSTANTS])
    want = python_json("import tensorflow as tf\nmake = tf.constant\n" + SHOW, given)
    got = python_json("from migrate.runtime import tfstrings\nmake = tfstrings.constant\n" + SHOW, given)
    assert got == want
    assert tfstrings.lower(tfstrings.constant(["AB"])).tolist() == [b"ab"]  # (text for tfstrings' functions)
    with pytest.raises(TypeError, match="dtype"):
        tfstrings.constant("x", ms.float32)
