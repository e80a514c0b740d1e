"""Built-in metrics make several calls' updates as one, with the call-by-call numbers.

`keras.metrics`'s per-example metrics (Mean, Sum, the accuracy, error and crossentropy
metrics) keep each `update_state` call's tensors and update on them joined, every 32 calls
and before anything reads the state. Each case here is checked against the same metric
updated call by call (the deferral turned off), over calls of uneven sizes, across the
32-call flushes, a reset, inputs that cannot be joined, and reads in between.
"""

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402
from migrate.runtime.keras import metrics as metrics_module  # noqa: E402


@pytest.fixture
def step_by_step(monkeypatch):
    """A factory of metrics whose updates are made at once (the reference)."""
    def make(factory):
        metric = factory()
        monkeypatch.setattr(metric, "_defer", lambda update, args, sample_weight: False, raising=False)
        return metric
    return make


def _calls(seed, count):
    rng = np.random.default_rng(seed)
    for i in range(count):
        n = int(rng.integers(1, 9))
        yield (ms.Tensor(rng.integers(0, 4, size=n).astype(np.int32)), ms.Tensor(rng.normal(size=(n, 4)).astype(np.float32)),
               ms.Tensor(rng.uniform(0.1, 2.0, size=n).astype(np.float32)) if i % 3 == 0 else None,
               np.float32(rng.uniform(0.5, 2.5)), float(n))


METRICS = {
    "sparse_accuracy": lambda: mk.metrics.SparseCategoricalAccuracy(),
    "top_2": lambda: mk.metrics.SparseTopKCategoricalAccuracy(k=2),
    "sparse_crossentropy": lambda: mk.metrics.SparseCategoricalCrossentropy(from_logits=True),
}


@pytest.mark.parametrize("count", [5, 32, 77])
@pytest.mark.parametrize("name", sorted(METRICS))
def test_a_per_example_metric_gives_its_call_by_call_result(name, count, step_by_step):
    ours, reference = METRICS[name](), step_by_step(METRICS[name])
    for epoch in range(2):
        ours.reset_state()
        reference.reset_state()
        for i, (y, logits, weight, _, _) in enumerate(_calls(count + epoch, count)):
            ours.update_state(y, logits, sample_weight=weight)
            reference.update_state(y, logits, sample_weight=weight)
            if i == 40:  # a read in between makes the waiting updates first
                assert float(ours.result()) == pytest.approx(float(reference.result()), rel=1e-6)
        assert float(ours.result()) == pytest.approx(float(reference.result()), rel=1e-6)


@pytest.mark.parametrize("count", [7, 70])
def test_a_mean_of_scalars_weighted_by_examples(count, step_by_step):
    """The loss tracker's pattern: one scalar per call, weighted by the call's examples."""
    ours, reference = mk.metrics.Mean(name="loss"), step_by_step(lambda: mk.metrics.Mean(name="loss"))
    for _, _, _, loss, n in _calls(count, count):
        ours.update_state(ms.Tensor(loss), sample_weight=n)
        reference.update_state(ms.Tensor(loss), sample_weight=n)
    ours.update_state(3.0)  # (a Python number with no weight: it cannot join the weighted calls)
    reference.update_state(3.0)
    assert float(ours.result()) == pytest.approx(float(reference.result()), rel=1e-6)


def test_a_users_function_of_the_whole_batch_is_updated_call_by_call():
    """A mean of a batch-wide scalar over calls is not its mean over the calls' examples joined."""
    def batch_max(y_true, y_pred):
        return ms.ops.max(y_pred)[0] * 1.0

    metric = metrics_module.MeanMetricWrapper(batch_max)
    values = []
    for y, logits, _, _, _ in _calls(3, 40):
        metric.update_state(y, logits)
        values.append(float(logits.asnumpy().max()))
        assert "_waiting" not in metric.__dict__
    assert float(metric.result()) == pytest.approx(np.mean(values), rel=1e-6)


def test_state_read_directly_and_checkpointed_includes_the_waiting_updates(tmp_path):
    metric = mk.metrics.Sum()
    for value in range(5):
        metric.update_state(ms.Tensor(np.float32(value)))
    assert "_waiting" in metric.__dict__
    [total] = metric.variables  # (what a checkpoint saves)
    assert float(total.asnumpy()) == 10.0 and "_waiting" not in metric.__dict__
    metric.update_state(ms.Tensor(np.float32(1.0)))
    metric.reset_state()  # drops what waits
    assert float(metric.result()) == 0.0


def test_an_array_changed_after_the_call_counts_as_it_was():
    metric = mk.metrics.Mean()
    buffer = np.ones(3, np.float32)
    metric.update_state(buffer)
    buffer[:] = 100.0
    assert float(metric.result()) == 1.0


def test_reading_a_state_variable_makes_the_waiting_updates_first():
    metric = mk.metrics.Mean()
    for value in (1.0, 2.0, 6.0):
        metric.update_state(ms.Tensor(np.float32(value)))
    assert (float(metric.count), float(metric.total)) == (3.0, 9.0)
