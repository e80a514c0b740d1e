"""migrate's Keras API on its own (one process, no TensorFlow): model kinds, training flag, inputs, saving, callbacks."""

import os
import subprocess
import sys

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def data(n=12, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 4)).astype(np.float32), rng.integers(0, classes, n)


def classifier(units=3):
    return mk.Sequential([mk.Input(shape=(4,)), mk.layers.Dense(6, activation="relu",
                                                                kernel_initializer=mk.initializers.GlorotUniform(1)),
                          mk.layers.Dense(units, kernel_initializer=mk.initializers.GlorotUniform(2))])


def test_import_does_not_load_tensorflow():
    code = "import sys, migrate.runtime.keras as mk; mk.layers.Dense(2); print('tensorflow' in sys.modules)"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                               env={**os.environ, "PYTHONPATH": REPO})
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert completed.stdout.strip().splitlines()[-1] == "False"


def test_layers_are_cells_and_weights_are_parameters_in_keras_layout():
    layer = mk.layers.Dense(5, input_dim=3)
    assert isinstance(layer, ms.nn.Cell) and layer.built
    assert isinstance(layer.kernel, ms.Parameter) and tuple(layer.kernel.shape) == (3, 5)
    conv = mk.layers.Conv2D(4, (3, 2))
    conv(np.zeros((1, 8, 8, 2), np.float32))
    assert tuple(conv.kernel.shape) == (3, 2, 2, 4)
    with pytest.raises(ValueError):
        layer.set_weights([np.zeros((5, 3)), np.zeros(5)])


def test_subclassed_model_dispatches_to_call_and_propagates_training():
    class Net(mk.Model):
        def __init__(self):
            super().__init__()
            self.hidden = mk.layers.Dense(64, kernel_initializer="ones")
            self.drop = mk.layers.Dropout(0.5)
            self.blocks = [mk.layers.Dense(8), mk.layers.Dense(2)]

        def call(self, x, training=False):
            x = self.drop(self.hidden(x))  # training reaches Dropout through the call context
            for block in self.blocks:
                x = block(x)
            return x

    net = Net()
    x = np.ones((4, 4), np.float32)
    assert net(x).shape == (4, 2)
    names = [p.name for p in net.trainable_variables]
    assert len(names) == 6 and len(set(names)) == 6
    assert [tuple(p.shape) for p in net.trainable_variables] == [(4, 64), (64,), (64, 8), (8,), (8, 2), (2,)]
    inference = net.drop(net.hidden(x), training=False).asnumpy()
    hidden = net.hidden(x)
    dropped = [np.mean(net.drop(hidden, training=True).asnumpy() == 0) for _ in range(5)]
    assert np.allclose(inference, hidden.asnumpy())
    assert 0.3 < np.mean(dropped) < 0.7
    assert len(net.trainable_variables) == len(list(net.trainable_params()))  # list attributes are registered


def test_functional_model_with_two_inputs_and_tensor_arithmetic():
    left, right = mk.Input(shape=(3,), name="left"), mk.Input(shape=(2,), name="right")
    merged = mk.layers.Concatenate()([mk.layers.Dense(4)(left), right])
    out = mk.layers.Dense(1)(merged) * 2.0 + 1.0
    model = mk.Model([left, right], out)
    assert isinstance(model.layers[0], mk.layers.InputLayer) and isinstance(model.layers[1], mk.layers.InputLayer)
    a, b = np.ones((5, 3), np.float32), np.ones((5, 2), np.float32)
    result = model([a, b]).asnumpy()
    assert result.shape == (5, 1)
    assert np.allclose(model({"left": a, "right": b}).asnumpy(), result)
    assert merged.shape == (None, 6)


def test_sequential_builds_lazily_add_and_summary(capsys):
    model = mk.Sequential()
    model.add(mk.layers.Dense(3))
    model.add(mk.layers.Dense(2))
    assert model.weights == []
    model(np.zeros((2, 5), np.float32))
    assert [tuple(w.shape) for w in model.get_weights()] == [(5, 3), (3,), (3, 2), (2,)]
    model.summary()
    assert "Total params: 26" in capsys.readouterr().out


