"""The native tier (migrate.ops.native, rules/native): what is lowered to MindSpore's own API,
what keeps the shim and why, and how a user chooses the tier."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap

import pytest

from migrate.config import NATIVE_RULES, ConfigError, load_config
from migrate.engine.runner import RuleSelection, convert_source, rule_index
from migrate.rules import load_rules
from tests.equivalence.harness import assert_same_numbers
from tests.helpers import convert, python_json

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


def _run_in_tier(code: str, tier: str, name: str, native_mark: str) -> dict:
    """``code`` converted in ``tier`` ("native" or "shim") and run here (PyNative): its globals.
    ``native_mark``: text the native tier's conversion holds and the shim tier's does not."""
    index = rule_index(RuleSelection(ignore=(NATIVE_RULES,) if tier == "shim" else ()))
    converted = convert_source(code.encode(), index, f"{name}.py").converted.decode()
    assert (native_mark in converted) == (tier == "native"), converted
    scope: dict = {}
    exec(compile(converted, f"{name}_{tier}.py", "exec"), scope)
    return scope


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


def test_a_dense_layers_kernel_read_by_index_is_the_cells_weight_transposed():
    out, findings = convert(HEAD + "\n\nshow(model.layers[-1].kernel, model.layers[0].bias)\n")
    assert "show(model[1].weight.T, model[0].bias)" in out  # (counted from the front)
    [model] = notes(findings, "TFL100")
    assert model.status == "converted"


@pytest.mark.parametrize("extra,why", [
    ("model.layers[0].kernel.assign(w)\n", "`model` has `.layers`"),   # a Keras variable's method: not a tensor's
    ("show(model.layers[2].kernel)\n", "`model` has `.layers`"),      # no third layer
    ("show(model.layers[i].kernel)\n", "`model` has `.layers`"),      # not a literal index
    ("print(model(x_test))\n", "`model` is called on `x_test`, a module value that may be a NumPy array"),
    ("print(model(x_test[:2]))\n", "`model` is called on `x_test`, a module value that may be a NumPy array"),
    ("print(model(np.ones((2, 4))))\n", "`model` is called on `np.ones`"),
    ("model.summary()\n", "`model` has `.summary`"),
    ("model.compile(optimizer='sgd', loss='huber')\n", "the loss `huber` has no native lowering yet"),
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
    ("tf.keras.layers.Dense(3, activation='mish')", "the activation is not one of"),
    ("tf.keras.layers.LeakyReLU(slope)", "a `LeakyReLU`'s slope is not a literal"),
    ("tf.keras.layers.Dense(3, kernel_regularizer='l2')", "arguments the native layer does not take"),
    ("tf.keras.layers.LayerNormalization()", "has no native lowering yet"),
    ("tf.keras.layers.Dropout(0.5, seed=1)", "`Dropout` is given a `noise_shape` or a `seed`"),
    ("tf.keras.layers.Dropout(rate)", "rate is not a literal in [0, 1)"),
    ("tf.keras.layers.Activation('relu6')", "the activation layer's function is not one of"),
    ("tf.keras.layers.Flatten(data_format='channels_first')", "other than 'channels_last'"),
])
def test_layers_the_native_tier_cannot_prove_keep_the_shim(layer, why):
    out, findings = convert(HEAD.replace("tf.keras.layers.Dense(1)", layer))
    assert "mk.Sequential([" in out
    [model] = notes(findings, "TFL100")
    assert why in model.message


def test_flatten_dropout_and_activation_layers_are_lowered_with_the_widths_they_imply():
    code = HEAD.replace(
        '[tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(3, activation="relu"), tf.keras.layers.Dense(1)]',
        '[tf.keras.layers.Flatten(input_shape=(2, 3, 2)), tf.keras.layers.Dense(5), tf.keras.layers.ReLU(),'
        ' tf.keras.layers.Dropout(0.25), tf.keras.layers.Dense(2), tf.keras.layers.Activation("softmax")]')
    out, findings = convert(code)
    assert ("nn.SequentialCell([nn.Flatten(), nn.Dense(12, 5, weight_init=\"xavier_uniform\", bias_init=\"zeros\"), nn.ReLU(),"
            " nn.Dropout(p=0.25), nn.Dense(5, 2, weight_init=\"xavier_uniform\", bias_init=\"zeros\"), nn.Softmax()])\n"
            "model.set_train()\n") in out
    [model] = notes(findings, "TFL100")
    assert model.status == "converted"


FIT = textwrap.dedent('''\
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(3)])
    model.compile(optimizer=OPTIMIZER, loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(x, y, batch_size=8, epochs=2, verbose=0)
    ''')


def test_kerass_loop_over_a_native_model_is_the_native_loop_over_mindspores_optimizer_and_loss():
    out, findings = convert(FIT.replace("OPTIMIZER", '"adam"') + "print(model.evaluate(x, y), model.predict(x_test))\n")
    assert "mk." not in out
    assert ("training.compile(model, optimizer=nn.Adam(model.trainable_params(), eps=1e-07), "
            "loss=nn.CrossEntropyLoss(reduction=\"mean\"),\n              metrics=[\"accuracy\"])") in out
    assert "history = training.fit(model, x, y, batch_size=8, epochs=2, verbose=0)" in out
    assert "print(training.evaluate(model, x, y), training.predict(model, x_test))" in out  # (the loop takes NumPy)
    assert "from migrate.runtime import training" in out and "ms.set_context(mode=ms.GRAPH_MODE)" in out
    [_, loop] = notes(findings, "TFL100") + notes(findings, "TFL160")
    assert loop.status == "converted" and "each step one compiled cell" in loop.message
    assert loop.line == 4  # (the compile's: its optimizer and loss are MindSpore's now)


def test_a_crossentropy_on_a_softmax_output_reads_its_logits_as_kerass_does():
    code = textwrap.dedent('''\
        import tensorflow as tf

        model = tf.keras.Sequential([
            tf.keras.layers.Flatten(input_shape=(28, 28)),
            tf.keras.layers.Dense(300, activation="relu"),
            tf.keras.layers.Dense(10, activation="softmax"),
        ])
        model.compile(loss="sparse_categorical_crossentropy", optimizer="sgd", metrics=["accuracy"])
        model.fit(x, y, epochs=2)
        print(model.layers[-1].kernel)
        ''')
    out, findings = convert(code)
    assert textwrap.dedent('''\
        model = nn.SequentialCell([
            nn.Flatten(),
            nn.Dense(784, 300, weight_init="xavier_uniform", bias_init="zeros", activation="relu"),
            nn.Dense(300, 10, weight_init="xavier_uniform", bias_init="zeros"),
            nn.Softmax(),
        ])
        training.compile(model, loss=nn.CrossEntropyLoss(reduction="mean"), loss_on_logits=True, optimizer=nn.SGD(model.trainable_params(), learning_rate=0.01), metrics=["accuracy"])
        training.fit(model, x, y, epochs=2)
        print(model[2].weight.T)
        ''') in out
    same = convert(code.replace('Dense(10, activation="softmax")', 'Dense(10), tf.keras.layers.Softmax()')
                   .replace("print(model.layers[-1].kernel)\n", ""))[0]
    assert "nn.Dense(300, 10, weight_init=\"xavier_uniform\", bias_init=\"zeros\"), nn.Softmax(),\n])" in same
    other = convert(code.replace('activation="softmax"', 'activation="sigmoid"'))[1]
    [model] = notes(other, "TFL100")
    assert "takes probabilities, and the model does not end in a softmax" in model.message


ADDED_CELLS = textwrap.dedent('''\
    model = nn.SequentialCell([
        nn.Flatten(),
        nn.Dense(784, 300, weight_init="xavier_uniform", bias_init="zeros", activation="relu"),
        nn.Dense(300, 10, weight_init="xavier_uniform", bias_init="zeros"),
    ])
    ''')


def test_a_model_built_by_add_statements_is_one_cell_list():
    code = textwrap.dedent('''\
        import tensorflow as tf

        model = tf.keras.models.Sequential()
        model.add(tf.keras.layers.Flatten(input_shape=[28, 28]))
        # the hidden layer
        model.add(tf.keras.layers.Dense(300, activation="relu"))
        model.add(tf.keras.layers.Dense(10))
        ''')
    out, findings = convert(code)
    assert "# the hidden layer\n" + ADDED_CELLS in out and ".add(" not in out
    empty = convert("import tensorflow as tf\n\nmodel = tf.keras.Sequential()\nprint(model)\n")[1]
    [model] = notes(empty, "TFL100")
    assert "it is built empty and not by `add` statements right after it" in model.message


def test_add_statements_after_a_list_continue_the_list():
    code = textwrap.dedent('''\
        import tensorflow as tf

        model = tf.keras.models.Sequential([tf.keras.layers.Flatten(input_shape=[28, 28])])
        model.add(tf.keras.layers.Dense(300, activation="relu"))
        model.add(tf.keras.layers.Dense(10))
        y = model(tf.ones((2, 28, 28)))
        ''')
    out, findings = convert(code)
    assert ADDED_CELLS in out and ".add(" not in out
    [model] = notes(findings, "TFL100")
    assert model.status == "converted"
    # an `add` after another statement is a use the cell does not serve
    later = code.replace("model.add(tf.keras.layers.Dense(10))\n", "print(1)\nmodel.add(tf.keras.layers.Dense(10))\n")
    [model] = notes(convert(later)[1], "TFL100")
    assert model.status == "info" and "`model` has `.add`" in model.message


def test_a_list_continued_by_add_statements_keeps_its_own_comments():
    """A list display of lines stays as written, its comments and commas with it; the added layers
    follow it, a run of them in a loop folded, and the comment after its last layer stays on that
    line. A display on one line is written anew, a layer a line."""
    code = textwrap.dedent('''\
        import tensorflow as tf

        model = tf.keras.Sequential((
            # the hidden layer
            tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),  # eight units
            tf.keras.layers.Dense(8)  # last shown
            # before the bracket
        ))
        for _ in range(3):
            model.add(tf.keras.layers.Dense(8, activation="gelu"))
        model.add(tf.keras.layers.Dense(1))  # one output
        y = model(tf.ones((2, 4)))
        ''')
    out, findings = convert(code)
    assert [n.status for n in notes(findings, "TFL100")] == ["converted"]
    dense = 'weight_init="xavier_uniform", bias_init="zeros"'
    assert textwrap.dedent(f'''\
        # one output
        model = nn.SequentialCell((
            # the hidden layer
            nn.Dense(4, 8, {dense}, activation="relu"),  # eight units
            nn.Dense(8, 8, {dense}),  # last shown
            *[cell for _ in range(3) for cell in (nn.Dense(8, 8, {dense}), nn.GELU(approximate=False))],
            nn.Dense(8, 1, {dense})
            # before the bracket
        ))
        ''') in out, out
    one_line = convert(code.replace(code[code.index("model = "):code.index("for _")],
                                    'model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(8)])\n'))[0]
    assert f"model = nn.SequentialCell([\n    nn.Dense(4, 8, {dense}),\n    *[cell for _ in range(3)" in one_line, one_line
    assert f"nn.GELU(approximate=False))],\n    nn.Dense(8, 1, {dense}),\n])\n" in one_line, one_line


ADD_LOOP = textwrap.dedent('''\
    import json

    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(3)
    x = rng.normal(size=(32, 5)).astype(np.float32)
    y = rng.normal(size=(32, 1)).astype(np.float32)
    w = rng.normal(size=(5, 5)).astype(np.float32) * 0.4
    v = rng.normal(size=(5, 1)).astype(np.float32)
    model = tf.keras.Sequential()
    model.add(tf.keras.layers.Dense(5, activation="tanh", kernel_initializer=tf.constant_initializer(w), input_shape=(5,)))
    for _ in range(4):  # the deep part
        # a block
        model.add(tf.keras.layers.Dense(5, activation="selu", kernel_initializer=tf.constant_initializer(w)))
    model.add(tf.keras.layers.Dense(1, kernel_initializer=tf.constant_initializer(v)))
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
    history = model.fit(x, y, epochs=3, batch_size=8, shuffle=False, verbose=0)
    print(json.dumps({"loss": history.history["loss"], "pred": model.predict(x[:4], verbose=0).ravel().tolist()}))
    ''')


def test_add_statements_in_a_loop_make_each_iterations_layers_anew(tmp_path):
    """`for _ in range(n): model.add(...)` (a deep stack, as in Hands-On ML): the list holds n
    layers of their own (a run of layers written alike is one starred comprehension, which makes
    each anew, as Keras does), and the program trains to TF's numbers (four layers starting from
    one constant kernel: shared cells would not)."""
    out, findings = convert(ADD_LOOP)
    assert "*[cell for _ in range(4) for cell in (nn.Dense(5, 5, weight_init=ms.Tensor(w, ms.float32).T, " \
           "bias_init=\"zeros\"), KerasSeLU())],\n" in out, out
    assert "for _ in range" not in out.split("*[cell")[0] and ".add(" not in out
    assert "# the deep part\n# a block\nmodel = nn.SequentialCell([" in out
    [model] = notes(findings, "TFL100")
    assert model.status == "converted"
    if importlib.util.find_spec("mindspore") is None or importlib.util.find_spec("tensorflow") is None:
        pytest.skip("needs TensorFlow and MindSpore")
    assert_same_numbers(python_json(out, script=tmp_path / "train.py"), python_json(ADD_LOOP))


def test_comments_of_a_regrouped_list_and_of_an_add_loop_stay_once():
    code = textwrap.dedent('''\
        import tensorflow as tf

        m2 = tf.keras.Sequential([
            tf.keras.layers.Dense(3, activation="selu", input_shape=(4,)),  # c1
            # between
            tf.keras.layers.Dense(2, activation="leaky_relu")  # c2
        ])
        y2 = m2(tf.ones((2, 4)))
        model = tf.keras.Sequential()
        model.add(tf.keras.layers.Dense(5, input_shape=(5,)))
        for _ in range(3):
            model.add(tf.keras.layers.Dense(5))
            # the loop's last comment
        y = model(tf.ones((2, 5)))
        ''')
    out, findings = convert(code)
    assert [n.status for n in notes(findings, "TFL100")] == ["converted", "converted"]
    for comment in ("# c1", "# between", "# c2", "# the loop's last comment"):
        assert out.count(comment) == 1, out
    assert "KerasSeLU(),  # c1\n    # between\n    nn.Dense(3, 2," in out, out


@pytest.mark.parametrize("loop, why", [
    ("for i in range(4):\n    model.add(tf.keras.layers.Dense(i + 1))\n", "`model.add` is given layers made from its loop's variable"),
    ("for _ in range(n):\n    model.add(tf.keras.layers.Dense(5))\n", "not `for _ in range(n)` with a literal `n`"),
    ("for _ in [1, 2]:\n    model.add(tf.keras.layers.Dense(5))\n", "not `for _ in range(n)` with a literal `n`"),
    ("for _ in range(2):\n    model.add(tf.keras.layers.Dense(5))\n    print(1)\n", "in a loop that does more than add layers"),
    ("for _ in range(2):\n    model.add(tf.keras.layers.Dense(5))\nelse:\n    pass\n", "in a loop that does more than add layers"),
    ("for depth in range(2):\n    model.add(tf.keras.layers.Dense(5))\nprint(depth)\n", "whose variable `depth` is read elsewhere"),
])
def test_add_loops_it_cannot_prove_keep_the_shim(loop, why):
    code = ("import tensorflow as tf\n\nn = int(input())\nmodel = tf.keras.Sequential()\n"
            "model.add(tf.keras.layers.Dense(5, input_shape=(5,)))\n" + loop + "y = model(tf.ones((2, 5)))\n")
    out, findings = convert(code)
    assert "mk.Sequential()" in out
    [model] = notes(findings, "TFL100")
    assert model.status == "info" and why in model.message, model.message


def test_a_loop_argument_the_native_loop_does_not_take_keeps_the_shim_and_says_why():
    for extra, why in [
        ("model.fit(x, y, callbacks=[Mine()])\n", "`model.fit` is given callbacks the native loop does not serve: "
                                                  "`Mine` is not one of the built-in callbacks it serves"),
        ("model.fit(x, y, 32, 1, 0, [])\n", "more positional arguments than the native loop reads"),
        ("model.evaluate(x, y, sample_weight=w)\n", "`model.evaluate` is given `sample_weight`"),
    ]:
        out, findings = convert(FIT.replace("OPTIMIZER", "tf.keras.optimizers.SGD(0.1)") + extra)
        assert "mk.Sequential([" in out and "model.compile(optimizer=mk.optimizers.SGD(0.1)" in out
        [model] = notes(findings, "TFL100")
        assert why in model.message, model.message


def test_a_first_dense_with_a_constant_kernel_takes_its_input_width_from_the_constant():
    source = textwrap.dedent('''\
        import numpy as np
        import tensorflow as tf

        w = np.ones((5, 3), np.float32)
        model = tf.keras.Sequential([tf.keras.layers.Dense(3, kernel_initializer=tf.constant_initializer(KERNEL)),
                                     tf.keras.layers.Dense(2)])


        def predict(features):
            return model(features)
        ''')
    out, _ = convert(source.replace("KERNEL", "w"))
    assert 'nn.Dense(len(w), 3, weight_init=ms.Tensor(w, ms.float32).T, bias_init="zeros")' in out
    assert 'nn.Dense(3, 2, weight_init="xavier_uniform", bias_init="zeros")' in out
    for kernel in ("0.5", "np.ones((5, 3))"):  # (a number broadcasts; a call's rows are not a name's)
        out, findings = convert(source.replace("KERNEL", kernel))
        assert "mk.Sequential([" in out
        [model] = notes(findings, "TFL100")
        assert "the input width of a layer is not known statically" in model.message


def test_kerass_built_in_callbacks_run_in_the_native_loop_and_weights_files_are_its_own():
    out, findings = convert(FIT.replace("OPTIMIZER", "tf.keras.optimizers.SGD(0.1, momentum=0.9)") + textwrap.dedent('''\
        stop = tf.keras.callbacks.EarlyStopping(patience=2, restore_best_weights=True)
        callbacks = [tf.keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.9), stop,
                     tf.keras.callbacks.ModelCheckpoint("best.weights.h5", save_best_only=True, save_weights_only=True)]
        model.fit(x, y, validation_data=(x, y), callbacks=callbacks)
        print(stop.stopped_epoch)
        model.load_weights("best.weights.h5")
        model.evaluate(x, y, callbacks=[tf.keras.callbacks.CSVLogger("log.csv")])
        model.save_weights("last.weights.h5")
        '''))
    assert "mk.Sequential" not in out and "nn.SequentialCell([" in out
    assert "training.fit(model, x, y, validation_data=(x, y), callbacks=callbacks)" in out
    assert 'training.load_weights(model, "best.weights.h5")' in out
    assert 'training.save_weights(model, "last.weights.h5")' in out
    assert 'training.evaluate(model, x, y, callbacks=[mk.callbacks.CSVLogger("log.csv")])' in out
    assert "mk.callbacks.EarlyStopping(patience=2, restore_best_weights=True)" in out
    assert not [f for f in findings if f.rule == "TFL100" and f.status != "converted"]


@pytest.mark.parametrize("extra,why", [
    ("model.fit(x, y, callbacks=[tf.keras.callbacks.ModelCheckpoint('m.keras')])\n",
     "`mk.callbacks.ModelCheckpoint` is not given `save_weights_only=True`"),
    ("model.fit(x, y, callbacks=[tf.keras.callbacks.TensorBoard('logs')])\n",
     "`mk.callbacks.TensorBoard` is not one of the built-in callbacks it serves"),
    ("cbs = [tf.keras.callbacks.EarlyStopping()]\ncbs.append(Mine())\nmodel.fit(x, y, callbacks=cbs)\n",
     "`cbs` has other uses"),
    ("def f():\n    cbs = [tf.keras.callbacks.EarlyStopping()]\n    model.fit(x, y, callbacks=cbs)\n",
     "`cbs` is not bound once at module level"),
    ("stop = tf.keras.callbacks.EarlyStopping()\nstop.set_model(other)\nmodel.fit(x, y, callbacks=[stop])\n",
     "`stop` has other uses"),
    ("model.fit(x, y, callbacks=make_callbacks())\n", "they are not a list display"),
    ("status = model.load_weights('w.weights.h5')\n", "the result of `model.load_weights` is used"),
])
def test_callbacks_and_weight_files_the_native_loop_cannot_prove_keep_the_shim(extra, why):
    out, findings = convert(FIT.replace("OPTIMIZER", "tf.keras.optimizers.SGD(0.1)") + extra)
    assert "mk.Sequential([" in out and "training." not in out
    [model] = notes(findings, "TFL100")
    assert why in model.message, model.message


@pytest.mark.parametrize("optimizer,why", [
    ('"rmsprop"', "the optimizer `rmsprop` has no native lowering yet"),
    ("tf.keras.optimizers.SGD(learning_rate=schedule)", "its optimizer keeps the shim: `learning_rate` is not a literal"),
    ("opt", "`model.compile` is given `opt`, which is not bound by module statements `name = Optimizer(...)`"),
    ("make_optimizer()", "is not given a Keras optimizer the native tier lowers"),
])
def test_a_compile_the_native_tier_cannot_prove_keeps_the_shim(optimizer, why):
    out, findings = convert(FIT.replace("OPTIMIZER", optimizer))
    assert "model.fit(x, y" in out and "training." not in out
    [model] = notes(findings, "TFL100")
    assert why in model.message, model.message


def test_a_name_bound_again_by_module_statements_is_judged_binding_by_binding():
    code = textwrap.dedent('''\
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(8,))])
        model.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(learning_rate=1e-3))
        history = model.fit(x, y, epochs=2)
        model.summary()

        model = tf.keras.Sequential([tf.keras.layers.Dense(10, input_shape=(8,))])
        model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer="sgd")
        history = model.fit(x, labels, epochs=2)
        y_proba = model.predict(x_new)
        ''')
    out, findings = convert(code)
    assert "model = mk.Sequential([mk.layers.Dense(1, input_shape=(8,))])\nmodel.compile(" in out
    assert "model = nn.SequentialCell([nn.Dense(8, 10," in out and "y_proba = training.predict(model, x_new)" in out
    first, second = notes(findings, "TFL100")
    assert (first.line, first.status) == (3, "info") and "`model` has `.summary`" in first.message
    assert (second.line, second.status) == (8, "converted")
    loop, eager = notes(findings, "TFL160")
    assert (loop.line, loop.status) == (9, "converted")
    assert (eager.line, eager.status) == (9, "info") and "`ms.jit` cells under PyNative: the module reads `mk`" in eager.message


def test_a_functions_own_variable_of_the_same_name_is_another_variable():
    code = textwrap.dedent('''\
        import tensorflow as tf


        def build(width):
            model = tf.keras.Sequential([tf.keras.layers.Dense(width, input_shape=(8,))])
            return model


        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(8,))])
        model.compile(loss="mse", optimizer="sgd")
        model.fit(x, y)
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(8,))])
        model.compile(loss="mae", optimizer="adam")
        ''')
    out, findings = convert(code)
    assert "    model = mk.Sequential([mk.layers.Dense(width, input_shape=(8,))])" in out  # (its width is not a literal)
    assert out.count("nn.SequentialCell(") == 2 and "training.compile(model, loss=nn.L1Loss(reduction=\"mean\")" in out
    assert [n.status for n in notes(findings, "TFL100")] == ["converted", "converted"]


def test_a_name_bound_again_inside_a_function_is_not_judged_by_bindings():
    code = HEAD + "\n\ndef rebuild():\n    global model\n    model = 1\n"
    out, findings = convert(code)
    [model] = notes(findings, "TFL100")
    assert "bound more than once, and not only by statements of the module's straight-line code" in model.message


REBOUND = textwrap.dedent('''\
    import numpy as np
    import tensorflow as tf

    x = np.ones((4, 8), np.float32)
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(8,))])


    def score(inputs):
        return model(inputs)


    print(score(tf.constant(x)))
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(8,))])
    print(model(tf.constant(x)))
    ''')


@pytest.mark.parametrize("extra, native", [
    ("", 2),
    # the function defined again after the second binding is another function, reading that one
    ("\ndef score(inputs):\n    return model(inputs) * 2\n\n\nprint(score(tf.constant(x)))\n", 2),
    # called under both bindings, handed on, or called by another function: which model it reads is not one
    ("print(score(tf.constant(x)))\n", 0),
    ("outputs = list(map(score, [tf.constant(x)]))\n", 0),
    ("\ndef twice(inputs):\n    return score(inputs)\n", 0),
])
def test_a_function_the_module_calls_under_one_binding_reads_that_binding(extra, native):
    out, findings = convert(REBOUND + extra)
    assert out.count("nn.SequentialCell(") == native, out
    why = [n.message for n in notes(findings, "TFL100") if n.status == "info"]
    assert all("bound more than once, and not only by statements of the module's straight-line code" in w for w in why)
    assert len(why) == 2 - native
    compile(out, "converted.py", "exec")


def test_a_notebooks_converted_tapes_read_the_model_bound_where_they_run():
    step = ("with tf.GradientTape() as tape:\n    loss = tf.reduce_sum(model(tf.constant(x)))\n"
            "grads = tape.gradient(loss, model.trainable_variables)\n")
    code = REBOUND.replace("print(score(tf.constant(x)))\n", step) + step
    out, findings = convert(code)
    assert out.count("nn.SequentialCell(") == 2 and out.count("def forward():") == 2, out
    assert out.count("mk.value_and_grad(forward, None, model.trainable_params())()") == 2
    compile(out, "converted.py", "exec")


def _persistent_tape(layers: str, inputs: str = "tf.constant(np.ones((4, 8), np.float32))") -> str:
    return textwrap.dedent(f'''\
        import numpy as np
        import tensorflow as tf

        x = {inputs}
        model = tf.keras.Sequential([tf.keras.Input(shape=(8,)), {layers}tf.keras.layers.Dense(2)])
        with tf.GradientTape(persistent=True) as tape:
            y = model(x, training=True)
            a = tf.reduce_sum(y)
            b = tf.reduce_mean(y)
        ga = tape.gradient(a, model.trainable_variables)
        gb = tape.gradient(b, model.trainable_variables)
        ''')


@pytest.mark.parametrize("layers, why", [
    ("", None),
    # the shim repeats the forward pass with the first one's draws; MindSpore's cells draw anew
    ("tf.keras.layers.Dropout(0.5), ", "the module uses `value_and_grads`, which repeats a forward pass"),
])
def test_a_forward_pass_repeated_for_another_gradient_keeps_the_shim_only_for_layers_that_draw(layers, why):
    out, findings = convert(_persistent_tape(layers))
    [note] = notes(findings, "TFL100")
    assert "mk.value_and_grads(forward, [" in out
    if why is None:
        assert note.status == "converted" and "model = nn.SequentialCell([nn.Dense(8, 2," in out
        assert "[model.trainable_params(), model.trainable_params()]" in out
    else:
        assert note.status == "info" and why in note.message and "mk.Sequential(" in out


@pytest.mark.parametrize("inputs, native", [
    ("tf.constant(np.ones((4, 8), np.float32))", True),  # `ms.Tensor(...)` once converted
    ("tf.cast(np.ones((4, 8)), tf.float32)", True),  # a MindSpore op's result
    # an array (TFT140 knows it): Keras converts it to the model's float32 input, and so does the cell's call
    ("np.ones((4, 8))", True),
    ("np.load('x.npy') if FLAG else tf.constant(1.0)", False),  # may be an array, may be a tensor
])
def test_a_module_name_bound_to_a_tensor_is_no_numpy_array_to_the_model(inputs, native):
    out, findings = convert(_persistent_tape("", inputs))
    [note] = notes(findings, "TFL100")
    assert (note.status == "converted") == native, note.message
    if not native:
        assert "`model` is called on `x`, a module value that may be a NumPy array" in note.message
    elif inputs.startswith("np."):
        assert "model(ms.Tensor(x, ms.float32))" in out, out


@pytest.mark.parametrize("extra, width", [
    ("", 28),
    # bound twice: the width is the name's value when the model is built, read then, as Keras reads it
    ("FEATURES = 30\n", "FEATURES"),
    ("\ndef grow():\n    global FEATURES\n    FEATURES += 1\n", "FEATURES"),
])
def test_an_input_width_named_by_a_module_constant_is_that_constant(extra, width):
    code = ("import tensorflow as tf\n\nFEATURES = 28\n" + extra +
            "model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation=\"elu\", input_shape=(FEATURES,)),"
            " tf.keras.layers.Dense(1)])\n")
    out, findings = convert(code)
    [note] = notes(findings, "TFL100")
    assert note.status == "converted" and f"nn.Dense({width}, 16, weight_init=" in out, out


RUNTIME_WIDTH = textwrap.dedent('''\
    import numpy as np
    import tensorflow as tf

    X_train = np.linspace(0, 1, 48, dtype=np.float32).reshape(6, 8)
    input_shape = X_train.shape[1:]
    model = tf.keras.Sequential([tf.keras.layers.Dense(30, activation="relu", input_shape=SHAPE), LAYERtf.keras.layers.Dense(1)])
    y = model(tf.constant(X_train))
    ''')


@pytest.mark.parametrize("shape, layer, width", [
    ("X_train.shape[1:]", "", "X_train.shape[-1]"),  # the width Keras reads, where it reads it
    ("input_shape", "tf.keras.layers.Dropout(0.2), ", "input_shape[-1]"),
    ("(input_shape)", "tf.keras.layers.Activation('tanh'), ", "input_shape[-1]"),
    ("(X_train.shape[1],)", "", "X_train.shape[1]"),
    # a layer that needs the whole shape, a shape computed by a call
    ("input_shape", "tf.keras.layers.Flatten(), ", None),
    ("shape_of(X_train)", "", None),
])
def test_an_input_width_the_module_computes_is_read_where_keras_reads_it(shape, layer, width):
    out, findings = convert(RUNTIME_WIDTH.replace("SHAPE", shape).replace("LAYER", layer))
    [note] = notes(findings, "TFL100")
    if width is None:
        assert note.status == "info" and "the input width of a layer is not known statically" in note.message
        return
    assert note.status == "converted" and f"nn.Dense({width}, 30, weight_init=" in out, out
    pytest.importorskip("mindspore")
    namespace: dict = {}
    exec(compile(out, "converted.py", "exec"), namespace)  # (MindSpore checks the widths)
    assert namespace["y"].shape == (6, 1)
    assert namespace["model"][0].weight.shape == (30, 8)


def test_a_runtime_width_with_an_initializer_scaled_by_its_fans_keeps_the_shim():
    code = RUNTIME_WIDTH.replace("SHAPE", "input_shape").replace("LAYER", "").replace(
        'activation="relu",', 'activation="relu", kernel_initializer="he_normal",')
    out, findings = convert(code)
    [note] = notes(findings, "TFL100")
    assert note.status == "info" and "the initializer 'he_normal' scales by the layer's fans, and its input width " \
        "is known only at run time" in note.message


def test_review_cases_of_the_loop_and_of_names_bound_again():
    out = convert(FIT.replace("OPTIMIZER", '"sgd"').replace('metrics=["accuracy"])', 'metrics=["accuracy"], loss_weights=None)'))[0]
    assert "loss_weights" not in out and 'metrics=["accuracy"])' in out  # (None is Keras's default: dropped)
    # an optimizer bound again keeps the shim: functions the gradients lowering writes read it by name
    twice = HEAD + "\noptimizer.apply_gradients(zip(g, model.trainable_variables))\noptimizer = tf.keras.optimizers.SGD(0.1)\n"
    [opt] = notes(convert(twice)[1], "TFL110")[:1]
    assert "bound more than once" in opt.message
    # a binding the module's statements cannot show (a starred target) is not judged by bindings
    starred = FIT.replace("OPTIMIZER", '"sgd"') + "a, *model = parts\n"
    [model] = notes(convert(starred)[1], "TFL100")
    assert "bound more than once" in model.message
    # comments: a softmax split off keeps each line's comment once; an `add` line's trailing comment stays
    code = textwrap.dedent('''\
        import tensorflow as tf

        model = tf.keras.Sequential()
        model.add(tf.keras.Input(shape=(4,)))  # features
        model.add(tf.keras.layers.Dense(8))  # hidden
        model.add(tf.keras.layers.Dense(3, activation="softmax"))
        model.compile(loss="sparse_categorical_crossentropy", optimizer="sgd")
        ''')
    out = convert(code)[0]
    assert out.count("# features") == out.count("# hidden") == 1 and "nn.Softmax()" in out
    listed = FIT.replace('[tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(3)]',
                         '[\n    tf.keras.Input(shape=(4,)),\n    tf.keras.layers.Dense(5),  # hidden\n'
                         '    tf.keras.layers.Dense(3, activation="softmax"),  # output\n]').replace(
        'loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)', 'loss="sparse_categorical_crossentropy"')
    out = convert(listed.replace("OPTIMIZER", '"sgd"'))[0]
    assert out.count("# hidden") == out.count("# output") == 1 and "nn.Softmax()" in out


def test_loop_notes_are_at_their_compile_statements():
    code = textwrap.dedent('''\
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(8,))])
        model.compile(loss="mse", optimizer="sgd")
        model.summary()
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(8,))])
        if True:
            model.compile(loss="mae", optimizer="sgd")
        model.compile(loss="mse", optimizer="adam")
        ''')
    loops = [n for n in notes(convert(code)[1], "TFL160") if n.status == "converted"]
    assert [n.line for n in loops] == [8, 9]
    alone = "import tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(8,))])\nprint(model.predict(x))\n"
    out, findings = convert(alone)
    [loop] = notes(findings, "TFL160")
    assert "training.predict(model, x)" in out and loop.line == 3 and "`predict`" in loop.message


def test_a_functions_own_training_variable_does_not_block_the_loop():
    layer = "\n\ndef call(x, training=None):\n    return x\n"
    out = convert(FIT.replace("OPTIMIZER", '"sgd"') + layer)[0]
    # (the loop's module takes an alias, as every import the conversion adds does in a file using its name)
    assert "from migrate.runtime import training as migrate_training" in out
    assert "history = migrate_training.fit(model, x, y" in out
    inside = FIT.replace("OPTIMIZER", '"sgd"').replace("history = model.fit(x, y, batch_size=8, epochs=2, verbose=0)\n",
                                                    "def run(training=True):\n    return model.fit(x, y)\n")
    out, findings = convert(inside)
    [model] = notes(findings, "TFL100")
    assert "`training`, the name of the native loop's module, is bound" in model.message


def test_a_module_binding_the_loops_name_keeps_the_shim():
    out, findings = convert(FIT.replace("OPTIMIZER", '"sgd"') + "training = True\n")
    [model] = notes(findings, "TFL100")
    assert "`training`, the name of the native loop's module, is bound" in model.message


CNN = HEAD.replace(
    '[tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(3, activation="relu"), tf.keras.layers.Dense(1)]',
    '[tf.keras.Input(shape=(8, 8, 3)), tf.keras.layers.Conv2D(4, 3, strides=2, padding="same", activation="relu", '
    'kernel_initializer=tf.constant_initializer(k)), tf.keras.layers.BatchNormalization(momentum=0.9), '
    'tf.keras.layers.MaxPooling2D(), tf.keras.layers.Flatten(), tf.keras.layers.Dense(1)]')


def test_a_model_with_convolutions_is_a_cell_that_runs_them_channels_first():
    out, findings = convert(CNN)
    assert textwrap.dedent('''\
        class Model(nn.Cell):
            """`model`: Keras's layers as MindSpore's cells. The convolutions run channels-first, as
            MindSpore's kernels do, between the channels-last input and the channels-last features
            that Keras flattens."""

            def __init__(self):
                super().__init__()
                self.features = nn.SequentialCell([
                    nn.Conv2d(3, 4, 3, stride=2, pad_mode="same", has_bias=True, weight_init=ms.Tensor(k, ms.float32).transpose(3, 2, 0, 1), bias_init="zeros"),
                    nn.ReLU(),
                    nn.BatchNorm2d(4, eps=0.001, momentum=0.9),
                    nn.MaxPool2d(kernel_size=2, stride=2, pad_mode="valid"),
                ])
                self.head = nn.SequentialCell([
                    nn.Flatten(),
                    nn.Dense(16, 1, weight_init="xavier_uniform", bias_init="zeros"),
                ])

            def construct(self, x):
                x = self.features(x.transpose(0, 3, 1, 2))
                return self.head(x.transpose(0, 2, 3, 1))


        model = Model()
        model.set_train()
        optimizer = nn.SGD(model.trainable_params(), learning_rate=0.1, momentum=0.9)
        ''') in out  # 8x8 -> 4x4 (stride 2, same) -> 2x2 (pool): 2*2*4 features; every call trains (BatchNorm's batch statistics)
    [model] = notes(findings, "TFL100")
    assert model.status == "converted" and "`Model`" in model.message


@pytest.mark.parametrize("old,new,why", [
    ("tf.keras.layers.Conv2D(4, 3, strides=2,", "tf.keras.layers.Conv2D(4, 3, dilation_rate=2, strides=2,", "dilated or grouped"),
    ("tf.keras.layers.Conv2D(4, 3,", "tf.keras.layers.Conv2D(filters, 3,", "`filters` is not a literal"),
    ("tf.keras.Input(shape=(8, 8, 3)), ", "", "input shape (height, width, channels) is not known"),
    ("tf.keras.layers.MaxPooling2D()", "tf.keras.layers.AveragePooling2D(padding='same')", "padding is not a literal it lowers ('valid')"),
    ("BatchNormalization(momentum=0.9)", "BatchNormalization(axis=1)", "an axis other than the channels"),
    ("BatchNormalization(momentum=0.9)", "BatchNormalization(center=False)", "`center` is not True"),
    ("tf.keras.Input(shape=(8, 8, 3)), ", "tf.keras.Input(shape=(8, 8, 3)), tf.keras.layers.Dense(3), ",
     "needs a flat input comes before its convolutions"),
])
def test_convolutions_it_cannot_prove_keep_the_shim(old, new, why):
    assert old in CNN
    out, findings = convert(CNN.replace(old, new))
    assert "mk.Sequential([" in out
    [model] = notes(findings, "TFL100")
    assert why in model.message


FUNCTIONAL = HEAD.replace(
    'model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(3, activation="relu"), tf.keras.layers.Dense(1)])',
    'inputs = tf.keras.Input(shape=(4,))\n'
    '# the hidden layer\n'
    'x = tf.keras.layers.Dense(3, activation="relu")(inputs)\n'
    'outputs = tf.keras.layers.Dense(1)(x)\n'
    'model = tf.keras.Model(inputs=inputs, outputs=outputs, name="regressor")')


def test_a_functional_chain_is_a_sequential_cell_and_its_graph_tensors_go():
    out, findings = convert(FUNCTIONAL)  # (`x` is also train_step's own parameter: that is not a read of the graph's `x`)
    assert textwrap.dedent('''\
        # the hidden layer
        model = nn.SequentialCell([
            nn.Dense(4, 3, weight_init="xavier_uniform", bias_init="zeros", activation="relu"),
            nn.Dense(3, 1, weight_init="xavier_uniform", bias_init="zeros"),
        ])
        optimizer = nn.SGD(''') in out
    assert "inputs" not in out and "outputs" not in out
    [model] = notes(findings, "TFL100")
    assert model.status == "converted"


@pytest.mark.parametrize("extra,why", [
    ("print(x.shape)\n", "`x`, a tensor of the model's graph, is read elsewhere"),
    ("def f():\n    global x\n    return x\n", "`x`, a tensor of the model's graph, is read elsewhere"),
])
def test_a_functional_model_whose_graph_is_read_elsewhere_keeps_the_shim(extra, why):
    out, findings = convert(FUNCTIONAL + "\n\n" + extra)
    assert "mk.Model(inputs=inputs, outputs=outputs" in out
    [model] = notes(findings, "TFL100")
    assert why in model.message


def test_a_functional_model_that_is_not_a_chain_keeps_the_shim():
    code = FUNCTIONAL.replace("outputs = tf.keras.layers.Dense(1)(x)", "outputs = tf.keras.layers.Add()([x, inputs])")
    out, findings = convert(code)
    [model] = notes(findings, "TFL100")
    assert "is not one layer applied to one name" in model.message


@pytest.mark.parametrize("calls,mode", [
    ("model(x, training=True)", "model.set_train()\n"),   # every call trains: the cell's mode is set once
    ("model(x)", ""),                                      # no call trains: a Cell's mode is inference already
])
def test_a_dropout_model_takes_the_mode_of_its_calls(calls, mode):
    code = HEAD.replace("tf.keras.layers.Dense(1)]", "tf.keras.layers.Dropout(0.5), tf.keras.layers.Dense(1)]")
    code = code.replace("model(x, training=True)", calls)
    out, _ = convert(code)
    assert "nn.Dropout(p=0.5)" in out and ("model.set_train()" in out) == bool(mode)


def test_a_dropout_model_called_both_training_and_not_keeps_the_shim():
    code = HEAD.replace("tf.keras.layers.Dense(1)]", "tf.keras.layers.Dropout(0.5), tf.keras.layers.Dense(1)]")
    out, findings = convert(code + "\n\ndef predict(x):\n    return model(x, training=False)\n")
    assert "mk.Sequential([" in out
    [model] = notes(findings, "TFL100")
    assert "called both training and not" in model.message and "`Dropout`, `BatchNormalization`" in model.message


def test_a_loss_reduction_given_as_the_keras_constant_is_lowered():
    code = HEAD + textwrap.dedent('''

        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.NONE)


        def per_example(x, y):
            return loss_object(y, model(x))
        ''')
    out, findings = convert(code)
    assert 'loss_object = nn.CrossEntropyLoss(reduction="none")\n' in out
    [loss] = notes(findings, "TFL150")
    assert loss.status == "converted"


def test_adam_is_lowered_with_keras_epsilon_and_keeps_the_shim_for_amsgrad():
    out, findings = convert(HEAD.replace("tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)",
                                         "tf.keras.optimizers.Adam(0.01, beta_1=0.8)"))
    assert "optimizer = nn.Adam(model.trainable_params(), learning_rate=0.01, beta1=0.8, eps=1e-07)\n" in out
    [opt] = notes(findings, "TFL111")
    assert opt.status == "converted"
    out, findings = convert(HEAD.replace("tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)",
                                         "tf.keras.optimizers.Adam(amsgrad=True)"))
    assert "mk.optimizers.Adam(amsgrad=True)" in out
    [opt] = notes(findings, "TFL111")
    assert "`amsgrad` is not `False`" in opt.message


def test_native_adam_takes_the_steps_of_keras_adam():
    """nn.Adam with the epsilon written out computes Keras's update (epsilon before the bias
    correction), step by step, with gradients small enough for epsilon to matter."""
    ms = pytest.importorskip("mindspore")
    import numpy as np

    from migrate.runtime import keras as mk

    w0 = np.array([[1.0, -2.0, 0.5]], np.float32)
    grads = [np.array([[1e-7, 3e-6, -0.2]], np.float32), np.array([[2e-6, -1e-7, 0.1]], np.float32)] * 2
    native = ms.Parameter(ms.Tensor(w0), name="w")
    optimizer = ms.nn.Adam([native], learning_rate=0.01, beta1=0.8, eps=1e-07)
    shim = ms.Parameter(ms.Tensor(w0), name="v")
    keras = mk.optimizers.Adam(0.01, beta_1=0.8)
    for g in grads:
        optimizer((ms.Tensor(g),))
        keras.apply_gradients([(ms.Tensor(g), shim)])
        np.testing.assert_allclose(native.asnumpy(), shim.asnumpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("prefix,rate", [
    ("", "0.01 * get_group_size()"),
    ("BASE = 0.01\nSCALE = BASE * 2\n", "-(-SCALE) / 2 ** 1"),
])
def test_a_rate_computed_from_literals_and_the_process_count_is_a_fixed_number(prefix, rate):
    source = HEAD.replace("optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)",
                          f"{prefix}optimizer = tf.keras.optimizers.SGD(learning_rate={rate}, momentum=0.9)")
    out, findings = convert(source.replace("import tensorflow as tf\n", "import tensorflow as tf\nfrom mindspore.communication import get_group_size\n"))
    assert f"optimizer = nn.SGD(model.trainable_params(), learning_rate={rate}, momentum=0.9)" in out
    assert [f.status for f in notes(findings, "TFL110")] == ["converted"]


@pytest.mark.parametrize("optimizer,why", [
    ("tf.keras.optimizers.SGD(learning_rate=schedule)", "`learning_rate` is not a literal"),
    ("tf.keras.optimizers.SGD(0.1, weight_decay=0.01)", "arguments the native optimizer does not take"),
    ("tf.keras.optimizers.SGD(flags.lr * 2)", "`learning_rate` is not a literal"),
    ("tf.keras.optimizers.SGD(rate())", "`learning_rate` is not a literal"),
])
def test_an_optimizer_it_cannot_prove_keeps_the_shim_over_the_native_model(optimizer, why):
    out, findings = convert(HEAD.replace("tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)", optimizer))
    assert "nn.SequentialCell([" in out and "mk.optimizers." in out
    assert "optimizer.apply_gradients(zip(grads, model.trainable_params()))" in out
    [opt] = notes(findings, "TFL110")
    assert why in opt.message


HOROVOD = textwrap.dedent('''\
    import tensorflow as tf
    import horovod.tensorflow as hvd

    hvd.init()
    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(1)])
    opt = tf.keras.optimizers.SGD(0.01 * hvd.size(), momentum=0.9)


    def step(x, y, first):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        tape = hvd.DistributedGradientTape(tape)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        if first:
            BROADCASTS
        return loss
    ''')


def test_horovods_broadcast_of_a_native_model_and_optimizer_takes_their_parameters():
    out, findings = convert(HOROVOD.replace("BROADCASTS", "hvd.broadcast_variables(model.variables, root_rank=0)\n"
                                            "        hvd.broadcast_variables(opt.variables, root_rank=0)"))
    assert "opt = nn.SGD(model.trainable_params(), learning_rate=0.01 * get_group_size(), momentum=0.9)" in out
    assert "hvd.broadcast_variables(model.get_parameters(), root_rank=0)" in out
    assert "hvd.broadcast_variables(opt.get_parameters(), root_rank=0)" in out
    assert {f.rule: f.status for f in findings if f.rule in ("TFL100", "TFL110")} == {"TFL100": "converted", "TFL110": "converted"}


@pytest.mark.parametrize("broadcasts", [
    "hvd.broadcast_variables(opt.variables, root_rank=0)",
    "hvd.broadcast_variables(model.variables, root_rank=1)\n        hvd.broadcast_variables(opt.variables, root_rank=0)",
])
def test_an_optimizers_broadcast_without_its_models_beside_it_keeps_the_shim(broadcasts):
    out, findings = convert(HOROVOD.replace("BROADCASTS", broadcasts))
    assert "mk.optimizers.SGD(" in out
    [opt] = notes(findings, "TFL110")
    assert "`opt.variables` is broadcast where `model.variables` is not, from the same root" in opt.message


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


STEP = "\n\n@tf.function\ndef step(x, y):\n    return train_step(x, y)\n\n\nfor x, y in batches:\n    print(float(step(x, y)))\n"


def test_a_compiled_step_of_a_native_module_is_a_cell_of_a_graph_mode_program():
    out, findings = convert(HEAD + STEP)
    assert "class Step(nn.Cell):\n    def construct(self, x, y):\n        return train_step(x, y)\n\n\nstep = Step()\n" in out
    assert "@ms.jit" not in out
    # GRAPH_MODE is set once, after the imports, before anything runs
    head, _, rest = out.partition("ms.set_context(mode=ms.GRAPH_MODE)\n")
    assert rest and all(line.startswith(("import ", "from ")) or not line for line in head.splitlines())
    [jit] = notes(findings, "TFL140")
    assert jit.status == "converted" and "`Step`" in jit.message and "GRAPH_MODE" in jit.message


@pytest.mark.parametrize("extra,why", [
    ("metric = tf.keras.metrics.Mean()\nmetric.update_state(1.0)\n", "reads `mk` (`migrate.runtime.keras`)"),
    ("import helpers\nhelpers.log(1)\n", "reads `helpers` (`helpers`)"),
    ("def probe(x):\n    with tf.GradientTape() as tape:\n        y = model(x)\n    return tape.gradient(y, model.trainable_variables)\n",
     "`ms.value_and_grad` is also called outside the compiled steps"),
])
def test_a_compiled_step_stays_an_ms_jit_function_where_the_module_needs_pynative(extra, why):
    out, findings = convert(HEAD + "\n\n" + extra + STEP)
    assert "@ms.jit\ndef step(x, y):" in out and "GRAPH_MODE" not in out and "nn.Cell)" not in out
    [jit] = notes(findings, "TFL140")
    assert jit.status == "converted" and "stays an `ms.jit` function under PyNative" in jit.message and why in jit.message


def test_the_shim_tier_is_the_same_as_ignoring_the_native_rules():
    index = rule_index(RuleSelection(ignore=(NATIVE_RULES,)))
    out = convert_source(HEAD.encode(), index, "example.py").converted.decode()
    assert "mk.Sequential([" in out and "mk.optimizers.SGD(" in out and "nn." not in out


def test_the_native_rules_prefix_names_the_native_rules_alone():
    """Ignoring the native tier's prefix drops the lowerings and nothing else (`tf.nest` still converts;
    the wrapping of NumPy arrays, which runs after the rules as the lowerings do, serves both tiers)."""
    import migrate.ops

    rules = load_rules()
    native = {r.id for r in rules if r.id.startswith(NATIVE_RULES)}
    assert native == {r.id for r in rules if r.operation == "lower_native"}
    after = {r.id for r in rules if migrate.ops.REGISTRY[r.operation].target == "lowering"}
    assert after - native == {"TFT140"}
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


def test_a_lowered_cnn_computes_what_the_shim_model_computes():
    """The CNN cell (channels-first convolutions between channels-last input and features,
    kernels transposed, global pooling as adaptive pooling and Flatten) gives the shim model's
    outputs, from the two tiers' converted text of one Keras model with constant weights."""
    pytest.importorskip("mindspore")
    import numpy as np

    code = textwrap.dedent('''\
        import numpy as np
        import tensorflow as tf

        rng = np.random.default_rng(4)
        k0 = rng.normal(size=(3, 3, 3, 5)).astype(np.float32)
        k1 = rng.normal(size=(2, 2, 5, 4)).astype(np.float32)
        w = rng.normal(size=(4, 2)).astype(np.float32)
        model = tf.keras.Sequential([
            tf.keras.Input(shape=(9, 7, 3)),
            tf.keras.layers.Conv2D(5, 3, strides=(2, 1), padding="same", kernel_initializer=tf.constant_initializer(k0)),
            tf.keras.layers.ReLU(),
            tf.keras.layers.MaxPooling2D(padding="same"),
            tf.keras.layers.Conv2D(4, 2, activation="tanh", kernel_initializer=tf.constant_initializer(k1),
                                   bias_initializer=tf.constant_initializer(0.3)),
            tf.keras.layers.GlobalAveragePooling2D(),
            tf.keras.layers.Dense(2, kernel_initializer=tf.constant_initializer(w)),
        ])


        def forward(x):
            return model(x)
        ''')
    import mindspore as ms

    x = ms.Tensor(np.random.default_rng(5).normal(size=(3, 9, 7, 3)).astype(np.float32))
    outputs = {}
    for tier in ("native", "shim"):
        scope = _run_in_tier(code, tier, "cnn", "class Model(nn.Cell)")
        outputs[tier] = scope["forward"](x).asnumpy()
    assert outputs["native"].shape == (3, 2)
    np.testing.assert_allclose(outputs["native"], outputs["shim"], rtol=1e-5, atol=1e-5)


