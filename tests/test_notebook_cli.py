"""Notebooks through the command line: discovery, convert in place, --out, --diff, --check."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.cli_helpers import pyproject, run_migrate, snapshot, write

NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Training\n", "Uses `tf.distribute`."]},
        {
            "cell_type": "code",
            "execution_count": 1,
            "id": "setup",
            "metadata": {"tags": ["parameters"]},
            "outputs": [{"name": "stdout", "output_type": "stream", "text": ["2 replicas\n"]}],
            "source": ["%matplotlib inline\n", "import tensorflow as tf\n", "strategy = tf.distribute.MirroredStrategy()\n", "print(strategy.num_replicas_in_sync, 'replicas')"],
        },
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}

CONVERTED_CELL = [
    "import mindspore as ms\n",
    "from migrate.runtime.spmd import init\n",
    "from mindspore.communication import get_group_size\n",
    "\n",
    "%matplotlib inline\n",
    "init()\n",
    "ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=False, parameter_broadcast=True)\n",
    "print(get_group_size(), 'replicas')",
]


@pytest.fixture
def project(tmp_path):
    pyproject(tmp_path)
    write(tmp_path / "nb" / "train.ipynb", json.dumps(NOTEBOOK, indent=1) + "\n")
    write(tmp_path / "nb" / ".ipynb_checkpoints" / "train-checkpoint.ipynb", json.dumps(NOTEBOOK, indent=1) + "\n")
    return tmp_path


def expected_notebook() -> bytes:
    nb = json.loads(json.dumps(NOTEBOOK))
    nb["cells"][1]["source"] = CONVERTED_CELL
    return (json.dumps(nb, indent=1) + "\n").encode()


def test_convert_rewrites_notebooks_in_place(project):
    proc = run_migrate("convert", ".", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert (project / "nb" / "train.ipynb").read_bytes() == expected_notebook()
    assert json.loads((project / "nb" / ".ipynb_checkpoints" / "train-checkpoint.ipynb").read_text()) == NOTEBOOK
    assert "1 file(s) changed" in proc.stderr
    again = run_migrate("convert", "--check", ".", cwd=project)
    assert again.returncode == 0, again.stdout + again.stderr


def test_out_writes_converted_notebooks_into_the_copy(project):
    before = snapshot(project)
    proc = run_migrate("convert", "nb", "--out", "converted", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert (project / "converted" / "train.ipynb").read_bytes() == expected_notebook()
    after = snapshot(project)
    assert {k: v for k, v in after.items() if not k.startswith("converted")} == before


def test_diff_is_per_cell_and_check_exits_1(project):
    before = snapshot(project)
    proc = run_migrate("convert", "--diff", "nb/train.ipynb", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout.startswith("--- a/nb/train.ipynb:cell 2\n+++ b/nb/train.ipynb:cell 2\n@@ ")
    assert "-strategy = tf.distribute.MirroredStrategy()\n" in proc.stdout
    # A cell has no final newline by convention; its diff does not mark that on every cell.
    assert proc.stdout.endswith("+print(get_group_size(), 'replicas')\n")
    assert run_migrate("convert", "--check", "nb", cwd=project).returncode == 1
    assert snapshot(project) == before


def test_a_python_diff_without_final_newline_applies(project):
    source = "import tensorflow as tf\nop = tf.distribute.ReduceOp.SUM"
    write(project / "ops.py", source)
    proc = run_migrate("convert", "--diff", "ops.py", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout.count("\\ No newline at end of file\n") == 2
    if shutil.which("patch"):
        subprocess.run(["patch", "-p1", "-s"], input=proc.stdout, text=True, cwd=project, check=True)
        assert (project / "ops.py").read_text() == "from mindspore import ops\n\nop = ops.ReduceOp.SUM"
