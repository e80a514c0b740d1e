"""Helpers for the Keras equivalence tests: start the TF and MindSpore sides as subprocesses, compare numbers.

Imported by the test modules (pytest puts this directory on sys.path). TensorFlow and
MindSpore never share a process: every side runs in its own subprocess and writes JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from tests.runtime.runtime_helpers import free_port  # noqa: F401 - one free-port picker for every launch

PROGRAMS = Path(__file__).parent / "programs"
REPO = Path(__file__).resolve().parents[3]
TF_REPLICAS = REPO / "tests" / "equivalence" / "tf_replicas.py"


class Job:
    """A subprocess started now and awaited later, so that the TF and MindSpore sides run concurrently."""

    def __init__(self, command, env=None, timeout=240):
        self.command = [str(c) for c in command]
        self.timeout = timeout
        self.started = time.monotonic()
        self.process = subprocess.Popen(self.command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, env={**os.environ, "PYTHONPATH": str(REPO),
                                                        "TF_CPP_MIN_LOG_LEVEL": "2", **(env or {})})
        self._output = None

    def wait(self) -> str:
        if self._output is None:
            try:
                self._output, _ = self.process.communicate(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self._output, _ = self.process.communicate()
                raise AssertionError(f"timed out: {' '.join(self.command)}\n{self._output[-4000:]}")
            self.seconds = time.monotonic() - self.started
        assert self.process.returncode == 0, f"{' '.join(self.command)} failed:\n{self._output[-6000:]}"
        return self._output


def single_side(side: str, out: Path) -> Job:
    return Job([sys.executable, PROGRAMS / "single_cases.py", side, out])


def tf_replicas(program: str, *args, replicas: int = 2) -> Job:
    return Job([sys.executable, TF_REPLICAS, "--replicas", str(replicas), PROGRAMS / program, *args])


def launched(program: str, *args, log_dir: Path, nproc: int = 2, env=None) -> Job:
    return Job([sys.executable, "-m", "migrate.runtime.launch", "-n", str(nproc), "--master-port", str(free_port()),
                "--log-dir", log_dir, "--timeout", "200", PROGRAMS / program, *args], env=env, timeout=260)


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text())


def flatten_numbers(value) -> list:
    if isinstance(value, dict):
        return [x for key in sorted(value) for x in flatten_numbers(value[key])]
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in flatten_numbers(item)]
    return [value]


def max_relative_difference(ours, theirs) -> float:
    a = np.asarray(flatten_numbers(ours), dtype=float)
    b = np.asarray(flatten_numbers(theirs), dtype=float)
    if a.shape != b.shape:
        return float("inf")
    if not a.size:
        return 0.0
    return float((np.abs(a - b) / np.maximum(np.abs(b), 1e-6)).max())


def compare_area(ours: dict, theirs: dict, rtol: float, atol_scale: float = 1e-5, keys=None) -> list:
    """Mismatching keys as messages; each key is compared with rtol and an absolute floor relative to its scale.

    The floor (atol_scale times the largest magnitude in the key) absorbs sums whose
    order differs between the two libraries (convolutions, reductions) near zero.
    """
    assert "__error__" not in ours, ours.get("__error__")
    assert "__error__" not in theirs, theirs.get("__error__")
    problems = []
    for key in keys or theirs:
        if key not in ours:
            problems.append(f"{key}: missing on the migrate side")
            continue
        a = np.asarray(flatten_numbers(ours[key]), dtype=float)
        b = np.asarray(flatten_numbers(theirs[key]), dtype=float)
        if a.shape != b.shape:
            problems.append(f"{key}: {a.shape} values vs TF's {b.shape}")
            continue
        scale = float(np.abs(b).max()) if b.size else 0.0
        if not np.allclose(a, b, rtol=rtol, atol=atol_scale * max(scale, 1e-3)):
            problems.append(f"{key}: max relative difference {max_relative_difference(ours[key], theirs[key]):.3g}")
    return problems