def _native_activations() -> list[tuple[str, str]]:
    params = next(r for r in load_rules() if r.id == "TFL100").params
    # (a Dense takes the names MindSpore's nn.Dense knows; the others as a cell after it)
    return [*(("cell", a) for a in params["activation_cells"]),
            *(("dense", a) for a, to in params["activations"].items() if to is not None),
            *(("dense", a) for a in params["activation_cells"] if a not in params["activations"])]


@pytest.mark.parametrize("where, name", _native_activations())
def test_each_lowered_activation_gives_the_shims_values_and_gradients(where, name):
    """Every activation the native tier lowers (an `Activation` layer's cell, a Dense's own
    `activation`) computes what the shim's does (checked against Keras in the shim's suites),
    values and gradients, on inputs through its kinks (0, and the exact points -3, 3, 6)."""
    pytest.importorskip("mindspore")
    import mindspore as ms
    import numpy as np

    layer = (f"tf.keras.layers.Activation({name!r})" if where == "cell" else
             f"tf.keras.layers.Dense(5, activation={name!r}, kernel_initializer=tf.constant_initializer(w), "
             "bias_initializer=tf.constant_initializer(0.25))")
    code = textwrap.dedent(f'''\
        import numpy as np
        import tensorflow as tf

        w = np.random.default_rng(2).normal(size=(49, 5)).astype(np.float32)
        model = tf.keras.Sequential([tf.keras.Input(shape=(49,)), {layer}])


        def forward(x):
            return model(x)
        ''')
    # (steps of 1/16 from -6 to 6, so 0, -3, 3 and 6 exactly, and three points beside 0)
    x = ms.Tensor(np.concatenate([np.linspace(-6, 6, 193), [-1e-3, 1e-3, 0.5]]).astype(np.float32).reshape(4, 49))
    got = {}
    for tier in ("native", "shim"):
        scope = _run_in_tier(code, tier, "act", "nn.SequentialCell(")
        forward = scope["forward"]
        got[tier] = (forward(x).asnumpy(), ms.grad(lambda t: (forward(t) * ms.Tensor(np.arange(1, 6) if where == "dense"
                                                                                         else np.ones(49), ms.float32)).sum())(x).asnumpy())
    np.testing.assert_allclose(got["native"][0], got["shim"][0], rtol=1e-5, atol=1e-6)
    # The gradients to 1e-5: `nn.Dense` multiplies by the transposed kernel, so a pre-activation's
    # float32 sum may end an ulp apart, and where tanh saturates 1 - tanh(z)**2 makes that ulp of
    # its value a relative 1e-3 of the derivative (3e-6 here, on a machine whose matrix products
    # sum in another order).
    np.testing.assert_allclose(got["native"][1], got["shim"][1], rtol=1e-5, atol=1e-5)


