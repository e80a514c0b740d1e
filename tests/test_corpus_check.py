"""``benchmarks/corpus_check.py``: the fuzz properties on a real tree, and what it says when one breaks."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def corpus_check():
    spec = importlib.util.spec_from_file_location("corpus_check", ROOT / "benchmarks" / "corpus_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["corpus_check"] = module  # (--jobs pickles its functions by name)
    spec.loader.exec_module(module)
    yield module
    del sys.modules["corpus_check"]


@pytest.fixture
def tree(tmp_path):
    for name in ("keras_fit_in_scope", "one_device"):
        source = ROOT / "fixtures" / "convert" / name / "input.py"
        (tmp_path / "pkg").mkdir(exist_ok=True)
        (tmp_path / "pkg" / f"{name}.py").write_bytes(source.read_bytes())
    (tmp_path / "broken.py").write_text("import tensorflow as tf\ndef f(:\n")  # CPython rejects it too: no property
    (tmp_path / "plain.py").write_text("x = 1\n")
    from tests.test_notebook import TRAINING, dump

    (tmp_path / "training.ipynb").write_bytes(dump(TRAINING))  # converted cell by cell
    (tmp_path / "truncated.ipynb").write_bytes(dump(TRAINING)[:200])  # not JSON: its own error, no property
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "skipped.py").write_text("def f(:\n")
    return tmp_path


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_tree_that_keeps_every_property(corpus_check, tree, capsys, jobs):
    assert corpus_check.main([str(tree), "--jobs", jobs]) == 0
    lines = sum(p.read_bytes().count(b"\n") for p in tree.rglob("*") if p.is_file() and ".venv" not in p.parts)
    assert capsys.readouterr().out.splitlines() == [
        f"6 file(s), {lines:,} line(s): 0 break a property (crash 0, untouched 0, parses 0, idempotent 0, pruning 0, "
        f"shadows 0, mixes 0)"]


def test_each_broken_property_is_named_with_its_file(corpus_check, tree, capsys, monkeypatch):
    real = corpus_check._convert

    def drifting(data, path, whole=False):  # a second run adds a line; the whole-file way another comment
        result = real(data, path, whole)
        if b"# drift" in data or (path.endswith("plain.py") and not whole):
            result.converted = result.converted + b"# drift\n"
        if whole and path.endswith("one_device.py"):
            result.converted = result.converted + b"# whole\n"
        if path.endswith("keras_fit_in_scope.py") and b"import numpy as tf" not in data:  # both ways, once
            result.converted = result.converted + b"import numpy as tf\nimport tensorflow as tfk\ntfk.cast(1, ms.float32)\n"
        return result

    monkeypatch.setattr(corpus_check, "_convert", drifting)
    assert corpus_check.main([str(tree)]) == 1
    lines = capsys.readouterr().out.splitlines()
    plain, scope = str(tree / "plain.py"), str(tree / "pkg" / "one_device.py")
    assert f"untouched: {plain}: unchanged, 0 finding(s), yet the bytes changed" in lines
    assert f"idempotent: {plain}: a second run changes the output" in lines
    assert f"pruning: {scope}: the whole-file conversion gives another output" in lines
    fit = str(tree / "pkg" / "keras_fit_in_scope.py")
    assert f"shadows: {fit}: an added import takes tf from the file's own code" in lines
    assert f"mixes: {fit}: a call left TensorFlow is given MindSpore: tfk.cast(1, ms.float32)" in lines
    assert lines[-1].startswith("6 file(s), ") and lines[-1].endswith(
        ": 3 break a property (crash 0, untouched 1, parses 0, idempotent 2, pruning 2, shadows 1, mixes 1)"), lines[-1]


def test_not_a_directory_is_exit_2(corpus_check, tmp_path, capsys):
    assert corpus_check.main([str(tmp_path / "missing")]) == 2
    assert "not a directory" in capsys.readouterr().err
