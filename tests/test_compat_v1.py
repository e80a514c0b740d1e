"""`tf.compat.v1` spellings of the TF 2 API convert as the TF 2 spelling does, and only those."""

from __future__ import annotations

import importlib.util
import textwrap

import pytest

from migrate.engine.compat_v1 import SAME_IN_V1, V1_AS_V2
from migrate.engine.index import normalize
from migrate.engine.runner import RuleSelection, convert_source, rule_index
from tests.cli_helpers import ROOT


def convert(code: str) -> str:
    result = convert_source(textwrap.dedent(code).encode(), rule_index(RuleSelection()), "case.py")
    assert result.status in ("changed", "unchanged"), result.error
    return result.converted.decode()


@pytest.mark.parametrize("script, generated", [("compat_v1_names", "compat_v1.py"),
                                               ("keras_backend_names", "keras_backend.py")])
def test_the_generated_module_is_current(script, generated):
    pytest.importorskip("tensorflow")
    spec = importlib.util.spec_from_file_location(script, ROOT / "scripts" / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (ROOT / "migrate" / "engine" / generated).read_text(encoding="utf-8")
    assert text == module.render(), f"rules changed: run scripts/{script}.py --write"


@pytest.mark.parametrize("code, converted", [
    ("from tensorflow.keras import backend as K\n\ny = K.equal(a, b)\n", "ops.equal(a, b)"),
    ("import tensorflow as tf\n\ny = tf.keras.backend.permute_dimensions(t, (0, 2, 1))\n", "ops.transpose(t, (0, 2, 1))"),
    ("import keras\n\ny = keras.backend.stack([a, b], axis=1)\n", "ops.stack([a, b], 1)"),
    ("from tensorflow.keras import backend as K\n\ny = K.gather(table, ids)\n", "ops.gather(table, ids, 0)"),
])
def test_a_keras_backend_helper_that_is_one_tf_call_converts_as_it(code, converted):
    out = convert(code)
    assert f"y = {converted}\n" in out and "backend" not in out, out


def test_a_keras_backend_helper_that_does_more_is_not_its_tf_call():
    """`K.mean` casts booleans first, `K.one_hot` passes `axis=-1`: not aliases of `tf.reduce_mean`/`tf.one_hot`."""
    from migrate.engine.keras_backend import BACKEND_AS_TF

    assert not {"mean", "one_hot", "update_add"} & set(BACKEND_AS_TF)
    assert BACKEND_AS_TF["equal"] == "equal" and BACKEND_AS_TF["permute_dimensions"] == "transpose"


@pytest.mark.parametrize("body", [
    "y = {tf}.cast(x, {tf}.float32)",
    "y = {tf}.reduce_mean(x, axis=1)",
    "y = {tf}.nn.softmax(x, axis=-1)",
    "y = {tf}.expand_dims(x, 0)",
    "y = {tf}.concat([a, b], axis=0)",
    "y = {tf}.reshape(x, [-1, 4])",
    "y = {tf}.argmax(x, 0, output_type={tf}.int32)",  # (v1's third parameter is `name`: by keyword only)
    "y = {tf}.math.argmin(x, axis=1)",
])
def test_a_v1_spelling_converts_as_the_v2_spelling(body):
    v2 = convert("import tensorflow as tf\n" + body.format(tf="tf") + "\n")
    v1 = convert("import tensorflow.compat.v1 as tf1\n" + body.format(tf="tf1") + "\n")
    assert "tf" not in v2.replace("import tensorflow as tf\n", "")
    assert v1.replace("import tensorflow.compat.v1 as tf1\n", "") == v2.replace("import tensorflow as tf\n", "")


def test_what_differs_in_v1_converts_with_tf_1s_meaning():
    """TF 1's `where` picks rows by a vector condition and does not broadcast: its own rule (TFM292)."""
    out = convert("import tensorflow as tf\n\ny = tf.compat.v1.where(c, a, b)\n")
    assert "y = tfmath.where_v1(c, a, b)" in out


@pytest.mark.parametrize("call, why", [
    # TF 1's own functions with no TF 2 name: no rule of their own
    ("tf.compat.v1.assign(v, x)", "TFU901"),
    # TF 1's `shape` takes `name` second, TF 2's `out_type`: its rule lists it with TF 1's
    # order, and `out_type` is not converted in either.
    ("tf.compat.v1.shape(x, out_type=tf.int64)", "TFM204 not converted"),
    ("tf.compat.v1.transpose(x, [1, 0], 't')", "TFM213 not converted"),  # v1's third is `name`
    ("tf.compat.v1.constant([1, 2], verify_shape=True)", "TFM214 not converted"),
    ("tf.compat.v1.argmax(x, 1, 'a')", "TFM208 not converted"),  # v1's third is `name`
    ("tf.compat.v1.argmax(x, dimension=1)", "TFM208 not converted"),  # a deprecated alias
    # A deprecated alias argument does not fit the rule's signature.
    ("tf.compat.v1.reduce_sum(x, axis=1, keep_dims=True)", "TFM201 not converted"),
])
def test_what_differs_in_v1_stays_for_a_person(call, why):
    out = convert(f"import tensorflow as tf\ny = {call}\n")
    assert f"# migrate: {why}" in out
    assert f"y = {call}\n" in out


def test_only_listed_names_are_renamed():
    assert normalize("tensorflow.compat.v1.cast") == "tensorflow.cast"
    assert normalize("tensorflow.compat.v1.where") == "tensorflow.compat.v1.where"
    assert normalize("tensorflow.compat.v1.Session") == "tensorflow.compat.v1.Session"
    assert normalize("tensorflow.compat.v1.keras.layers.Dense") == "tensorflow.keras.layers.Dense"
    assert {"cast", "float32", "reduce_sum", "nn.relu"} <= SAME_IN_V1
    # v1's parameters in another order after a common prefix: every call the rules accept binds alike
    assert {"transpose", "constant"} <= SAME_IN_V1
    assert {"argmax", "math.argmin"} <= SAME_IN_V1
    assert not {"where", "cond", "shape", "distribute.MirroredStrategy"} & SAME_IN_V1


@pytest.mark.parametrize("v1, v2", [
    ("with tf.compat.v1.gfile.GFile(path, 'rb') as fh:\n    data = fh.read()",
     "with tf.io.gfile.GFile(path, 'rb') as fh:\n    data = fh.read()"),
    ("y = tf.compat.v1.log(x)", "y = tf.math.log(x)"),
    ("y = tf.compat.v1.random_uniform([2, 3], maxval=4.0)", "y = tf.random.uniform([2, 3], maxval=4.0)"),
    ("y = tf.compat.v1.where_v2(c, a, b)", "y = tf.where(c, a, b)"),
    ("y = tf.compat.v1.manip.reverse(x, [0])", "y = tf.reverse(x, [0])"),
    ("spec = {'x': tf.compat.v1.FixedLenFeature([], tf.int64)}", "spec = {'x': tf.io.FixedLenFeature([], tf.int64)}"),
])
def test_a_v1_name_under_another_path_converts_as_the_tf2_name_it_is(v1, v2):
    """`tf.compat.v1.gfile.GFile` *is* `tf.io.gfile.GFile` (the same class in TensorFlow), `tf.compat.v1.log`
    is `tf.math.log`: V1_AS_V2, found by identity from TensorFlow by scripts/compat_v1_names.py."""
    out_v1, out_v2 = (convert("import tensorflow as tf\n" + code + "\n") for code in (v1, v2))
    assert "tensorflow" not in out_v1 and out_v1 == out_v2, out_v1


@pytest.mark.parametrize("v1, v2", [
    ("y = tf.random_shuffle(x)", "y = tf.random.shuffle(x)"),
    ("y = tf.string_join([a, b], separator=' ')", "y = tf.strings.join([a, b], separator=' ')"),
    ("with tf.gfile.GFile(path) as fh:\n    text = fh.read()", "with tf.io.gfile.GFile(path) as fh:\n    text = fh.read()"),
])
def test_a_tf1_top_level_name_tf2_lacks_converts_as_its_tf2_name(v1, v2):
    """`tf.random_shuffle` exists only in TF 1, where `tf.X` is `tf.compat.v1.X`: the TF 2 name that is."""
    out_v1, out_v2 = (convert("import tensorflow as tf\n" + code + "\n") for code in (v1, v2))
    assert "tensorflow" not in out_v1 and out_v1 == out_v2, out_v1


def test_a_tf1_top_level_name_tf2_has_keeps_its_tf2_meaning():
    """`tf.where` is TF 2's (broadcasting) under `import tensorflow`; only names TF 2 lacks are read as TF 1's."""
    assert normalize("tensorflow.where") == "tensorflow.where"
    assert normalize("tensorflow.random_shuffle") == "tensorflow.random.shuffle"
    assert normalize("tensorflow.Session") == "tensorflow.Session"


def test_a_v1_order_only_the_signature_can_vouch_for_is_checked_against_one():
    """`tf.compat.v1.gather_nd` takes `name` before `batch_dims`: its rules' signatures bind two positional
    arguments only, so it converts; `size` (a rename that passes arguments on as written) does not."""
    assert "gather_nd" in SAME_IN_V1 and "size" not in SAME_IN_V1
    out_v1, out_v2 = (convert(f"import tensorflow as tf\ny = tf.{name}(params, idx)\n")
                      for name in ("compat.v1.gather_nd", "gather_nd"))
    assert "tensorflow" not in out_v1 and out_v1 == out_v2, out_v1


def test_a_v1_first_parameter_named_otherwise_converts_by_position_only():
    """`tf.compat.v1.zeros_like(tensor, dtype, name, optimize)`: positional calls convert as v2's; a call naming
    v1's `tensor` does not fit the rule's signature and stays for a person."""
    out = convert("import tensorflow as tf\ny = tf.compat.v1.zeros_like(x, tf.int32)\n")
    assert "y = ops.zeros_like(x, dtype=ms.int32)" in out, out
    out = convert("import tensorflow as tf\ny = tf.compat.v1.ones_like(tensor=x)\n")
    assert "# migrate: TFM" in out and "y = tf.compat.v1.ones_like(tensor=x)" in out, out


def test_the_v1_aliases_lead_to_tf2_names_the_rules_map():
    from migrate.rules import load_rules

    mapped = {n for r in load_rules() for n in r.exact_matches}
    assert {"gfile.GFile", "log", "random_normal", "where_v2"} <= set(V1_AS_V2)
    assert all("tensorflow." + v2 in mapped for v2 in V1_AS_V2.values())
    assert not set(V1_AS_V2) & SAME_IN_V1
    assert normalize("tensorflow.compat.v1.gfile.GFile") == "tensorflow.io.gfile.GFile"
