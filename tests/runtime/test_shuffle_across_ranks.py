"""An unseeded shuffle under `experimental_distribute_dataset` is one order on every process
(2 CPU processes under the real launcher): each global batch is split from the same shuffled
sequence, so every epoch sees every example once, as TF's one pipeline does."""

import json

import pytest

from runtime_helpers import launch

pytestmark = pytest.mark.launcher


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    pytest.importorskip("mindspore")
    tmp = tmp_path_factory.mktemp("shuffle")
    job = launch("shuffled_split.py", str(tmp / "out"), tmp_path=tmp, options=["--timeout", "150"], timeout=200)
    assert job.returncode == 0, job.stdout + job.stderr
    return [json.loads((tmp / "out" / f"{r}.json").read_text()) for r in range(2)]


@pytest.mark.parametrize("pipeline", ["first", "second"])
def test_every_epoch_sees_every_example_once_split_as_tf_splits(ranks, pipeline):
    zero, one = ranks[0][pipeline], ranks[1][pipeline]
    for epoch in range(2):
        steps = [a + b for a, b in zip(zero[epoch], one[epoch])]
        assert [len(s) for s in steps] == [8, 8, 4]
        assert [len(a) for a in zero[epoch]] == [4, 4, 2]  # (each process its contiguous half)
        assert sorted(i for s in steps for i in s) == list(range(20))
    assert zero[0] != zero[1], "each epoch reshuffles"


def test_two_unseeded_pipelines_draw_different_orders(ranks):
    assert ranks[0]["first"] != ranks[0]["second"]