def test_a_functional_chain_with_convolutions_is_a_cell_and_keeps_its_comments():
    code = textwrap.dedent('''\
        import tensorflow as tf

        images = tf.keras.Input(shape=(8, 8, 1))
        # features
        x = tf.keras.layers.Conv2D(2, 3)(images)
        x = tf.keras.layers.Flatten()(x)
        out = tf.keras.layers.Dense(2)(x)
        model = tf.keras.Model(images, out)


        def f(batch):
            return model(batch)
        ''')
    out, findings = convert(code)
    assert "        return self.head(x.transpose(0, 2, 3, 1))\n\n\n# features\nmodel = Model()\n" in out
    assert "nn.Dense(72, 2," in out and "images" not in out  # 6x6x2 features
    [model] = notes(findings, "TFL100")
    assert model.status == "converted"


def test_a_functional_chain_the_cell_cannot_take_keeps_its_statements():
    """A refusal found late (a Dense before the convolutions) leaves the chain as it was."""
    code = textwrap.dedent('''\
        import tensorflow as tf

        images = tf.keras.Input(shape=(8, 8, 1))
        x = tf.keras.layers.Dense(3)(images)
        x = tf.keras.layers.Conv2D(2, 3)(x)
        out = tf.keras.layers.Flatten()(x)
        model = tf.keras.Model(images, out)


        def f(batch):
            return model(batch)
        ''')
    out, findings = convert(code)
    assert "images = mk.Input(shape=(8, 8, 1))\nx = mk.layers.Dense(3)(images)\n" in out and "mk.Model(images, out)" in out
    [model] = notes(findings, "TFL100")
    assert "needs a flat input comes before its convolutions" in model.message


