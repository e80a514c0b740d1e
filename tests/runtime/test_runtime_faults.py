"""Fault battery: `migrate run -n 2` when one rank goes wrong in the middle of a job.

Every case is a real job of 2 msrun workers under the launcher's command line (`python -m
migrate run`), running the program below through the migrate.runtime shim:

* raise     - rank 1 raises ValueError("boom at step 3") after two all-reduce steps;
* exit      - rank 1 calls sys.exit(3) there; os_exit: os._exit(4) (no clean-up at all);
* hang      - rank 1 sleeps for good while rank 0 waits in the step-3 all-reduce; the job has
              `--timeout 35` (MindSpore's own collective timeout raised out of the way);
* hang_ms   - the same hang with no --timeout: MindSpore's CPU collective on rank 0 gives up
              (MS_CPU_COMM_OP_TIMEOUT, shortened to 5 s here; 30 s by default) and rank 0 fails,
              yet the report must name rank 1, the rank that hung, as the likely cause;
* shape     - at step 5, once the loop's all-reduce is predicted (checked in-band, see
              collectives), rank 0 all-reduces shape (4,) and rank 1 shape (5,).

For each: the whole job ends within a bound (wall time, and time from the fault to the end),
its exit code is the documented one, the launcher's report on stderr names the failing rank
and the cause, rank 0 never got past the fault (it was stopped, it did not finish), and no
process of the job (launcher, msrun, scheduler, workers: all carry a per-job tag in their
environment) is alive afterwards. The jobs are independent, so they run at the same time, each
with its own port and log directory; the hang job, the one bounded by a wall-time --timeout,
starts first and the others once its rank 1 has reached the fault, so that the time its ranks
take to start does not depend on five other jobs starting beside them.
"""

from __future__ import annotations

import re
import signal
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import psutil  # a test dependency (and MindSpore's): the leftover-process checks must run, never skip
import pytest

from migrate.runtime import launch
from runtime_helpers import Job, Running, free_port

pytestmark = pytest.mark.exclusive  # wall-time bounds: run alone (scripts/test.sh)

PROGRAM = '''\
"""Fault program for test_runtime_faults.py: `faults.py MODE`; rank 1 misbehaves at step 3 (shape: step 5)."""
import os
import sys
import time

import numpy as np

import migrate.runtime as tfd
from migrate.runtime import collectives

mode = sys.argv[1]
r = tfd.rank()
print(f"rank {r} of {tfd.group_size()} ready", flush=True)


def fault(what):
    print(f"rank {r} fault {what} at {time.time():.3f}", flush=True)


for step in range(1, 8):
    if r == 1 and step == 3 and mode != "shape":
        fault(mode)
        if mode == "raise":
            raise ValueError("boom at step 3")
        if mode == "exit":
            sys.exit(3)
        if mode == "os_exit":
            os._exit(4)
        if mode in ("hang", "hang_ms"):
            time.sleep(3600)
    shape = (4,)
    if mode == "shape" and step == 5:
        # Steps 1-3 agreed first; from step 4 the sum is predicted and checked in-band (collectives).
        print(f"rank {r} agreement rounds before step 5: {collectives.world().agreement_rounds}", flush=True)
        fault("shape")
        shape = (4 + r,)
    total = tfd.all_reduce("sum", np.full(shape, r + 1, np.float32))
    print(f"rank {r} step {step} total {total.tolist()}", flush=True)
print(f"rank {r} finished", flush=True)
'''

HANG_TIMEOUT = 35          # rank 1 reaches its fault ~8 s into the job (it starts alone, see the fixture)
WALL_LIMIT = 60.0          # every job, start to end
AFTER_FAULT_LIMIT = 12.0   # from the fault to the end of the job (MindSpore's own give-up: +5 s)

SAFETY = ["--timeout", "90"]  # only a broken launcher gets there (and the tests then fail on 124)

# name: (mode, launcher options, extra environment)
JOBS = {
    "raise": ("raise", SAFETY, {}),
    "exit": ("exit", SAFETY, {}),
    "os_exit": ("os_exit", SAFETY, {}),
    "hang": ("hang", ["--timeout", str(HANG_TIMEOUT)], {"MS_CPU_COMM_OP_TIMEOUT": "600"}),
    "hang_ms": ("hang_ms", [], {"MS_CPU_COMM_OP_TIMEOUT": "5"}),  # bounded by MindSpore (and the fixture)
    "shape": ("shape", SAFETY, {}),
}


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _describe(proc) -> str:
    try:
        return f"{proc.pid} {' '.join(proc.cmdline())[:120]}"
    except psutil.Error:
        return str(proc.pid)


