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
        monkeypatch.setattr(metric, "_defer", lambda update, args, sample_weight, batched=False: False, raising=False)
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


def test_one_value_per_call_is_not_joined_into_one_value():
    """Over 1-D inputs a per-example function (mean over the last axis) gives one value per call:
    such calls are updated one by one, not joined into one long row."""
    rng = np.random.default_rng(5)
    ours = mk.metrics.MeanSquaredError()
    values = []
    for n in [4] * 32 + [1]:
        y, p = rng.normal(size=n).astype(np.float32), rng.normal(size=n).astype(np.float32)
        ours.update_state(ms.Tensor(y), ms.Tensor(p))
        values.append(float(np.mean((y - p) ** 2)))
    assert float(ours.count) == 33.0 and float(ours.result()) == pytest.approx(np.mean(values), rel=1e-5)


def test_predictions_that_carry_their_logits_are_not_joined():
    """A softmax output carries its logits for the crossentropy metrics (as Keras reads them): joined,
    the logits would be lost and the crossentropy read from clipped probabilities."""
    ours = mk.metrics.CategoricalCrossentropy()
    reference = []
    for _ in range(3):
        probs = mk.activations.softmax(ms.Tensor(np.array([[40.0, 0.0, 0.0], [0.0, 1.0, 0.0]], np.float32)))
        labels = ms.Tensor(np.array([[0, 1, 0], [0, 1, 0]], np.float32))
        ours.update_state(labels, probs)
        reference.append(mk.metrics.CategoricalCrossentropy()(labels, probs))
    assert float(ours.result()) == pytest.approx(float(np.mean([float(r) for r in reference])), rel=1e-5)


def test_a_view_of_a_variable_counts_as_it_was_at_the_call():
    p = ms.Parameter(ms.Tensor(np.ones(3, np.float32)), name="p")
    metric = mk.metrics.Mean()
    for _ in range(3):
        metric.update_state(p.reshape(-1))
        ms.ops.assign_add(p, ms.Tensor(np.ones(3, np.float32)))
    assert float(metric.result()) == 2.0


def test_a_bad_call_raises_and_the_calls_before_it_count():
    metric = mk.metrics.Sum()
    for value in (1.0, 2.0):
        metric.update_state(ms.Tensor(np.full((2, 3), value, np.float32)))
    with pytest.raises(Exception):
        metric.update_state(ms.Tensor(np.ones((2, 3), np.float32)), sample_weight=ms.Tensor(np.ones((2, 5), np.float32)))
        metric.result()
    assert float(metric.result()) == 18.0
    assert getattr(mk.metrics.Mean.__new__(mk.metrics.Mean), "total", "absent") == "absent"


def test_updates_of_fresh_values_keep_their_tensors_and_give_the_same_result(step_by_step):
    """`fresh_values()` (the native loop's steps: a compiled step's outputs and its batch, which
    nothing changes later) keeps the tensors, not copies; the result is the call-by-call one, and
    outside it, and after an error inside it, updates copy again."""
    ours, reference = mk.metrics.SparseCategoricalAccuracy(), step_by_step(mk.metrics.SparseCategoricalAccuracy)
    calls = list(_calls(9, 40))
    with metrics_module.fresh_values():
        for y, logits, _, _, _ in calls:
            ours.update_state(y, logits)
        assert ours.__dict__["_waiting"]["calls"][-1][1] is calls[-1][1]
    for y, logits, _, _, _ in calls:
        reference.update_state(y, logits)
    assert float(ours.result()) == pytest.approx(float(reference.result()), rel=1e-6)
    y, logits = calls[0][:2]
    with pytest.raises(RuntimeError), metrics_module.fresh_values():
        raise RuntimeError("a step failed")
    ours.update_state(y, logits)
    assert ours.__dict__["_waiting"]["calls"][-1][1] is not logits
