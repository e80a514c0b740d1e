"""The native tier (migrate.ops.native, rules/native): what is lowered to MindSpore's own API,
what keeps the shim and why, and how a user chooses the tier."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from migrate.config import NATIVE_RULES, ConfigError, load_config
from migrate.engine.runner import RuleSelection, convert_source, rule_index
from migrate.rules import load_rules
from tests.helpers import convert

HEAD = textwrap.dedent('''\
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(3, activation="relu"), tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)


    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    ''')


def notes(findings, rule_id):
    return [f for f in findings if f.rule == rule_id]


def test_a_statically_known_program_is_lowered_whole():
    out, findings = convert(HEAD)
    assert "mk." not in out and "migrate.runtime" not in out
    assert "nn.Dense(4, 3, weight_init=\"xavier_uniform\", bias_init=\"zeros\", activation=\"relu\")" in out
    assert "nn.SGD(model.trainable_params(), learning_rate=0.1, momentum=0.9)" in out
    assert "ms.value_and_grad(forward, None, optimizer.parameters)()" in out
    assert "optimizer(grad_reducer(grads))" in out
    [model] = notes(findings, "TFL100")
    assert (model.line, model.status) == (3, "converted")
    [opt] = notes(findings, "TFL110")
    assert (opt.line, opt.status) == (4, "converted")


@pytest.mark.parametrize("extra,why", [
    ("model.summary()\n", "`model` has `.summary`"),
    ("model.compile(optimizer='sgd', loss='mse')\n", "`model` has `.compile`"),
    ("keep = [model]\n", "`model` has a use the native cell does not serve"),
    ("def make():\n    model = 1\n    return model\n", "`model` is bound more than once"),
    ("tf.keras.mixed_precision.set_global_policy('mixed_float16')\n", "the module uses `mixed_precision`"),
])
def test_a_model_with_another_use_keeps_the_shim_and_says_why(extra, why):
    out, findings = convert(HEAD + "\n\n" + extra)
    assert "mk.Sequential([" in out and "mk.optimizers.SGD(" in out
    [model] = notes(findings, "TFL100")
    assert model.status == "info" and why in model.message and "keeps the shim" in model.message
    [opt] = notes(findings, "TFL110")
    assert "the model `model` keeps the shim" in opt.message


@pytest.mark.parametrize("layer,why", [
    ("tf.keras.layers.Dense(units)", "width is not a literal"),
    ("tf.keras.layers.Dense(3, activation='gelu')", "the activation is not one of"),
    ("tf.keras.layers.Dense(3, kernel_regularizer='l2')", "arguments the native layer does not take"),
    ("tf.keras.layers.Dropout(0.5)", "has no native lowering yet"),
])
def test_layers_the_native_tier_cannot_prove_keep_the_shim(layer, why):
    out, findings = convert(HEAD.replace("tf.keras.layers.Dense(1)", layer))
    assert "mk.Sequential([" in out
    [model] = notes(findings, "TFL100")
    assert why in model.message


@pytest.mark.parametrize("optimizer,why", [
    ("tf.keras.optimizers.SGD(learning_rate=schedule)", "`learning_rate` is not a literal"),
    ("tf.keras.optimizers.SGD(0.1, weight_decay=0.01)", "arguments the native optimizer does not take"),
])
def test_an_optimizer_it_cannot_prove_keeps_the_shim_over_the_native_model(optimizer, why):
    out, findings = convert(HEAD.replace("tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)", optimizer))
    assert "nn.SequentialCell([" in out and "mk.optimizers." in out
    assert "optimizer.apply_gradients(zip(grads, model.trainable_params()))" in out
    [opt] = notes(findings, "TFL110")
    assert why in opt.message


def test_a_step_with_control_flow_runs_eagerly_and_the_report_says_why():
    code = HEAD + textwrap.dedent('''

        @tf.function
        def steps(batches):
            for x, y in batches:
                train_step(x, y)
        ''')
    out, findings = convert(code)
    assert "@ms.jit" not in out and "nn.SequentialCell" in out
    [jit] = notes(findings, "TFL140")
    assert jit.status == "info" and "`For` statement" in jit.message


def test_a_step_reading_a_shim_object_runs_eagerly():
    code = HEAD.replace("optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)",
                        "optimizer = tf.keras.optimizers.SGD(learning_rate=lr)")
    code += "\n\n@tf.function\ndef step(x, y):\n    return train_step(x, y)\n"
    out, findings = convert(code)
    assert "@ms.jit" not in out
    [jit] = notes(findings, "TFL140")
    assert "reads `optimizer`, which is not native" in jit.message


def test_the_shim_tier_is_the_same_as_ignoring_the_native_rules():
    index = rule_index(RuleSelection(ignore=(NATIVE_RULES,)))
    out = convert_source(HEAD.encode(), index, "example.py").converted.decode()
    assert "mk.Sequential([" in out and "mk.optimizers.SGD(" in out and "nn." not in out


def test_the_native_rules_prefix_names_the_native_rules_alone():
    """Ignoring the native tier's prefix drops the lowerings and nothing else (`tf.nest` still converts)."""
    import migrate.ops

    rules = load_rules()
    native = {r.id for r in rules if r.id.startswith(NATIVE_RULES)}
    assert native == {r.id for r in rules if migrate.ops.REGISTRY[r.operation].target == "lowering"}
    out, _ = convert("import tensorflow as tf\n\nflat = tf.nest.flatten(x)\n")
    shim = convert_source(b"import tensorflow as tf\n\nflat = tf.nest.flatten(x)\n",
                          rule_index(RuleSelection(ignore=(NATIVE_RULES,))), "example.py").converted.decode()
    assert shim == out and "tf.nest" not in shim