@pytest.mark.parametrize("name, distribution, scale, fan", [
    ("he_normal", "normal", 2.0, "in"), ("lecun_normal", "normal", 1.0, "in"), ("glorot_normal", "normal", 1.0, "avg"),
    ("he_uniform", "uniform", 2.0, "in"), ("lecun_uniform", "uniform", 1.0, "in"),
    ("tf.keras.initializers.HeNormal()", "normal", 2.0, "in"),
])
def test_variance_scaling_initializers_draw_kerass_distribution(name, distribution, scale, fan):
    """Lowered to MindSpore's TruncatedNormal (bounds at two deviations) or Uniform with Keras's
    numbers for the layer's fans: the weights' range and deviation are those of Keras's draws."""
    pytest.importorskip("mindspore")
    import numpy as np

    init = name if "(" in name else f'"{name}"'
    code = HEAD.replace('tf.keras.layers.Dense(3, activation="relu"), tf.keras.layers.Dense(1)',
                        f"tf.keras.layers.Dense(300, kernel_initializer={init})")
    code = code.replace("tf.keras.Input(shape=(4,))", "tf.keras.Input(shape=(400,))")
    converted, findings = convert(code)
    assert ("ms.common.initializer.TruncatedNormal(" if distribution == "normal" else
            "ms.common.initializer.Uniform(") in converted, converted
    [model] = notes(findings, "TFL100")
    assert model.status == "converted"
    import mindspore as ms

    ms.set_seed(3)
    scope: dict = {}
    exec(compile(converted, "init.py", "exec"), scope)
    weights = scope["model"][0].weight.asnumpy()
    assert weights.shape == (300, 400)
    n = {"in": 400.0, "avg": 350.0}[fan]
    if distribution == "normal":  # Keras: a normal of deviation sqrt(scale / n) / 0.8796..., cut at two deviations
        sigma = np.sqrt(scale / n) / 0.87962566103423978
        assert np.abs(weights).max() <= 2 * sigma * (1 + 1e-6)
        assert weights.std() == pytest.approx(np.sqrt(scale / n), rel=0.02)
    else:  # Keras: uniform within sqrt(3 * scale / n)
        limit = np.sqrt(3.0 * scale / n)
        assert np.abs(weights).max() <= limit and np.abs(weights).max() > 0.99 * limit
        assert weights.std() == pytest.approx(limit / np.sqrt(3.0), rel=0.02)


def test_an_activation_handed_on_as_tfs_function_is_lowered_as_its_name():
    """`activation=tf.nn.relu` is Keras's "relu" (the function is what the name resolves to)."""
    out, findings = convert(HEAD.replace('activation="relu"', "activation=tf.nn.relu").replace(
        "tf.keras.layers.Dense(1)", "tf.keras.layers.Dense(1, activation=tf.nn.sigmoid)"))
    assert "mk." not in out and "ops.relu" not in out and "ops.sigmoid" not in out
    assert 'nn.Dense(4, 3, weight_init="xavier_uniform", bias_init="zeros", activation="relu")' in out
    assert 'nn.Dense(3, 1, weight_init="xavier_uniform", bias_init="zeros", activation="sigmoid")' in out
    custom = HEAD.replace('activation="relu"', "activation=my_relu")
    assert "mk.Sequential" in convert(custom)[0]  # a function of the program's own keeps the shim


@pytest.mark.parametrize("condition, apply", [
    ("hvd.size() > 1", "optimizer(grad_reducer(grads))"),  # the reducer is the identity on one process
    ("average", "optimizer(grad_reducer(grads) if average else grads)"),
])
def test_a_horovod_wrap_under_an_if_reduces_natively_under_that_condition(condition, apply):
    code = HEAD.replace("import tensorflow as tf\n", "import horovod.tensorflow as hvd\nimport tensorflow as tf\n") \
        .replace("def train_step(x, y):", "def train_step(x, y, average):") \
        .replace("    grads = tape.gradient", f"    if {condition}:\n        tape = hvd.DistributedGradientTape(tape)\n"
                                              "    grads = tape.gradient")
    out, findings = convert(code)
    assert "nn.SGD(model.trainable_params()" in out and "mean=True" in out
    assert apply in out and "allreduce_gradients" not in out, out
    assert not [f for f in findings if f.status == "manual"]


QUICKSTART = textwrap.dedent('''\
    import numpy as np
    import tensorflow as tf

    x = np.ones((4, 28, 28))
    model = tf.keras.Sequential([
        tf.keras.layers.Flatten(input_shape=(28, 28)),
        tf.keras.layers.Dense(16, activation="relu"),
        {dropout}tf.keras.layers.Dense(10),
    ])
    predictions = model(x[:1]).numpy()
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    loss_fn(np.zeros(1), predictions)
    model.compile(optimizer="adam", loss=loss_fn, metrics=["accuracy"])
    model.fit(x, np.zeros(4), epochs=1)
    probability_model = tf.keras.Sequential([model, {outer}])
    ''')


def test_a_native_model_first_in_another_models_list_is_that_cells_first_cell():
    """TF's quickstart: the trained model inside `Sequential([model, Softmax()])` is the same cell
    (its weights shared, as Keras shares its layers); a NumPy input is the float32 tensor Keras
    makes of it; a loss given to `compile` by name is the loop's own of the same arguments."""
    out, findings = convert(QUICKSTART.format(dropout="", outer="tf.keras.layers.Softmax()") + "p = probability_model(x)\n")
    assert [n.status for n in notes(findings, "TFL100")] == ["converted", "converted"], notes(findings, "TFL100")
    assert "probability_model = nn.SequentialCell([model, nn.Softmax()])" in out
    assert "predictions = model(ms.Tensor(x[:1], ms.float32)).numpy()" in out
    assert "p = probability_model(ms.Tensor(x, ms.float32))" in out
    assert "loss=nn.CrossEntropyLoss(reduction=\"mean\")" in out and "loss_fn = nn.CrossEntropyLoss(reduction=\"mean\")" in out
    # (called on the NumPy array of the model's output, as the quickstart does: tensors of both)
    assert "loss_fn(ms.Tensor(predictions), ms.Tensor(np.zeros(1)).astype(ms.int32))" in out


def test_a_native_model_in_a_list_that_keeps_the_shim_keeps_it_too():
    """A shim model cannot hold a MindSpore cell: when the outer model keeps the shim, the pass runs
    again without taking the inner model's read there, and the inner model keeps the shim too."""
    out, findings = convert(QUICKSTART.format(dropout="", outer="tf.keras.layers.LayerNormalization()"))
    inner, outer = notes(findings, "TFL100")
    assert outer.status == "info" and "has no native lowering" in outer.message
    assert inner.status == "info" and "`model` has a use the native cell does not serve" in inner.message
    assert "nn.SequentialCell" not in out and "mk.Sequential([model, mk.layers.LayerNormalization()])" in out


def test_a_model_holding_a_dropout_model_takes_its_mode():
    """A Cell's mode is its children's: a model holding a native model with Dropout must be set to
    the same mode (here both infer: the inner one's direct call and the outer's do not train)."""
    _, findings = convert(QUICKSTART.format(dropout="tf.keras.layers.Dropout(0.2),\n    ", outer="tf.keras.layers.Softmax()")
                          + "p = probability_model(x)\n")
    assert [n.status for n in notes(findings, "TFL100")] == ["converted", "converted"]
    _, findings = convert(QUICKSTART.format(dropout="tf.keras.layers.Dropout(0.2),\n    ", outer="tf.keras.layers.Softmax()")
                          + "p = probability_model(x, training=True)\n")
    inner, outer = notes(findings, "TFL100")
    assert outer.status == "info" and "is set to infer and `probability_model` to train" in outer.message, outer.message
    assert inner.status == "info"


def test_the_quickstarts_cells_share_weights_and_give_the_softmax_of_the_models_output():
    ms = pytest.importorskip("mindspore")
    import numpy as np

    out, _ = convert(QUICKSTART.format(dropout="", outer="tf.keras.layers.Softmax()")
                     .replace("model.fit(x, np.zeros(4), epochs=1)\n", "") + "p = probability_model(x)\n")
    scope: dict = {}
    exec(compile(out, "quickstart.py", "exec"), scope)
    assert scope["probability_model"][0] is scope["model"]
    want = scope["ms"].ops.softmax(scope["model"](ms.Tensor(np.ones((4, 28, 28)), ms.float32))).asnumpy()
    assert np.allclose(scope["p"].asnumpy(), want, rtol=1e-6)


def test_a_native_model_two_lists_hold_is_native_only_if_both_are():
    source = QUICKSTART.format(dropout="", outer="tf.keras.layers.Softmax()").replace(
        "probability_model = ", "other = tf.keras.Sequential([model, tf.keras.layers.LayerNormalization()])\nprobability_model = ")
    out, findings = convert(source + "p = probability_model(x)\nq = other(x)\n")
    assert "nn.SequentialCell" not in out, out
    assert all(n.status == "info" for n in notes(findings, "TFL100"))


def test_a_model_name_bound_again_is_not_taken_into_another_list():
    source = QUICKSTART.format(dropout="", outer="tf.keras.layers.Softmax()")
    out, _ = convert(source + "p = probability_model(x)\nmodel = tf.keras.Sequential([tf.keras.layers.Flatten(input_shape=(28, 28))])\n")
    # (the first `model` is read by the other list under its binding: both keep the shim; the second is native)
    assert "probability_model = mk.Sequential([model, mk.layers.Softmax()])" in out
    assert "model = mk.Sequential([\n    mk.layers.Flatten(input_shape=(28, 28)),\n    mk.layers.Dense(16" in out
    assert out.endswith("model = nn.SequentialCell([nn.Flatten()])\n"), out


def test_an_array_expression_given_to_a_native_model_is_its_tensor():
    out, findings = convert(QUICKSTART.format(dropout="", outer="tf.keras.layers.Softmax()") + "p = probability_model(x[:2] / 255.0)\n")
    assert "p = probability_model(ms.Tensor(x[:2] / 255.0, ms.float32))" in out, out


# -- subclassed models, their input shapes read from the data the module feeds them -------------

