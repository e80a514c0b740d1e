"""A built-in loss runs as a recorded graph with the eager numbers, bit for bit.

``migrate.runtime.keras.compiled.call_loss`` records a built-in loss's call once per input
signature and replays it. Each test computes a loss and its gradients twice, recorded and
eagerly, on the same inputs (the model eager both times), and compares them exactly.
"""

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402
from migrate.runtime.keras import compiled  # noqa: E402

LOSSES = {
    "sparse_logits": (lambda: mk.losses.SparseCategoricalCrossentropy(from_logits=True), "labels", None),
    "sparse_softmax_output": (lambda: mk.losses.SparseCategoricalCrossentropy(), "labels", "softmax"),
    "sparse_none": (lambda: mk.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none"),
                    "labels", None),
    "categorical_smoothing": (lambda: mk.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1),
                              "onehot", None),
    "categorical_softmax_output": (lambda: mk.losses.CategoricalCrossentropy(), "onehot", "softmax"),
    "mae": (lambda: mk.losses.MeanAbsoluteError(), "dense", None),
    "mse_sum": (lambda: mk.losses.MeanSquaredError(reduction="sum"), "dense", None),
    "huber": (lambda: mk.losses.Huber(delta=0.5), "dense", None),
}


def _loss_and_grads(monkeypatch, on, make, truth_kind, activation, weighted, steps=3):
    monkeypatch.setattr(compiled, "call", lambda *args: compiled.NOT)  # (the model eager: only the loss differs)
    if not on:
        monkeypatch.setattr(compiled, "call_loss", lambda *args: compiled.NOT)
    rng = np.random.default_rng(0)
    units = 1 if truth_kind == "binary" else 4
    model = mk.Sequential([mk.Input(shape=(5,)), mk.layers.Dense(units, activation=activation)])
    model.set_weights([rng.normal(size=tuple(v.shape)).astype(np.float32) for v in model.trainable_variables])
    loss_fn = make()
    out = []
    for step in range(steps):
        x = ms.Tensor(rng.normal(size=(6, 5)).astype(np.float32))
        truth = {"labels": lambda: rng.integers(0, 4, size=(6,)).astype(np.int32),
                 "onehot": lambda: np.eye(4, dtype=np.float32)[rng.integers(0, 4, size=6)],
                 "binary": lambda: rng.integers(0, 2, size=(6, 1)).astype(np.float32),
                 "dense": lambda: rng.normal(size=(6, 4)).astype(np.float32)}[truth_kind]()
        y = ms.Tensor(truth)
        weight = ms.Tensor(rng.uniform(size=(6,)).astype(np.float32)) if weighted else None

        def forward():
            value = loss_fn(y, model(x, training=True), sample_weight=weight)
            return value.sum() if value.ndim else value

        value, grads = mk.value_and_grad(forward, None, model.trainable_variables)()
        out.append([value.asnumpy()] + [g.asnumpy() for g in grads])
    return out, loss_fn


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_recorded_loss_is_the_eager_loss(monkeypatch, name, weighted):
    make, truth_kind, activation = LOSSES[name]
    with monkeypatch.context() as patched:
        eager, _ = _loss_and_grads(patched, False, make, truth_kind, activation, weighted)
    recorded, loss_fn = _loss_and_grads(monkeypatch, True, make, truth_kind, activation, weighted)
    assert loss_fn.__dict__.get("_compiled_plan") and len(loss_fn._compiled_plan.signatures) == 1
    for a, b in zip(eager, recorded):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("make, truth_kind, activation", [
    (lambda: mk.losses.BinaryCrossentropy(), "binary", "sigmoid"),
    (lambda: mk.losses.SparseCategoricalCrossentropy(ignore_class=2), "labels", "softmax"),
])
def test_losses_not_proven_equal_stay_eager(monkeypatch, make, truth_kind, activation):
    """Recorded under value_and_grad, these came out one float32 step from the eager value."""
    _, loss_fn = _loss_and_grads(monkeypatch, True, make, truth_kind, activation, False, steps=1)
    assert not loss_fn.__dict__.get("_compiled_plan")


def test_a_program_loss_stays_eager(monkeypatch):
    calls = []

    def mine(y_true, y_pred):
        calls.append(1)
        return mk.losses.mean_squared_error(y_true, y_pred)

    class Mine(mk.losses.MeanSquaredError):
        def call(self, y_true, y_pred):
            calls.append(2)
            return super().call(y_true, y_pred)

    monkeypatch.setenv("MIGRATE_SHIM_COMPILE", "1")
    y = ms.Tensor(np.ones((2, 3), np.float32))
    for loss in (mk.losses.LossFunctionWrapper(mine), Mine()):
        for _ in range(3):
            loss(y, y * 2)
        assert not loss.__dict__.get("_compiled_plan")
    assert calls == [1, 1, 1, 2, 2, 2]
