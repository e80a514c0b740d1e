"""`tfshape.TensorShape` reads and combines shapes as `tf.TensorShape` does (checked against real TF)."""

import json

from runtime_helpers import run_python

EXPRESSIONS = [
    "S([None, 3])", "S(None)", "S(3)", "S([])", "S((2, 3))", "S([None, 3])[1]", "S([None, 3])[0]",
    "S([4, None, 3])[1:]", "S([None, 3]).as_list()", "S([None, 3]).rank", "S(None).rank", "S([None, 3]).ndims",
    "len(S([1, 2]))", "list(S([1, None]))", "S([1, 2]) == S([1, 2])", "S([1, None]) == S([1, None])",
    "S([1, 2]) == [1, 2]", "S([1, 2]) != S([1, 3])", "S([1, 2]).concatenate([3])", "S([1, 2]) + S([3])",
    "S([1, 2]).concatenate(S(None))", "S([1, 2]).num_elements()", "S([1, None]).num_elements()",
    "S([]).num_elements()", "S([1, None]).is_fully_defined()", "S([1, None]).merge_with([None, 5])",
    "S(None).merge_with([2])", "S([1, None]).is_compatible_with([1, 7])", "S([1, None]).is_compatible_with([2, 7])",
    "S([1, None]).is_compatible_with([1])", "S(None).is_compatible_with([4, 4])", "str(S([1, None]))",
    "str(S([5]))", "str(S(None))", "repr(S(None))", "S([2, 3]).with_rank(2)", "S(None).with_rank(2)",
    "S([2, 3])[-1]", "bool(S([]))", "bool(S(None))", "S(S([2, None]))", "S([2, 3])[::-1]",
    "S([1, None]).merge_with([2, 5])", "S([2, 3]).with_rank(3)", "len(S(None))", "S([-1])",
]

PROBE = """
import json
{setup}
out = []
for expr in {expressions!r}:
    try:
        value = eval(expr)
        out.append(["ok", repr(value) if not isinstance(value, (bool, int, str, list, type(None))) else value])
    except Exception as exc:
        out.append(["error", type(exc).__name__])
print(json.dumps(out))
"""


def test_tensor_shape_answers_as_tfs():
    tf = run_python("-c", PROBE.format(setup="import os; os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'\n"
                                              "import tensorflow as tf; S = tf.TensorShape",
                                        expressions=EXPRESSIONS), timeout=120)
    ours = run_python("-c", PROBE.format(setup="from migrate.runtime.tfshape import TensorShape as S",
                                          expressions=EXPRESSIONS))
    assert tf.returncode == 0 and ours.returncode == 0, tf.stderr[-2000:] + ours.stderr[-2000:]
    want, got = json.loads(tf.stdout.splitlines()[-1]), json.loads(ours.stdout.splitlines()[-1])
    assert [(e, g) for e, g, w in zip(EXPRESSIONS, got, want) if g != w] == []