def test_fit_accepts_arrays_tuples_mindspore_datasets_and_iterables():
    import mindspore.dataset as ds

    x, y = data(12)
    histories = []
    for kind in ("arrays", "tuple", "mindspore", "list"):
        model = classifier()
        model.compile(optimizer="sgd", loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
        if kind == "arrays":
            history = model.fit(x, y, batch_size=5, epochs=2, shuffle=False, verbose=0)
        elif kind == "tuple":
            history = model.fit((x, y), batch_size=5, epochs=2, shuffle=False, verbose=0)
        elif kind == "mindspore":
            dataset = ds.NumpySlicesDataset({"x": x, "y": y.astype(np.int32)}, shuffle=False).batch(5)
            history = model.fit(dataset, epochs=2, verbose=0)
        else:
            batches = [(x[i:i + 5], y[i:i + 5]) for i in range(0, 12, 5)]
            history = model.fit(batches, epochs=2, verbose=0)
        histories.append(history.history)
    for other in histories[1:]:
        assert sorted(other) == ["accuracy", "loss"]
        np.testing.assert_allclose(other["loss"], histories[0]["loss"], rtol=1e-6)


def test_steps_per_epoch_validation_split_and_predict():
    x, y = data(20)
    model = classifier()
    model.compile(optimizer=mk.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy", metrics=["acc"])
    history = model.fit(x, y, batch_size=4, epochs=2, steps_per_epoch=2, validation_split=0.25, verbose=0)
    assert sorted(history.history) == ["acc", "loss", "val_acc", "val_loss"]
    assert int(model.optimizer.iterations.asnumpy()) == 4
    assert model.predict(x, batch_size=7, verbose=0).shape == (20, 3)


def test_callbacks_history_early_stopping_scheduler_and_batch_logs():
    x, y = data(12)
    model = classifier()
    model.compile(optimizer=mk.optimizers.SGD(0.5), loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    seen, rates = [], []
    callbacks = [mk.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: seen.append(logs["loss"])),
                 mk.callbacks.LearningRateScheduler(lambda epoch, lr: 0.1 / (epoch + 1)),
                 mk.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: rates.append(logs["learning_rate"])),
                 mk.callbacks.EarlyStopping(monitor="loss", patience=0, min_delta=10.0)]
    history = model.fit(x, y, batch_size=6, epochs=5, verbose=0, callbacks=callbacks)
    assert len(history.history["loss"]) == 2  # stopped after the second epoch failed to improve by 10
    assert len(seen) == 4
    np.testing.assert_allclose(rates, [0.1, 0.05], rtol=1e-6)


def test_save_and_load_weights_atomic_on_any_suffix(tmp_path):
    model = classifier()
    path = tmp_path / "nested" / "model.weights.h5"
    model.save_weights(str(path))
    assert path.exists() and not [p for p in path.parent.iterdir() if p.name.startswith(".tmp-")]
    other = classifier()  # different layer names, same architecture
    other.set_weights([w * 0 for w in other.get_weights()])
    other.load_weights(str(path))
    for a, b in zip(model.get_weights(), other.get_weights()):
        np.testing.assert_array_equal(a, b)
    wrong = mk.Sequential([mk.Input(shape=(4,)), mk.layers.Dense(2)])
    with pytest.raises(ValueError):
        wrong.load_weights(str(path))


def test_checkpoint_restores_optimizer_slots_when_they_are_created(tmp_path):
    x, y = data(8)
    model = classifier()
    model.compile(optimizer=mk.optimizers.Adam(0.05), loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    checkpoint = mk.train.Checkpoint(model=model, optimizer=model.optimizer)
    prefix = checkpoint.save(str(tmp_path / "ckpt"))
    assert prefix.endswith("ckpt-1") and os.path.exists(prefix + ".ckpt")
    twin, twin_optimizer = classifier(), mk.optimizers.Adam(0.05)
    mk.train.Checkpoint(model=twin, optimizer=twin_optimizer).restore(prefix).expect_partial()
    assert int(twin_optimizer.iterations.asnumpy()) == 2
    grads = [ms.Tensor(np.full(w.shape, 0.3, np.float32)) for w in model.get_weights()]
    model.optimizer.apply_gradients(zip(grads, model.trainable_variables))
    twin_optimizer.apply_gradients(zip(grads, twin.trainable_variables))  # slots created now, then restored
    for a, b in zip(model.get_weights(), twin.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert mk.train.Checkpoint(model=twin).restore(None) is not None


def test_checkpoint_save_records_the_latest_and_write_does_not(tmp_path):
    # As TF: save() makes ckpt-1, ckpt-2 and records the newest in the directory's
    # `checkpoint` file (the one latest_checkpoint reads); write() records nothing.
    x, _ = data(4)
    model = classifier()
    checkpoint = mk.train.Checkpoint(model=model)
    assert mk.train.latest_checkpoint(str(tmp_path)) is None
    first = checkpoint.save(str(tmp_path / "ckpt"))
    assert mk.train.latest_checkpoint(str(tmp_path)) == first
    second = checkpoint.save(str(tmp_path / "ckpt"))
    assert second.endswith("ckpt-2") and mk.train.latest_checkpoint(str(tmp_path)) == second
    assert (tmp_path / "checkpoint").read_text() == 'model_checkpoint_path: "ckpt-2"\nall_model_checkpoint_paths: "ckpt-2"\n'
    checkpoint.write(str(tmp_path / "other"))
    assert mk.train.latest_checkpoint(str(tmp_path)) == second
    twin = classifier()
    twin.set_weights([np.full(w.shape, 0.5, np.float32) for w in twin.get_weights()])
    assert not np.allclose(model(x).asnumpy(), twin(x).asnumpy())
    mk.train.Checkpoint(model=twin).restore(mk.train.latest_checkpoint(str(tmp_path)))
    np.testing.assert_array_equal(model(x).asnumpy(), twin(x).asnumpy())


def test_mixes_with_plain_mindspore_grad_and_cells():
    class Mixed(mk.Model):
        def __init__(self):
            super().__init__()
            self.keras_dense = mk.layers.Dense(3)
            self.ms_dense = ms.nn.Dense(3, 2)

        def call(self, x):
            return self.ms_dense(self.keras_dense(x))

    model = Mixed()
    x = ms.Tensor(np.ones((2, 4), np.float32))
    model(x)
    assert len(model.trainable_variables) == 4
    optimizer = mk.optimizers.SGD(0.1)
    loss_fn = mk.losses.MeanSquaredError()

    def forward():
        return loss_fn(ms.Tensor(np.zeros((2, 2), np.float32)), model(x))

    before = forward().asnumpy()
    _, grads = ms.value_and_grad(forward, None, model.trainable_variables)()
    optimizer.apply_gradients(zip(grads, model.trainable_variables), skip_gradients_aggregation=True)
    assert forward().asnumpy() < before


def test_batchnorm_frozen_uses_moving_statistics():
    bn = mk.layers.BatchNormalization()
    x = np.random.default_rng(1).normal(3.0, 2.0, size=(16, 3)).astype(np.float32)
    bn(x, training=True)
    moving = [w.copy() for w in bn.get_weights()[2:]]
    bn.trainable = False
    out = bn(x, training=True).asnumpy()
    assert all(np.array_equal(a, b) for a, b in zip(moving, bn.get_weights()[2:]))
    expected = (x - moving[0]) / np.sqrt(moving[1] + 1e-3)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    assert bn.trainable_weights == []


def test_names_reductions_and_single_process_average_loss():
    assert mk.losses.Reduction.SUM_OVER_BATCH_SIZE == "sum_over_batch_size"
    assert mk.losses.Reduction.NONE == "none" and mk.losses.Reduction.SUM == "sum"
    assert isinstance(mk.losses.get("SparseCategoricalCrossentropy"), mk.losses.SparseCategoricalCrossentropy)
    assert isinstance(mk.optimizers.get("Adam"), mk.optimizers.Adam)
    assert mk.activations.get("gelu") is mk.activations.gelu
    assert isinstance(mk.initializers.get("glorot_uniform"), mk.initializers.GlorotUniform)
    made = mk.initializers.get(mk.initializers.RandomNormal)  # (a class, as Keras takes it: made with its defaults)
    assert isinstance(made, mk.initializers.RandomNormal) and made.get_config()["stddev"] == 0.05
    layer = mk.layers.Layer()
    weight = layer.add_weight(name="w", shape=(3, 2), initializer=mk.initializers.RandomNormal)
    assert tuple(weight.shape) == (3, 2) and 0 < float(np.abs(weight.asnumpy()).max()) < 0.5
    per_example = np.array([1.0, 2.0, 3.0, 6.0], np.float32)
    assert float(mk.compute_average_loss(per_example).asnumpy()) == 3.0
    assert float(mk.scale_regularization_loss(np.array([1.0, 3.0], np.float32)).asnumpy()) == 4.0
    optimizer = mk.optimizers.SGD(0.1)
    optimizer.learning_rate = 0.25
    assert float(optimizer.learning_rate.asnumpy()) == 0.25
    with pytest.raises(TypeError):
        mk.optimizers.SGD(mk.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5)).learning_rate = 0.1


def test_custom_objects_are_registered_under_keras_names_and_returned_unchanged():
    @mk.utils.register_keras_serializable(package="Addons")
    class Gelu(mk.layers.Layer):
        pass

    @mk.utils.register_keras_serializable(package="Addons", name="swish_fn")
    def swish(x):
        return x

    assert isinstance(Gelu(), mk.layers.Layer)  # the class itself, not a wrapper
    assert mk.utils.get_registered_object("Addons>Gelu") is Gelu
    assert mk.utils.get_registered_name(swish) == "Addons>swish_fn"
    assert mk.utils.get_registered_name(len) == "len"
    assert mk.utils.get_registered_object("Addons>swish_fn", custom_objects={"Addons>swish_fn": len}) is swish  # registry first
    assert mk.utils.get_registered_object("mine", custom_objects={"mine": len}, module_objects={"mine": abs}) is len
    assert mk.utils.get_registered_object("nothing") is None


def test_restoring_into_a_model_not_built_yet_fills_it_when_it_builds(tmp_path):
    # TF restores a variable when it is created: a model built lazily (no Input) and restored
    # before its first call gets the checkpoint's weights, and that first call uses them.
    x, _ = data(4)
    model = classifier()
    prefix = mk.train.Checkpoint(model=model).save(str(tmp_path / "ckpt"))

    def lazy():
        return mk.Sequential([mk.layers.Dense(6, activation="relu"), mk.layers.Dense(3)])

    fresh = lazy()
    assert fresh.weights == []
    mk.train.Checkpoint(model=fresh).restore(prefix)
    np.testing.assert_array_equal(fresh(x).asnumpy(), model(x).asnumpy())

    class Subclassed(mk.Model):  # builds its layers inside call: restored at the end of the first call
        def __init__(self):
            super().__init__()
            self.hidden, self.out = mk.layers.Dense(6, activation="relu"), mk.layers.Dense(3)

        def call(self, inputs):
            return self.out(self.hidden(inputs))

    subclassed = Subclassed()
    mk.train.Checkpoint(model=subclassed).restore(prefix)
    subclassed(x)
    np.testing.assert_array_equal(subclassed(x).asnumpy(), model(x).asnumpy())
    with pytest.raises(ValueError, match="holds 4 weights, the model has 2"):
        single = mk.Sequential([mk.layers.Dense(3)])
        mk.train.Checkpoint(model=single).restore(prefix)
        single(x)


def test_normalization_layers_keep_their_own_config():
    for layer, own in ((mk.layers.LayerNormalization(axis=1, epsilon=0.01, center=False),
                        {"axis": (1,), "epsilon": 0.01, "center": False, "scale": True}),
                       (mk.layers.BatchNormalization(momentum=0.9, epsilon=0.002),
                        {"axis": -1, "momentum": 0.9, "epsilon": 0.002, "center": True, "scale": True})):
        config = layer.get_config()
        assert {key: config[key] for key in own} == own, type(layer).__name__


def test_backend_values_are_keras():
    import pytest as _pytest

    tf = _pytest.importorskip("tensorflow")
    import mindspore as ms
    import numpy as np

    from migrate.runtime import keras as mk

    array = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    keras = tf.keras
    variable = tf.Variable(array)
    parameter = ms.Parameter(ms.Tensor(array))
    assert mk.backend.count_params(parameter) == keras.backend.count_params(variable) == 24
    assert mk.backend.int_shape(parameter) == keras.backend.int_shape(variable) == (2, 3, 4)
    np.testing.assert_array_equal(mk.backend.get_value(parameter), keras.backend.get_value(variable))
    assert mk.backend.get_value(0.5) == keras.backend.get_value(0.5) == 0.5
    mk.backend.set_value(parameter, array * 2)
    keras.backend.set_value(variable, array * 2)
    np.testing.assert_array_equal(parameter.asnumpy(), np.asarray(variable))
    assert mk.backend.image_data_format() == keras.backend.image_data_format() == "channels_last"

    with _pytest.raises(ValueError, match="data_format"):
        mk.backend.set_image_data_format("nhwc")
    with _pytest.raises(NotImplementedError, match="channels_last"):
        mk.backend.set_image_data_format("channels_first")


@pytest.mark.parametrize("name,loss_scale,wrapped,factor", [
    ("mixed_float16", "auto", True, None),      # TF 2.3: "auto" is dynamic for mixed_float16
    ("mixed_float16", "dynamic", True, None),
    ("mixed_float16", None, False, None),
    ("float32", "auto", False, None),           # ... and none for other names
    ("float32", "dynamic", True, None),         # "dynamic" whatever the name
    ("float32", 128, False, 128.0),             # a fixed scale
])
def test_tf23_experimental_policy_gives_compile_its_loss_scale(name, loss_scale, wrapped, factor):
    policy = mk.mixed_precision.experimental.Policy(name, loss_scale=loss_scale)
    previous = mk.mixed_precision.global_policy()
    mk.mixed_precision.experimental.set_policy(policy)
    try:
        model = classifier()
    finally:
        mk.mixed_precision.set_global_policy(previous)
    model.compile(optimizer=mk.optimizers.SGD(0.1), loss="mse")
    assert isinstance(model.optimizer, mk.mixed_precision.LossScaleOptimizer) == wrapped
    if wrapped:
        assert model.optimizer.initial_scale == 2.0 ** 15 and model.optimizer.dynamic_growth_steps == 2000
    else:
        assert model.optimizer.loss_scale_factor == factor
    x, y = data()
    before = model.evaluate(x, np.zeros((12, 3), np.float32), verbose=0)
    model.fit(x, np.zeros((12, 3), np.float32), epochs=3, batch_size=4, verbose=0)
    assert model.evaluate(x, np.zeros((12, 3), np.float32), verbose=0) < before  # it still trains


def test_tf23_experimental_policy_refuses_a_loss_scale_object():
    with pytest.raises(ValueError, match="pass its initial scale as a number"):
        mk.mixed_precision.experimental.Policy("mixed_float16", loss_scale=object())


def _progress_lines(progbar_class, verbose, stream, **kwargs):
    """What a Progbar prints for a fixed run of updates, times and redraw padding taken out."""
    import contextlib
    import io
    import re

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        bar = progbar_class(6, verbose=verbose, interval=0.0, **kwargs)
        for current, values in stream:
            bar.update(current, values)
        bar.add(2, [("loss", 0.25), ("acc", 0.75)])
    text = re.sub(r"\x08+", "", buffer.getvalue())
    text = re.sub(r"\d+(?:ms|us|s)/step", "T/step", text)
    text = re.sub(r"\x1b\[1m[\d:]+s?\x1b\[0m", "E", text)
    text = re.sub(r" - \d+s - ", " - S - ", text)
    return [line.rstrip() for line in re.split(r"[\r\n]", text) if line.strip()]


@pytest.mark.parametrize("verbose,kwargs", [(1, {}), (2, {}), (1, {"stateful_metrics": ["acc"]}),
                                            (2, {"stateless_metrics": ["loss"]})])
def test_progbar_prints_keras_lines(verbose, kwargs):
    keras = pytest.importorskip("keras")
    stream = [(1, [("loss", 1.5), ("acc", 0.5)]), (3, [("loss", ms.Tensor(np.float32(0.5))), ("acc", 0.25)]),
              (4, [("loss", np.float32(0.0001)), ("acc", 1.0)])]
    theirs = _progress_lines(keras.utils.Progbar, verbose, [(c, [(k, float(np.asarray(v.asnumpy() if hasattr(
        v, "asnumpy") else v))) for k, v in vals]) for c, vals in stream], **kwargs)
    ours = _progress_lines(mk.utils.Progbar, verbose, stream, **kwargs)
    assert ours == theirs and ours


SERIALIZED = [
    ("initializers", "GlorotUniform", {"seed": 3}), ("initializers", "TruncatedNormal", {"stddev": 0.02}),
    ("initializers", "RandomUniform", {"minval": -1.0, "maxval": 1.0}), ("initializers", "RandomNormal", {}),
    ("initializers", "VarianceScaling", {"scale": 2.0, "mode": "fan_out"}), ("initializers", "HeNormal", {}),
    ("initializers", "Orthogonal", {"gain": 2.0}), ("initializers", "Constant", {"value": 0.5}),
    ("initializers", "Zeros", {}), ("initializers", "Identity", {"gain": 3.0}), ("initializers", "LecunUniform", {}),
    ("regularizers", "L2", {"l2": 1e-4}), ("regularizers", "L1L2", {"l1": 0.1, "l2": 0.2}),
    ("regularizers", "L1", {"l1": 0.5}),
    ("constraints", "MaxNorm", {"max_value": 3, "axis": [0, 1]}), ("constraints", "NonNeg", {}),
    ("constraints", "UnitNorm", {"axis": 1}), ("constraints", "MinMaxNorm", {"min_value": 0.5, "rate": 0.5}),
]


@pytest.mark.parametrize("module,name,kwargs", SERIALIZED, ids=[f"{m}.{n}" for m, n, _ in SERIALIZED])
def test_serialize_gives_keras_dicts_and_deserialize_rebuilds(module, name, kwargs):
    keras = pytest.importorskip("keras")
    theirs = getattr(keras, module).serialize(getattr(getattr(keras, module), name)(**kwargs))
    ours_module = getattr(mk, module)
    ours = ours_module.serialize(getattr(ours_module, name)(**kwargs))
    assert _close(ours, theirs), (ours, theirs)
    rebuilt = ours_module.deserialize(theirs)  # Keras's own dict builds ours
    assert type(rebuilt).__name__ == name and _close(rebuilt.get_config(), ours["config"])
    assert _close(ours_module.get(theirs).get_config(), ours["config"])


def _close(a, b) -> bool:
    """Equal structures, floats to float32's rounding (Keras keeps some as float32)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return a == pytest.approx(b, rel=1e-6)
    return a == b


def test_constraints_project_as_keras_does():
    keras = pytest.importorskip("keras")
    w = np.random.default_rng(4).normal(size=(4, 3)).astype(np.float32) * 3
    for name, kwargs in [("MaxNorm", {"max_value": 2.0}), ("NonNeg", {}), ("UnitNorm", {"axis": 1}),
                         ("MinMaxNorm", {"min_value": 1.0, "max_value": 2.0, "rate": 0.7, "axis": 0})]:
        want = keras.ops.convert_to_numpy(getattr(keras.constraints, name)(**kwargs)(w))
        got = getattr(mk.constraints, name)(**kwargs)(ms.Tensor(w)).asnumpy()
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=name)
    # a layer's constraint by name is applied after each update
    layer = mk.layers.Dense(3, kernel_constraint="non_neg")
    model = mk.Sequential([mk.Input(shape=(4,)), layer])
    model.compile(optimizer=mk.optimizers.SGD(1.0), loss="mse")
    model.fit(np.abs(np.random.default_rng(5).normal(size=(8, 4))).astype(np.float32),
              np.ones((8, 3), np.float32) * -5, epochs=2, verbose=0)
    assert (layer.kernel.asnumpy() >= 0).all()


def test_alpha_dropout_keeps_mean_and_variance_when_training_and_is_identity_otherwise():
    x = np.random.default_rng(0).normal(size=(20000, 8)).astype(np.float32)
    layer = mk.layers.AlphaDropout(0.2)
    y = layer(ms.Tensor(x), training=True).asnumpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1.0) < 0.02
    alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946
    a = ((1 - 0.2) * (1 + 0.2 * alpha_p ** 2)) ** -0.5
    dropped = np.isclose(y, a * alpha_p - a * alpha_p * 0.2)  # a * alpha_p + b
    assert 0.18 < dropped.mean() < 0.22
    np.testing.assert_array_equal(layer(ms.Tensor(x)).asnumpy(), x)


@pytest.mark.parametrize("case", ["array", "batches", "axis_none", "given", "invert", "image_axis"])
def test_normalization_adapts_and_normalizes_as_keras(case):
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(8)
    data = (rng.normal(size=(50, 3)) * [1.0, 10.0, 0.1] + [0.0, 5.0, -2.0]).astype(np.float32)
    images = rng.uniform(size=(6, 4, 5, 3)).astype(np.float32)
    x = data[:7]
    kwargs, adapt = {}, data
    if case == "batches":
        adapt = [data[i:i + 16] for i in range(0, 50, 16)]
    elif case == "axis_none":
        kwargs = {"axis": None}
    elif case == "given":
        kwargs, adapt = {"mean": [1.0, 2.0, 3.0], "variance": [4.0, 0.0, 1.0]}, None
    elif case == "invert":
        kwargs = {"invert": True}
    elif case == "image_axis":
        kwargs, adapt, x = {"axis": -1}, images, images[:2]

    def run(K, to_tensor):
        layer = K.layers.Normalization(**kwargs)
        if adapt is not None:
            layer.adapt(adapt if isinstance(adapt, list) else to_tensor(adapt))
        out = layer(to_tensor(x))
        return np.asarray(out.asnumpy() if hasattr(out, "asnumpy") else keras.ops.convert_to_numpy(out))

    np.testing.assert_allclose(run(mk, ms.Tensor), run(keras, lambda a: a), rtol=1e-5, atol=1e-5)


def test_gradients_of_sources_a_tape_does_not_watch_are_none():
    """TF's tape watches trainable variables only: a constant's or a frozen variable's gradient is None."""
    from migrate.runtime.keras.autodiff import value_and_grad

    w = ms.Parameter(ms.Tensor(np.float32(5.0)), name="w")
    frozen = ms.Parameter(ms.Tensor(np.float32(2.0)), name="frozen", requires_grad=False)
    c = ms.Tensor(np.float32(3.0))

    def forward():
        return 3 * w ** 2 + 2 * w * c + frozen * c

    value, grads = value_and_grad(forward, None, [w, c, frozen])()
    assert float(value.asnumpy()) == 75.0 + 30.0 + 6.0
    assert isinstance(grads, list) and grads[1] is None and grads[2] is None
    assert float(grads[0].asnumpy()) == 30.0 + 6.0
    value, grads = value_and_grad(forward, None, (c,))()
    assert grads == (None,) and float(value.asnumpy()) == 111.0


def test_keras2_learning_phase_sets_the_training_of_calls_given_none():
    """Keras 2's `set_learning_phase`: its phase for calls without `training=`, until cleared."""
    x = np.ones((4, 50), np.float32)
    model = mk.Sequential([mk.Input((50,)), mk.layers.Dropout(0.5)])
    try:
        assert mk.backend.learning_phase() == 0
        with pytest.warns(UserWarning, match="set_learning_phase` is deprecated"):
            mk.backend.set_learning_phase(1)
        assert mk.backend.learning_phase() == 1
        dropped = model(x).asnumpy()
        assert (dropped == 0).any() and set(np.unique(dropped)) <= {0.0, 2.0}
        assert np.array_equal(model(x, training=False).asnumpy(), x)  # an explicit value still decides
        with pytest.warns(UserWarning):
            mk.backend.set_learning_phase(0)
        assert np.array_equal(model(x).asnumpy(), x)
        with pytest.warns(UserWarning), pytest.raises(ValueError, match="Expected learning phase to be 0 or 1."):
            mk.backend.set_learning_phase(2)
    finally:
        mk.backend.clear_session()
    assert mk.backend.learning_phase() == 0 and np.array_equal(model(x).asnumpy(), x)


def test_a_programs_own_layer_and_metric_update_their_weights_with_tfs_variable_methods():
    """`self.w.assign_add(...)` on what `add_weight` made, as a subclass written for TF does."""
    class Counter(mk.layers.Layer):
        def build(self, shape):
            self.calls = self.add_weight(name="calls", shape=(), initializer="zeros", trainable=False)
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones")

        def call(self, x):
            self.calls.assign_add(1.0)
            self.scale.assign(self.scale.read_value() * 2.0)
            return x * self.scale

    class Total(mk.metrics.Metric):
        def __init__(self):
            super().__init__()
            self.total = self.add_weight(name="total", initializer="zeros")

        def update_state(self, values):
            self.total.assign_add(ms.ops.sum(values))
            self.total.assign_sub(1.0)

        def result(self):
            return self.total + 0.0

    layer, metric = Counter(), Total()
    x = ms.Tensor(np.ones((2, 3), np.float32))
    layer(x)
    out = layer(x)
    assert float(layer.calls.asnumpy()) == 2.0 and np.allclose(out.asnumpy(), 4.0)
    metric.update_state(x)
    metric.update_state(x)
    assert float(metric.result().asnumpy()) == 10.0


def test_keras_2s_generator_methods_are_fit_evaluate_and_predict_and_one_callback_needs_no_list():
    x, y = data(16)

    def trained(method):
        mk.utils.set_random_seed(3)
        model = classifier()
        model.compile(optimizer=mk.optimizers.SGD(0.1), loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
        seen = []
        callback = mk.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(epoch))
        generator = [(x[i:i + 4], y[i:i + 4]) for i in range(0, 16, 4)]
        if method == "fit":
            history = model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0, callbacks=[callback])
            return history.history["loss"], model.evaluate(x, y, batch_size=4, verbose=0), model.predict(x, verbose=0), seen
        history = model.fit_generator(iter(generator * 2), steps_per_epoch=4, epochs=2, verbose=0, callbacks=callback,
                                      workers=4, use_multiprocessing=True)
        return (history.history["loss"], model.evaluate_generator(iter(generator), steps=4),
                model.predict_generator(iter(generator), steps=4), seen)

    ours, theirs = trained("generator"), trained("fit")
    assert np.allclose(ours[0], theirs[0], rtol=1e-6) and np.isclose(ours[1], theirs[1], rtol=1e-6)
    assert np.allclose(ours[2], theirs[2], rtol=1e-6) and ours[3] == theirs[3] == [0, 1]