def _tagged(tag: str) -> list:
    """Live processes (not zombies) whose environment carries `tag`."""
    found = []
    for proc in psutil.process_iter(["pid"]):
        try:
            if proc.environ().get("MIGRATE_FAULT_TEST_TAG") == tag and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.Error:
            continue
    return found


@dataclass
class Fault:
    name: str
    log_dir: Path
    tag: str
    running: Running
    job: Job | None = None
    ended_at: float | None = None                 # time.time() when the launcher exited
    workers_seen: dict = field(default_factory=dict)  # pid -> rank, of workers seen while it ran
    survivors: list | None = None                 # "pid cmdline" of its processes alive LINGER s after the end

    def worker_log(self, rank: int) -> str:
        path = self.log_dir / f"worker_{rank}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def fault_time(self) -> float:
        match = re.search(r"^rank 1 fault \w+ at ([\d.]+)$", self.worker_log(1), re.M)
        assert match, f"rank 1 never reached its fault:\n{self.worker_log(1)[-2000:]}\n{self.job.stderr}"
        return float(match[1])


def _sample(faults: list) -> None:
    by_tag = {f.tag: f for f in faults if f.job is None}
    for proc in psutil.process_iter(["pid"]):
        try:
            env = proc.environ()
        except psutil.Error:
            continue
        fault = by_tag.get(env.get("MIGRATE_FAULT_TEST_TAG"))
        if fault is not None and env.get("MS_ROLE") == "MS_WORKER" and env.get("MS_NODE_ID", "").isdigit():
            fault.workers_seen[proc.pid] = int(env["MS_NODE_ID"])


LINGER = 5.0  # seconds a SIGKILLed process may take to be gone after the launcher returned


def _finish(fault: Fault) -> None:
    fault.ended_at = time.time()
    fault.job = fault.running.wait(5)  # the launcher has exited (or is killed now): returns at once


def _settle(fault: Fault, final: bool = False) -> None:
    """Record the job's processes still alive, once none is left or LINGER s after the end."""
    if fault.job is None or fault.survivors is not None:
        return
    while True:
        left = _tagged(fault.tag)
        if not left or time.time() - fault.ended_at > LINGER:
            fault.survivors = [_describe(p) for p in left if _alive(p.pid)]
            return
        if not final:
            return  # look again on the next round, without holding up the other jobs
        time.sleep(0.2)


@pytest.fixture(scope="module")
def faults(tmp_path_factory):
    pytest.importorskip("mindspore")
    tmp = tmp_path_factory.mktemp("faults")
    program = tmp / "faults.py"
    program.write_text(PROGRAM)
    started = {}

    def start(name: str) -> Fault:
        mode, options, env = JOBS[name]
        log_dir = tmp / name / "logs"
        tag = f"{name}-{uuid.uuid4().hex}"
        command = [sys.executable, "-m", "migrate", "run", "-n", "2", "--master-port", str(free_port()),
                   "--log-dir", str(log_dir), *options, str(program), mode]
        started[name] = Fault(name, log_dir, tag,
                              Running(command, tmp / name, env={**env, "MIGRATE_FAULT_TEST_TAG": tag}))
        return started[name]

    try:
        # The hang job first, alone until its rank 1 sleeps in the fault (or has ended: its test
        # then says why); the others then start beside its idle ranks.
        hang = start("hang")
        deadline = time.monotonic() + HANG_TIMEOUT
        while (time.monotonic() < deadline and hang.running.process.poll() is None
               and "rank 1 fault hang at" not in hang.worker_log(1)):
            _sample([hang])
            time.sleep(0.2)
        for name in JOBS:
            if name not in started:
                start(name)
        deadline = time.monotonic() + 150  # far beyond WALL_LIMIT: a hung launcher fails, not the suite
        while any(f.job is None for f in started.values()) and time.monotonic() < deadline:
            _sample(list(started.values()))
            for fault in started.values():
                if fault.job is None and fault.running.process.poll() is not None:
                    _finish(fault)
                _settle(fault)
            time.sleep(0.2)
        for fault in started.values():
            if fault.job is None:
                _finish(fault)  # Running.wait kills the launcher's session after its timeout
            _settle(fault, final=True)
        yield started
    finally:
        for fault in started.values():  # never leave a process behind, even when a test failed
            for proc in _tagged(fault.tag):
                try:
                    proc.send_signal(signal.SIGKILL)
                except psutil.Error:
                    pass


