"""`migrate run` (python -m migrate.runtime.launch) with 2 real msrun workers on CPU.

The jobs are independent, so they are started together (each with its own port and
log directory, each bounded) and every test waits for its own. The jobs ended from
outside (signals to the launcher, SIGKILL included), the one fed on standard input and
the ones that fail at import start together too, once the first group has finished.
"""

import argparse
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from migrate.runtime import launch
from runtime_helpers import (PROGRAMS, REPO, Job, Running, group_members, job_processes, job_workers, run_python,
                             start_launch, wait_until)

pytestmark = [pytest.mark.launcher, pytest.mark.exclusive]  # wall-time bounds: run alone (scripts/test.sh)

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
    # From rank 1's end (its log's last write, just before it exits) to the launcher's: msrun alone waits
    # ~35 s for its scheduler. Start-up is left out: five jobs start at once on two cores, and how long
    # they take to come up says nothing about how fast a failure ends a job.
    rank_1_ended = (jobs[0] / name / "logs" / "worker_1.log").stat().st_mtime
    assert done.ended - rank_1_ended < 20, f"the job ended {done.ended - rank_1_ended:.0f} s after rank 1"


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


# --- ended from outside; standard input; failures at import ---------------------------------------

STDIN = b"first line\nsecond line\n"
LINGER = 5.0           # for SIGKILLed processes to be gone once their launcher has returned
AFTER_SIGNAL = 15.0    # signal to launcher exit: the ranks' grace (5 s) plus msrun's (1 s), with room


def _both_started(job) -> bool:
    return set(job.workers_seen.values()) == {0, 1}


def _both_sleeping(job) -> bool:
    return all(f"rank {rank} sleeping" in job.worker_log(rank) for rank in (0, 1))


# name: (program, its argument, signal to the launcher and when; None: the job ends by itself)
OUTSIDE = {
    "sigterm": ("ranks.py", "sleep", signal.SIGTERM, _both_sleeping),
    "sighup": ("ranks.py", "sleep", signal.SIGHUP, _both_started),   # early: the ranks still start up
    "sigint": ("ranks.py", "sleep", signal.SIGINT, _both_sleeping),
    "sigkill": ("ranks.py", "sleep", signal.SIGKILL, _both_sleeping),
    "stdin": ("ranks.py", "stdin", None, None),
    **{f"import_error{k}": ("import_error.py", None, None, None) for k in range(3)},
}


@dataclass
class Outside:
    name: str
    log_dir: Path
    running: Running
    signum: int | None
    ready: object
    workers_seen: dict = field(default_factory=dict)  # pid -> rank, while it ran
    signalled_at: float | None = None
    job: Job | None = None
    ended_at: float | None = None
    survivors: list | None = None       # its processes still alive LINGER s after the launcher returned
    group_left: list | None = None      # live processes left in the launcher's process group

    def worker_log(self, rank: int) -> str:
        path = self.log_dir / f"worker_{rank}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def step(self) -> None:
        if self.job is not None:
            return
        if self.running.process.poll() is None:
            if self.signum is not None and self.signalled_at is None:
                self.workers_seen.update(job_workers(self.log_dir))
                if self.ready(self):
                    os.kill(self.running.process.pid, self.signum)  # the launcher alone, as a process manager would
                    self.signalled_at = time.monotonic()
            return
        self.finish()

    def finish(self) -> None:
        self.job = self.running.wait(5)  # the launcher has exited (or is killed now: a failure)
        self.ended_at = time.monotonic()
        wait_until(lambda: not job_processes(self.log_dir), LINGER)
        self.survivors = job_processes(self.log_dir)
        self.group_left = group_members(self.running.process.pid)  # start_new_session: its pid is its group

    def report(self) -> str:
        return f"{self.name}: exit {self.job.returncode}\nstdout:\n{self.job.stdout}\nstderr:\n{self.job.stderr}"


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    pytest.importorskip("mindspore")
    tmp = tmp_path_factory.mktemp("outside")
    jobs = {}
    for name, (program, argument, signum, ready) in OUTSIDE.items():
        running = start_launch(program, *([argument] if argument else []), tmp_path=tmp, name=name,
                               options=["--timeout", "120"], stdin=STDIN if name == "stdin" else None)
        jobs[name] = Outside(name, tmp / name / "logs", running, signum, ready)
    try:
        deadline = time.monotonic() + 150
        while any(job.job is None for job in jobs.values()) and time.monotonic() < deadline:
            for job in jobs.values():
                job.step()
            time.sleep(0.1)
        for job in jobs.values():
            if job.job is None:
                job.finish()
        yield jobs
    finally:
        for job in jobs.values():  # never leave a process behind, even when a test failed
            for line in job_processes(job.log_dir):
                try:
                    os.kill(int(line.split()[0]), signal.SIGKILL)
                except OSError:
                    pass


def check_nothing_left(job: Outside) -> None:
    assert _both_started(job) or job.signum is None, f"{job.name}: workers were never seen: {job.workers_seen}"
    assert job.survivors == [], f"processes of {job.name} still alive: {job.survivors}"
    assert job.group_left == [], f"left in the launcher's process group: {job.group_left}"


