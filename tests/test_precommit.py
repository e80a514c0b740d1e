"""The hooks in .pre-commit-hooks.yaml, run by the real pre-commit.

pre-commit clones a hook repository at a commit, so the tests copy this working
tree (tracked and untracked files, minus what .gitignore drops) into a temporary
repository and commit it there. One test runs ``pre-commit try-repo`` on it; the
others use it the way a project does, from a ``.pre-commit-config.yaml`` (the
README's snippet) with ``pre-commit run``, so the hook environment (this package
and its dependencies, installed by pip) is built once, in a private PRE_COMMIT_HOME.
try-repo always builds a fresh one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.timeout(300),
]

TF_SOURCE = """\
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = build()
"""

CONVERTED_SOURCE = """\
import mindspore as ms
from migrate.runtime.spmd import init

init()
ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=False, parameter_broadcast=True)
model = build()
"""

CLEAN_SOURCE = """\
import numpy as np


def mean(xs):
    return np.mean(xs)
"""


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> Path:
    """This working tree, committed in a repository of its own."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing for try-repo to clone")
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout.decode().split("\0")
    repo = tmp_path_factory.mktemp("hookrepo")
    for rel in filter(None, listed):
        src = ROOT / rel
        if not src.is_file():
            continue  # deleted in the working tree
        dest = repo / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "snapshot", cwd=repo)
    return repo


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def user_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git("init", "-q", cwd=root)
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    git("add", "-A", cwd=root)
    return root


def pre_commit(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)  # the hook must run from its own installed environment
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args, "--color", "never"], cwd=cwd, env=env, capture_output=True, text=True, timeout=240
    )


def try_repo(hook_repo: Path, home: Path, hook: str, cwd: Path, *files: str) -> subprocess.CompletedProcess:
    return pre_commit(home, cwd, "try-repo", str(hook_repo), hook, "--files", *files)


def run_hook(hook_repo: Path, home: Path, hook: str, cwd: Path, *files: str) -> subprocess.CompletedProcess:
    """``pre-commit run HOOK --files ...`` with the configuration the README shows."""
    rev = git("rev-parse", "HEAD", cwd=hook_repo).strip()
    config = f"repos:\n  - repo: {hook_repo}\n    rev: {rev}\n    hooks:\n      - id: migrate-check\n      - id: migrate-convert\n"
    (cwd / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    return pre_commit(home, cwd, "run", hook, "--files", *files)


@pytest.fixture(scope="module")
def hook_env(hook_repo, pre_commit_home, tmp_path_factory) -> Path:
    """The bin/ directory of the environment pre-commit built for the hooks."""
    repo = user_repo(tmp_path_factory.mktemp("installer"), {"x.py": "x = 1\n"})
    run = run_hook(hook_repo, pre_commit_home, "migrate-check", repo, "x.py")
    assert run.returncode == 0, run.stdout + run.stderr
    found = sorted(pre_commit_home.glob("repo*/py_env-*/bin/migrate"))
    assert len(found) == 1, found
    return found[0].parent


def test_hooks_file_declares_both_hooks():
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"migrate-check", "migrate-convert"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["types_or"] == ["python", "jupyter"]
    assert hooks["migrate-check"]["entry"].split()[:2] == ["migrate", "check"]
    assert hooks["migrate-convert"]["entry"].split()[:2] == ["migrate", "convert"]


def test_try_repo_check_hook_fails_on_tf_distribute(hook_repo, pre_commit_home, tmp_path):
    repo = user_repo(tmp_path / "user", {"train.py": TF_SOURCE})
    failing = try_repo(hook_repo, pre_commit_home, "migrate-check", repo, "train.py")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "train.py:3:12: TFD101 " in failing.stdout
    assert "train.py:4:6: TFD201 " in failing.stdout
    assert (repo / "train.py").read_text() == TF_SOURCE  # read-only


def test_check_hook_fails_on_tf_distribute_and_passes_on_clean_code(hook_repo, pre_commit_home, tmp_path):
    repo = user_repo(tmp_path / "user", {"train.py": TF_SOURCE, "util.py": CLEAN_SOURCE})
    failing = run_hook(hook_repo, pre_commit_home, "migrate-check", repo, "train.py", "util.py")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert failing.stdout.count("TFD") == 2 and "train.py:3:12: TFD101 " in failing.stdout
    assert "util.py" not in failing.stdout
    assert (repo / "train.py").read_text() == TF_SOURCE

    passing = run_hook(hook_repo, pre_commit_home, "migrate-check", repo, "util.py")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout


def test_convert_hook_rewrites_the_staged_file(hook_repo, pre_commit_home, tmp_path):
    repo = user_repo(tmp_path / "user", {"train.py": TF_SOURCE})
    run = run_hook(hook_repo, pre_commit_home, "migrate-convert", repo, "train.py")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "files were modified by this hook" in run.stdout
    assert (repo / "train.py").read_text() == CONVERTED_SOURCE
    git("add", "-A", cwd=repo)
    again = run_hook(hook_repo, pre_commit_home, "migrate-check", repo, "train.py")
    assert again.returncode == 0, again.stdout + again.stderr


def test_check_hook_reads_notebooks(hook_repo, pre_commit_home, tmp_path):
    nb = {
        "cells": [
            {"cell_type": "markdown", "id": "a", "metadata": {}, "source": ["# Notes"]},
            {"cell_type": "code", "execution_count": None, "id": "b", "metadata": {}, "outputs": [], "source": ["import tensorflow as tf\n", "s = tf.distribute.MirroredStrategy()"]},
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    repo = user_repo(tmp_path / "user", {"explore.ipynb": json.dumps(nb, indent=1) + "\n"})
    run = run_hook(hook_repo, pre_commit_home, "migrate-check", repo, "explore.ipynb")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "explore.ipynb:cell 2:2:5: TFD101 " in run.stdout


def test_the_hook_environment_has_everything_a_report_needs(hook_env, tmp_path):
    """pip installed the package with its declared dependencies only: templates, schema and markdown come along."""
    write_py = tmp_path / "train.py"
    write_py.write_text(TF_SOURCE, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    for fmt in ("html", "json", "sarif"):
        proc = subprocess.run(
            [str(hook_env / "migrate"), "report", "train.py", "--format", fmt, "-o", f"r.{fmt}"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["apis_found"] == 2
    assert "<code>tensorflow.distribute.MirroredStrategy</code>" in (tmp_path / "r.html").read_text()
