"""`migrate.runtime.horovod` under the real launcher (2 CPU processes) against Horovod's documented semantics.

Horovod itself builds against TensorFlow from source and is not installed here, so the
expected numbers are Horovod's formulas computed with numpy from each rank's inputs (see
programs/horovod_battery.py): `Average` = sum * postscale / size after prescale,
`DistributedOptimizer` averages gradients before the step, `BroadcastGlobalVariablesCallback`
broadcasts at the end of the first batch, `MetricAverageCallback` averages `logs` at each
epoch's end, `LearningRateWarmupCallback` ramps from lr / size.
"""

import json

import numpy as np
import pytest

from runtime_helpers import launch

pytestmark = pytest.mark.launcher

SIZE = 2


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    pytest.importorskip("mindspore")
    tmp = tmp_path_factory.mktemp("horovod")
    job = launch("horovod_battery.py", str(tmp / "out"), tmp_path=tmp, options=["--timeout", "150"], timeout=200)
    assert job.returncode == 0, job.stdout + job.stderr
    return [json.loads((tmp / "out" / f"{r}.json").read_text()) for r in range(SIZE)]


def base(r):
    return np.array([1.0, -2.0, 3.5], np.float32) * (r + 1)


def test_job_identity(ranks):
    for r, got in enumerate(ranks):
        assert got["ids"] == [r, SIZE, r, SIZE, True]


@pytest.mark.parametrize("key, expected", [
    ("average", sum(base(r) for r in range(SIZE)) / SIZE),
    ("sum", sum(base(r) for r in range(SIZE))),
    ("average_false", sum(base(r) for r in range(SIZE))),
    ("scaled", sum(base(r) * 0.5 for r in range(SIZE)) * 3.0 / SIZE),
    ("min", np.minimum(base(0), base(1))),
    ("max", np.maximum(base(0), base(1))),
    ("product", base(0) * base(1)),
    ("int_average", np.trunc((np.array([3, 8]) * 2 + 1) / SIZE)),
    ("numpy_average", np.array([2.0, 4.0]) * 3 / SIZE),
    ("broadcast", base(SIZE - 1)),
])
def test_reductions_and_broadcast(ranks, key, expected):
    for got in ranks:
        np.testing.assert_allclose(got[key], expected, rtol=1e-6)


def test_kinds_groups_and_gathers(ranks):
    for got in ranks:
        assert got["numpy_kind"] == "ndarray"  # an array in, an array out
        total = sum(base(r) for r in range(SIZE))
        np.testing.assert_allclose(got["grouped"][0], total, rtol=1e-6)
        np.testing.assert_allclose(got["grouped"][1], 2 * total, rtol=1e-6)
        # first dimensions differ by rank (1 row, then 2), concatenated in rank order
        assert got["allgather"] == [[0.0, 0.0], [1.0, 1.0], [1.0, 1.0]]
        assert got["broadcast_object"] == {"rank": 0, "text": "xxx"}
        assert got["allgather_object"] == [["r", 0, []], ["r", 1, [1]]]
        assert "Adasum is not available" in got["adasum"]
        assert got["run"] == [31, 32]  # every rank's result of func(3, b=1), in rank order
        assert "start the program with `migrate run -n 3 <program>`" in got["run_np"]
        assert got["broadcast_variables"] == [[[1.0] * 3] * 2, [0.0] * 3]  # rank 0's constant 1.0


def test_optimizers(ranks):
    for r, got in enumerate(ranks):
        # no strategy: a plain optimizer steps on this process's own gradient
        np.testing.assert_allclose(got["plain_sgd"], [1.0 - 0.5 * (r + 1), 1.5], rtol=1e-6)
        # DistributedOptimizer reduces in `minimize` and `fit`, not in a direct apply_gradients (Horovod's)
        np.testing.assert_allclose(got["distributed_sgd"], [1.0 - 0.5 * (r + 1), 1.5], rtol=1e-6)
        np.testing.assert_allclose(got["distributed_minimize"], [1.0 - 0.5 * np.mean([q + 1 for q in range(SIZE)])],
                                   rtol=1e-6)
        assert got["optimizer_variables_callable"]
        # backward_passes_per_step=2, averaged: nothing applied after the first call, which still counts a step
        np.testing.assert_allclose(got["passes_0"], [1.0])
        np.testing.assert_allclose(got["passes_1"], [1.0 - 0.5 * ((r + 0) + (r + 1)) / 2], rtol=1e-6)
        assert got["passes_iterations"] == [1, 2]
        # the prescale by 1/4 and postscale by 4 cancel: the average
        np.testing.assert_allclose(got["predivide"][0], sum(base(q) for q in range(SIZE)) / SIZE, rtol=1e-6)


def _data(r):
    x = (np.arange(12, dtype=np.float64).reshape(6, 2) / 10.0) * (r + 1)
    return x, x.sum(axis=1, keepdims=True) * 0.5 + r


def _fit_reference():
    """Two ranks of Horovod's Keras fit: own batches, averaged gradients, rank 0's weights after batch one."""
    weights = [(np.full((2, 1), 0.1 * (r + 1)), np.zeros(1)) for r in range(SIZE)]
    losses = [[0.0, 0.0] for _ in range(SIZE)]
    step = 0
    for epoch in range(2):
        for start in (0, 3):
            grads, batch_losses = [], []
            for r in range(SIZE):
                x, y = _data(r)
                xb, yb = x[start:start + 3], y[start:start + 3]
                w, b = weights[r]
                e = xb @ w + b - yb
                batch_losses.append(np.mean(e ** 2))
                grads.append((2.0 / 3 * xb.T @ e, 2.0 / 3 * e.sum(axis=0)))
            gw = np.mean([g[0] for g in grads], axis=0)
            gb = np.mean([g[1] for g in grads], axis=0)
            weights = [(w - 0.1 * gw, b - 0.1 * gb) for w, b in weights]
            for r in range(SIZE):
                losses[r][epoch] += batch_losses[r] / 2
            if step == 0:
                weights = [weights[0]] * SIZE  # BroadcastGlobalVariablesCallback(0)
            step += 1
    averaged = [np.mean([losses[r][e] for r in range(SIZE)]) for e in range(2)]
    return averaged, weights[0]


def test_keras_fit(ranks):
    losses, (w, b) = _fit_reference()
    for r, got in enumerate(ranks):
        np.testing.assert_allclose(got["fit_loss"], losses, rtol=1e-5)
        np.testing.assert_allclose(got["fit_weights"][0], w, rtol=1e-5)
        np.testing.assert_allclose(got["fit_weights"][1], b, rtol=1e-5)
        # without MetricAverageCallback the loss is this process's own, on its whole batch (no split)
        x, y = _data(r)
        np.testing.assert_allclose(got["local_fit_loss"], [np.mean(y ** 2)], rtol=1e-5)


def test_load_model_distributes_the_optimizer_again(ranks):
    for got in ranks:
        assert got["loaded_optimizer"] == "DistributedSGD"
        # the loaded copy's next epoch, gradients averaged across ranks, equals the saved model's
        assert got["loaded_trains_as_saved"] == [True, True]


def test_learning_rate_warmup(ranks):

    expected = [0.2 / SIZE * ((epoch + 1) * (SIZE - 1) / 2 + 1) for epoch in range(2)] + [0.2]
    for got in ranks:
        np.testing.assert_allclose(got["warmup_lr"], expected, rtol=1e-6)
        assert got["momentum_after"] == 0.9  # corrected for each batch, restored after it
