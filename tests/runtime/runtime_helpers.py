"""Helpers for runtime tests: launch programs under the real launcher, run TF apart.

Imported by the test modules (pytest puts this directory on sys.path)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"
REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Job:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def launch(program: str, *program_args: str, tmp_path: Path, nproc: int = 2, options=(), timeout: float = 150,
           env=None) -> Job:
    """Run `python -m migrate.runtime.launch` with its own port and log dir; bounded by `timeout`."""
    command = [sys.executable, "-m", "migrate.runtime.launch", "-n", str(nproc), "--master-port", str(free_port()),
               "--log-dir", str(tmp_path / "logs"), *options, str(PROGRAMS / program), *program_args]
    started = time.monotonic()
    completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=REPO,
                               env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})
    return Job(completed.returncode, completed.stdout, completed.stderr, time.monotonic() - started)


def run_python(*args: str, timeout: float = 180, env=None) -> subprocess.CompletedProcess:
    """A plain subprocess (TensorFlow runs apart from MindSpore)."""
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


