"""`predict` on 2 processes after `fit` on a BatchNormalization model: TF's MirroredStrategy keeps the
moving statistics per replica and computes each replica's contiguous slice of every global batch
with that replica's own, so every row is predicted with the statistics of the replica TF gives
it to, and every process returns all rows in order (programs/predict_per_replica.py)."""

import json

import numpy as np
import pytest

from runtime_helpers import launch

pytestmark = pytest.mark.launcher


def test_each_row_uses_its_replicas_statistics(tmp_path):
    pytest.importorskip("mindspore")
    job = launch("predict_per_replica.py", str(tmp_path / "out"), tmp_path=tmp_path, options=["--timeout", "150"],
                 timeout=200)
    assert job.returncode == 0, job.stdout + job.stderr
    ranks = [json.loads((tmp_path / "out" / f"{r}.json").read_text()) for r in range(2)]
    assert not np.allclose(ranks[0]["mean"], ranks[1]["mean"]), "the replicas' statistics should differ"
    x = np.asarray(ranks[0]["x"], np.float32)

    def rows(stats):
        normal = (x - np.asarray(stats["mean"])) / np.sqrt(np.asarray(stats["variance"]) + 1e-3)
        return ((normal * np.asarray(stats["gamma"]) + np.asarray(stats["beta"])) @ np.asarray(stats["kernel"])
                + np.asarray(stats["bias"])).ravel()

    want = np.empty(len(x))
    for start in range(0, len(x), 14):
        n = min(14, len(x) - start)
        half = -(-n // 2)
        want[start:start + half] = rows(ranks[0])[start:start + half]
        want[start + half:start + n] = rows(ranks[1])[start + half:start + n]
    for r, got in enumerate(ranks):
        np.testing.assert_allclose(got["predictions"], want, rtol=1e-5, atol=1e-5, err_msg=f"rank {r}")