@pytest.mark.parametrize("name", ["sigterm", "sighup", "sigint"])
def test_a_signal_to_the_launcher_stops_every_rank_and_says_so(outside, name):
    job = outside[name]
    assert job.signalled_at is not None, job.report()
    assert job.job.returncode == 128 + job.signum, job.report()
    assert job.job.stderr.splitlines() == [f"migrate run: received {signal.Signals(job.signum).name}; "
                                           "all ranks stopped"], job.report()
    assert job.ended_at - job.signalled_at < AFTER_SIGNAL, f"took {job.ended_at - job.signalled_at:.1f} s"
    check_nothing_left(job)


def test_the_ranks_get_the_signal_itself_before_anything_is_killed(outside):
    job = outside["sigterm"]
    for rank in (0, 1):  # ranks.py's handler: prints, then exits
        assert f"rank {rank} received SIGTERM" in job.worker_log(rank), job.worker_log(rank)[-2000:]
    assert "rank 0 received SIGTERM" in job.job.stdout  # rank 0's last words were still streamed


def test_a_launcher_killed_outright_takes_every_process_of_its_job_with_it(outside):
    job = outside["sigkill"]
    assert job.signalled_at is not None, job.report()
    assert job.job.returncode == -signal.SIGKILL, job.report()
    check_nothing_left(job)


def test_standard_input_goes_to_rank_zero_only(outside):
    job = outside["stdin"]
    assert job.job.returncode == 0, job.report()
    assert f"rank 0 read {len(STDIN)} bytes" in job.job.stdout.splitlines(), job.report()
    assert {"rank 0 got 'first line'", "rank 0 got 'second line'"} <= set(job.job.stdout.splitlines())
    assert "rank 1 read 0 bytes" in job.worker_log(1).splitlines(), job.worker_log(1)[-2000:]
    check_nothing_left(job)


@pytest.mark.parametrize("name", [f"import_error{k}" for k in range(3)])
def test_ranks_that_fail_at_import_are_named_every_time(outside, name):
    job = outside[name]
    assert job.job.returncode == 1, job.report()
    # Each rank is named with its error, or, when the first failure stopped it before it
    # reached its own import (a loaded machine), covered by "the other ranks were stopped".
    named = [rank for rank in (0, 1)
             if (f"migrate run: rank {rank} exited with code 1: ModuleNotFoundError: No module named "
                 "'migrate_test_module_that_does_not_exist'\n") in job.job.stderr]
    assert named, job.report()
    assert len(named) == 2 or "migrate run: the other ranks were stopped." in job.job.stderr, job.report()
    assert "msrun failed" not in job.job.stderr and "RuntimeError" not in job.job.stderr, job.report()
    check_nothing_left(job)


def test_a_program_that_does_not_compile_is_refused_before_anything_starts(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import os\n\n\ndef main(:\n    pass\n")
    log_dir = tmp_path / "logs"
    completed = subprocess.run([sys.executable, "-m", "migrate.runtime.launch", "-n", "2", "--log-dir", str(log_dir),
                                str(script)], capture_output=True, text=True, timeout=60, cwd=REPO,
                               env={**os.environ, "PYTHONPATH": str(REPO)})
    assert completed.returncode == 2, completed.stderr
    assert completed.stderr == f"migrate run: {script}:4:10: SyntaxError: invalid syntax\n"
    assert not log_dir.exists()  # nothing was started


@pytest.mark.parametrize("option, value, message", [
    ("--timeout", "-1", "must be a positive number of seconds, got '-1'"),
    ("--timeout", "0", "must be a positive number of seconds, got '0'"),
    ("--timeout", "nan", "must be a positive number of seconds, got 'nan'"),
    ("--timeout", "inf", "must be a positive number of seconds, got 'inf'"),
    ("-n", "0", "must be at least 1, got '0'"),
    ("--nnodes", "0", "must be at least 1, got '0'"),
    ("--node-rank", "-1", "must be 0 or more, got '-1'"),
    ("--master-port", "0", "must be a port number from 1 to 65535, got '0'"),
    ("--master-port", "65536", "must be a port number from 1 to 65535, got '65536'"),
    ("--nnodes", "two", "must be a whole number, got 'two'"),
])
def test_bad_numbers_are_refused_naming_the_option(option, value, message, capsys):
    parser = argparse.ArgumentParser(prog="migrate run")
    launch.add_arguments(parser)
    with pytest.raises(SystemExit) as exited:
        parser.parse_args([option, value, str(PROGRAMS / "ranks.py")])
    assert exited.value.code == 2
    name = "-n/--nproc-per-node/--nproc" if option == "-n" else option
    assert capsys.readouterr().err.splitlines()[-1] == f"migrate run: error: argument {name}: {message}"


def test_help_says_where_standard_input_goes():
    parser = argparse.ArgumentParser(prog="migrate run")
    launch.add_arguments(parser)
    assert "Standard input goes to rank 0" in parser.format_help()
