"""A model of the shim's own layers runs as a compiled graph with the eager numbers.

``migrate.runtime.keras.compiled`` records a ``Sequential`` or functional model's call with
MindSpore's trace capture and replays the graph. Each test trains or calls the same model
twice, compiled and eagerly (the path turned off), and compares: bit for bit where the
operations are the same, to float32 rounding where BatchNormalization's recorded formula
replaces the fused kernel.
"""

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402
from migrate.runtime.keras import compiled  # noqa: E402

L = mk.layers


@pytest.fixture
def eager(monkeypatch):
    """Within the test: the compiled path off."""
    def off():
        monkeypatch.setattr(compiled, "_trace", lambda: None)
    return off


def _data(shape, n=300, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, *shape)).astype(np.float32), rng.integers(0, 10, size=n).astype(np.int32)


def _train(make, shape, optimizer, batches=((0, 64), (64, 128), (128, 192), (192, 236), (236, 300)), seed=3):
    """Losses, weights and an inference output of `make()` trained on `batches` (the last ragged)."""
    mk.utils.set_random_seed(seed)
    model = make()
    x, y = _data(shape)
    loss_fn = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = optimizer()
    losses = []
    for start, stop in batches:
        features, labels = ms.Tensor(x[start:stop]), ms.Tensor(y[start:stop])

        def forward():
            out = model(features, training=True)
            if isinstance(out, list):
                out = out[0] + out[1]
            return loss_fn(labels, out)
        loss, grads = mk.value_and_grad(forward, None, model.trainable_variables)()
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    out = model(ms.Tensor(x[:7]), training=False)
    out = out[0] if isinstance(out, list) else out
    return model, np.array(losses), [w.asnumpy() for w in model.weights], out.asnumpy()


def _mlp():
    return mk.Sequential([mk.Input(shape=(20,)), L.Dense(32, activation="relu"), L.Dense(32, activation="tanh"),
                          L.Dense(10)])


def _signatures(model) -> int:
    plan = model.__dict__.get("_compiled_plan")
    return len(plan.signatures) if plan else 0


def test_an_mlp_trains_to_the_eager_numbers_bit_for_bit(eager):
    model, *compiled_run = _train(_mlp, (20,), lambda: mk.optimizers.SGD(0.05, momentum=0.9))
    assert _signatures(model) == 3  # training at 64 rows, at 44 (the ragged batch), inference at 7
    eager()
    model, *eager_run = _train(_mlp, (20,), lambda: mk.optimizers.SGD(0.05, momentum=0.9))
    assert _signatures(model) == 0
    losses, weights, out = compiled_run
    assert np.array_equal(losses, eager_run[0])
    assert all(np.array_equal(a, b) for a, b in zip(weights, eager_run[1]))
    assert np.array_equal(out, eager_run[2])
    assert losses[-1] < losses[0]


def _cnn():
    return mk.Sequential([mk.Input(shape=(8, 8, 3)), L.Conv2D(4, 3, padding="same", use_bias=False),
                          L.BatchNormalization(), L.ReLU(), L.MaxPooling2D(), L.Dropout(0.0), L.Flatten(),
                          L.Dense(10)])


def test_batch_normalization_moves_its_statistics_once_per_step(eager):
    """The recording runs the operations once before the graph runs: the moving statistics are put
    back in between, so after five steps (two recorded) they equal the eager model's."""
    model, *compiled_run = _train(_cnn, (8, 8, 3), lambda: mk.optimizers.Adam(0.01))
    assert _signatures(model) == 3
    eager()
    _, *eager_run = _train(_cnn, (8, 8, 3), lambda: mk.optimizers.Adam(0.01))
    np.testing.assert_allclose(compiled_run[0], eager_run[0], rtol=1e-5)
    for a, b in zip(compiled_run[1], eager_run[1]):  # (kernel, gamma, beta, moving mean, variance, ...; a bias before
        # the normalization would get a gradient of rounding noise, which Adam makes a step)
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(compiled_run[2], eager_run[2], rtol=1e-4, atol=1e-5)
    bn = model.layers[1]
    assert not np.allclose(bn.moving_variance.asnumpy(), 1.0)  # (they did move)


