"""`tfdebug`'s checks pass and fail where TF's do, with TF's errors and text (checked against real TF)."""

import json

import pytest
from runtime_helpers import run_python

# name: (call, how much of the outcome to compare: "text" (type and message), "type", or "end"
# (type and the message's last line, after TF's kernel prefix))
CASES = {
    "equal_holds": ("D.assert_equal(x, x)", "text"),
    "equal_fails": ("D.assert_equal(x, y, message='boom')", "text"),
    "equal_broadcast_holds": ("D.assert_equal(ones, 1)", "text"),
    "equal_broadcast_fails": ("D.assert_equal(x, 1)", "text"),
    "equal_summarize": ("D.assert_equal(x, y, summarize=1)", "text"),
    "none_equal": ("D.assert_none_equal(x, y)", "text"),
    "less_fails": ("D.assert_less(x, y)", "text"),
    "less_equal_holds": ("D.assert_less_equal(x, y)", "text"),
    "greater_fails": ("D.assert_greater(y, x, message='gt')", "text"),
    "greater_equal_holds": ("D.assert_greater_equal(y, x)", "text"),
    "positive_holds": ("D.assert_positive(x)", "text"),
    "non_negative_fails": ("D.assert_non_negative(x - 2, message='neg')", "text"),
    "negative_fails": ("D.assert_negative(x)", "text"),
    "near_holds": ("D.assert_near(f, f + 1e-7)", "text"),
    "near_fails": ("D.assert_near(f, f + 1e-3)", "type"),
    "near_tolerance": ("D.assert_near(f, f + 1e-3, atol=1e-2)", "text"),
    "rank_holds": ("D.assert_rank(x, 1)", "text"),
    "rank_fails": ("D.assert_rank(x, 2, message='rk')", "text"),
    "rank_at_least": ("D.assert_rank_at_least(x, 2)", "text"),
    "scalar": ("D.assert_scalar(x, message='sc')", "text"),
    "type_holds": ("D.assert_type(x, INT32)", "text"),
    "type_fails": ("D.assert_type(x, FLOAT32, message='ty')", "type"),
    "integer_fails": ("D.assert_integer(f)", "type"),
    "numerics_holds": ("D.check_numerics(f, 'cn')", "text"),
    "numerics_nan": ("D.check_numerics(nan, 'cn')", "end"),
    "finite_inf": ("D.assert_all_finite(inf, 'af')", "end"),
    "assert_false": ("D.Assert(False, [x])", "text"),
    "assert_true": ("D.Assert(x[0] < 5, [x])", "text"),
    "v1_equal_data": ("V1.assert_equal(x, y, [x], None, 'v1m')", "text"),
    "v1_equal_no_data": ("V1.assert_equal(x, y, message='v1m')", "text"),
    "v1_less_holds": ("V1.assert_less(x, y + 1)", "text"),
}

PROBE = """
import json, os
import numpy as np
{setup}
arrays = dict(x=[1, 2, 3], y=[1, 5, 3], ones=[1, 1])
x, y, ones = (T(np.array(v, np.int32)) for v in arrays.values())
f = T(np.array([1.0, 2.0], np.float32))
nan = T(np.array([1.0, np.nan], np.float32))
inf = T(np.array([1.0, np.inf], np.float32))
out = {{}}
for name, call in json.loads(os.environ["CASES"]).items():
    try:
        value = eval(call)
        out[name] = ["ok", None if value is None else np.asarray(value).tolist()]
    except Exception as error:
        out[name] = [type(error).__name__, str(error)]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def outcomes():
    cases = json.dumps({name: call for name, (call, _) in CASES.items()})
    tf = run_python("-c", PROBE.format(setup="os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'\nimport tensorflow as tf\n"
                                             "T, D, V1 = tf.constant, tf.debugging, tf.compat.v1\n"
                                             "INT32, FLOAT32 = tf.int32, tf.float32\n"
                                             ),
                    timeout=240, env={"CASES": cases})
    ours = run_python("-c", PROBE.format(setup="import mindspore as ms\nfrom migrate.runtime import tfdebug as D\n"
                                               "T, V1 = ms.Tensor, D.v1\nINT32, FLOAT32 = ms.int32, ms.float32"),
                      env={"CASES": cases})
    assert tf.returncode == 0, tf.stderr[-2000:]
    assert ours.returncode == 0, ours.stderr[-2000:]
    return json.loads(tf.stdout.splitlines()[-1]), json.loads(ours.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_behaves_as_tfs(name, outcomes):
    tf, ours = (o[name] for o in outcomes)
    how = CASES[name][1]
    assert ours[0] == tf[0], f"{name}: {ours} where TF gives {tf}"
    if how == "text":
        assert ours[1] == tf[1]
    elif how == "end":
        assert tf[1].split("}} ")[-1].startswith(ours[1])