SUBCLASS = textwrap.dedent('''\
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 6, 6, 1)).astype(np.float32)
    y = rng.integers(0, 3, size=40)
    train_ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(40).batch(8)


    class MyModel(tf.keras.Model):
        """Two convolutions and a head."""

        def __init__(self):
            super().__init__()
            self.conv1 = tf.keras.layers.Conv2D(4, 3, activation="relu")
            self.pool = tf.keras.layers.MaxPooling2D()
            self.flatten = tf.keras.layers.Flatten()
            self.d1 = tf.keras.layers.Dense(16, activation="relu")
            self.d2 = tf.keras.layers.Dense(3)

        def call(self, inputs, training=None):
            h = self.pool(self.conv1(inputs))
            h = self.flatten(h)
            return self.d2(self.d1(h))


    model = MyModel()
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam()


    def train_step(images, labels):
        with tf.GradientTape() as tape:
            loss = loss_object(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    for images, labels in train_ds:
        train_step(images, labels)
    ''')


def test_a_subclassed_model_whose_call_chains_its_layers_is_a_native_cell():
    out, findings = convert(SUBCLASS)
    assert "mk." not in out and "migrate.runtime" not in out.replace("migrate.runtime.spmd", "")
    assert textwrap.dedent('''\
        class MyModel(nn.Cell):
            """Two convolutions and a head."""

            def __init__(self):
                super().__init__()
                self.conv1 = nn.SequentialCell([nn.Conv2d(1, 4, 3, pad_mode="valid", has_bias=True, weight_init="xavier_uniform", bias_init="zeros"), nn.ReLU()])
                self.pool = nn.MaxPool2d(kernel_size=2, stride=2, pad_mode="valid")
                self.flatten = nn.Flatten()
                self.d1 = nn.Dense(16, 16, weight_init="xavier_uniform", bias_init="zeros", activation="relu")
                self.d2 = nn.Dense(16, 3, weight_init="xavier_uniform", bias_init="zeros")

            def construct(self, inputs):
                h = self.pool(self.conv1(inputs.transpose(0, 3, 1, 2))).transpose(0, 2, 3, 1)
                h = self.flatten(h)
                return self.d2(self.d1(h))
        ''') in out
    assert "loss = loss_object(model(images), labels.astype(ms.int32))" in out  # (`training=True`: the Cell's mode)
    [model] = notes(findings, "TFL100")
    assert (model.line, model.status) == (10, "converted")
    assert "its input (6, 6, 1)" in model.message
    assert notes(findings, "TFL111")[0].status == "converted"


@pytest.mark.parametrize("change,why", [
    (("def __init__(self):", "def __init__(self, units=16):"), "its `__init__` takes arguments"),
    (("        return self.d2(self.d1(h))", "        return self.d2(self.d1(h)) + 1"),
     "its `call` is not its layers applied one after another to its input"),
    (("        h = self.flatten(h)\n", ""), "its `call` does not apply each of its layers once"),
    (("model = MyModel()", "model = MyModel()\nother = MyModel()"), "the class is read other than by one instantiation"),
    (("from_tensor_slices((x, y)).shuffle(40).batch(8)", "from_tensor_slices((x, y)).shuffle(40)"), "one by one"),
    (("for images, labels in train_ds:", "for labels, images in train_ds:"), "convolution's input shape"),  # (the labels' rows)
    (("x = rng.normal(size=(40, 6, 6, 1))", "x = load()"), "not known statically"),
    (("        h = self.flatten(h)\n", "        h = self.flatten(h)\n        h = self.pool(h)\n"),
     "its `call` does not apply each of its layers once"),
    (("def train_step(images, labels):", "def train_step(images, labels):\n    images = images * 2"),
     "not known statically"),
])
def test_a_subclassed_model_keeps_the_shim_saying_why(change, why):
    old, new = change
    assert old in SUBCLASS
    out, findings = convert(SUBCLASS.replace(old, new))
    assert "class MyModel(mk.Model):" in out
    model = [f for f in notes(findings, "TFL100") if f.message.startswith("`MyModel`")]
    assert [f.status for f in model] == ["info"] and why in model[0].message, [f.message for f in model]


def test_batches_of_another_dtype_are_cast_to_float32_as_keras_casts_them():
    """Keras casts a model's input to float32; a MindSpore cell computes in the dtype it is given
    (float64 batches into float32 weights: "the type of 'x2' should be same as 'x1'")."""
    out, findings = convert(SUBCLASS.replace("(40, 6, 6, 1)).astype(np.float32)", "(40, 6, 6, 1))"))
    assert "loss = loss_object(model(images.astype(ms.float32)), labels.astype(ms.int32))" in out
    assert notes(findings, "TFL100")[0].status == "converted"
    # in a comprehension's loop too, and for a model that states its input shape
    source = textwrap.dedent('''\
        import numpy as np
        import tensorflow as tf

        x = np.zeros((32, 5))
        ds = tf.data.Dataset.from_tensor_slices((x, np.zeros((32, 1)))).batch(8)
        model = tf.keras.Sequential([tf.keras.Input(shape=(5,)), tf.keras.layers.Dense(1)])


        def step(a, b):
            return tf.reduce_mean(tf.square(model(a) - b))


        losses = [float(step(a, b)) for a, b in ds]
        ''')
    out, findings = convert(source)
    assert "model(a.astype(ms.float32))" in out
    # batches of a dtype not known: no cast, the model keeps the shim where its shape is not stated either
    out, findings = convert(source.replace("x = np.zeros((32, 5))", "x = load()").replace("tf.keras.Input(shape=(5,)), ", ""))
    assert "mk.Sequential" in out


UNKNOWN_DTYPE = textwrap.dedent('''\
    import json

    import numpy as np
    import tensorflow as tf


    def load():
        return np.stack([np.linspace(0, 1, 64), np.linspace(1, 0, 64)], axis=1)


    x = load()
    y = x[:, :1] * 2.0 + 1.0
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu", input_shape=(2,), kernel_initializer="ones"),
                                 tf.keras.layers.Dense(1, kernel_initializer="ones")])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
    history = model.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0)
    out = model(tf.convert_to_tensor(x[:3]))
    print(json.dumps({"loss": history.history["loss"], "call": np.asarray(out).ravel().tolist()}))
    ''')


def test_a_tensor_of_a_dtype_not_known_statically_is_cast_as_keras_casts_it(tmp_path):
    """A model that states its input shape, called on a tensor whose dtype the module does not make
    statically (float64 rows of a function of its own): Keras computes in float32, casting its
    input; the cell is given the input cast (it failed in MatMul on float64). Batches whose parts
    are partly followed (`labels` computed by a call) still tell their features' dtype: no cast."""
    out, findings = convert(UNKNOWN_DTYPE)
    assert "out = model(ms.Tensor(x[:3]).astype(ms.float32))" in out, out
    assert notes(findings, "TFL100")[0].status == "converted"
    known = textwrap.dedent('''\
        import numpy as np
        import tensorflow as tf

        x = np.zeros((32, 5), np.float32)
        ds = tf.data.Dataset.from_tensor_slices((x, np.tanh(x @ np.ones((5, 1))))).batch(8)
        model = tf.keras.Sequential([tf.keras.Input(shape=(5,)), tf.keras.layers.Dense(1)])


        def step(a, b):
            return tf.reduce_mean(tf.square(model(a) - b))


        losses = [float(step(a, b)) for a, b in ds]
        ''')
    assert "return ops.mean(ops.square(model(a) - b))" in convert(known)[0]
    # a generator's draw of a size not known statically (`(EXAMPLES, 5)`) still has its dtype
    sized = known.replace("x = np.zeros((32, 5), np.float32)",
                          "EXAMPLES = int(input())\nrng = np.random.default_rng(0)\nx = rng.normal(size=(EXAMPLES, 5)).astype(np.float32)")
    assert "return ops.mean(ops.square(model(a) - b))" in convert(sized)[0]
    if importlib.util.find_spec("mindspore") is None or importlib.util.find_spec("tensorflow") is None:
        pytest.skip("needs TensorFlow and MindSpore")
    assert_same_numbers(python_json(out, script=tmp_path / "train.py"), python_json(UNKNOWN_DTYPE))


RAW_VARIABLES = textwrap.dedent('''\
    import json

    import numpy as np
    import tensorflow as tf

    num_features, num_classes = 6, 3
    rng = np.random.default_rng(4)
    x_train = rng.normal(size=(96, num_features)).astype(np.float32)
    y_train = (x_train @ rng.normal(size=(num_features, num_classes))).argmax(axis=1)
    train_data = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(16)

    W = tf.Variable(tf.ones([num_features, num_classes]), name="weight")
    b = tf.Variable(tf.zeros([num_classes]), name="bias")
    scale = tf.Variable(0.5)


    def logistic_regression(x):
        return tf.nn.softmax(tf.matmul(x, W) * scale + b)


    def cross_entropy(y_pred, y_true):
        y_true = tf.one_hot(y_true, depth=num_classes)
        y_pred = tf.clip_by_value(y_pred, 1e-9, 1.)
        return tf.reduce_mean(-tf.reduce_sum(y_true * tf.math.log(y_pred), 1))


    optimizer = tf.optimizers.SGD(0.1, momentum=0.9)


    @tf.function
    def run_optimization(x, y):
        with tf.GradientTape() as g:
            pred = logistic_regression(x)
            loss = cross_entropy(pred, y)
        gradients = g.gradient(loss, [W, b, scale])
        optimizer.apply_gradients(zip(gradients, [W, b, scale]))
        return loss


    losses = []
    for epoch in range(3):
        for batch_x, batch_y in train_data:
            losses.append(float(run_optimization(batch_x, batch_y)))
    print(json.dumps({"losses": losses, "W": W.numpy().ravel().tolist(), "scale": [float(scale.numpy())]}))
    ''')


def test_a_modules_own_variables_become_parameters_with_their_optimizer_and_tape(tmp_path):
    """TF's logistic regression of raw variables (TensorFlow-Examples' form): the variables become
    `ms.Parameter`, the optimizer `nn.SGD` over that list, the tape `ms.value_and_grad` over the
    optimizer's parameters, and the `tf.function` step a compiled cell (the module's constants read
    in it, a tuple of them too): the program trains to TF's numbers."""
    out, findings = convert(RAW_VARIABLES)
    for line in ('W = ms.Parameter(ops.ones([num_features, num_classes]), name="weight")\n',
                 "scale = ms.Parameter(0.5)\n", "optimizer = nn.SGD([W, b, scale], learning_rate=0.1, momentum=0.9)\n",
                 "loss, gradients = ms.value_and_grad(forward, None, optimizer.parameters)()\n",
                 "class RunOptimization(nn.Cell):\n"):
        assert line in out, out
    assert "tfvariable" not in out and "mk." not in out
    assert [n.status for n in notes(findings, "TFL190")] == ["converted"] * 3
    [optimizer] = notes(findings, "TFL110")
    assert "over the variables `[W, b, scale]`" in optimizer.message
    if importlib.util.find_spec("mindspore") is None or importlib.util.find_spec("tensorflow") is None:
        pytest.skip("needs TensorFlow and MindSpore")
    assert_same_numbers(python_json(out, script=tmp_path / "train.py"), python_json(RAW_VARIABLES))


@pytest.mark.parametrize("variable, why", [
    ("scale = tf.Variable(0.5)\nscale.assign_add(1.0)\n", "`scale` is read for `.assign_add` (TF's variable's own)"),
    ('scale = tf.Variable(0.5, name="weight")\n', "another variable is named 'weight' too"),
    ("scale = tf.Variable(0.5, trainable=False)\n", "it is not trainable"),
    ("scale = tf.Variable(np.float64(0.5))\n", "its initial value is not a float literal, a float array or a float32 tensor"),
    ("scale = tf.Variable(0.5)\ndescribe = print\ndescribe(scale)\n", "`scale` is read as an argument of `describe`"),
    ("scale = tf.Variable(0.5)\nkept = [scale]\n", "`scale` is read in a list other than the weights"),
])
def test_variables_a_parameter_would_not_serve_keep_the_shim(variable, why):
    """The shim's variable stays where TF's methods, names or dtypes are read, or the variable
    goes where the lowering cannot follow it; the optimizer over a list holding it stays too."""
    out, findings = convert(RAW_VARIABLES.replace("scale = tf.Variable(0.5)\n", variable))
    scale = [n for n in notes(findings, "TFL190") if n.message.startswith("`scale`")]
    assert [n.status for n in scale] == ["info"] and why in scale[0].message, [n.message for n in scale]
    assert "scale = tfvariable.Variable(" in out
    assert "nn.SGD" not in out  # (its optimizer applies a list that holds a shim variable)


VARIABLE_DICTS = textwrap.dedent('''\
    import json

    import numpy as np
    import tensorflow as tf

    n_in, n_hidden, n_out = 5, 7, 3
    rng = np.random.default_rng(11)
    x_train = rng.normal(size=(80, n_in)).astype(np.float32)
    y_train = (x_train @ rng.normal(size=(n_in, n_out))).argmax(axis=1)
    w_init = rng.normal(scale=0.4, size=(n_in, n_hidden)).astype(np.float32)
    train_data = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(16)

    weights = {
        'h1': tf.Variable(w_init, name='h1_weights'),
        'out': tf.Variable(tf.ones([n_hidden, n_out]) * 0.1, name='out_weights'),
    }
    biases = {
        'b1': tf.Variable(tf.zeros([n_hidden]), name='b1_bias'),
        'out': tf.Variable(tf.zeros([n_out]), name='out_bias'),
    }


    def layer(x, W, b):
        return tf.nn.sigmoid(tf.add(tf.matmul(x, W), b))


    def neural_net(x):
        layer_1 = layer(x, weights['h1'], b=biases['b1'])
        return tf.nn.softmax(tf.matmul(layer_1, weights['out']) + biases['out'])


    def cross_entropy(y_pred, y_true):
        y_true = tf.one_hot(y_true, depth=n_out)
        y_pred = tf.clip_by_value(y_pred, 1e-9, 1.)
        return tf.reduce_mean(-tf.reduce_sum(y_true * tf.math.log(y_pred), 1))


    optimizer = tf.optimizers.SGD(0.5)


    def run_optimization(x, y):
        with tf.GradientTape() as g:
            loss = cross_entropy(neural_net(x), y)
        # the variables to update
        trainable_variables = list(weights.values()) + list(biases.values())
        gradients = g.gradient(loss, trainable_variables)
        optimizer.apply_gradients(zip(gradients, trainable_variables))
        return loss


    losses = []
    for epoch in range(3):
        for batch_x, batch_y in train_data:
            losses.append(float(run_optimization(batch_x, batch_y)))
    print(json.dumps({"losses": losses, "h1": weights['h1'].numpy().ravel().tolist(), "b": biases['out'].numpy().tolist()}))
    ''')


def test_dicts_of_variables_become_parameters_and_their_lists_the_optimizers_weights(tmp_path):
    """TensorFlow-Examples' raw networks keep their variables in dicts, read by key, and hand
    `list(weights.values()) + list(biases.values())` (bound to a name of the step's) to the tape
    and the optimizer: each variable is a Parameter (a NumPy array's, a float32 tensor times a
    number; one read through a function of the module's own, whose parameter is read so), `nn.SGD`
    takes that list, the step's name for it goes (its comment stays), and the program trains to
    TF's numbers."""
    out, findings = convert(VARIABLE_DICTS)
    for line in ("    'h1': ms.Parameter(w_init, name='h1_weights'),\n",
                 "    'out': ms.Parameter(ops.ones([n_hidden, n_out]) * 0.1, name='out_weights'),\n",
                 "optimizer = nn.SGD(list(weights.values()) + list(biases.values()), learning_rate=0.5)\n",
                 "    # the variables to update\n    loss, gradients = ms.value_and_grad(forward, None, optimizer.parameters)()\n"):
        assert line in out, out
    assert "trainable_variables" not in out and "tfvariable" not in out and "mk." not in out
    assert [n.status for n in notes(findings, "TFL190")] == ["converted", "converted"]
    # a dict read otherwise (its keys listed) keeps the shim, and so does the optimizer over it
    kept, findings = convert(VARIABLE_DICTS.replace("losses = []\n", "losses = []\nprint(sorted(weights))\n"))
    [why] = [n.message for n in notes(findings, "TFL190") if n.message.startswith("`weights`")]
    assert "`weights` is read other than by its keys and as `list(weights.values())`" in why
    assert "'h1': tfvariable.Variable(w_init" in kept and "nn.SGD" not in kept
    if importlib.util.find_spec("mindspore") is None or importlib.util.find_spec("tensorflow") is None:
        pytest.skip("needs TensorFlow and MindSpore")
    assert_same_numbers(python_json(out, script=tmp_path / "train.py"), python_json(VARIABLE_DICTS))