def _functional():
    inputs = mk.Input(shape=(8, 8, 3))
    features = L.GlobalAveragePooling2D()(L.Conv2D(4, 3, activation="relu")(inputs))
    first = L.Dense(10)(features)
    second = L.Dense(10, activation="tanh")(features)
    return mk.Model(inputs, [first, 2 * second - first])


def test_a_functional_model_with_a_list_of_outputs(eager):
    model, *compiled_run = _train(_functional, (8, 8, 3), lambda: mk.optimizers.Adam(0.01))
    assert _signatures(model) == 3
    assert isinstance(model(ms.Tensor(np.zeros((2, 8, 8, 3), np.float32))), list)
    eager()
    _, *eager_run = _train(_functional, (8, 8, 3), lambda: mk.optimizers.Adam(0.01))
    assert np.array_equal(compiled_run[0], eager_run[0])
    assert np.array_equal(compiled_run[2], eager_run[2])


def test_dropout_draws_a_new_mask_on_every_compiled_call():
    mk.utils.set_random_seed(5)
    model = mk.Sequential([mk.Input(shape=(4000,)), L.Dropout(0.5)])
    x = ms.Tensor(np.ones((2, 4000), np.float32))
    masks = [model(x, training=True).asnumpy() for _ in range(4)]
    assert _signatures(model) == 1
    for mask in masks:
        assert set(np.unique(mask)) == {0.0, 2.0}
        assert 0.45 < (mask == 0).mean() < 0.55
    assert all(not np.array_equal(masks[i], masks[j]) for i in range(4) for j in range(i + 1, 4))
    assert np.array_equal(model(x, training=False).asnumpy(), x.asnumpy())


def test_a_layer_frozen_after_compiling_gets_its_own_graph(eager):
    def run():
        mk.utils.set_random_seed(1)
        model = _cnn()
        x = ms.Tensor(_data((8, 8, 3))[0][:16])
        first = model(x, training=True).asnumpy()
        model.layers[1].trainable = False  # BatchNormalization now normalizes with its moving statistics
        return first, model(x, training=True).asnumpy()
    compiled_run = run()
    eager()
    eager_run = run()
    for a, b in zip(compiled_run, eager_run):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert not np.allclose(compiled_run[0], compiled_run[1])


class _Subclassed(mk.Model):
    def __init__(self):
        super().__init__()
        self.dense = L.Dense(3)

    def call(self, inputs):
        return self.dense(inputs)


@pytest.mark.parametrize("make, why", [
    (_Subclassed, "a subclassed model"),
    (lambda: mk.Sequential([mk.Input(shape=(5,)), L.Lambda(lambda t: t * 2)]), "(Lambda)"),
    (lambda: mk.Sequential([mk.Input(shape=(5,)), L.Dense(3, activation=lambda t: t * 2)]),
     "has its own activation function"),
    (lambda: mk.Sequential([mk.Input(shape=(5,)), L.Embedding(10, 3, mask_zero=True)]), "makes a mask"),
    (lambda: mk.Sequential([mk.Input(shape=(5,)), L.BatchNormalization(synchronized=True)]),
     "synchronizes its statistics across replicas"),
])
def test_models_whose_call_may_depend_on_values_stay_eager(make, why):
    model = make()
    x = ms.Tensor(np.ones((2, 5), np.int32 if "mask" in why else np.float32))
    model(x)
    assert compiled._why_not(model, set()) is not None and why in compiled._why_not(model, set())
    assert _signatures(model) == 0


