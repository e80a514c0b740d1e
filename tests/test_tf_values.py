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


def test_a_runtime_call_that_gives_a_plain_value_is_no_mindspore_value_in_a_call_left_tensorflow():
    import ast

    from migrate.engine.tfvalues import mixed_calls

    before = ast.parse("import horovod.tensorflow as hvd\nimport tensorflow as tf\n")
    after = "from migrate.runtime import horovod as hvd\nimport tensorflow as tf\n\n"
    # `def rank() -> int`: Horovod's and the runtime's give the same plain int
    assert mixed_calls(before, ast.parse(after + "d = tf.data.experimental.service.distribute(consumer_index=hvd.rank())\n")) == []
    # a collective gives a MindSpore tensor, and what a plain call is given still counts
    for call in ("tf.identity(hvd.allreduce(x))", "tf.fill([2], hvd.rank(hvd.allreduce(x)))"):
        assert mixed_calls(before, ast.parse(f"{after}y = {call}\n")) == [call]