def check_ended_cleanly(fault: Fault, code: int, *, after_fault: float = AFTER_FAULT_LIMIT,
                        fault_step: int = 3) -> None:
    """Bounded, the documented exit code, rank 0 stopped before finishing, nothing left alive."""
    job = fault.job
    report = f"stdout:\n{job.stdout}\nstderr:\n{job.stderr}"
    assert job.returncode == code, report
    assert job.seconds < WALL_LIMIT, f"{fault.name} took {job.seconds:.1f} s\n{report}"
    assert fault.ended_at - fault.fault_time() < after_fault, \
        f"{fault.name} ended {fault.ended_at - fault.fault_time():.1f} s after the fault\n{report}"
    # The check below is not vacuous: both workers were seen alive, by the same environment tag.
    assert set(fault.workers_seen.values()) == {0, 1}, fault.workers_seen
    assert fault.survivors == [], f"processes of {fault.name} still alive: {fault.survivors}"
    assert not [pid for pid in fault.workers_seen if _alive(pid)], fault.workers_seen
    assert "rank 0 finished" not in job.stdout and f"rank 0 step {fault_step} " not in job.stdout, report


@pytest.mark.launcher
def test_a_rank_that_raises_mid_step_ends_the_job_and_is_named_with_its_exception(faults):
    fault = faults["raise"]
    check_ended_cleanly(fault, 1)
    assert "rank 0 step 2 total [3.0, 3.0, 3.0, 3.0]" in fault.job.stdout  # two steps did run
    assert "migrate run: rank 1 exited with code 1: ValueError: boom at step 3" in fault.job.stderr
    assert "rank 0 exited" not in fault.job.stderr  # rank 0 was a victim, not a cause


@pytest.mark.launcher
@pytest.mark.parametrize("name, code", [("exit", 3), ("os_exit", 4)])
def test_a_rank_that_exits_early_ends_the_job_with_its_exit_code(faults, name, code):
    fault = faults[name]
    check_ended_cleanly(fault, code)
    assert "rank 0 step 2 total [3.0, 3.0, 3.0, 3.0]" in fault.job.stdout
    assert f"migrate run: rank 1 exited with code {code}\n" in fault.job.stderr
    assert "rank 0 exited" not in fault.job.stderr


@pytest.mark.launcher
def test_a_hung_rank_is_named_when_the_timeout_ends_the_job(faults):
    fault = faults["hang"]
    # From the fault: whatever of the timeout was left, plus the stack dumps and the kill.
    check_ended_cleanly(fault, 124, after_fault=HANG_TIMEOUT + 8)
    assert HANG_TIMEOUT <= fault.job.seconds < HANG_TIMEOUT + 15, fault.job.seconds
    err = fault.job.stderr
    assert f"migrate run: timed out after {HANG_TIMEOUT} s; job ended." in err
    # The launcher asked both ranks where they were: rank 1 sat in its own code, rank 0 in a collective.
    assert "rank 1 appears hung: not in a collective while rank 0 waited in one" in err, err
    assert re.search(r"rank 1 was still running, not in a collective, at \S*faults\.py:\d+ in <module>; "
                     r"last output: rank 1 fault hang at", err), err
    assert re.search(r"rank 0 was still running, waiting in a collective: all_reduce, called from "
                     r"\S*faults\.py:\d+ in <module>", err), err


