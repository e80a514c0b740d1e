"""TFL155: Keras's `Mean` and `SparseCategoricalAccuracy` in a custom loop become
`mindspore.train`'s `Loss` and `Accuracy`; a compiled step's trailing updates move after its
calls so that the step compiles. Compared with TF's values; what it cannot prove keeps the shim."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import convert, python_json

PROGRAM = textwrap.dedent('''\
    import json

    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(3)
    x_train = rng.normal(size=(40, 6)).astype("float32")
    y_train = rng.integers(0, 4, size=40).astype("int64")
    x_test = rng.normal(size=(12, 6)).astype("float32")
    y_test = rng.integers(0, 4, size=12).astype("int64")
    w0 = rng.normal(scale=0.4, size=(6, 8)).astype("float32")
    w1 = rng.normal(scale=0.4, size=(8, 4)).astype("float32")

    train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(16)
    test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(5)

    model = tf.keras.Sequential([
        tf.keras.Input(shape=(6,)),
        tf.keras.layers.Dense(8, activation="relu", kernel_initializer=tf.constant_initializer(w0)),
        tf.keras.layers.Dense(4, kernel_initializer=tf.constant_initializer(w1)),
    ])
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.05)

    train_loss = tf.keras.metrics.Mean(name="train_loss")
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
    test_loss = tf.keras.metrics.Mean(name="test_loss")
    test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")


    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = loss_object(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))

        train_loss(loss)
        train_accuracy(labels, predictions)


    @tf.function
    def test_step(images, labels):
        predictions = model(images, training=False)
        t_loss = loss_object(labels, predictions)

        test_loss.update_state(t_loss)
        test_accuracy.update_state(labels, predictions)


    history = []
    for epoch in range(4):
        train_loss.reset_state()
        train_accuracy.reset_state()
        test_loss.reset_state()
        test_accuracy.reset_state()

        for images, labels in train_ds:
            train_step(images, labels)

        for test_images, test_labels in test_ds:
            test_step(test_images, test_labels)

        history.append([float(train_loss.result()), float(train_accuracy.result()),
                        float(test_loss.result().numpy()), float(test_accuracy.result())])
        print(f"Epoch {epoch + 1}, Loss: {train_loss.result():0.4f}, Accuracy: {train_accuracy.result() * 100:0.2f}")
    print(json.dumps({"history": history}))
    ''')

EAGER = PROGRAM.replace("@tf.function\n", "")  # (steps TF runs eagerly: the updates stay in them)


def notes(findings, rule_id="TFL155"):
    return [f for f in findings if f.rule == rule_id]


def test_a_custom_loops_metrics_are_mindspores_and_the_compiled_steps_return_what_they_update():
    out, findings = convert(PROGRAM)
    assert "mk." not in out and "migrate.runtime" not in out, out
    for name, to in (("train_loss", "Loss"), ("train_accuracy", "Accuracy"), ("test_loss", "Loss"), ("test_accuracy", "Accuracy")):
        assert f"{name} = ms.train.{to}()\n" in out
        assert f"    {name}.clear()\n" in out
    assert [(n.status, n.message) for n in notes(findings)][:2] == [
        ("converted", "`train_loss` is a native `ms.train.Loss`"), ("converted", "`train_accuracy` is a native `ms.train.Accuracy`")]
    # the steps are cells of a GRAPH_MODE program, returning what the updates read
    assert "class TrainStep(nn.Cell):" in out and "ms.set_context(mode=ms.GRAPH_MODE)" in out
    assert "        optimizer(grad_reducer(gradients))\n\n        return loss, predictions\n" in out
    assert "        return t_loss, predictions\n" in out
    assert ".update(" not in out.split("history = []")[0]
    # each call binds them and the updates follow, in MindSpore's argument order
    assert "    for images, labels in train_ds:\n        loss, predictions = train_step(images, labels)\n" \
           "        train_loss.update(loss)\n        train_accuracy.update(predictions, labels)\n" in out
    assert "        t_loss, predictions = test_step(test_images, test_labels)\n" \
           "        test_loss.update(t_loss)\n        test_accuracy.update(predictions, test_labels)\n" in out
    assert "float(test_loss.eval())" in out and "{train_accuracy.eval() * 100:0.2f}" in out
    [train_step, test_step] = notes(findings, "TFL140")
    assert train_step.status == "converted" and "`TrainStep`, that MindSpore compiles in GRAPH_MODE" in train_step.message
    again, _ = convert(out)
    assert again == out


def test_a_step_tf_runs_eagerly_updates_the_metrics_where_it_did():
    out, findings = convert(EAGER)
    assert "train_loss = ms.train.Loss()" in out
    assert "    train_loss.update(loss)\n    train_accuracy.update(predictions, labels)\n" in out
    assert "        train_step(images, labels)\n" in out and "= train_step(" not in out


@pytest.mark.parametrize("program", [PROGRAM, EAGER], ids=["compiled", "eager"])
def test_the_converted_loop_gives_tfs_metric_values(program, tmp_path):
    pytest.importorskip("mindspore")
    pytest.importorskip("tensorflow")
    want = python_json(program)["history"]
    out, _ = convert(program)
    got = python_json(out, script=tmp_path / "converted.py")["history"]
    assert len(got) == len(want) == 4
    for epoch, (g, w) in enumerate(zip(got, want)):
        assert g == pytest.approx(w, rel=1e-4, abs=1e-6), (epoch, g, w)


def test_names_the_callers_code_has_are_fresh_where_the_updates_read_them():
    out, _ = convert(PROGRAM.replace('print(json.dumps({"history": history}))',
                                     'predictions = model(x_test)\nprint(json.dumps({"history": history}))'))
    assert "        loss, predictions_2 = train_step(images, labels)\n" in out
    assert "        train_accuracy.update(predictions_2, labels)\n" in out
    assert "        return loss, predictions\n" in out


STEP_REFUSALS = [
    # (a step that also returns a value: its updates stay in it, and it runs eagerly)
    ("    train_accuracy(labels, predictions)\n", "    train_accuracy(labels, predictions)\n    return loss\n",
     "it updates `train_loss`, a MindSpore metric"),
    # (an update before another statement reads the values of that point)
    ("    train_loss(loss)\n    train_accuracy(labels, predictions)\n",
     "    train_loss(loss)\n    print(loss)\n    train_accuracy(labels, predictions)\n", "it updates `train_loss`"),
]


@pytest.mark.parametrize("old, new, why", STEP_REFUSALS, ids=["returns", "not-last"])
def test_updates_that_cannot_move_keep_the_step_eager_and_say_why(old, new, why):
    assert old in PROGRAM
    out, findings = convert(PROGRAM.replace(old, new))
    assert "train_loss = ms.train.Loss()" in out and "    train_loss.update(loss)\n" in out
    step = next(n for n in notes(findings, "TFL140") if n.message.startswith("`train_step`"))
    assert step.status == "info" and why in step.message, step.message


REFUSALS = [
    ("train_loss(loss)", "train_loss(loss, sample_weight=0.5)", "train_loss", "updated with arguments other than"),
    ("print(json.dumps", "print(train_loss.name)\nprint(json.dumps", "train_loss", "`train_loss` has `.name`"),
    ("print(json.dumps", "kept = [train_accuracy]\nprint(json.dumps", "train_accuracy", "has a use other than calling it"),
    ('tf.keras.metrics.Mean(name="train_loss")', 'tf.keras.metrics.Mean(name="train_loss", dtype="float64")', "train_loss",
     "`dtype` is not `None`"),
    ("train_loss(loss)", "train_loss(tf.square(predictions))", "train_loss", "not a native loss's reduced value or another scalar"),
    ("train_accuracy(labels, predictions)", "train_accuracy(labels, tf.nn.softmax(predictions))", "train_accuracy",
     "not a native model's output"),
    ("train_accuracy(labels, predictions)", "train_accuracy(labels + 0, predictions)", "train_accuracy",
     "not given to a native loss in the same function"),
    ("    train_loss.reset_state()\n", "    done = train_loss.reset_state()\n", "train_loss", "is not a statement of its own"),
    ("float(test_loss.result().numpy())", "test_loss.result().numpy().item()", "test_loss", None),
]


@pytest.mark.parametrize("old, new, name, why", REFUSALS, ids=[
    "sample-weight", "name", "in-a-list", "dtype", "not-a-loss", "softmax", "labels", "reset-value", "numpy-item"])
def test_a_metric_it_cannot_prove_keeps_the_shim_and_says_why(old, new, name, why):
    source = PROGRAM.replace(old, new)
    assert source != PROGRAM
    out, findings = convert(source)
    [note] = [n for n in notes(findings) if n.message.startswith(f"`{name}`")]
    if why is None:  # (`.result().numpy()` is MindSpore's number: reading on from it is fine too)
        assert note.status == "converted"
        assert "test_loss.eval().item()" in out
        return
    assert note.status == "info" and why in note.message, note.message
    assert f"{name} = mk.metrics." in out


def test_metrics_under_a_strategy_keep_the_shim_which_sums_every_replica():
    source = PROGRAM.replace("model = tf.keras.Sequential([", "strategy = tf.distribute.MirroredStrategy()\nmodel = tf.keras.Sequential([")
    out, findings = convert(source)
    assert all(n.status == "info" and "sums every replica's updates" in n.message for n in notes(findings)), notes(findings)
    assert "train_loss = mk.metrics.Mean(" in out


def test_a_parameter_the_step_binds_again_is_returned_and_the_updates_keep_their_order():
    source = PROGRAM.replace("    with tf.GradientTape() as tape:\n        predictions = model(images, training=True)",
                             "    labels = labels % 4\n    with tf.GradientTape() as tape:\n        predictions = model(images, training=True)")
    source = source.replace("    train_loss(loss)\n    train_accuracy(labels, predictions)\n",
                            "    train_accuracy(labels, predictions)\n    train_loss(loss)\n")
    out, _ = convert(source)
    assert "        return labels, predictions, loss\n" in out
    assert "        labels_2, predictions, loss = train_step(images, labels)\n" \
           "        train_accuracy.update(predictions, labels_2)\n        train_loss.update(loss)\n" in out


@pytest.mark.parametrize("value", ["tf.reduce_mean(tf.square(predictions))", "loss * 0.5 + 1.0", "-tf.reduce_sum(predictions) / 4"])
def test_a_mean_of_another_scalar_it_can_prove_is_mindspores_loss_metric(value, tmp_path):
    """A whole-tensor reduction, or arithmetic of scalars and numbers: one value per update, as
    `Loss` counts it. (An expression is not moved out of the step: the step stays eager.)"""
    source = EAGER.replace("    train_loss(loss)\n", f"    train_loss({value})\n")
    out, findings = convert(source)
    assert notes(findings)[0].status == "converted" and "train_loss = ms.train.Loss()" in out
    if value.startswith("tf.reduce_mean"):
        pytest.importorskip("mindspore")
        pytest.importorskip("tensorflow")
        want, got = python_json(source)["history"], python_json(out, script=tmp_path / "converted.py")["history"]
        for g, w in zip(got, want):
            assert g == pytest.approx(w, rel=1e-4, abs=1e-6)


def test_keyword_updates_keep_their_keywords_when_the_steps_parameters_are_renamed():
    source = PROGRAM.replace("def test_step(images, labels):", "def test_step(images, y_true):").replace(
        "    t_loss = loss_object(labels, predictions)\n", "    t_loss = loss_object(y_true, predictions)\n").replace(
        "    test_accuracy.update_state(labels, predictions)\n", "    test_accuracy.update_state(y_true=y_true, y_pred=predictions)\n")
    out, findings = convert(source)
    assert "        test_accuracy.update(predictions, test_labels)\n" in out
    assert all(n.status == "converted" for n in notes(findings))


def test_the_moved_updates_take_their_comments_and_the_return_none():
    source = PROGRAM.replace("    train_loss(loss)\n    train_accuracy(labels, predictions)\n",
                             "    # record the loss\n    train_loss(loss)  # running mean\n"
                             "    # and the accuracy\n    train_accuracy(labels, predictions)  # running accuracy\n")
    out, _ = convert(source)
    assert "        optimizer(grad_reducer(gradients))\n\n        return loss, predictions\n" in out
    assert "        loss, predictions = train_step(images, labels)\n        # record the loss\n" \
           "        train_loss.update(loss)  # running mean\n        # and the accuracy\n" \
           "        train_accuracy.update(predictions, labels)  # running accuracy\n" in out
    assert out.count("# record the loss") == 1 and out.count("# and the accuracy") == 1


def test_an_accuracy_of_predictions_with_more_than_a_class_axis_keeps_the_shim():
    """Keras's argmax is over the last axis, MindSpore's `Accuracy`'s over axis 1."""
    source = PROGRAM.replace("tf.keras.Input(shape=(6,)),", "tf.keras.Input(shape=(2, 6)),")
    _, findings = convert(source)
    accuracy = next(n for n in notes(findings) if n.message.startswith("`train_accuracy`"))
    assert accuracy.status == "info" and "of shape (batch, classes)" in accuracy.message, accuracy.message