LINEAR_REGRESSION = textwrap.dedent('''\
    import json

    import numpy as np
    import tensorflow as tf

    rng = np.random
    rng.seed(2)
    X = np.linspace(0.0, 3.0, 24).astype(np.float32)
    Y = (2.0 * X + 0.5 + rng.normal(scale=0.1, size=24)).astype(np.float32)
    W = tf.Variable(rng.randn(), name="weight")
    b = tf.Variable(rng.randn(), name="bias")
    optimizer = tf.optimizers.SGD(0.05)


    def linear_regression(x):
        return W * x + b


    losses = []
    for step in range(20):
        with tf.GradientTape() as g:
            loss = tf.reduce_mean(tf.square(linear_regression(tf.constant(X)) - tf.constant(Y)))
        gradients = g.gradient(loss, [W, b])
        optimizer.apply_gradients(zip(gradients, [W, b]))
        losses.append(float(loss))
    print(json.dumps({"losses": losses, "w": [float(W.numpy()), float(b.numpy())]}))
    ''')


def test_scalar_variables_of_numpys_random_floats_become_parameters(tmp_path):
    """TensorFlow-Examples' linear regression: `tf.Variable(rng.randn())` (`rng = np.random`, a
    Python float, float32 to TF) is `ms.Parameter(rng.randn())`, with its optimizer; same numbers.
    (The notebook computes `W * x - Y` of NumPy arrays, which MindSpore's `Mul` and `Sub` refuse in
    either tier: here the arrays are tensors.)"""
    out, findings = convert(LINEAR_REGRESSION)
    assert 'W = ms.Parameter(rng.randn(), name="weight")\n' in out and "nn.SGD([W, b], learning_rate=0.05)" in out, out
    if importlib.util.find_spec("mindspore") is None or importlib.util.find_spec("tensorflow") is None:
        pytest.skip("needs TensorFlow and MindSpore")
    assert_same_numbers(python_json(out, script=tmp_path / "train.py"), python_json(LINEAR_REGRESSION))


def test_the_input_shape_follows_the_arrays_through_module_statements():
    """`load_data()`'s shapes, a tuple assignment, arithmetic, `[..., None]`, `astype` and a
    distributed pipeline, as TF's advanced quickstart writes them under a strategy."""
    source = textwrap.dedent('''\
        import tensorflow as tf

        mnist = tf.keras.datasets.mnist
        (x_train, y_train), (x_test, y_test) = mnist.load_data()
        x_train, x_test = x_train / 255.0, x_test / 255.0
        x_train = x_train[..., tf.newaxis].astype("float32")
        strategy = tf.distribute.MirroredStrategy()
        dist = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32))


        class Net(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.flatten = tf.keras.layers.Flatten()
                self.out = tf.keras.layers.Dense(10)

            def call(self, x):
                return self.out(self.flatten(x))


        with strategy.scope():
            net = Net()


        def step(batch):
            features, labels = batch
            return net(features)


        for batch in dist:
            step(batch)
        ''')
    out, findings = convert(source)
    assert "self.out = nn.Dense(784, 10, " in out
    [model] = notes(findings, "TFL100")
    assert model.status == "converted" and "(28, 28, 1)" in model.message


def test_a_sequential_without_an_input_shape_takes_it_from_the_arrays_it_is_fit_on():
    source = textwrap.dedent('''\
        import numpy as np
        import tensorflow as tf

        x = np.zeros((64, 5), dtype=np.float32)
        y = np.zeros((64, 1), dtype=np.float32)
        model = tf.keras.Sequential([tf.keras.layers.Dense(3, activation="relu"), tf.keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        model.fit(x, y, epochs=2, verbose=0)
        ''')
    out, findings = convert(source)
    assert "nn.Dense(5, 3, " in out and "nn.Dense(3, 1, " in out
    assert notes(findings, "TFL100")[0].status == "converted"
    # called on data of two shapes, it keeps the shim
    out, findings = convert(source + "model.predict(np.zeros((2, 6), dtype=np.float32))\n")
    assert "mk.Sequential" in out and "different shapes" in notes(findings, "TFL100")[0].message


TFE_NEURAL_NET = textwrap.dedent('''\
    import json

    import numpy as np
    import tensorflow as tf
    from tensorflow.keras import Model, layers

    num_classes = 3
    num_features = 12
    n_hidden_1 = 8
    n_hidden_2 = 6
    rng = np.random.default_rng(7)
    x_train = rng.normal(size=(48, 3, 4))
    y_train = rng.integers(0, 3, size=48)
    x_test = rng.normal(size=(10, 3, 4))
    w1 = rng.normal(scale=0.4, size=(12, 8)).astype(np.float32)
    w2 = rng.normal(scale=0.4, size=(8, 6)).astype(np.float32)
    w3 = rng.normal(scale=0.4, size=(6, 3)).astype(np.float32)
    x_train, x_test = np.array(x_train, np.float32), np.array(x_test, np.float32)
    x_train, x_test = x_train.reshape([-1, num_features]), x_test.reshape([-1, num_features])
    x_train, x_test = x_train / 2., x_test / 2.

    train_data = tf.data.Dataset.from_tensor_slices((x_train, y_train))
    train_data = train_data.repeat().batch(16)


    class NeuralNet(Model):
        def __init__(self):
            super(NeuralNet, self).__init__()
            self.fc1 = layers.Dense(n_hidden_1, activation=tf.nn.relu, kernel_initializer=tf.constant_initializer(w1))
            self.fc2 = layers.Dense(n_hidden_2, activation=tf.nn.relu, kernel_initializer=tf.constant_initializer(w2))
            self.out = layers.Dense(num_classes, kernel_initializer=tf.constant_initializer(w3))

        def call(self, x, is_training=False):
            x = self.fc1(x)
            x = self.fc2(x)
            x = self.out(x)
            if not is_training:
                x = tf.nn.softmax(x)
            return x


    neural_net = NeuralNet()


    def cross_entropy_loss(x, y):
        y = tf.cast(y, tf.int64)
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=x)
        return tf.reduce_mean(loss)


    optimizer = tf.optimizers.SGD(0.1)


    def run_optimization(x, y):
        with tf.GradientTape() as g:
            pred = neural_net(x, is_training=True)
            loss = cross_entropy_loss(pred, y)
        trainable_variables = neural_net.trainable_variables
        gradients = g.gradient(loss, trainable_variables)
        optimizer.apply_gradients(zip(gradients, trainable_variables))
        return loss


    losses = []
    for step, (batch_x, batch_y) in enumerate(train_data.take(9), 1):
        losses.append(float(run_optimization(batch_x, batch_y)))
    pred = neural_net(x_test, is_training=False)
    print(json.dumps({"losses": losses, "test": np.asarray(pred).ravel().tolist()}))
    ''')


def test_tensorflow_examples_neural_network_is_native_and_gives_tfs_numbers():
    """TensorFlow-Examples' `neural_network` (a subclassed model whose `call` takes its own flag
    and applies a softmax when it is off; a step reading the weights through a local name)."""
    out, findings = convert(TFE_NEURAL_NET)
    assert "mk." not in out and "import tensorflow" not in out
    assert "self.fc2 = nn.Dense(n_hidden_1, n_hidden_2, " in out
    assert "    def construct(self, x, is_training=False):" in out
    assert "pred = neural_net(x, is_training=True)" in out
    assert "pred = neural_net(ms.Tensor(x_test, ms.float32), is_training=False)" in out
    assert "optimizer(grad_reducer(gradients))" in out
    assert {f.rule: f.status for f in findings if f.rule in ("TFL100", "TFL110")} == {"TFL100": "converted", "TFL110": "converted"}
    if importlib.util.find_spec("mindspore") is None or importlib.util.find_spec("tensorflow") is None:
        pytest.skip("needs TensorFlow and MindSpore")
    want, got = python_json(TFE_NEURAL_NET), python_json(out)
    assert_same_numbers(got, want)


TFE_CONV_NET = textwrap.dedent('''\
    import json

    import numpy as np
    import tensorflow as tf
    from tensorflow.keras import Model, layers

    num_classes = 3
    rng = np.random.default_rng(9)
    x_train = rng.normal(size=(40, 36)).astype(np.float32)
    y_train = rng.integers(0, 3, size=40)
    k1 = rng.normal(scale=0.4, size=(3, 3, 1, 4)).astype(np.float32)
    w1 = rng.normal(scale=0.3, size=(16, 5)).astype(np.float32)
    w2 = rng.normal(scale=0.3, size=(5, 3)).astype(np.float32)
    train_data = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(8)


    class ConvNet(Model):
        def __init__(self):
            super(ConvNet, self).__init__()
            self.conv1 = layers.Conv2D(4, kernel_size=3, activation=tf.nn.relu, kernel_initializer=tf.constant_initializer(k1))
            self.maxpool1 = layers.MaxPool2D(2, strides=2)
            self.flatten = layers.Flatten()
            self.fc1 = layers.Dense(5, kernel_initializer=tf.constant_initializer(w1))
            # Apply Dropout (if is_training is False, dropout is not applied).
            self.dropout = layers.Dropout(rate=DROP)
            self.out = layers.Dense(num_classes, kernel_initializer=tf.constant_initializer(w2))

        def call(self, x, is_training=False):
            x = tf.reshape(x, [-1, 6, 6, 1])
            x = self.conv1(x)
            x = self.maxpool1(x)
            x = self.flatten(x)
            x = self.fc1(x)
            x = self.dropout(x, training=is_training)
            x = self.out(x)
            if not is_training:
                x = tf.nn.softmax(x)
            return x


    conv_net = ConvNet()
    optimizer = tf.optimizers.Adam(0.001)


    def run_optimization(x, y):
        with tf.GradientTape() as g:
            pred = conv_net(x, is_training=True)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.cast(y, tf.int64), logits=pred))
        trainable_variables = conv_net.trainable_variables
        gradients = g.gradient(loss, trainable_variables)
        optimizer.apply_gradients(zip(gradients, trainable_variables))
        return loss


    losses = [float(run_optimization(batch_x, batch_y)) for _ in range(2) for batch_x, batch_y in train_data]
    pred = conv_net(x_train[:6])
    print(json.dumps({"losses": losses, "test": np.asarray(pred).ravel().tolist()}))
    ''')


def test_tensorflow_examples_conv_net_is_native_its_dropout_by_the_calls_flag(tmp_path):
    """TensorFlow-Examples' `convolutional_network`: a `call` that reshapes its input first (the
    shape the cell is built for), a Dropout handed the call's own flag as `training`
    (`ops.dropout(..., training=is_training)`: it drops by that flag, not by the Cell's mode)."""
    out, findings = convert(TFE_CONV_NET.replace("DROP", "0.5"))
    assert "mk." not in out and "import tensorflow" not in out
    assert "nn.Conv2d(1, 4, 3, " in out and "self.fc1 = nn.Dense(16, 5, " in out
    assert "self.dropout" not in out
    assert "        x = ops.dropout(x, p=0.5, training=is_training)\n" in out
    assert "        x = self.conv1(x.transpose(0, 3, 1, 2))\n        x = self.maxpool1(x).transpose(0, 2, 3, 1)\n" in out
    assert "set_train" not in out
    [model] = notes(findings, "TFL100")
    assert model.status == "converted" and "(6, 6, 1)" in model.message
    if importlib.util.find_spec("mindspore") is None or importlib.util.find_spec("tensorflow") is None:
        pytest.skip("needs TensorFlow and MindSpore")
    program = TFE_CONV_NET.replace("DROP", "0.0")  # (no draws: TF's numbers)
    want, got = python_json(program), python_json(convert(program)[0])
    assert_same_numbers(got, want)
    # the step a tf.function: a GRAPH_MODE cell, calling the model with its flag (MindSpore compiles files only)
    compiled, findings = convert(program.replace("def run_optimization", "@tf.function\ndef run_optimization"))
    assert "class RunOptimization(nn.Cell):" in compiled and "trainable_params()" not in compiled.split("class RunOptimization")[1]
    assert_same_numbers(python_json(compiled, script=tmp_path / "train.py"), want)


SHAPED = textwrap.dedent('''\
    import numpy as np
    import tensorflow as tf

    WIDTH = 6
    rng = np.random.default_rng(0)
    MAKE
    model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, y, epochs=1, verbose=0)
    ''')


@pytest.mark.parametrize("make,rows", [
    ("x = np.zeros((10, 3, 4))", "(3, 4)"),
    ("x = np.ones((10, WIDTH), dtype=np.float32)", "(6,)"),
    ("x = rng.normal(size=(10, 2, 5)).astype(np.float32)", "(2, 5)"),
    ("x = rng.random((10, 7))", "(7,)"),
    ("x = np.random.rand(10, 3)", "(3,)"),
    ("x = rng.integers(0, 255, size=(10, 4, 4)) / 255.0", "(4, 4)"),
    ("x = np.zeros((10, 3, 4))[..., None]", "(3, 4, 1)"),
    ("x = np.zeros((10, 3, 4)).reshape(-1, 12)", "(12,)"),
    ("x = np.zeros((10, 3, 4)).reshape([10, -1])", "(12,)"),
    ("x = np.zeros((10, 3, 4))[2:8] * 2", "(3, 4)"),
    ("x, z = np.zeros((10, 3)), 1", "(3,)"),
    ("(x, _), (_, _) = tf.keras.datasets.mnist.load_data()", "(28, 28)"),
    ("(x, _), _ = tf.keras.datasets.cifar10.load_data()", "(32, 32, 3)"),
])
def test_a_models_input_shape_is_read_from_the_arrays_the_module_makes(make, rows):
    out, findings = convert(SHAPED.replace("MAKE", make + "\ny = np.zeros((10, 2))"))
    [model] = notes(findings, "TFL100")
    assert model.status == "converted", model.message
    assert "nn.SequentialCell" in out
    width = eval(rows)
    assert f"nn.Dense({__import__('math').prod(width)}, 2, " in out


@pytest.mark.parametrize("make", [
    "x = np.zeros(shape)",                      # (a shape the module computes)
    "x = np.zeros((10, 3))\nx = x.T",            # (an operation it does not follow)
    "x = np.zeros((10, 3))\nif flag:\n    x = np.zeros((10, 4))",  # (bound in a branch)
    "x = np.zeros((10, 3))\nx += 1",             # (bound other than by an assignment)
    "x = np.zeros((10, 3)).reshape(-1, 5)",      # (-1 first: rows of the width stated, 6 of 5)
])
def test_an_input_shape_the_module_does_not_make_statically_is_not_guessed(make):
    out, findings = convert(SHAPED.replace("MAKE", make + "\ny = np.zeros((10, 2))"))
    [model] = notes(findings, "TFL100")
    if "reshape(-1, 5)" in make:  # (known after all: the width after -1 is the one stated)
        assert model.status == "converted" and "nn.Dense(5, 2, " in out
        return
    assert model.status == "info" and "not known statically" in model.message, model.message


def test_a_softmax_between_convolutions_keeps_the_shim():
    """Between the convolutions the cell's value is channels-first: a softmax over the last axis
    there would normalize over the width, not over Keras's channels."""
    source = SUBCLASS.replace("h = self.pool(self.conv1(inputs))", "h = self.pool(tf.nn.softmax(self.conv1(inputs)))")
    out, findings = convert(source)
    [model] = [f for f in notes(findings, "TFL100") if f.message.startswith("`MyModel`")]
    assert model.status == "info" and "softmax between its convolutions" in model.message
    # after the last convolution (channels-last again) it is the cell's
    source = SUBCLASS.replace("h = self.flatten(h)", "h = self.flatten(tf.nn.softmax(h))")
    out, findings = convert(source)
    assert "h = self.flatten(ops.softmax(h))" in out


def test_build_gives_the_input_shape_and_goes():
    """`model.build((None, ...))`: Keras makes the weights for that shape; a cell has them already."""
    source = textwrap.dedent('''\
        import tensorflow as tf


        class Net(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.hidden = tf.keras.layers.Dense(8, activation="tanh")
                self.out = tf.keras.layers.Dense(1)

            def call(self, x):
                return self.out(self.hidden(x))


        net = Net()
        net.build((None, 5))


        def forward(features):
            return net(features)
        ''')
    out, findings = convert(source)
    assert "self.hidden = nn.Dense(5, 8, " in out and "build" not in out
    assert notes(findings, "TFL100")[0].status == "converted"
    out, findings = convert(source.replace("net.build((None, 5))", "net.build(shape)"))
    assert "net.build(shape)" in out and "literal input shape" in notes(findings, "TFL100")[0].message
    sequential = "import tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(3)])\nmodel.build(input_shape=(None, 4))\n\n\ndef forward(x):\n    return model(x)\n"
    out, findings = convert(sequential)
    assert "nn.Dense(4, 3, " in out and "build" not in out



def _subclass_note(findings, name="MyModel"):
    [model] = [f for f in notes(findings, "TFL100") if f.message.startswith(f"`{name}`")]
    return model


