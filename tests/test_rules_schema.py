"""The rule schema: a bad rule file is a RuleError naming the file, the field and the problem."""

from __future__ import annotations

import pytest

from migrate.rules import Import, RuleError, default_rules_dir, load_rules, load_rules_from, select_rules
from tests.cli_helpers import TF_SOURCE, pyproject, rule_yaml, run_migrate, write, write_rule


def test_a_valid_rule_loads(tmp_path):
    path = write_rule(tmp_path, area="custom")
    (rule,) = load_rules_from(tmp_path)
    assert (rule.id, rule.name, rule.area, rule.operation, rule.status) == ("XTR901", "legacy-sync", "custom", "flag", "manual")
    assert rule.match == ("legacy.sync",)
    assert rule.path == str(path)
    assert rule.examples[0].after is not None


def test_the_bundled_rules_load_and_follow_the_file_layout():
    rules = load_rules()
    assert rules, "rules/ holds rules"
    for rule in rules:
        assert rule.path.endswith(f"{rule.area}/{rule.id}-{rule.name}.yaml")
    assert str(default_rules_dir()) in rules[0].path


def _load_with(tmp_path, **overrides):
    path = write_rule(tmp_path, **overrides)
    with pytest.raises(RuleError) as info:
        load_rules_from(tmp_path)
    return path, info.value


# (overrides of the valid rule, field named, words of the problem)
BAD_FIELDS = {
    "missing-summary": ({"summary": None}, "summary", "is required"),
    "missing-examples": ({"examples": None}, "examples", "is required"),
    "match-not-a-list": ({"match": "legacy.sync"}, "match", "must be a list, not str"),
    "summary-not-a-string": ({"summary": 3}, "summary", "must be a str, not int"),
    "params-not-a-mapping": ({"params": ["message"]}, "params", "must be a dict, not list"),
    "summary-two-lines": ({"summary": "one\ntwo"}, "summary", "must be one line"),
    "unknown-field": ({"colour": "blue"}, "colour", "unknown field"),
    "unknown-operation": ({"operation": "explode"}, "operation", "unknown operation 'explode'"),
    "unknown-param": ({"params": {"message": "m", "colour": 1}}, "params", "has no parameter 'colour'"),
    "missing-param": ({"params": {}}, "params", "needs parameter 'message'"),
    "param-wrong-type": ({"params": {"message": 3}}, "params", "parameter 'message' must be str"),
    "param-not-parseable": ({"params": {"message": "m", "to": "a b ("}}, "params", ""),
    "bad-status": ({"status": "done"}, "status", "must be one of"),
    "bad-match-name": ({"match": ["legacy sync"]}, "match[0]", "is not a dotted name"),
    "empty-match-entry": ({"match": [""]}, "match[0]", "must be a non-empty string"),
    "no-match-at-all": ({"match": []}, "match", "must match at least one"),
    "bad-import": ({"imports": ["include <legacy>"]}, "imports[0]", "must be 'import a.b [as c]'"),
    "example-not-a-mapping": ({"examples": ["before"]}, "examples[0]", "must be a mapping"),
    "example-without-after": ({"examples": [{"before": "x\n"}]}, "examples[0]", "'before' and 'after'"),
    "only-unchanged-examples": ({"examples": [{"unchanged": "x\n"}]}, "examples", "at least one before/after pair"),
    "facts-not-a-mapping": ({"facts": ["keras_model"]}, "facts", "must be a dict, not list"),
    "unknown-fact": ({"facts": {"keras_fit": ["legacy.sync"]}}, "facts", "'keras_fit' is not a fact (known: keras_model, gradient_tape)"),
    "fact-of-a-name-not-matched": ({"facts": {"keras_model": ["legacy.other"]}}, "facts.keras_model", "'legacy.other' is not one of the names the rule matches"),
    "fact-names-not-a-list": ({"facts": {"gradient_tape": "legacy.sync"}}, "facts.gradient_tape", "must be a list"),
}


@pytest.mark.parametrize("overrides,field,problem", list(BAD_FIELDS.values()), ids=list(BAD_FIELDS))
def test_bad_field_names_file_field_and_problem(tmp_path, overrides, field, problem):
    path, err = _load_with(tmp_path, **overrides)
    assert err.path == str(path)
    assert err.field == field
    assert problem in err.problem
    assert str(err).startswith(f"{path}: field '{field}': ")


@pytest.mark.parametrize(
    "rule_id",
    ["tfd101", "TFD1", "TFD1011", "T101", "TOOLONG101", "TFD-101"],
)
def test_bad_id(tmp_path, rule_id):
    path, err = _load_with(tmp_path, rule_id=rule_id, name="legacy-sync")
    assert (err.path, err.field) == (str(path), "id")
    assert "must look like 'TFD101'" in err.problem


def test_id_must_be_a_string(tmp_path):
    path = write(tmp_path / "custom" / "XTR901-legacy-sync.yaml", rule_yaml().replace("id: XTR901", "id: 901"))
    with pytest.raises(RuleError) as info:
        load_rules_from(tmp_path)
    assert (info.value.path, info.value.field) == (str(path), "id")
    assert "must be a str, not int" in info.value.problem


@pytest.mark.parametrize("name", ["Legacy-Sync", "legacy_sync", "-legacy", "legacy sync"])
def test_bad_name(tmp_path, name):
    path = write(tmp_path / "custom" / f"XTR901-{name}.yaml", rule_yaml(name=name))
    with pytest.raises(RuleError) as info:
        load_rules_from(tmp_path)
    assert (info.value.path, info.value.field) == (str(path), "name")
    assert "lowercase slug" in info.value.problem


