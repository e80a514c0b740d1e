"""Running ``migrate`` as a real process, and small trees to run it on."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent

TF_SOURCE = """\
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = build()
"""

# Already MindSpore: nothing for a rule to do.
PLAIN_SOURCE = """\
import numpy as np


def mean(xs):
    return np.mean(xs)
"""

REDUCE_SOURCE = """\
import tensorflow as tf

op = tf.distribute.ReduceOp.SUM
"""


def run_migrate(*args: str, cwd: Path, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m migrate ARGS`` in ``cwd``; the checkout is on PYTHONPATH (it is not installed)."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    full_env.pop("PYTHONSTARTUP", None)
    proc = subprocess.run(
        [sys.executable, "-m", "migrate", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=timeout,
    )
    # A run recovers from an engine error (and reports it); a test must never pass on one.
    assert ": engine error: " not in proc.stderr, proc.stderr
    return proc


def write(path: Path, content: str | bytes, mode: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    if mode is not None:
        path.chmod(mode)
    return path


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every entry under ``root``: file bytes, or ``-> target`` for a symbolic link."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirs, names in os.walk(root):
        for name in dirs + names:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = "-> " + os.readlink(p)
            elif p.is_file():
                out[rel] = p.read_bytes()
    return out


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".migrate-tmp")]


def rule_yaml(rule_id: str = "XTR901", name: str = "legacy-sync", **overrides) -> str:
    """A valid rule for a made-up library, so tests never depend on the bundled rules' coverage."""
    fields = {
        "id": rule_id,
        "name": name,
        "summary": "`legacy.sync()` has no MindSpore counterpart; a person decides.",
        "match": ["legacy.sync"],
        "operation": "flag",
        "params": {"message": "replace legacy.sync by hand"},
        "status": "manual",
        "maps_to": "(nothing)",
        "difference": "There is no counterpart.\n",
        "examples": [{"before": "import legacy\nlegacy.sync()\n", "after": "import legacy\n# migrate: XTR901 replace legacy.sync by hand\nlegacy.sync()\n"}],
    }
    fields.update(overrides)
    fields = {k: v for k, v in fields.items() if v is not None}
    return yaml.safe_dump(fields, sort_keys=False)


def write_rule(rules_dir: Path, area: str = "custom", rule_id: str = "XTR901", name: str = "legacy-sync", text: str | None = None, **overrides) -> Path:
    path = rules_dir / area / f"{rule_id}-{name}.yaml"
    write(path, text if text is not None else rule_yaml(rule_id, name, **overrides))
    return path


def pyproject(root: Path, body: str = "") -> Path:
    """A pyproject.toml, so configuration lookup stops in the test's own directory."""
    return write(root / "pyproject.toml", "[project]\nname = \"demo\"\n\n" + textwrap.dedent(body))