def test_a_call_whose_training_defaults_to_true_keeps_the_shim():
    """Keras gives a call that does not pass `training` its default: `training=True` trains there,
    where a Cell is in inference mode until told otherwise."""
    out, findings = convert(SUBCLASS.replace("def call(self, inputs, training=None):", "def call(self, inputs, training=True):"))
    model = _subclass_note(findings)
    assert model.status == "info" and "`training` defaults to something else than None or False" in model.message
    out, findings = convert(SUBCLASS.replace("def call(self, inputs, training=None):", "def call(self, inputs, training=False):"))
    assert _subclass_note(findings).status == "converted"


@pytest.mark.parametrize("old,new", [
    ('self.conv1 = tf.keras.layers.Conv2D(4, 3, activation="relu")', 'self.conv1 = tf.keras.layers.Conv2D(4, 3, activation="softmax")'),
])
def test_a_softmax_cell_in_the_channels_first_part_keeps_the_shim(old, new):
    """A convolution's softmax runs on MindSpore's channels-first value: over the width, not the channels."""
    out, findings = convert(SUBCLASS.replace(old, new))
    model = _subclass_note(findings)
    assert model.status == "info" and "softmax" in model.message, model.message
    sequential = textwrap.dedent('''\
        import numpy as np
        import tensorflow as tf

        x = np.zeros((8, 6, 6, 1), np.float32)
        y = np.zeros((8, 2), np.float32)
        model = tf.keras.Sequential([tf.keras.Input(shape=(6, 6, 1)), tf.keras.layers.Conv2D(2, 3, activation=ACT),
                                     tf.keras.layers.MaxPooling2D(), LAYER tf.keras.layers.Flatten(), tf.keras.layers.Dense(2)])
        model.compile(optimizer="sgd", loss="mse")
        model.fit(x, y, epochs=1, verbose=0)
        ''')
    for act, layer in (('"softmax"', ""), ('"relu"', "tf.keras.layers.Softmax(),"), ('"relu"', 'tf.keras.layers.Activation("softmax"),')):
        out, findings = convert(sequential.replace("ACT", act).replace("LAYER", layer))
        [model] = notes(findings, "TFL100")
        assert model.status == "info" and "softmax runs within its convolution part" in model.message, (act, layer, model.message)
    out, findings = convert(sequential.replace("ACT", '"relu"').replace("LAYER", ""))
    assert notes(findings, "TFL100")[0].status == "converted"


FLAGGED = textwrap.dedent('''\
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 5)).astype(np.float32)
    y = rng.normal(size=(16, 1)).astype(np.float32)
    train_ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)


    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = tf.keras.layers.Dense(4, activation="relu")
            self.drop = tf.keras.layers.Dropout(0.5)
            self.out = tf.keras.layers.Dense(1)

        def call(self, x, is_training=False):
            return self.out(self.drop(self.hidden(x), training=is_training))


    net = Net()
    loss_object = tf.keras.losses.MeanSquaredError()
    optimizer = tf.keras.optimizers.SGD(0.1)


    def train_step(features, targets):
        with tf.GradientTape() as tape:
            loss = loss_object(targets, net(features, is_training=True))
        grads = tape.gradient(loss, net.trainable_variables)
        optimizer.apply_gradients(zip(grads, net.trainable_variables))
        return loss


    for features, targets in train_ds:
        train_step(features, targets)
    ''')


def test_a_dropout_handed_the_calls_flag_imports_mindsporess_ops():
    """`ops.dropout(x, p=..., training=flag)` in a module that had no `ops` of its own."""
    out, findings = convert(FLAGGED)
    assert _subclass_note(findings, "Net").status == "converted"
    assert "ops.dropout(self.hidden(x), p=0.5, training=is_training)" in out
    assert "from mindspore import nn, ops\n" in out
    compile(out, "converted.py", "exec")


@pytest.mark.parametrize("old,new,why", [
    ("is_training=False):", "is_training=None):", "does not default to True or False"),
    ("net(features, is_training=True)", "net(features, is_training=1)", "other than True or False"),
])
def test_a_dropouts_flag_must_be_true_or_false(old, new, why):
    """`ops.dropout`'s `training` takes a bool: None or 1 fail in MindSpore, where Keras takes them."""
    out, findings = convert(FLAGGED.replace(old, new))
    model = _subclass_note(findings, "Net")
    assert model.status == "info" and why in model.message, model.message


@pytest.mark.parametrize("make", [
    "x = np.zeros((10, 3, 4))\nx.shape = (10, 12)",           # (its shape set where it is)
    "x = np.zeros((10, 3, 4))\nx.resize((10, 12))",           # (resized where it is)
    "x = np.zeros((10, 3, 4))\nglobals()['x'] = np.zeros((10, 12))",  # (bound by another way)
    "x = np.array(np.zeros((10, 3)), ndmin=3)",               # (a keyword it does not follow)
])
def test_an_array_changed_in_place_or_made_with_other_keywords_has_no_static_shape(make):
    out, findings = convert(SHAPED.replace("MAKE", make + "\ny = np.zeros((10, 2))"))
    [model] = notes(findings, "TFL100")
    assert model.status == "info" and "not known statically" in model.message, model.message


def test_a_pipeline_batched_twice_or_a_batch_unpacked_as_parts_gives_no_shape():
    out, findings = convert(SUBCLASS.replace(".shuffle(40).batch(8)", ".shuffle(40).batch(8).batch(2)"))
    assert _subclass_note(findings).status == "info"
    single = SUBCLASS.replace("from_tensor_slices((x, y)).shuffle(40).batch(8)", "from_tensor_slices(x).batch(2)").replace(
        "for images, labels in train_ds:\n    train_step(images, labels)", "for batch in train_ds:\n    step(batch)") + textwrap.dedent('''\


        def step(batch):
            first, second = batch
            return train_step(first, second)
        ''')
    out, findings = convert(single)
    model = _subclass_note(findings)
    assert model.status == "info" and "not known statically" in model.message, model.message


def test_a_call_reshaping_its_input_first_still_needs_its_dtype_and_casts_it():
    """The reshape gives the shape; the batches' dtype still decides the cast Keras makes."""
    source = FLAGGED.replace("return self.out(", "x = ops.reshape(x, (-1, 5))\n        return self.out(").replace(
        "import tensorflow as tf\n", "import tensorflow as tf\nfrom mindspore import ops\n")
    out, findings = convert(source)
    assert _subclass_note(findings, "Net").status == "converted"
    out, findings = convert(source.replace("(16, 5)).astype(np.float32)", "(16, 5))"))
    assert _subclass_note(findings, "Net").status == "converted"
    assert "net(features.astype(ms.float32), is_training=True)" in out
    out, findings = convert(source.replace("x = rng.normal(size=(16, 5)).astype(np.float32)", "x = load()"))
    model = _subclass_note(findings, "Net")
    assert model.status == "info" and "not known statically" in model.message, model.message


def test_a_module_array_handed_to_the_model_through_a_parameter_keeps_the_shim():
    """Inside the function the cell would get the NumPy array itself (only the module's own calls
    of the model are given a tensor of it)."""
    source = SHAPED.replace("MAKE", "x = np.zeros((10, 3))\ny = np.zeros((10, 2))").replace(
        "model.compile(optimizer=\"sgd\", loss=\"mse\")\nmodel.fit(x, y, epochs=1, verbose=0)\n",
        "\n\ndef predict(data):\n    return model(data)\n\n\nprint(predict(x))\n")
    out, findings = convert(source)
    [model] = notes(findings, "TFL100")
    assert model.status == "info" and "reaches the model through a function's parameter" in model.message, model.message


def test_the_weights_alias_on_a_line_of_several_statements_stays():
    source = TFE_CONV_NET.replace("DROP", "0.5").replace(
        "trainable_variables = conv_net.trainable_variables\n", "trainable_variables = conv_net.trainable_variables; count = 1\n")
    out, findings = convert(source)
    assert "trainable_variables = conv_net.trainable_params(); count = 1" in out
    compile(out, "converted.py", "exec")


@pytest.mark.parametrize("change", ["del trainable_variables[1:]", "trainable_variables.pop()", "trainable_variables = trainable_variables[:2]"])
def test_a_weights_alias_changed_in_the_step_is_not_the_models_weights(change):
    """`del weights[1:]`: the step trains some of the weights; the lowering's own weights would be all."""
    source = TFE_CONV_NET.replace("DROP", "0.5").replace(
        "trainable_variables = conv_net.trainable_variables\n",
        f"trainable_variables = conv_net.trainable_variables\n    {change}\n")
    out, findings = convert(source)
    assert change in out
    assert "optimizer.apply_gradients(zip(gradients, trainable_variables))" in out  # (the shim's, on the weights given)
    assert "optimizer = mk.optimizers.Adam(0.001)" in out and "grad_reducer" not in out


def test_a_constant_initializers_array_changed_after_the_model_is_made_keeps_the_shim():
    """Keras reads a constant initializer's array when the layer is first called; MindSpore's cell
    when it is made: an array changed in between gives other weights."""
    source = TFE_CONV_NET.replace("DROP", "0.5").replace("conv_net = ConvNet()\n", "conv_net = ConvNet()\nw1[0] = 0.0\n")
    out, findings = convert(source)
    [model] = notes(findings, "TFL100")
    assert model.status == "info" and "`w1`, a constant initializer's value, is changed in place" in model.message, model.message


BATCHNORM_FIT = textwrap.dedent('''\
    import numpy as np
    import tensorflow as tf

    x = np.zeros((8, 4), np.float32)
    y = np.zeros((8, 1), np.float32)
    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(3), tf.keras.layers.BatchNormalization(),
                                 tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, y, epochs=1, verbose=0)
    ''')


@pytest.mark.parametrize("extra", ["model.evaluate(x, y, verbose=0)\n", "print(model.predict(x, verbose=0))\n",
                                   "print(model(x[:2]))\n", "model.save_weights('w.ckpt')\n"])
def test_a_batchnorm_model_trained_and_then_read_takes_the_keras_variance_cell(extra):
    """MindSpore's BatchNorm updates its moving variance with the batch's unbiased variance, Keras
    with the biased one: where the module reads the statistics after training (inference, saved
    weights, `fit`'s validation), the model's BatchNorm is a subclass that keeps Keras's."""
    out, findings = convert(BATCHNORM_FIT)
    assert notes(findings, "TFL100")[0].status == "converted" and "KerasBatchNorm" not in out
    for source in (BATCHNORM_FIT + extra, BATCHNORM_FIT.replace("verbose=0)", "verbose=0, validation_data=(x, y))")):
        out, findings = convert(source)
        [model] = notes(findings, "TFL100")
        assert model.status == "converted", model.message
        assert "KerasBatchNorm1d(3, eps=0.001, momentum=0.99)" in out and out.count("class KerasBatchNorm1d(") == 1


def test_a_dense_fed_one_number_per_example_keeps_the_shim():
    out, findings = convert(SHAPED.replace("MAKE", "x = np.zeros(10)\ny = np.zeros((10, 2))").replace(
        "[tf.keras.layers.Flatten(), tf.keras.layers.Dense(2)]", "[tf.keras.layers.Dense(2)]"))
    [model] = notes(findings, "TFL100")
    assert model.status == "info" and "one number per example" in model.message, model.message


def test_input_shape_on_a_subclassed_models_layer_is_refused_as_such():
    out, findings = convert(SUBCLASS.replace("Conv2D(4, 3, activation=\"relu\")", "Conv2D(4, 3, activation=\"relu\", input_shape=(6, 6, 1))"))
    model = _subclass_note(findings)
    assert model.status == "info" and "a model whose input shape comes from elsewhere" in model.message, model.message


BATCHNORM_CNN = textwrap.dedent('''\
    import json

    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(3)
    x = rng.normal(size=(24, 6, 6, 2)).astype(np.float32)
    y = rng.normal(size=(24, 1)).astype(np.float32)
    k = rng.normal(scale=0.3, size=(3, 3, 2, 3)).astype(np.float32)
    w = rng.normal(scale=0.3, size=(12, 1)).astype(np.float32)
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(6, 6, 2)),
        tf.keras.layers.Conv2D(3, 3, kernel_initializer=tf.constant_initializer(k)),
        tf.keras.layers.BatchNormalization(momentum=0.9),
        tf.keras.layers.Activation("relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(1, kernel_initializer=tf.constant_initializer(w)),
    ])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
    model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    loss = model.evaluate(x, y, batch_size=8, verbose=0)
    print(json.dumps({"loss": [float(loss)], "predict": np.asarray(model.predict(x[:4], verbose=0)).ravel().tolist()}))
    ''')


def test_a_batchnorm_model_that_trains_and_then_infers_takes_kerass_moving_variance(tmp_path):
    """MindSpore's BatchNorm updates its moving variance with the batch's unbiased variance, Keras
    with the biased one: a model read in inference after training takes a BatchNorm subclass
    that keeps Keras's (measured: without it, this program's predictions are 1e-3 off TF's)."""
    out, findings = convert(BATCHNORM_CNN)
    assert "class KerasBatchNorm2d(nn.BatchNorm2d):" in out and "KerasBatchNorm2d(3, eps=0.001, momentum=0.9)" in out
    assert "mk." not in out and "import tensorflow" not in out
    assert notes(findings, "TFL100")[0].status == "converted"
    compile(out, "converted.py", "exec")
    trains_only = BATCHNORM_CNN.split("loss = model.evaluate")[0]
    assert "KerasBatchNorm" not in convert(trains_only)[0] and "nn.BatchNorm2d(3, " in convert(trains_only)[0]  # (never read)
    out_1d, _ = convert(BATCHNORM_FIT + "model.save_weights('w.ckpt')\n")
    assert "class KerasBatchNorm1d(nn.BatchNorm1d):" in out_1d  # (saved: the statistics are read)
    if importlib.util.find_spec("mindspore") is None or importlib.util.find_spec("tensorflow") is None:
        pytest.skip("needs TensorFlow and MindSpore")
    want, got = python_json(BATCHNORM_CNN), python_json(out, script=tmp_path / "keras_variance.py")
    assert_same_numbers(got, want)
    plain = python_json(out.replace("KerasBatchNorm2d(3,", "nn.BatchNorm2d(3,"), script=tmp_path / "unbiased.py")
    # (MindSpore's own moving variance: predictions 1e-3 away, beyond the tolerance)
    assert max(abs(a - b) for a, b in zip(plain["predict"], want["predict"])) > 5e-4


def test_a_subclassed_models_batchnorm_saved_after_training_takes_the_keras_variance_cell():
    source = SUBCLASS.replace(
        "self.pool = tf.keras.layers.MaxPooling2D()",
        "self.pool = tf.keras.layers.MaxPooling2D()\n        self.bn = tf.keras.layers.BatchNormalization()").replace(
        "h = self.pool(self.conv1(inputs))", "h = self.pool(self.bn(self.conv1(inputs), training=training))")
    out, _ = convert(source)
    assert "self.bn = nn.BatchNorm2d(4, eps=0.001, momentum=0.99)" in out and "KerasBatchNorm" not in out
    out, findings = convert(source + 'model.save_weights("w.ckpt")\n')
    assert "self.bn = KerasBatchNorm2d(4, eps=0.001, momentum=0.99)" in out
    assert out.index("class KerasBatchNorm2d(nn.BatchNorm2d):") < out.index("class MyModel(nn.Cell):")
    assert _subclass_note(findings).status == "converted"


ORDERED = textwrap.dedent('''\
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(4)
    x = rng.normal(size=(13, 5)).astype(np.float32)
    y = rng.integers(0, 3, size=(13,))


    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = tf.keras.layers.Dense(4)
            self.bn = tf.keras.layers.BatchNormalization(momentum=0.5)
            self.out = tf.keras.layers.Dense(3)

        def call(self, t, training=None):
            return self.out(self.bn(self.d(t), training=training))


    model = Net()
    model.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0)
    print(model.evaluate(x, y, batch_size=5, verbose=0))
    seq = tf.keras.Sequential([tf.keras.Input(shape=(5,)), tf.keras.layers.Dense(4), tf.keras.layers.BatchNormalization()])
    seq.compile(optimizer="sgd", loss="mse")
    seq.fit(x, np.ones((13, 4), np.float32), batch_size=4, verbose=0)
    print(seq.evaluate(x, np.ones((13, 4), np.float32), verbose=0))
    ''')


def test_the_keras_variance_cell_comes_before_the_first_model_in_the_modules_order():
    """The subclass is lowered after the module-level models, but defined first: the cell's class goes before it."""
    out, findings = convert(ORDERED)
    assert [f.status for f in notes(findings, "TFL100")] == ["converted", "converted"]
    assert out.count("class KerasBatchNorm1d(nn.BatchNorm1d):") == 1
    assert out.index("class KerasBatchNorm1d(") < out.index("class Net(nn.Cell):")
    assert "self.bn = KerasBatchNorm1d(4, " in out and "nn.Dense(5, 4, " in out and "KerasBatchNorm1d(4, eps=0.001, momentum=0.99)])" in out
    compile(out, "converted.py", "exec")