@pytest.mark.parametrize("file_name", ["XTR902-legacy-sync.yaml", "XTR901-other-name.yaml", "legacy-sync.yaml", "XTR901.yaml"])
def test_file_name_must_be_id_dash_name(tmp_path, file_name):
    path = write(tmp_path / "custom" / file_name, rule_yaml())
    with pytest.raises(RuleError) as info:
        load_rules_from(tmp_path)
    assert (info.value.path, info.value.field) == (str(path), "name")
    assert "file must be named XTR901-legacy-sync.yaml" in info.value.problem


@pytest.mark.parametrize(
    "text,problem",
    [
        ("id: XTR901\nname: [unclosed\n", "is not valid YAML"),
        ("id: XTR901\n  name: bad-indent\n", "is not valid YAML"),
        ("", "must be a mapping of fields"),
        ("- just\n- a list\n", "must be a mapping of fields"),
        ("just a string\n", "must be a mapping of fields"),
    ],
)
def test_not_a_yaml_mapping(tmp_path, text, problem):
    path = write_rule(tmp_path, text=text)
    with pytest.raises(RuleError) as info:
        load_rules_from(tmp_path)
    assert (info.value.path, info.value.field) == (str(path), "<file>")
    assert problem in info.value.problem


def test_not_utf8(tmp_path):
    path = write_rule(tmp_path, text="")
    path.write_bytes(rule_yaml().encode() + b"# caf\xe9\n")
    with pytest.raises(RuleError) as info:
        load_rules_from(tmp_path)
    assert (info.value.path, info.value.field) == (str(path), "<file>")
    assert "cannot be read" in info.value.problem


def test_misplaced_or_misnamed_files_are_errors_not_ignored(tmp_path):
    write_rule(tmp_path)
    yml = write(tmp_path / "custom" / "XTR902-other.yml", rule_yaml("XTR902", "other"))
    with pytest.raises(RuleError) as info:
        load_rules_from(tmp_path)
    assert info.value.path == str(yml) and ".yml" in info.value.problem
    yml.unlink()
    top = write(tmp_path / "XTR902-other.yaml", rule_yaml("XTR902", "other"))
    with pytest.raises(RuleError) as info:
        load_rules_from(tmp_path)
    assert info.value.path == str(top) and "<area>" in info.value.problem


def test_duplicate_ids(tmp_path):
    write_rule(tmp_path, area="one")
    second = write_rule(tmp_path, area="two")
    with pytest.raises(RuleError) as info:
        load_rules_from(tmp_path)
    assert (info.value.path, info.value.field) == (str(second), "id")
    assert "XTR901" in info.value.problem and "one" in info.value.problem


def test_duplicate_of_a_bundled_id(tmp_path):
    clash = write_rule(tmp_path, rule_id="TFD101", name="my-mirrored")
    with pytest.raises(RuleError) as info:
        load_rules((str(tmp_path),))
    assert (info.value.path, info.value.field) == (str(clash), "id")
    assert "TFD101-mirrored-strategy.yaml" in info.value.problem


def test_empty_directory(tmp_path):
    with pytest.raises(RuleError) as info:
        load_rules_from(tmp_path)
    assert info.value.path == str(tmp_path) and "holds no rules" in info.value.problem


def test_import_parsing():
    assert Import.parse("import mindspore as ms") == Import("mindspore", None, "ms")
    assert Import.parse("from mindspore.communication import init") == Import("mindspore.communication", "init", None)
    assert str(Import.parse("from a.b import c as d")) == "from a.b import c as d"
    with pytest.raises(ValueError):
        Import.parse("import a as")


def test_select_rules_by_id_and_prefix():
    rules = load_rules()
    ids = [r.id for r in select_rules(rules, select=("TFD1",))]
    assert ids and all(i.startswith("TFD1") for i in ids)
    ids = [r.id for r in select_rules(rules, ignore=("TFD1", "TFD001"))]
    assert ids and not any(i.startswith("TFD1") or i == "TFD001" for i in ids)
    assert [r.id for r in select_rules(rules, select=("TFD101",))] == ["TFD101"]


# -- through the command line --------------------------------------------------------------------


def test_bad_rule_in_rules_dirs_is_exit_2_with_the_message(tmp_path):
    bad = write_rule(tmp_path / "tools" / "rules", operation="explode")
    pyproject(tmp_path, '[tool.migrate]\nrules-dirs = ["tools/rules"]\n')
    src = write(tmp_path / "train.py", TF_SOURCE)
    for args in (["convert", "train.py"], ["check", "train.py"], ["rules"]):
        proc = run_migrate(*args, cwd=tmp_path)
        assert proc.returncode == 2, args
        assert proc.stderr.startswith(f"error: {bad}: field 'operation': unknown operation 'explode'"), proc.stderr
    assert src.read_text() == TF_SOURCE


def test_invalid_yaml_in_rules_dirs_through_the_cli(tmp_path):
    bad = write_rule(tmp_path / "my_rules", text="id: [\n")
    pyproject(tmp_path, '[tool.migrate]\nrules-dirs = ["my_rules"]\n')
    proc = run_migrate("check", ".", cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{bad}: field '<file>': is not valid YAML" in proc.stderr


def test_missing_rules_dir_through_the_cli(tmp_path):
    pyproject(tmp_path, '[tool.migrate]\nrules-dirs = ["nowhere"]\n')
    proc = run_migrate("rules", cwd=tmp_path)
    assert proc.returncode == 2
    assert str(tmp_path / "nowhere") in proc.stderr and "holds no rules" in proc.stderr
