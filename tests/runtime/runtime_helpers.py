"""Helpers for runtime tests: launch programs under the real launcher, run TF apart.

Imported by the test modules (pytest puts this directory on sys.path)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from migrate.runtime.launch import free_port as _launcher_port


PROGRAMS = Path(__file__).parent / "programs"
REPO = Path(__file__).resolve().parents[2]


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A scheduler port for one job: the launcher's own choice (below the ephemeral range,
    free now), and never one handed to another job of this test session (the fault battery
    starts six jobs at once; two that got the same port shared a scheduler)."""
    port = _launcher_port(taken=_HANDED_OUT)
    _HANDED_OUT.add(port)
    return port


@dataclass
class Job:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    ended: float = 0.0  # wall-clock time (time.time()) the process was seen to end


def _default_signals() -> None:
    """In the child: SIGINT, SIGHUP and SIGTERM act as in a terminal's job, even when this test run ignores
    them (started with nohup, or in the background of a shell, which ignores SIGINT)."""
    import signal

    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


class Running:
    """A started subprocess whose output goes to files; `wait()` bounds it and returns a Job."""

    def __init__(self, command: list, log_dir: Path, env=None, cwd=REPO, stdin: bytes | None = None):
        """`stdin`: written to a pipe that is then closed (default: /dev/null)."""
        log_dir.mkdir(parents=True, exist_ok=True)
        self._out, self._err = log_dir / "stdout.txt", log_dir / "stderr.txt"
        self.started = time.monotonic()
        with open(self._out, "wb") as out, open(self._err, "wb") as err:
            self.process = subprocess.Popen(command, stdout=out, stderr=err, cwd=cwd,
                                            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                                            env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
                                            start_new_session=True, preexec_fn=_default_signals)
        if stdin is not None:
            with self.process.stdin:
                self.process.stdin.write(stdin)  # small: fits the pipe's buffer, so this cannot block
        self._job: Job | None = None

    def wait(self, timeout: float) -> Job:
        if self._job is None:
            remaining = max(1.0, timeout - (time.monotonic() - self.started))
            try:
                code = self.process.wait(timeout=remaining)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)  # the launcher's own session: it and what it started
                code = self.process.wait(timeout=30)
                code = f"killed after {timeout:g} s (exit {code})"
            self._job = Job(code, self._out.read_text(errors="replace"), self._err.read_text(errors="replace"),
                            time.monotonic() - self.started, time.time())
        return self._job


def launch_command(program: str, *program_args: str, log_dir: Path, nproc: int = 2, options=(),
                   master_port: int | None = None) -> list:
    """`python -m migrate.runtime.launch` with its own port (unless given; 0: none, e.g. from TF_CONFIG) and
    log dir."""
    port = [] if master_port == 0 else ["--master-port", str(master_port if master_port is not None else free_port())]
    return [sys.executable, "-m", "migrate.runtime.launch", "-n", str(nproc), *port, "--log-dir", str(log_dir),
            *options, str(PROGRAMS / program), *program_args]


def start_launch(program: str, *program_args: str, tmp_path: Path, nproc: int = 2, options=(), env=None,
                 master_port: int | None = None, name: str = "job", stdin: bytes | None = None) -> Running:
    """Start a launch in the background (see `launch`); several can run at once. Its log dir is
    ``tmp_path / name / "logs"``."""
    command = launch_command(program, *program_args, log_dir=tmp_path / name / "logs", nproc=nproc,
                             options=options, master_port=master_port)
    return Running(command, tmp_path / name, env=env, stdin=stdin)


def launch(program: str, *program_args: str, tmp_path: Path, nproc: int = 2, options=(), timeout: float = 150,
           env=None) -> Job:
    """Run `python -m migrate.runtime.launch` with its own port and log dir; bounded by `timeout`."""
    command = launch_command(program, *program_args, log_dir=tmp_path / "logs", nproc=nproc, options=options)
    started = time.monotonic()
    completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=REPO,
                               env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})
    return Job(completed.returncode, completed.stdout, completed.stderr, time.monotonic() - started)


def start_python(*args: str, log_dir: Path, env=None) -> Running:
    """A plain Python subprocess in the background (TensorFlow runs apart from MindSpore)."""
    return Running([sys.executable, *args], log_dir, env=env)


def run_python(*args: str, timeout: float = 180, env=None) -> subprocess.CompletedProcess:
    """A plain subprocess (TensorFlow runs apart from MindSpore)."""
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


# --- the processes of a job, from /proc ----------------------------------------------------------

def _proc_stat(pid: str) -> list | None:
    """/proc/<pid>/stat's fields after the command name (state first), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _live_pids():
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _proc_stat(entry)
            if fields and fields[0] != b"Z":  # a zombie has ended; only its parent has yet to reap it
                yield entry, fields


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def job_processes(log_dir: Path) -> list[str]:
    """Live processes of the job whose logs go to `log_dir`, as "pid command line": every one names it,
    in its command line (the launcher's --log-dir, msrun's --log_dir) or its environment (the workers'
    and the scheduler's MIGRATE_STACK_DIR, and PATH)."""
    needle = str(log_dir).encode()
    found = []
    for pid, _ in _live_pids():
        cmdline = _read(f"/proc/{pid}/cmdline")
        if needle in cmdline or needle in _read(f"/proc/{pid}/environ"):
            command = cmdline.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{pid} {command[:160]}")
    return found


def job_workers(log_dir: Path) -> dict[int, int]:
    """pid -> rank of the job's live workers."""
    marker = f"MIGRATE_STACK_DIR={log_dir}".encode()
    workers = {}
    for pid, _ in _live_pids():
        environ = _read(f"/proc/{pid}/environ").split(b"\0")
        if marker in environ and b"MS_ROLE=MS_WORKER" in environ:
            rank = [e for e in environ if e.startswith(b"MS_NODE_ID=")]
            if rank and rank[0][11:].isdigit():
                workers[int(pid)] = int(rank[0][11:])
    return workers


def group_members(pgid: int) -> list[int]:
    """Live processes in process group `pgid`."""
    return [int(pid) for pid, fields in _live_pids() if len(fields) > 2 and int(fields[2]) == pgid]


def wait_until(condition, timeout: float, interval: float = 0.2):
    """`condition()` once it is true, or its last (false) value after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)
