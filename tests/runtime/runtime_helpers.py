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


class Running:
    """A started subprocess whose output goes to files; `wait()` bounds it and returns a Job."""

    def __init__(self, command: list, log_dir: Path, env=None, cwd=REPO):
        log_dir.mkdir(parents=True, exist_ok=True)
        self._out, self._err = log_dir / "stdout.txt", log_dir / "stderr.txt"
        self.started = time.monotonic()
        with open(self._out, "wb") as out, open(self._err, "wb") as err:
            self.process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=cwd,
                                            env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
                                            start_new_session=True)
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
                            time.monotonic() - self.started)
        return self._job


def launch_command(program: str, *program_args: str, log_dir: Path, nproc: int = 2, options=(),
                   master_port: int | None = None) -> list:
    """`python -m migrate.runtime.launch` with its own port (unless given; 0: none, e.g. from TF_CONFIG) and
    log dir."""
    port = [] if master_port == 0 else ["--master-port", str(master_port if master_port is not None else free_port())]
    return [sys.executable, "-m", "migrate.runtime.launch", "-n", str(nproc), *port, "--log-dir", str(log_dir),
            *options, str(PROGRAMS / program), *program_args]


def start_launch(program: str, *program_args: str, tmp_path: Path, nproc: int = 2, options=(), env=None,
                 master_port: int | None = None, name: str = "job") -> Running:
    """Start a launch in the background (see `launch`); several can run at once."""
    command = launch_command(program, *program_args, log_dir=tmp_path / name / "logs", nproc=nproc,
                             options=options, master_port=master_port)
    return Running(command, tmp_path / name, env=env)


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