def test_a_call_that_fails_while_recorded_raises_as_eagerly_and_the_model_runs_eagerly_after(eager):
    model = mk.Sequential([mk.Input(shape=(5,)), L.Dense(3, kernel_initializer="ones")])
    with pytest.raises(Exception) as recorded:
        model(ms.Tensor(np.ones((2, 4), np.float32)))
    assert model.__dict__["_compiled_plan"].broken
    other = _mlp()
    assert other(ms.Tensor(np.ones((2, 20), np.float32))).shape == (2, 10)
    assert _signatures(other) == 1  # recording still works for other models
    out = model(ms.Tensor(np.ones((2, 5), np.float32)))
    assert np.array_equal(out.asnumpy(), np.full((2, 3), 5.0, np.float32))
    eager()
    eager_model = mk.Sequential([mk.Input(shape=(5,)), L.Dense(3)])
    with pytest.raises(type(recorded.value)):
        eager_model(ms.Tensor(np.ones((2, 4), np.float32)))


def test_after_eight_input_signatures_new_ones_run_eagerly():
    model = mk.Sequential([mk.Input(shape=(5,)), L.Dense(3, kernel_initializer="ones")])
    for rows in range(1, 11):
        out = model(ms.Tensor(np.ones((rows, 5), np.float32)))
        assert np.array_equal(out.asnumpy(), np.full((rows, 3), 5.0, np.float32))
    assert _signatures(model) == compiled.MAX_SIGNATURES


def test_adding_a_layer_decides_again():
    model = mk.Sequential([mk.Input(shape=(5,)), L.Dense(3, kernel_initializer="ones")])
    model(ms.Tensor(np.ones((2, 5), np.float32)))
    assert _signatures(model) == 1
    model.add(L.Lambda(lambda t: t + 1))
    out = model(ms.Tensor(np.ones((2, 5), np.float32)))
    assert np.array_equal(out.asnumpy(), np.full((2, 3), 6.0, np.float32))
    assert model.__dict__["_compiled_plan"] is False


def test_fit_trains_to_the_eager_history(eager):
    def run():
        mk.utils.set_random_seed(2)
        x, y = _data((20,), n=200)
        model = _mlp()
        model.compile(optimizer=mk.optimizers.SGD(0.05, momentum=0.9),
                      loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
        history = model.fit(x, y, batch_size=64, epochs=3, verbose=0, shuffle=False)
        return history.history, model.evaluate(x, y, verbose=0), model.predict(x[:5], verbose=0)
    compiled_run = run()
    eager()
    eager_run = run()
    assert compiled_run[0] == eager_run[0]
    assert compiled_run[1] == eager_run[1]
    assert np.array_equal(compiled_run[2], eager_run[2])


def test_a_softmax_output_keeps_its_logits_for_the_crossentropy(eager):
    """Eagerly, a softmax output remembers its logits and the crossentropy computes from them (as
    Keras 3 does); the graph returns them beside the output. With saturated logits the clipped
    probabilities would give another loss."""
    def run():
        mk.utils.set_random_seed(4)
        model = mk.Sequential([mk.Input(shape=(20,)), L.Dense(10, kernel_initializer=mk.initializers.Constant(3.0)),
                               L.Activation("softmax")])
        x, y = _data((20,), n=64)
        loss_fn = mk.losses.SparseCategoricalCrossentropy()
        features, labels = ms.Tensor(x), ms.Tensor(y)
        losses = []
        for _ in range(3):
            out = model(features, training=True)
            assert getattr(out, "_keras_logits", None) is not None
            loss, grads = mk.value_and_grad(lambda: loss_fn(labels, model(features, training=True)), None,
                                            model.trainable_variables)()
            losses.append(float(loss))
            mk.optimizers.SGD(0.01).apply_gradients(zip(grads, model.trainable_variables))
        return model, np.array(losses)
    model, compiled_losses = run()
    assert _signatures(model) == 1
    eager()
    _, eager_losses = run()
    assert np.array_equal(compiled_losses, eager_losses)
