"""Calls left TensorFlow and the values they make (migrate.engine.tfvalues): a call a rule would
convert that is given one stays TensorFlow, saying why; what `.numpy()` makes of one does not."""

from __future__ import annotations

from tests.helpers import convert

CODE = """import tensorflow as tf

data = tf.io.encode_jpeg(img)
{line}
"""


def _stays(line: str) -> tuple[bool, list[str]]:
    out, findings = convert(CODE.format(line=line))
    assert convert(out)[0] == out  # (a second run changes nothing)
    return "tf.io.decode_jpeg" in out, [f.message for f in findings if f.rule == "TFI101" and f.status == "manual"]


def test_a_call_given_a_tensorflow_value_stays_tensorflow_and_says_why():
    stays, why = _stays("image = tf.io.decode_jpeg(data[0])")
    assert stays
    assert why == ["not converted: `data` is a TensorFlow value here (made by `tf.io.encode_jpeg`, which stays "
                   "TensorFlow): converted alone, this call would hand it to MindSpore; it stays TensorFlow with "
                   "the calls that make it"]


def test_what_numpy_makes_of_a_tensorflow_value_is_no_tensorflow_value():
    assert _stays("image = tf.io.decode_jpeg(data.numpy())") == (False, [])
    assert _stays("image = tf.io.decode_jpeg(wrap(value=[data.numpy()])[0])") == (False, [])
    assert _stays("image = tf.io.decode_jpeg(data.numpy(1))")[0]  # (not a tensor's `numpy()`)
