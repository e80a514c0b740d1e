"""Run a TF program and its conversion side by side and read the numbers they print.

Every program under ``fixtures/programs/<name>/original.py`` prints one JSON line of
per-step numbers. The TF original runs on N logical CPU devices (or, for
multi-worker programs, as N TF worker processes with TF_CONFIG on loopback); the
converted program runs under ``migrate run -n N``. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.runtime.runtime_helpers import free_port  # noqa: F401 - one free-port picker for every launch

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = REPO / "fixtures" / "programs"
EXAMPLE = REPO / "examples" / "train.py"  # the README's example project is one of the programs


def programs() -> dict[str, Path]:
    """Every equivalence program by name: ``fixtures/programs/<name>/original.py`` and the example."""
    found = {p.name: p / "original.py" for p in sorted(PROGRAMS.iterdir()) if (p / "original.py").is_file()}
    found["example"] = EXAMPLE
    return found
TF_REPLICAS = Path(__file__).with_name("tf_replicas.py")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    env.update(PYTHONPATH=str(REPO), TF_CPP_MIN_LOG_LEVEL="2", PYTHONHASHSEED="0", **extra)
    return env


def last_json(stdout: str, what: str) -> dict:
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise AssertionError(f"{what} printed no JSON line:\n{stdout[-3000:]}")


def reference_of(program: Path) -> Path:
    """What TF runs for ``program``: its ``reference.py`` beside it when it has one (a Horovod
    program: Horovod is not installed, so its TF twin writes Horovod's collectives out), else itself."""
    twin = program.with_name("reference.py")
    return twin if twin.is_file() else program


def run_tf(program: Path, replicas: int, args: tuple[str, ...] = (), timeout: float = 240) -> dict:
    """The TF original on ``replicas`` logical CPU devices (its TF twin, for a program that has one)."""
    program = reference_of(program)
    done = subprocess.run([sys.executable, str(TF_REPLICAS), "--replicas", str(replicas), str(program), *args],
                          capture_output=True, text=True, timeout=timeout, env=_env(), cwd=program.parent)
    assert done.returncode == 0, f"TF run failed ({done.returncode}):\n{done.stderr[-4000:]}"
    return last_json(done.stdout, f"TF {program.name}")


def run_tf_workers(program: Path, workers: int, args: tuple[str, ...] = (), timeout: float = 300) -> dict:
    """A multi-worker TF original: one process per worker, TF_CONFIG on loopback ports."""
    ports = [free_port() for _ in range(workers)]
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    procs = []
    for index in range(workers):
        tf_config = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})
        procs.append(subprocess.Popen([sys.executable, str(program), *args], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, env=_env(TF_CONFIG=tf_config),
                                      cwd=program.parent))
    outputs = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=timeout)
            assert proc.returncode == 0, f"TF worker failed ({proc.returncode}):\n{err[-4000:]}"
            outputs.append(out)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    return last_json(outputs[0], f"TF worker 0 of {program.name}")


def convert(program: Path, out_dir: Path, *flags: str) -> Path:
    """``migrate convert`` the program's directory into ``out_dir``; the converted program's path."""
    done = subprocess.run([sys.executable, "-m", "migrate", "convert", str(program.parent), "--out", str(out_dir), *flags],
                          capture_output=True, text=True, timeout=120, env=_env(), cwd=REPO)
    assert done.returncode in (0, 1), f"convert failed ({done.returncode}):\n{done.stderr[-4000:]}"
    return out_dir / program.name


def run_converted(script: Path, nproc: int, log_dir: Path, args: tuple[str, ...] = (), timeout: float = 300,
                  cwd: Path | None = None) -> dict:
    """The converted program under ``migrate run -n nproc``, in ``cwd`` (the script's directory by default)."""
    command = [sys.executable, "-m", "migrate", "run", "-n", str(nproc), "--master-port", str(free_port()),
               "--log-dir", str(log_dir), "--timeout", str(int(timeout - 30)), str(script), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=_env(), cwd=cwd or script.parent)
    assert done.returncode == 0, f"migrate run failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return last_json(done.stdout, f"converted {script.name}")


def run_plain(script: Path, args: tuple[str, ...] = (), timeout: float = 300, cwd: Path | None = None) -> dict:
    """The converted program started as ``python train.py``: no launcher, one process, one replica."""
    env = {k: v for k, v in _env().items() if not k.startswith(("MS_", "OMPI_", "RANK_"))}
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=cwd or script.parent)
    assert done.returncode == 0, f"python {script.name} failed ({done.returncode}):\n{done.stderr[-4000:]}"
    return last_json(done.stdout, f"converted {script.name}, started plainly")


def assert_same_numbers(got: dict, want: dict, rtol: float = 1e-4, atol: float = 1e-6) -> None:
    assert got.keys() == want.keys(), (sorted(got), sorted(want))
    for key in want:
        a, b = got[key], want[key]
        assert len(a) == len(b), f"{key}: {len(a)} numbers, TF printed {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert abs(x - y) <= atol + rtol * abs(y), f"{key}[{i}]: {x} vs TF {y} (rtol {rtol})"
