"""Golden fixtures: whole programs under ``fixtures/convert/<name>/``, converted and compared byte for byte.

Each case holds ``input.py``, the ``expected.py`` it must convert to and ``findings.txt``,
the findings recorded for it (``path:line:col: ID status message``, one a line).

    MIGRATE_REGEN=1 .venv/bin/python -m pytest tests/test_fixtures.py

rewrites ``expected.py`` and ``findings.txt`` from the current output; review them with
``git diff`` before committing.
"""

from __future__ import annotations

import ast
import builtins
import os
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ScopeProvider

from migrate.engine.runner import FileResult, RuleSelection, convert_source, rule_index
from tests.helpers import ReadsBackAsBuilt

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "convert"
REGEN = os.environ.get("MIGRATE_REGEN") == "1"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "input.py").is_file())

_converted: dict[str, FileResult] = {}


def convert(data: bytes) -> FileResult:
    result = convert_source(data, rule_index(RuleSelection()), "input.py")
    assert result.status != "failed", result.error
    return result


def converted(name: str) -> FileResult:
    """The case's conversion, once per run; with MIGRATE_REGEN=1 it also rewrites the expectations."""
    if name not in _converted:
        case = FIXTURES / name
        with ReadsBackAsBuilt():  # the expected code also means the tree the rewrite built
            result = _converted[name] = convert((case / "input.py").read_bytes())
        if REGEN:
            (case / "expected.py").write_bytes(result.converted)
            (case / "findings.txt").write_text(findings_text(result), encoding="utf-8")
    return _converted[name]


def findings_text(result: FileResult) -> str:
    return "".join(f"{f.path}:{f.line}:{f.col}: {f.rule} {f.status} {f.message}\n" for f in result.findings)


def findings(name: str, rule: str | None = None, status: str | None = None) -> list:
    return [f for f in converted(name).findings if (rule is None or f.rule == rule) and (status is None or f.status == status)]


def undefined_names(code: str) -> set[str]:
    """Names read somewhere in ``code`` that no assignment, import or builtin defines."""
    wrapper = MetadataWrapper(cst.parse_module(code))
    missing: set[str] = set()
    for scope in {s for s in wrapper.resolve(ScopeProvider).values() if s is not None}:
        for access in scope.accesses:
            name = access.node.value if isinstance(access.node, cst.Name) else None
            if name and not access.referents and not hasattr(builtins, name) and name not in ("__file__", "__name__"):
                missing.add(name)
    return missing


