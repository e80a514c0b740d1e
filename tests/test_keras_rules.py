"""Keras → migrate.runtime.keras (TFK1xx, TFC4xx): every spelling of Keras resolves, and every
name the rules write exists in migrate.runtime.keras."""

from __future__ import annotations

import re
import textwrap

import libcst as cst
import pytest

from migrate.ops.names import renamed
from migrate.rules import load_rules
from tests.helpers import convert

KERAS_RULES = [r for r in load_rules() if r.area in ("keras", "checkpoint")]


def target(rule, name: str) -> str:
    return cst.Module([]).code_for_node(renamed(rule.params["to"], name, "", rule.params.get("keep_after")))


@pytest.mark.parametrize("rule", KERAS_RULES, ids=lambda r: r.id)
def test_every_name_a_rule_writes_exists_in_the_runtime(rule):
    mk = pytest.importorskip("migrate.runtime.keras")
    missing = []
    if "to" not in rule.params:  # a call template: the `mk.`/`ops.` names it writes
        ops = pytest.importorskip("mindspore.ops")
        templates = [rule.params["template"]] if "template" in rule.params else list(rule.params["templates"].values())
        for dotted in {m for t in templates for m in re.findall(r"\b(?:mk|ops)(?:\.\w+)+", t)}:
            obj = mk if dotted.startswith("mk.") else ops
            for part in dotted.split(".")[1:]:
                obj = getattr(obj, part, None)
            if obj is None:
                missing.append(dotted)
        assert not missing, f"{rule.id} writes names that do not exist: {missing}"
        return
    import importlib

    # `mk.*` names live in migrate.runtime.keras; another name is the module the rule imports under it
    # (`from migrate.runtime import tfsaved`, `from migrate.runtime.keras import hdf5`)
    imported = {imp.asname or imp.obj or imp.module: f"{imp.module}.{imp.obj}" if imp.obj else imp.module
                for imp in rule.imports}
    for name in rule.match:
        root, *parts = target(rule, name.removesuffix(".*")).split(".")
        obj = mk if root == "mk" else importlib.import_module(imported.get(root, f"migrate.runtime.{root}"))
        for part in parts:
            obj = getattr(obj, part, None)
        if obj is None:
            missing.append(name)
    assert not missing, f"{rule.id} converts to names migrate.runtime lacks: {missing}"


def test_each_keras_name_has_one_rule():
    owners: dict[str, str] = {}
    for rule in KERAS_RULES:
        for name in rule.match:
            assert name not in owners, f"{name} is matched by {owners[name]} and {rule.id}"
            owners[name] = rule.id


SPELLINGS = {
    "import tensorflow as tf": "tf.keras.layers.Dense",
    "import tensorflow.compat.v2 as tf": "tf.keras.layers.Dense",
    "import tensorflow.compat.v1 as tf": "tf.keras.layers.Dense",
    "from tensorflow import keras": "keras.layers.Dense",
    "from tensorflow.keras import layers": "layers.Dense",
    "from tensorflow.keras.layers import Dense": "Dense",
    "from tensorflow.keras.layers import Dense as D": "D",
    "import tensorflow.keras as K": "K.layers.Dense",
    "import keras": "keras.layers.Dense",
    "from keras import layers": "layers.Dense",
    "import tf_keras": "tf_keras.layers.Dense",
}


@pytest.mark.parametrize("imports", sorted(SPELLINGS))
def test_every_spelling_of_keras_resolves(imports):
    code, findings = convert(f"{imports}\n\nhidden = {SPELLINGS[imports]}(8)\n")
    assert code == "from migrate.runtime import keras as mk\n\nhidden = mk.layers.Dense(8)\n"
    assert [f.rule for f in findings] == ["TFK102"]


def test_a_local_name_is_not_keras():
    source = textwrap.dedent("""\
        import tensorflow as tf

        def build(keras):
            return keras.layers.Dense(8)

        layers = make_layers()
        head = layers.Dense(4)
    """)
    code, findings = convert(source)
    assert code == source and not findings


def test_the_worked_example_model_converts_whole():
    source = textwrap.dedent("""\
        import tensorflow as tf

        model = tf.keras.Sequential([
            tf.keras.Input(shape=(4,)),
            tf.keras.layers.Dense(8, activation="tanh", kernel_initializer=tf.constant_initializer(w1)),
            tf.keras.layers.Dense(1, kernel_initializer=tf.constant_initializer(w2)),
        ])
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.05)
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.NONE)
        train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
        checkpoint = tf.train.Checkpoint(optimizer=optimizer, model=model)
    """)
    code, findings = convert(source)
    assert "tf." not in code and "import tensorflow" not in code
    assert code.startswith("from migrate.runtime import keras as mk\n\nmodel = mk.Sequential([\n    mk.Input(shape=(4,)),\n")
    assert "mk.layers.Dense(8, activation=\"tanh\", kernel_initializer=mk.constant_initializer(w1))" in code
    assert "reduction=mk.losses.Reduction.NONE)" in code
    shim = [f for f in findings if not f.rule.startswith("TFL")]
    assert {f.rule for f in shim} == {"TFK109", "TFK102", "TFK150", "TFK130", "TFK120", "TFK122", "TFK141", "TFC401"}
    assert all(f.status == "converted" for f in shim)
    # The checkpoint holds the model and the optimizer: a use the native tier does not serve, so both keep the shim.
    native = {f.rule: f for f in findings if f.rule.startswith("TFL")}
    assert sorted(native) == ["TFL100", "TFL110", "TFL150", "TFL155"]
    assert all(f.status == "info" and "keeps the shim" in f.message for f in native.values())
    assert "`model` has a use the native cell does not serve" in native["TFL100"].message
    assert "`train_accuracy` is never updated" in native["TFL155"].message


def test_a_keras_name_the_runtime_lacks_stays_and_is_reported():
    code, findings = convert("import tensorflow as tf\n\nlayer = tf.keras.layers.Conv1DTranspose(8, 3)\n")
    assert "layer = tf.keras.layers.Conv1DTranspose(8, 3)" in code
    (finding,) = findings
    assert (finding.rule, finding.status) == ("TFU901", "manual")
    assert "`mindspore.nn.Conv1dTranspose`" in finding.message
