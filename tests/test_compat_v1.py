"""`tf.compat.v1` spellings of the TF 2 API convert as the TF 2 spelling does, and only those."""

from __future__ import annotations

import importlib.util
import textwrap

import pytest

from migrate.engine.compat_v1 import SAME_IN_V1
from migrate.engine.index import normalize
from migrate.engine.runner import RuleSelection, convert_source, rule_index
from tests.cli_helpers import ROOT


def convert(code: str) -> str:
    result = convert_source(textwrap.dedent(code).encode(), rule_index(RuleSelection()), "case.py")
    assert result.status in ("changed", "unchanged"), result.error
    return result.converted.decode()


def test_the_generated_module_is_current():
    pytest.importorskip("tensorflow")
    spec = importlib.util.spec_from_file_location("compat_v1_names", ROOT / "scripts" / "compat_v1_names.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (ROOT / "migrate" / "engine" / "compat_v1.py").read_text(encoding="utf-8")
    assert text == module.render(), "rules changed: run scripts/compat_v1_names.py --write"


@pytest.mark.parametrize("body", [
    "y = {tf}.cast(x, {tf}.float32)",
    "y = {tf}.reduce_mean(x, axis=1)",
    "y = {tf}.nn.softmax(x, axis=-1)",
    "y = {tf}.expand_dims(x, 0)",
    "y = {tf}.concat([a, b], axis=0)",
    "y = {tf}.reshape(x, [-1, 4])",
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
    # TF 1's `where_v2` under its TF 1 name, and `cond`'s TF 1 spelling: no rule of their own
    ("tf.compat.v1.where_v2(c, a, b)", "TFU901"),
    # TF 1's `shape` takes `name` second, TF 2's `out_type`: its rule lists it with TF 1's
    # order, and `out_type` is not converted in either.
    ("tf.compat.v1.shape(x, out_type=tf.int64)", "TFM204 not converted"),
    ("tf.compat.v1.transpose(x, [1, 0], 't')", "TFM213 not converted"),  # v1's third is `name`
    ("tf.compat.v1.constant([1, 2], verify_shape=True)", "TFM214 not converted"),
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
    assert not {"where", "cond", "shape", "argmax", "distribute.MirroredStrategy"} & SAME_IN_V1
