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