def imported_names(code: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def read_names(code: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}


# -- every fixture ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", CASES)
def test_output_equals_expected(name):
    output = converted(name).converted
    assert output == (FIXTURES / name / "expected.py").read_bytes(), f"{name}: output differs from expected.py (MIGRATE_REGEN=1 rewrites it)"


@pytest.mark.parametrize("name", CASES)
def test_findings_equal_recorded(name):
    output = findings_text(converted(name))
    assert output == (FIXTURES / name / "findings.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", CASES)
def test_output_parses(name):
    code = converted(name).converted.decode("utf-8")
    cst.parse_module(code)
    compile(code, f"{name}/expected.py", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)


@pytest.mark.parametrize("name", CASES)
def test_second_run_changes_nothing(name):
    once = converted(name).converted
    twice = convert(once)
    assert twice.converted == once
    assert twice.status == "unchanged"


@pytest.mark.parametrize("name", CASES)
def test_conversion_leaves_no_name_undefined(name):
    """Nothing the conversion removes is still used, and every name it writes is imported."""
    before = (FIXTURES / name / "input.py").read_text(encoding="utf-8")
    after = converted(name).converted.decode("utf-8")
    assert undefined_names(after) <= undefined_names(before)


@pytest.mark.parametrize("name", CASES)
def test_added_imports_are_used(name):
    before = (FIXTURES / name / "input.py").read_text(encoding="utf-8")
    after = converted(name).converted.decode("utf-8")
    unused = (imported_names(after) - imported_names(before)) - read_names(after)
    assert not unused, f"imports added for code that is not there: {sorted(unused)}"


# -- what particular fixtures must show -----------------------------------------------------


@pytest.mark.parametrize("name", ["no_tensorflow"])
def test_unrelated_code_is_left_byte_identical(name):
    assert converted(name).status == "unchanged"
    assert converted(name).converted == (FIXTURES / name / "input.py").read_bytes()
    assert not converted(name).findings


def test_locals_called_tf_are_left_alone():
    """Only the function using the module's real TensorFlow changes (its math becomes mindspore.ops)."""
    before = (FIXTURES / "local_names_untouched" / "input.py").read_text(encoding="utf-8")
    after = converted("local_names_untouched").converted.decode("utf-8")
    head, tail = "\n\nclass FakeDistribute:", "\n\ndef real_tensor_ops(values):"
    assert after[after.index(head):after.index(tail)] == before[before.index(head):before.index(tail)]
    assert "return ops.sum(ms.Tensor(values))" in after
    assert {f.rule for f in findings("local_names_untouched")} == {"TFM201", "TFM214"}


@pytest.mark.parametrize("name", ["flag_factory_argparse", "flag_factory_absl", "trainer_self_strategy", "strategy_returned"])
def test_escaping_strategies_are_handled_at_run_time(name):
    assert findings(name, status="runtime"), "a strategy chosen at run time must be reported as such"
    assert "import migrate.runtime as tfd" in converted(name).converted.decode("utf-8")
    assert not findings(name, rule="TFD101")


def test_tpu_model_parallel_needs_a_person():
    assert {f.rule for f in findings("tpu_model_parallel", status="manual")} >= {"TFD504", "TFD505"}
    assert "# migrate: TFD505" in converted("tpu_model_parallel").converted.decode("utf-8")


def test_tutorial_is_rewritten_statically():
    assert not findings("tutorial_custom_loop", status="runtime")
    assert not findings("tutorial_custom_loop", status="manual")
    assert {f.rule for f in findings("tutorial_custom_loop")} >= {"TFD101", "TFD201", "TFD202", "TFD204", "TFD208"}
    code = converted("tutorial_custom_loop").converted.decode("utf-8")
    assert "gradients_mean=False" in code and "strategy" not in code


def test_keras_fit_averages_gradients():
    for name in ("keras_fit_in_scope", "keras_fit_outside_scope"):
        assert "gradients_mean=True" in converted(name).converted.decode("utf-8")


def test_merge_call_keeps_the_strategy_it_needs():
    # merge_call hands `fn` the current strategy, which exists only if the strategy is kept.
    code = converted("replica_context_merge_call").converted.decode("utf-8")
    assert "strategy = tfd.MirroredStrategy()" in code and "strategy.run(step" in code
    assert not findings("replica_context_merge_call", rule="TFD101")


def test_cross_replica_variable_aggregation_needs_a_person():
    assert findings("call_for_each_replica", rule="TFD308", status="manual")


def test_suppressed_lines_are_left_and_not_reported():
    source = (FIXTURES / "suppressions" / "input.py").read_text(encoding="utf-8").splitlines()
    output = converted("suppressions").converted.decode("utf-8").splitlines()
    silenced = {
        'cluster = json.loads(os.environ.get("TF_CONFIG", "{}"))  # migrate: ignore[TFD501]': {"TFD501"},
        "resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()  # migrate: ignore": {"TFD001", "TFD502"},
        "op = tf.distribute.ReduceOp.SUM  # migrate: ignore[TFD999, TFD301]": {"TFD301"},
        "with eval_strategy.scope():  # migrate: ignore[TFD201]": {"TFD201"},
    }
    reported = {(f.line, f.rule) for f in findings("suppressions")}
    for line, rules in silenced.items():
        assert line in output, f"a silenced line was rewritten: {line!r}"
        assert not {(source.index(line) + 1, rule) for rule in rules} & reported
    # Silencing the construction's own rule keeps the strategy as a run-time object; a
    # silenced use makes the other strategy escape the same way.
    assert "strategy = tfd.MirroredStrategy()  # migrate: ignore[TFD101]" in output
    assert 'eval_strategy = tfd.OneDeviceStrategy("/cpu:0")' in output
    assert not findings("suppressions", rule="TFD101")
    # Other rules on a line still apply, and text in a string literal silences nothing.
    assert "mean = tfd.ReduceOp.MEAN  # migrate: ignore[TFD301] (only SUM is silenced here)" in output
    assert 'print("# migrate: ignore -- only text in a string", ops.ReduceOp.SUM)' in output
