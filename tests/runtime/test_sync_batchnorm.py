"""`BatchNormalization(synchronized=True)` on 2 processes under the launcher is Keras's synchronized
batch normalization: each replica's output and input gradient are those of one layer over the
whole global batch (its rows), gamma's and beta's gradients add up to the whole batch's, and
every replica's moving statistics move by the global batch's (programs/sync_batchnorm.py); so does a
subclass whose own `_moments` (Keras 2's or Keras 3's hook) averages the replicas' moments with
`spmd.cross_replica_sum` (TFD309)."""

import json

import numpy as np
import pytest

from runtime_helpers import launch

pytestmark = pytest.mark.launcher

SIZE = 2


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    pytest.importorskip("mindspore")
    tmp = tmp_path_factory.mktemp("sync_bn")
    job = launch("sync_batchnorm.py", str(tmp / "out"), tmp_path=tmp, options=["--timeout", "150"], timeout=200)
    assert job.returncode == 0, job.stdout + job.stderr
    return [json.loads((tmp / "out" / f"{r}.json").read_text()) for r in range(SIZE)]


def close(ours, want, what):
    np.testing.assert_allclose(np.asarray(ours), np.asarray(want), rtol=2e-5, atol=2e-5, err_msg=what)


@pytest.mark.parametrize("case", ["dense", "images", "keras2_hook", "keras3_hook"])
def test_each_replica_computes_the_global_batchs_normalization(ranks, case):
    for r, got in enumerate(ranks):
        assert got["size"] == SIZE
        start, stop = got[case + "_rows"]
        whole = got[case + "_whole"]
        close(got[case]["y"], np.asarray(whole["y"])[start:stop], f"rank {r} {case} output")
        close(got[case]["dx"], np.asarray(whole["dx"])[start:stop], f"rank {r} {case} input gradient")
        close(got[case]["moving_mean"], whole["moving_mean"], f"rank {r} {case} moving mean")
        close(got[case]["moving_variance"], whole["moving_variance"], f"rank {r} {case} moving variance")


@pytest.mark.parametrize("case", ["dense", "images", "keras2_hook", "keras3_hook"])
def test_the_replicas_weight_gradients_sum_to_the_global_batchs(ranks, case):
    whole = ranks[0][case + "_whole"]
    for weight in ("dgamma", "dbeta"):
        close(sum(np.asarray(got[case][weight]) for got in ranks), whole[weight], f"{case} {weight}")
