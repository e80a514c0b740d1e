"""Two nodes on one host, and the multi-worker input split against real TensorFlow workers.

Three jobs run at once, each with its own ports and log directories and a bounded wait:

* TensorFlow: two processes with TF_CONFIG on loopback ports, MultiWorkerMirroredStrategy
  with one CPU each (programs/tf_multiworker.py);
* the shim as two nodes from flags: two `migrate run --nnodes 2 --node-rank {0,1} -n 1
  --master-addr 127.0.0.1 --master-port P` (programs/multiworker.py);
* the shim as two nodes from TF_CONFIG: two `migrate run -n 1` whose TF_CONFIG lists two
  workers (the launcher makes them nodes, the first worker the master).

Every rank of both shim jobs must see, step by step, what the TF worker with its index
sees, and all-reduce to TF's numbers.
"""

import json
import sys

import pytest

from runtime_helpers import PROGRAMS, free_port, start_launch, start_python

sys.path.insert(0, str(PROGRAMS))
from multiworker_cases import FROMFN_CASES, SPLIT_CASES  # noqa: E402

pytestmark = pytest.mark.launcher

WAIT = 150


def tf_config(ports, index):
    return json.dumps({"cluster": {"worker": [f"127.0.0.1:{p}" for p in ports]},
                       "task": {"type": "worker", "index": index}})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    pytest.importorskip("mindspore")
    tmp = tmp_path_factory.mktemp("multiworker")
    jobs = {}
    if _has_tensorflow():
        ports = [free_port(), free_port()]
        jobs["tf"] = [start_python(str(PROGRAMS / "tf_multiworker.py"), str(tmp / "tf"), log_dir=tmp / f"tf{k}",
                                   env={"TF_CONFIG": tf_config(ports, k), "TF_CPP_MIN_LOG_LEVEL": "2",
                                        "PYTHONPATH": f"{PROGRAMS}"})
                      for k in range(2)]
    port = free_port()
    jobs["flags"] = [start_launch("multiworker.py", str(tmp / "flags"), tmp_path=tmp, nproc=1, master_port=port,
                                  name=f"flags{k}",
                                  options=["--nnodes", "2", "--node-rank", str(k), "--master-addr", "127.0.0.1",
                                           "--all-ranks", "--timeout", "120"])
                     for k in range(2)]
    ports = [free_port(), free_port()]
    jobs["tf_config"] = [start_launch("multiworker.py", str(tmp / "tf_config"), tmp_path=tmp, nproc=1,
                                      master_port=0, name=f"tfconfig{k}",
                                      options=["--all-ranks", "--timeout", "120"],
                                      env={"TF_CONFIG": tf_config(ports, k)})
                         for k in range(2)]
    done = {name: [job.wait(WAIT) for job in pair] for name, pair in jobs.items()}
    results = {}
    for name, pair in done.items():
        for k, job in enumerate(pair):
            assert job.returncode == 0, f"{name} {k}: {job.returncode}\n{job.stdout[-2000:]}\n{job.stderr[-3000:]}"
        results[name] = [json.loads((tmp / name / f"{k}.json").read_text()) for k in range(2)]
    results["jobs"] = done
    return results


def _has_tensorflow() -> bool:
    import importlib.util

    return importlib.util.find_spec("tensorflow") is not None


@pytest.fixture(scope="module")
def tf_runs(runs):
    if "tf" not in runs:
        pytest.skip("TensorFlow not installed")
    return runs["tf"]


@pytest.mark.parametrize("launched_by", ["flags", "tf_config"])
def test_two_nodes_on_loopback_complete_a_real_all_reduce(runs, launched_by):
    for k, (rank, job) in enumerate(zip(runs[launched_by], runs["jobs"][launched_by])):
        assert rank["all_reduce"] == [3.0, 6.0, 9.0]    # (1 + 2) * [1, 2, 3]
        assert rank["replicas"] == 2
        assert rank["node"] == ["2", str(k)]             # MIGRATE_NNODES, MIGRATE_NODE_RANK
        assert f"[rank {k}] shim rank {k} done" in job.stdout.splitlines()


def test_tf_config_pair_reports_its_task(runs):
    assert [rank["resolver"] for rank in runs["tf_config"]] == [["worker", 0], ["worker", 1]]
    assert [rank["resolver"] for rank in runs["flags"]] == [[None, None], [None, None]]  # TF: no TF_CONFIG


KEYS = ([f"split_{n}_{b}" for n, b in SPLIT_CASES] + [f"sum_{n}_{b}" for n, b in SPLIT_CASES]
        + [f"fromfn_{n}_{b}_{shard}" for n, b, shard in FROMFN_CASES] + ["ctx", "replicas", "all_reduce"])


@pytest.mark.parametrize("launched_by", ["flags", "tf_config"])
@pytest.mark.parametrize("key", KEYS)
def test_each_worker_sees_what_the_tensorflow_worker_sees(runs, tf_runs, launched_by, key):
    for k in range(2):
        assert runs[launched_by][k][key] == tf_runs[k][key], f"worker {k}"