def test_a_subclassed_model_whose_call_takes_no_training_keeps_the_shim_where_its_layers_are_modal():
    """Keras 3 runs the layers of a `call` without `training` in inference mode, even in `fit`
    (measured: its BatchNormalization's moving mean stays 0); a Cell set to train would train them."""
    out, findings = convert(ORDERED.replace("def call(self, t, training=None):", "def call(self, t):").replace(
        "self.bn(self.d(t), training=training)", "self.bn(self.d(t))"))
    model = _subclass_note(findings, "Net")
    assert model.status == "info" and "its `call` takes no `training`" in model.message, model.message


SELU_LEAKY = textwrap.dedent('''\
    import json

    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)
    x = rng.normal(size=(48, 6)).astype(np.float32) * 2.0
    y = rng.integers(0, 3, size=(48,))
    w1 = rng.normal(size=(6, 8)).astype(np.float32) * 0.5
    w2 = rng.normal(size=(8, 8)).astype(np.float32) * 0.5
    w3 = rng.normal(size=(8, 3)).astype(np.float32) * 0.5
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(8, activation="selu", kernel_initializer=tf.constant_initializer(w1), input_shape=(6,)),
        tf.keras.layers.LeakyReLU(negative_slope=0.1),  # slope
        tf.keras.layers.Dense(8, activation="gelu", kernel_initializer=tf.constant_initializer(w2)),
        tf.keras.layers.LeakyReLU(),
        tf.keras.layers.Dense(3, activation="leaky_relu", kernel_initializer=tf.constant_initializer(w3))
    ])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss=tf.keras.losses.MeanSquaredError())
    history = model.fit(x, tf.one_hot(y, 3).numpy(), epochs=3, batch_size=16, shuffle=False, verbose=0)
    print(json.dumps({"loss": history.history["loss"], "pred": model.predict(x, verbose=0).ravel().tolist()}))
    ''')


def test_selu_and_leaky_relu_are_the_modules_cells_and_give_tfs_numbers(tmp_path):
    """SELU and LeakyReLU (as a Dense's `activation` and as a layer, Keras's slopes 0.2 and 0.3 or
    the one given) are small cells written once into the module with TF's gradients (MindSpore's
    `nn.SeLU` and `nn.LeakyReLU` take others); a Dense whose activation is a cell of its own, in a
    list without an `Input`, keeps every layer after it (the list lost its last layer before)."""
    out, findings = convert(SELU_LEAKY)
    assert out.count("class KerasSeLU(nn.Cell):") == 1 and out.count("class KerasLeakyReLU(nn.Cell):") == 1
    assert out.index("class KerasSeLU") < out.index("model = nn.SequentialCell([")
    assert textwrap.dedent('''\
        model = nn.SequentialCell([
            nn.Dense(6, 8, weight_init=ms.Tensor(w1, ms.float32).T, bias_init="zeros"),
            KerasSeLU(),
            KerasLeakyReLU(0.1),  # slope
            nn.Dense(8, 8, weight_init=ms.Tensor(w2, ms.float32).T, bias_init="zeros"),
            nn.GELU(approximate=False),
            KerasLeakyReLU(0.3),
            nn.Dense(8, 3, weight_init=ms.Tensor(w3, ms.float32).T, bias_init="zeros"),
            KerasLeakyReLU(0.2)
        ])''') in out, out
    assert "mk." not in out
    if importlib.util.find_spec("mindspore") is None or importlib.util.find_spec("tensorflow") is None:
        pytest.skip("needs TensorFlow and MindSpore")
    assert_same_numbers(python_json(out, script=tmp_path / "train.py"), python_json(SELU_LEAKY), rtol=1e-5, atol=1e-6)


RANDOM = textwrap.dedent('''\
    import numpy as np
    import tensorflow as tf

    tf.random.set_seed(4)
    batch = 3
    x = np.zeros((2, 5), np.float32)
    noise = tf.random.normal([batch, 4], stddev=0.1, seed=7)
    z = tf.random.normal((2, 2), -1.5, 2)
    u = tf.random.uniform((), 0.1, 2.0)
    w = tf.random.uniform(x.shape)
    steps = tf.random.uniform([6], minval=1, maxval=10, dtype=tf.int32)
    drawn = [noise, z, u, w, steps]
    ''')


def test_plain_random_draws_are_mindsporess_own_ops_and_draw_what_the_shim_draws():
    """`tf.random.normal` / `uniform` with a literal shape and literal bounds become
    `ops.standard_normal`, `ops.uniform` and `ops.randint` with TF's arithmetic written out: under
    the same seed the values are the shim's, draw for draw."""
    out, _ = convert(RANDOM)
    for line in ["noise = ops.standard_normal((batch, 4), seed=7) * 0.1",
                 "z = -1.5 + ops.standard_normal((2, 2)) * 2",
                 "u = ops.uniform((), ms.Tensor(0.1, ms.float32), ms.Tensor(2.0, ms.float32))",
                 "w = ops.uniform(x.shape, ms.Tensor(0, ms.float32), ms.Tensor(1.0, ms.float32))",
                 "steps = ops.randint(1, 10, (6,), dtype=ms.int32)"]:
        assert line in out, out
    assert "tfrandom" not in out
    pytest.importorskip("mindspore")
    got = {}
    for tier in ("native", "shim"):
        scope = _run_in_tier(RANDOM, tier, "draws", "ops.standard_normal(")
        got[tier] = [(d.dtype, d.asnumpy()) for d in scope["drawn"]]
    for (dtype, native), (shim_dtype, shim) in zip(got["native"], got["shim"]):
        assert dtype == shim_dtype and native.shape == shim.shape
        assert (native == shim).all(), (native, shim)


def test_a_lowered_draw_keeps_its_place_in_the_expression_around_it():
    """TF's arithmetic, written out, goes in parentheses where the call was an operand."""
    code = textwrap.dedent('''\
        import tensorflow as tf

        b = tf.random.normal([4000], stddev=2.0) ** 2
        c = -tf.random.normal([4], 5.0)
        d = tf.random.normal([4], 3.0).numpy()
        e = tf.random.normal([3], stddev=0x2)
        N = 4
        g = [tf.random.normal([N * 2, 3], mean=- 1)]
        ''')
    out, _ = convert(code)
    for line in ["b = (ops.standard_normal((4000,)) * 2.0) ** 2", "c = -(5.0 + ops.standard_normal((4,)))",
                 "d = (3.0 + ops.standard_normal((4,))).numpy()", "e = ops.standard_normal((3,)) * 0x2",
                 "g = [- 1 + ops.standard_normal((N * 2, 3))]"]:
        assert line in out, out


def test_a_lowered_draw_on_a_rewritten_line_is_reported_at_its_own_tf_call():
    code = "import tensorflow as tf\n\nm = tf.zeros([2])\na = tf.reduce_sum(tf.random.normal([2], m)) + tf.reduce_sum(tf.random.normal([2]))\n"
    out, findings = convert(code)
    assert "ops.sum(tfrandom.normal([2], m)) + ops.sum(ops.standard_normal((2,)))" in out
    [lowered] = notes(findings, "TFL180")
    assert (lowered.line, lowered.col) == (4, code.splitlines()[3].rindex("tf.random.normal") + 1)


@pytest.mark.parametrize("call", [
    "tf.random.normal(shape)",                            # a shape that may be a list or a tensor
    "tf.random.normal((tf.shape(x)[0], 2))",              # a width that is a tensor (MindSpore's ops take ints)
    "tf.random.normal((batch, 2))",                       # a width not known to be an int
    "tf.random.normal(\n    [2],  # rows\n)",            # a comment in the call stays with the shim's

    "tf.random.normal([2], stddev=sigma)",                # a deviation that may be an array (the shim casts it)
    "tf.random.uniform([2], dtype=tf.float64)",           # float64: the shim computes in float64
    "tf.random.uniform([2], maxval=n, dtype=tf.int32)",   # an integer bound that may be a tensor
    "tf.random.truncated_normal([2])",                    # redraws: the shim's
])
def test_random_draws_it_cannot_prove_plain_keep_the_shim(call):
    out, _ = convert(f"import tensorflow as tf\n\nx = tf.zeros([2])\nbatch = tf.shape(x)[0]\nv = {call}\n")
    assert "v = tfrandom." in out, out


def test_random_draws_in_a_module_that_repeats_a_forward_pass_keep_the_shim():
    """A forward pass computed again for another gradient takes back the draws the shim recorded
    in the first; MindSpore's ops would draw anew."""
    code = textwrap.dedent('''\
        import tensorflow as tf

        w = tf.Variable(1.0)


        def f(x):
            with tf.GradientTape() as t1, tf.GradientTape() as t2:
                y = w * x + tf.random.normal([2])
                a = tf.reduce_sum(y)
                b = tf.reduce_mean(y)
            ga = t1.gradient(a, [w])
            gb = t2.gradient(b, [w])
            return ga, gb
        ''')
    out, _ = convert(code)
    assert "value_and_grads" in out and "tfrandom.normal((2,))" not in out and "tfrandom.normal([2])" in out, out


def test_an_add_loops_variable_read_only_after_it_is_bound_again_does_not_block_the_loop():
    """Hands-On ML's `for layer in range(99): model.add(...)`, with `layer` read later only under
    loops and comprehensions of its own or after another binding: the loop folds in."""
    code = textwrap.dedent('''\
        import tensorflow as tf

        print([layer for layer in range(3)])
        model = tf.keras.Sequential()
        model.add(tf.keras.layers.Dense(5, input_shape=(5,)))
        for layer in range(3):
            model.add(tf.keras.layers.Dense(5))
        y = model(tf.ones((2, 5)))
        for layer in [1, 2]:
            print(layer)
        names = [str(layer) for layer in range(2)]
        layer = 7
        print(layer)
        ''')
    out, findings = convert(code)
    [model] = notes(findings, "TFL100")
    assert model.status == "converted", model.message
    assert "*[nn.Dense(5, 5, " in out and "for layer in range(3):" not in out


REBOUND_OPTIMIZERS = textwrap.dedent('''\
    import json

    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(2)
    x = rng.normal(size=(24, 4)).astype(np.float32)
    y = rng.integers(0, 3, size=24).astype(np.int64)
    w = rng.normal(scale=0.5, size=(4, 3)).astype(np.float32)
    losses = []

    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(3, kernel_initializer=tf.constant_initializer(w))])
    # plain SGD first
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
    model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer=optimizer)
    losses += model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False).history["loss"]

    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(3, kernel_initializer=tf.constant_initializer(w))])
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
    model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer=optimizer)
    losses += model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False).history["loss"]
    print(json.dumps({"losses": losses}))
    ''')


def test_an_optimizer_given_to_compile_by_name_alone_is_the_native_loops_binding_by_binding():
    """A notebook binds `optimizer` again for each model: each binding's one read is a `compile`,
    so the native loop makes that optimizer (its statement goes, its comment stays)."""
    out, findings = convert(REBOUND_OPTIMIZERS)
    assert "mk." not in out and "optimizer = " not in out
    assert "# plain SGD first\ntraining.compile(model, loss=nn.CrossEntropyLoss(reduction=\"mean\"), " \
           "optimizer=nn.SGD(model.trainable_params(), learning_rate=0.1))" in out
    assert "optimizer=nn.SGD(model.trainable_params(), learning_rate=0.1, momentum=0.9))" in out
    made = notes(findings, "TFL110")
    assert [(n.line, n.status) for n in made] == [(14, "converted"), (19, "converted")]
    assert "`optimizer` is given to `model.compile` alone: the native loop makes it, as `nn.SGD`" in made[0].message


def test_an_optimizer_given_to_compile_by_name_trains_as_keras_does(tmp_path):
    pytest.importorskip("mindspore")
    pytest.importorskip("tensorflow")
    out, _ = convert(REBOUND_OPTIMIZERS)
    assert "nn.SGD(" in out
    assert_same_numbers(python_json(out, script=tmp_path / "train.py"), python_json(REBOUND_OPTIMIZERS))


@pytest.mark.parametrize("extra, why", [
    ("print(optimizer.learning_rate)\n", "has other reads"),
    ("model.compile(loss=\"mse\", optimizer=optimizer)\n", "has other reads"),
    ("def lr():\n    return optimizer.learning_rate\n", "not only by statements of the module's straight-line code"),
], ids=["read", "second-compile", "function"])
def test_an_optimizer_given_to_compile_by_name_with_other_reads_keeps_the_shim(extra, why):
    source = REBOUND_OPTIMIZERS.replace('print(json.dumps', extra + 'print(json.dumps')
    out, findings = convert(source)
    model = notes(findings, "TFL100")[-1]
    assert model.status == "info" and why in model.message, model.message
    assert "optimizer = mk.optimizers.SGD(learning_rate=0.1, momentum=0.9)" in out


ARRAY_LOSS = textwrap.dedent('''\
    import json

    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(4)
    x = rng.normal(size=(3, 5)).astype(np.float32)
    y = np.array([2, 0, 1], np.uint8)
    w = rng.normal(size=(5, 3)).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.Input(shape=(5,)), tf.keras.layers.Dense(3, kernel_initializer=tf.constant_initializer(w))])
    predictions = model(x).numpy()
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    print(json.dumps({"losses": [float(loss_fn(y, predictions).numpy()), float(loss_fn(y[:1], predictions[:1]))]}))
    ''')


def test_a_loss_of_a_native_models_output_made_numpy_is_kerass(tmp_path):
    """TF's quickstart calls its loss on `model(x).numpy()` and NumPy labels: MindSpore's loss
    takes tensors of both (the labels int32), and gives Keras's value."""
    out, findings = convert(ARRAY_LOSS)
    assert "loss_fn = nn.CrossEntropyLoss(reduction=\"mean\")" in out and "mk." not in out
    assert "loss_fn(ms.Tensor(predictions), ms.Tensor(y).astype(ms.int32)).numpy()" in out
    [loss] = notes(findings, "TFL150")
    assert loss.status == "converted"
    pytest.importorskip("mindspore")
    pytest.importorskip("tensorflow")
    assert_same_numbers(python_json(out, script=tmp_path / "loss.py"), python_json(ARRAY_LOSS))


def test_a_reduced_loss_called_directly_in_a_strategy_program_keeps_the_shim_which_scales_it():
    """Keras scales a reduced loss by 1 / replicas in a strategy's scope (TF's quickstart under a
    strategy, fixtures/programs/keras_quickstart); MindSpore's loss would not."""
    source = ARRAY_LOSS.replace("model = tf.keras.Sequential(", "strategy = tf.distribute.MirroredStrategy()\nmodel = tf.keras.Sequential(")
    out, findings = convert(source)
    [loss] = notes(findings, "TFL150")
    assert loss.status == "info" and "Keras scales a reduced loss by 1 / replicas" in loss.message, loss.message
    assert "loss_fn = mk.losses.SparseCategoricalCrossentropy(from_logits=True)" in out
    out, findings = convert(source.replace("from_logits=True)", "from_logits=True, reduction=\"none\")")
                            .replace("float(loss_fn(y, predictions).numpy())", "float(loss_fn(y, predictions).numpy().sum())")
                            .replace("float(loss_fn(y[:1], predictions[:1]))", "float(loss_fn(y[:1], predictions[:1])[0])"))
    assert notes(findings, "TFL150")[0].status == "converted"  # (unreduced: nothing to scale)


def test_an_optimizer_given_to_a_compile_that_runs_more_than_once_keeps_the_shim():
    """Two compiles in a loop share the Keras optimizer's state: the loop's own optimizer per
    compile would start its momentum again."""
    source = REBOUND_OPTIMIZERS.replace(
        "optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)\n"
        "model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer=optimizer)\n"
        "losses += model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False).history[\"loss\"]\n",
        "optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)  # heavy-ball\n"
        "for stage in range(2):\n"
        "    model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer=optimizer)\n"
        "    losses += model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False).history[\"loss\"]\n")
    assert source != REBOUND_OPTIMIZERS
    out, findings = convert(source)
    model = notes(findings, "TFL100")[-1]
    assert model.status == "info" and "a `compile` that may run more than once" in model.message, model.message
    assert "optimizer = mk.optimizers.SGD(learning_rate=0.1, momentum=0.9)  # heavy-ball" in out
    # (the first binding's compile runs once: that optimizer is still the loop's, its trailing comment kept)
    first = out.replace("optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)", "")
    assert "optimizer=nn.SGD(model.trainable_params(), learning_rate=0.1))" in first
    again, _ = convert(REBOUND_OPTIMIZERS.replace("optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)\n",
                                                  "optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)  # plain\n"))
    assert "# plain SGD first\n# plain\ntraining.compile(model" in again
