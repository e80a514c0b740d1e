"""The native loop's metric updates, made for several steps at once, give the step-by-step numbers.

`migrate.runtime.training` keeps each step's loss and predictions and updates the loss's
mean and the per-example metrics on several steps together (every 32 steps, and before
results are read); other metrics (a user's function of the whole batch) are updated at
every step. Both are checked against fresh metrics updated one step after another, over
steps of uneven sizes, across intermediate flushes and a reset.
"""

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402
from migrate.runtime import training  # noqa: E402


def batch_mean_of_max(y_true, y_pred):
    """A metric of the whole batch (a scalar per step): its mean over steps is not its mean over examples."""
    return ms.ops.max(y_pred)[0] * 1.0


def _steps(rng, count):
    for _ in range(count):
        n = int(rng.integers(1, 9))
        yield (ms.Tensor(np.float32(rng.uniform(0.5, 2.5))), n, ms.Tensor(rng.integers(0, 4, size=n).astype(np.int32)),
               ms.Tensor(rng.normal(size=(n, 4)).astype(np.float32)))


@pytest.mark.parametrize("count", [5, 32, 77])
def test_batched_updates_give_the_step_by_step_results(count):
    specs = ["accuracy", mk.metrics.SparseTopKCategoricalAccuracy(k=2, name="top2"), batch_mean_of_max]
    state = training._Compiled(None, None, None, specs)
    reference = {"loss": mk.metrics.Mean(), "accuracy": mk.metrics.SparseCategoricalAccuracy(),
                 "top2": mk.metrics.SparseTopKCategoricalAccuracy(k=2), "mean_of_max": mk.metrics.Mean()}
    rng = np.random.default_rng(count)
    for epoch in range(2):
        state.reset()
        for metric in reference.values():
            metric.reset_state()
        for loss, n, y, y_pred in _steps(rng, count):
            state.record(loss, n, y, y_pred)
            reference["loss"].update_state(loss, sample_weight=float(n))
            reference["accuracy"].update_state(y, y_pred)
            reference["top2"].update_state(y, y_pred)
            reference["mean_of_max"].update_state(batch_mean_of_max(y, y_pred))
        assert len(state.pending) == count % training._PENDING_STEPS
        got = state.results()
        want = {k: float(m.result()) for k, m in reference.items()}
        assert [type(m).__name__ for m in state.batched] == ["SparseCategoricalAccuracy",
                                                             "SparseTopKCategoricalAccuracy"]
        assert got.pop("batch_mean_of_max") == pytest.approx(want.pop("mean_of_max"), rel=1e-6)
        assert got == pytest.approx(want, rel=1e-6), epoch
