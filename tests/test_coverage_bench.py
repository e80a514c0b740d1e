"""``benchmarks/coverage.py``: where converted uses go, with the native tier's lowerings credited."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.test_native_tier import HEAD

ROOT = Path(__file__).resolve().parents[1]

PROGRAM = HEAD  # a model, an optimizer and a tape step the native tier lowers whole


@pytest.fixture(scope="module")
def coverage():
    spec = importlib.util.spec_from_file_location("coverage_bench", ROOT / "benchmarks" / "coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measured(coverage, tmp_path, code: str) -> dict:
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "train.py").write_text(code, encoding="utf-8")
    [entry] = coverage.measure(tmp_path / "tree", jobs=1)["files"]
    return entry


def test_uses_the_native_tier_lowered_count_as_mindspore(coverage, tmp_path):
    entry = measured(coverage, tmp_path, PROGRAM)
    assert entry["to_runtime"] == 0 and entry["to_mindspore"] >= 6
    assert entry["manual"] == 0


def test_uses_that_keep_the_shim_count_as_runtime_and_lowering_findings_are_not_uses(coverage, tmp_path):
    code = PROGRAM + "\n\nmodel.summary()\n"  # a use the native cell does not serve: the model keeps `mk`
    entry = measured(coverage, tmp_path, code)
    assert entry["to_runtime"] >= 3  # Sequential, Input, the two Dense layers, the tape's gradient
    (tmp_path / "again").mkdir()
    plain = measured(coverage, tmp_path / "again", PROGRAM)
    # the same TF uses in both (`model.summary()` is not one): the lowering findings (TFL...) add none
    assert entry["converted"] + entry["runtime"] == plain["converted"] + plain["runtime"] == 8


def test_a_notebooks_lowerings_are_credited_at_their_cells(coverage, tmp_path):
    """Findings in a notebook give cell and line: a model lowered in its third cell (after a
    markdown cell) credits that cell's shim uses, read at their lines of the notebook's code."""
    import json

    model = ("model = tf.keras.Sequential([\n    tf.keras.Input(shape=(4,)),\n"
             "    tf.keras.layers.Dense(1),\n])\nmodel.compile(loss='mse', optimizer='sgd')\n")
    other = "other = tf.keras.Sequential([tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(1)])\nother.summary()\n"
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}
             for source in ("import tensorflow as tf\nx = 1\ny = 2\nz = 3", model, other)]
    cells.insert(1, {"cell_type": "markdown", "metadata": {}, "source": "The model"})
    notebook = {"cells": cells, "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
                "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "train.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    [entry] = coverage.measure(tmp_path / "tree", jobs=1)["files"]
    assert entry["to_runtime"] == 3  # `other`'s Sequential, Input and Dense: it keeps the shim
    assert entry["to_mindspore"] == 3  # the lowered model's


def test_the_add_statements_a_lowered_model_folds_in_are_credited(coverage, tmp_path):
    code = ("import tensorflow as tf\n\nmodel = tf.keras.Sequential()\nmodel.add(tf.keras.Input(shape=(4,)))\n"
            "model.add(tf.keras.layers.Dense(1))\nmodel.compile(loss='mse', optimizer='sgd')\n"
            "other = tf.keras.Sequential([tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(1)])\nother.summary()\n")
    entry = measured(coverage, tmp_path, code)
    assert (entry["to_mindspore"], entry["to_runtime"]) == (3, 3)
    # which uses keep the shim, for the table of the most frequent ones
    assert entry["shim_apis"] == {"tensorflow.keras.Sequential": 1, "tensorflow.keras.Input": 1,
                                  "tensorflow.keras.layers.Dense": 1}


def test_a_loop_of_add_statements_and_a_lowered_draw_are_credited_alone(coverage, tmp_path):
    """A loop of `add` statements the lowered model folds in is its model's; a random draw the
    native tier lowers counts where it stands, not the other uses of its statement."""
    code = ("import tensorflow as tf\n\nmodel = tf.keras.Sequential()\nmodel.add(tf.keras.Input(shape=(4,)))\n"
            "for _ in range(3):\n    model.add(tf.keras.layers.Dense(4))\nmodel.compile(loss='mse', optimizer='sgd')\n"
            "pairs = tf.data.Dataset.from_tensor_slices(tf.random.normal([8, 4])).batch(2)\n"
            "for batch in pairs:\n    print(batch)\n")
    entry = measured(coverage, tmp_path, code)
    assert "tensorflow.keras.layers.Dense" not in entry["shim_apis"]
    assert "tensorflow.random.normal" not in entry["shim_apis"]
    assert entry["shim_apis"].get("tensorflow.data.Dataset.from_tensor_slices") == 1, entry