def test_tier_flag_and_configuration(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text(HEAD)
    for flags, native in (((), True), (("--tier", "shim"), False), (("--tier", "native"), True)):
        done = subprocess.run([sys.executable, "-m", "migrate", "convert", str(src), "--diff", "--no-cache", *flags],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, done.stderr
        assert ("nn.SequentialCell" in done.stdout) is native, flags
    (tmp_path / "pyproject.toml").write_text('[tool.migrate]\ntier = "shim"\n')
    assert load_config([str(src)]).tier == "shim"
    done = subprocess.run([sys.executable, "-m", "migrate", "convert", str(src), "--diff", "--no-cache"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "mk.Sequential" in done.stdout and "nn.SequentialCell" not in done.stdout
    (tmp_path / "pyproject.toml").write_text('[tool.migrate]\ntier = "fast"\n')
    with pytest.raises(ConfigError, match="tier must be one of 'native', 'shim', not 'fast'"):
        load_config([str(src)])


def test_a_native_model_trains_with_a_shim_optimizer_as_the_shim_model_does():
    """A model lowered with its optimizer left on the shim (a schedule): `mk.value_and_grad` and
    `mk.optimizers.SGD` work on the cell's Parameters and give the shim model's numbers."""
    ms = pytest.importorskip("mindspore")
    import numpy as np
    from mindspore import nn, ops

    from migrate.runtime import keras as mk

    rng = np.random.default_rng(0)
    w = rng.normal(size=(4, 2)).astype(np.float32)
    x, y = ms.Tensor(rng.normal(size=(8, 4)).astype(np.float32)), ms.Tensor(rng.normal(size=(8, 2)).astype(np.float32))

    def losses(native: bool) -> list[float]:
        if native:
            model = nn.SequentialCell([nn.Dense(4, 2, weight_init=ms.Tensor(w, ms.float32).T, bias_init="zeros")])
            weights = model.trainable_params()
        else:
            model = mk.Sequential([mk.Input(shape=(4,)), mk.layers.Dense(2, kernel_initializer=mk.constant_initializer(w))])
            weights = model.trainable_variables
        optimizer = mk.optimizers.SGD(learning_rate=mk.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5), momentum=0.9)
        out = []
        for _ in range(5):
            loss, grads = mk.value_and_grad(lambda: ops.mean(ops.square(model(x) - y)), None, weights)()
            optimizer.apply_gradients(zip(grads, weights))
            out.append(float(loss))
        return out

    assert losses(True) == losses(False)
