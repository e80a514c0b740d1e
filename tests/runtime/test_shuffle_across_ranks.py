"""Unseeded random orders of examples are one order in every process (2 CPU processes under the
real launcher): each global batch is split from the same sequence, so every epoch sees every
example once, as TF's one pipeline does (see migrate/runtime/orders.py). Keras's utilities
draw from numpy's global generator, which `init()` seeds alike where the program left it untouched."""

import json
import subprocess
import sys

import pytest

from runtime_helpers import REPO, launch

pytestmark = pytest.mark.launcher


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    pytest.importorskip("mindspore")
    tmp = tmp_path_factory.mktemp("shuffle")
    job = launch("shuffled_split.py", str(tmp / "out"), tmp_path=tmp, options=["--timeout", "150"], timeout=200)
    assert job.returncode == 0, job.stdout + job.stderr
    return [json.loads((tmp / "out" / f"{r}.json").read_text()) for r in range(2)]


@pytest.mark.parametrize("pipeline, examples, batch", [
    ("first", 20, 8), ("second", 20, 8),
    ("files", 12, 4),
])
def test_every_epoch_sees_every_example_once_split_as_tf_splits(ranks, pipeline, examples, batch):
    zero, one = ranks[0][pipeline], ranks[1][pipeline]
    for epoch in range(2):
        steps = [a + b for a, b in zip(zero[epoch], one[epoch])]
        assert all(len(a) == batch // 2 for a in zero[epoch][:-1])  # (each process its contiguous half)
        assert sorted(i for s in steps for i in s) == list(range(examples))
    assert ranks[0]["first"][0] != ranks[0]["first"][1], "each epoch reshuffles"


def test_two_unseeded_pipelines_draw_different_orders(ranks):
    assert ranks[0]["first"] != ranks[0]["second"]


def test_an_unseeded_image_generator_permutes_alike_in_every_process(ranks):
    assert ranks[0]["flow"] == ranks[1]["flow"]
    assert sorted(v for b in ranks[0]["flow"] for v in b) == list(range(20))


ONE_PROCESS = '''
import json, sys
import numpy as np
from migrate.runtime import tfdata
order = lambda: [int(v) for v in tfdata.Dataset.from_tensor_slices(np.arange(10)).shuffle(10).as_numpy_iterator()]
if sys.argv[1] == "seeded":
    import mindspore as ms
    ms.set_seed(5)
print(json.dumps([order(), order()]))
'''


def _one_process(mode: str, env: dict) -> list:
    proc = subprocess.run([sys.executable, "-c", ONE_PROCESS, mode], capture_output=True, text=True, timeout=120,
                          cwd=REPO, env={**env, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_outside_a_launched_run_an_unseeded_order_is_fresh_and_a_global_seed_repeats_it():
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("MIGRATE_RUN_SEED", "MS_SCHED_PORT")}
    assert _one_process("plain", env) != _one_process("plain", env)  # (fresh entropy: 10! orders)
    seeded = _one_process("seeded", env)
    assert seeded == _one_process("seeded", env)  # (as TF's shuffle repeats under tf.random.set_seed)
    assert seeded[0] != seeded[1]  # (two pipelines, two orders)
    shared = {**env, "MIGRATE_RUN_SEED": "12345"}
    assert _one_process("plain", shared) == _one_process("plain", shared)


@pytest.fixture(scope="module")
def generators(tmp_path_factory):
    pytest.importorskip("mindspore")
    tmp = tmp_path_factory.mktemp("generators")
    out = {}
    for mode in ("untouched", "seeded", "drawn", "horovod"):
        job = launch("global_generators.py", mode, str(tmp / mode), tmp_path=tmp / f"job-{mode}",
                     options=["--timeout", "120"], timeout=180)
        assert job.returncode == 0, job.stdout + job.stderr
        out[mode] = [json.loads((tmp / mode / f"{r}.json").read_text()) for r in range(2)]
    return out


def test_init_gives_untouched_global_generators_one_stream_in_every_process(generators):
    zero, one = generators["untouched"]
    assert zero == one


def test_a_programs_own_seed_stands(generators):
    import random

    import numpy as np

    python = random.Random(42)  # (what the global generators draw after `seed(42)`, without reseeding this process's)
    expected = {"numpy": np.random.RandomState(42).rand(3).tolist(), "python": [python.random() for _ in range(3)]}
    assert generators["seeded"] == [expected, expected]


@pytest.mark.parametrize("mode", ["drawn", "horovod"])
def test_generators_already_drawn_from_or_under_horovod_stay_each_processs_own(generators, mode):
    zero, one = generators[mode]
    assert zero["numpy"] != one["numpy"]
