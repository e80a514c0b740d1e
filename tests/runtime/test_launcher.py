"""`migrate run` (python -m migrate.runtime.launch) with 2 real msrun workers on CPU.

The jobs are independent, so they are started together (each with its own port and
log directory, each bounded) and every test waits for its own.
"""

import pytest

from runtime_helpers import PROGRAMS, run_python, start_launch

pytestmark = [pytest.mark.launcher]

JOBS = {
    "ok": ("ok", ["--timeout", "90"]),
    "all_ranks": ("ok", ["--all-ranks", "--timeout", "90"]),
    "exit": ("exit", ["--timeout", "120"]),
    "crash": ("crash", ["--timeout", "120"]),
    "hang": ("hang", ["--timeout", "25"]),
}


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    pytest.importorskip("mindspore")
    tmp = tmp_path_factory.mktemp("launcher")
    stale = tmp / "ok" / "logs"  # a reused log directory: the old worker log must not be replayed
    stale.mkdir(parents=True)
    (stale / "worker_0.log").write_text("stale line from an earlier job\n")
    started = {name: start_launch("ranks.py", mode, tmp_path=tmp, options=options, name=name)
               for name, (mode, options) in JOBS.items()}
    return tmp, {name: job for name, job in started.items()}


def job(jobs, name, wait=150):
    return jobs[1][name].wait(wait)


def test_success_streams_rank_zero_only_and_exits_zero(jobs):
    done = job(jobs, "ok")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["rank 0 of 2 says hello", "rank 0 total 3.0", "rank 0 finished"]  # no stale line
    assert "rank 1 finished" in (jobs[0] / "ok" / "logs" / "worker_1.log").read_text()


def test_all_ranks_are_prefixed(jobs):
    done = job(jobs, "all_ranks")
    assert done.returncode == 0, done.stderr
    lines = set(done.stdout.splitlines())
    assert {"[rank 0] rank 0 finished", "[rank 1] rank 1 finished", "[rank 1] rank 1 total 3.0"} <= lines


@pytest.mark.parametrize("name, code, text", [("exit", 3, "rank 1 exited with code 3"),
                                               ("crash", 1, "RuntimeError: boom on rank 1")])
def test_a_failing_rank_ends_the_job_quickly(jobs, name, code, text):
    done = job(jobs, name)
    assert done.returncode == code, done.stderr
    assert text in done.stderr
    assert "rank 0 finished" not in done.stdout          # rank 0 was stopped while waiting for rank 1
    assert done.seconds < 45, f"took {done.seconds:.0f} s"  # msrun alone waits ~35 s for its scheduler


def test_timeout_names_the_hanging_rank(jobs):
    done = job(jobs, "hang")
    assert done.returncode == 124
    assert "timed out after 25 s" in done.stderr
    assert "rank 1 was still running" in done.stderr
    assert done.seconds < 50


def test_plain_python_runs_as_one_replica():
    completed = run_python(str(PROGRAMS / "ranks.py"), "ok", timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == ["rank 0 of 1 says hello", "rank 0 total 1.0", "rank 0 finished"]
