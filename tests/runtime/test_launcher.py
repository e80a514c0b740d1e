"""`migrate run` (python -m migrate.runtime.launch) with 2 real msrun workers on CPU."""

import pytest

from runtime_helpers import PROGRAMS, launch, run_python

pytestmark = [pytest.mark.launcher, pytest.mark.usefixtures("needs_mindspore")]


@pytest.fixture(scope="module")
def needs_mindspore():
    pytest.importorskip("mindspore")


def test_success_streams_rank_zero_only_and_exits_zero(tmp_path):
    job = launch("ranks.py", "ok", tmp_path=tmp_path, options=["--timeout", "90"])
    assert job.returncode == 0, job.stderr
    assert job.stdout.splitlines() == ["rank 0 of 2 says hello", "rank 0 total 3.0", "rank 0 finished"]
    assert "rank 1 finished" in (tmp_path / "logs" / "worker_1.log").read_text()


def test_all_ranks_are_prefixed(tmp_path):
    job = launch("ranks.py", "ok", tmp_path=tmp_path, options=["--all-ranks", "--timeout", "90"])
    assert job.returncode == 0, job.stderr
    lines = set(job.stdout.splitlines())
    assert {"[rank 0] rank 0 finished", "[rank 1] rank 1 finished", "[rank 1] rank 1 total 3.0"} <= lines


@pytest.mark.parametrize("mode, code, text", [("exit", 3, "rank 1 exited with code 3"),
                                               ("crash", 1, "RuntimeError: boom on rank 1")])
def test_a_failing_rank_ends_the_job_quickly(tmp_path, mode, code, text):
    job = launch("ranks.py", mode, tmp_path=tmp_path, options=["--timeout", "120"])
    assert job.returncode == code
    assert text in job.stderr
    assert "rank 0 finished" not in job.stdout          # rank 0 was stopped while waiting for rank 1
    assert job.seconds < 40, f"took {job.seconds:.0f} s"   # msrun alone waits ~35 s for its scheduler


def test_timeout_names_the_hanging_rank(tmp_path):
    job = launch("ranks.py", "hang", tmp_path=tmp_path, options=["--timeout", "25"])
    assert job.returncode == 124
    assert "timed out after 25 s" in job.stderr
    assert "rank 1 was still running" in job.stderr
    assert job.seconds < 45


def test_plain_python_runs_as_one_replica():
    completed = run_python(str(PROGRAMS / "ranks.py"), "ok", timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == ["rank 0 of 1 says hello", "rank 0 total 1.0", "rank 0 finished"]