@pytest.mark.launcher
def test_a_hung_rank_is_named_when_the_collective_of_its_peer_gives_up(faults):
    fault = faults["hang_ms"]
    check_ended_cleanly(fault, 1, after_fault=AFTER_FAULT_LIMIT + 5)
    err = fault.job.stderr
    # Rank 0 is the one that failed (its collective gave up waiting) ...
    assert "migrate run: rank 0 exited with code 1: migrate.runtime.collectives.CollectiveError: rank 0: " \
           "collective agree failed" in err, err
    # ... but the report points at rank 1, which did not fail and was not in a collective.
    assert ("migrate run: rank 1 did not fail but was still running when the collective of rank 0 failed "
            "waiting for its peers: rank 1 probably hung or stopped calling collectives (last output: "
            "rank 1: rank 1 fault hang_ms at ") in err, err
    assert "rank 1 exited" not in err


@pytest.mark.launcher
def test_ranks_that_disagree_on_a_shape_fail_with_both_shapes_named(faults):
    fault = faults["shape"]
    check_ended_cleanly(fault, 1, fault_step=5)
    assert "rank 0 step 4 total [3.0, 3.0, 3.0, 3.0]" in fault.job.stdout  # steps 1-4 summed
    # Step 5 was a predicted sum (no agreement round ran before it), so the mismatch was caught in-band:
    # rank 1 contributed poison instead of its (5,) buffer and every rank fell back to agreeing.
    assert "rank 0 agreement rounds before step 5: 3" in fault.job.stdout
    assert "rank 1 agreement rounds before step 5: 3" in fault.worker_log(1)
    err = fault.job.stderr
    first = re.search(r"^migrate run: rank (\d) exited with code 1: migrate\.runtime\.collectives\.RankMismatchError: "
                      r"ranks disagree on all_reduce; .* \(raised on rank \1\):$", err, re.M)
    assert first, err
    # Each rank's call, with its shape, right under the first failure.
    assert ("\n      rank 0: all_reduce(SUM) on * with float32[4]"
            "\n      rank 1: all_reduce(SUM) on * with float32[5]\n") in err, err


# --- the launcher's reading of stack dumps and exit statuses (no MindSpore) -------------------

DUMP = """\
Thread 0x00007f00000002 (most recent call first):
  File "{lib}/threading.py", line 324 in wait
  File "{lib}/threading.py", line 1002 in _bootstrap

Current thread 0x00007f00000001 (most recent call first):
  File "{lib}/site-packages/mindspore/common/tensor.py", line 1090 in asnumpy
  File "/src/migrate/runtime/collectives.py", line 402 in _exchange
  File "/src/migrate/runtime/collectives.py", line 389 in checked_sum
  File "/src/migrate/runtime/reductions.py", line 111 in reduce_values
  File "/src/migrate/runtime/spmd.py", line 73 in all_reduce
  File "/job/train.py", line 26 in step
  File "/job/train.py", line 40 in <module>
"""


def test_a_stack_dump_tells_a_rank_in_a_collective_from_one_elsewhere():
    lib = ("/usr/lib/python3.11/",)
    assert launch.whereabouts(DUMP.format(lib="/usr/lib/python3.11"), lib) == (
        True, "all_reduce, called from /job/train.py:26 in step")
    # Blocked in a library call of its own code (not a collective), or in a runtime module that does not
    # communicate (tf.data input): elsewhere, at the program's own frame.
    elsewhere = DUMP.format(lib="/usr/lib/python3.11").replace("/src/migrate/runtime/collectives.py",
                                                               "/src/migrate/runtime/tfdata.py")
    assert launch.whereabouts(elsewhere, lib) == (False, "/job/train.py:26 in step")
    sleeping = 'Current thread 0x1 (most recent call first):\n  File "/job/train.py", line 24 in <module>\n'
    assert launch.whereabouts(sleeping, lib) == (False, "/job/train.py:24 in <module>")
    assert launch.whereabouts("", lib) is None  # no dump (the rank was gone, or never asked)


def test_the_exit_status_of_an_unreaped_worker_is_read_from_proc():
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs Linux /proc")
    import subprocess

    exits = subprocess.Popen([sys.executable, "-c", "import os; os._exit(3)"])
    killed = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    killed.kill()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all(_zombie(p.pid) for p in (exits, killed)):
            time.sleep(0.05)
        assert launch._zombie_exit_code(exits.pid) == 3
        assert launch._zombie_exit_code(killed.pid) == -signal.SIGKILL
    finally:
        assert exits.wait(5) == 3 and killed.wait(5) == -signal.SIGKILL  # reaps them
    assert launch._zombie_exit_code(exits.pid) is None  # reaped: unknown


def _zombie(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
