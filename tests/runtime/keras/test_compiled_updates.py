"""An optimizer's update compiled as one graph gives the eager update's numbers, bit for bit.

``migrate.runtime.keras.optimizers.compiled`` runs SGD's and Adam's update of every variable
as one compiled MindSpore graph. Each test applies the same gradients twice, compiled and
eagerly (``MIGRATE_SHIM_COMPILE=0``), and compares the weights and slots exactly; the
eager update is the one the Keras equivalence tests compare with TF.
"""

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402

O = mk.optimizers


def _apply(monkeypatch, compiled, make_optimizer, steps=6, between=None):
    """Weights, slots and the optimizer after `steps` updates with fixed random gradients."""
    monkeypatch.setenv("MIGRATE_SHIM_COMPILE", "1" if compiled else "0")
    rng = np.random.default_rng(0)
    model = mk.Sequential([mk.Input(shape=(8,)), mk.layers.Dense(5, activation="relu"), mk.layers.Dense(3)])
    variables = model.trainable_variables
    model.set_weights([rng.normal(size=tuple(v.shape)).astype(np.float32) for v in variables])
    optimizer = make_optimizer()
    for step in range(steps):
        grads = [ms.Tensor(rng.normal(size=tuple(v.shape)).astype(np.float32)) for v in variables]
        optimizer.apply_gradients(zip(grads, variables))
        if between is not None:
            between(step, model, optimizer)
    state = [v.asnumpy().copy() for v in variables] + [v.asnumpy().copy() for v in optimizer.variables]
    return state, optimizer


OPTIMIZERS = {
    "sgd": lambda: O.SGD(learning_rate=0.05),
    "momentum": lambda: O.SGD(learning_rate=0.05, momentum=0.9),
    "nesterov": lambda: O.SGD(learning_rate=0.05, momentum=0.9, nesterov=True),
    "momentum-schedule": lambda: O.SGD(O.schedules.ExponentialDecay(0.1, 2, 0.5), momentum=0.5),
    "adam": lambda: O.Adam(learning_rate=0.01),
    "amsgrad": lambda: O.Adam(amsgrad=True),
    "adamw": lambda: O.AdamW(learning_rate=0.01),
    "adam-schedule": lambda: O.Adam(O.schedules.PiecewiseConstantDecay([2], [0.01, 0.001])),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_compiled_update_is_the_eager_update(monkeypatch, name):
    eager, _ = _apply(monkeypatch, False, OPTIMIZERS[name])
    compiled, optimizer = _apply(monkeypatch, True, OPTIMIZERS[name])
    assert len(optimizer._compiled_cells) == 1  # the compiled path ran, compiled once
    assert len(eager) == len(compiled)
    for a, b in zip(eager, compiled):
        np.testing.assert_array_equal(a, b)


def test_set_data_between_steps_reaches_the_next_update(monkeypatch):
    """A new learning rate and new weights (both `set_data`) are what the next steps update."""
    def change(step, model, optimizer):
        if step == 1:
            optimizer.learning_rate = 0.2
        if step == 3:
            model.set_weights([w * 0.5 for w in model.get_weights()])

    eager, _ = _apply(monkeypatch, False, OPTIMIZERS["momentum"], between=change)
    compiled, optimizer = _apply(monkeypatch, True, OPTIMIZERS["momentum"], between=change)
    for a, b in zip(eager, compiled):
        np.testing.assert_array_equal(a, b)
    assert len(optimizer._compiled_cells) == 3  # rebuilt after each set_data


def test_assign_between_steps_reaches_the_next_update(monkeypatch):
    """An in-place `assign` keeps the compiled cell and is seen by it."""
    from mindspore import ops

    def change(step, model, optimizer):
        if step == 2:
            ops.assign(model.trainable_variables[0], model.trainable_variables[0] * 2.0)

    eager, _ = _apply(monkeypatch, False, OPTIMIZERS["adam"], between=change)
    compiled, optimizer = _apply(monkeypatch, True, OPTIMIZERS["adam"], between=change)
    for a, b in zip(eager, compiled):
        np.testing.assert_array_equal(a, b)
    assert len(optimizer._compiled_cells) == 1


def test_a_subclass_with_its_own_update_step_runs_it(monkeypatch):
    calls = []

    class Halved(O.SGD):
        def update_step(self, gradient, variable, learning_rate):
            calls.append(variable.name)
            super().update_step(gradient * 0.5, variable, learning_rate)

    _, optimizer = _apply(monkeypatch, True, lambda: Halved(learning_rate=0.1, momentum=0.9), steps=2)
    assert len(calls) == 2 * 4
    assert not getattr(optimizer, "_compiled_cells", None)
