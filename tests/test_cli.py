"""The command line: modes, exit codes, diagnostics, selection, configuration, rule docs."""

from __future__ import annotations

import io
import re

import pytest

from migrate import cli
from migrate.rules import default_rules_dir, load_rules_from
from tests.cli_helpers import PLAIN_SOURCE, REDUCE_SOURCE, TF_SOURCE, pyproject, run_migrate, snapshot, write, write_rule
from tests.helpers import convert

CONVERTED, _ = convert(TF_SOURCE)
DIAGNOSTIC = re.compile(r"^(?P<path>[^:\s]+):(?P<line>\d+):(?P<col>\d+): (?P<id>[A-Z]{2,5}\d{3}) (?P<message>\S.*)$")
SUMMARY = re.compile(r"^\d+ file\(s\) (changed|would change), \d+ unchanged, \d+ skipped, \d+ failed; \d+ line\(s\) changed; \d+ (finding\(s\) need a person|TF API use\(s\) found)$")


@pytest.fixture
def project(tmp_path):
    pyproject(tmp_path)
    return tmp_path


def diagnostics(stdout: str) -> list[tuple[str, int, int, str]]:
    out = []
    for line in stdout.splitlines():
        m = DIAGNOSTIC.match(line)
        assert m, f"not a `path:line:col: ID message` line: {line!r}"
        out.append((m["path"], int(m["line"]), int(m["col"]), m["id"]))
    return out


# -- convert, --diff, --check ---------------------------------------------------------------


def test_convert_in_place_exit_0_and_summary_on_stderr(project):
    f = write(project / "train.py", TF_SOURCE)
    proc = run_migrate("convert", "train.py", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert f.read_text() == CONVERTED
    last = proc.stderr.strip().splitlines()[-1]
    assert SUMMARY.match(last), last
    assert last.startswith("1 file(s) changed, 0 unchanged, 0 skipped, 0 failed;")


def test_quiet_drops_the_summary(project):
    write(project / "train.py", TF_SOURCE)
    proc = run_migrate("convert", "-q", "train.py", cwd=project)
    assert proc.returncode == 0 and proc.stderr == ""


def test_diff_prints_a_unified_diff_and_writes_nothing(project):
    write(project / "src" / "train.py", TF_SOURCE)
    write(project / "src" / "util.py", PLAIN_SOURCE)
    before = snapshot(project)
    proc = run_migrate("convert", "--diff", "src", cwd=project)
    assert proc.returncode == 1, proc.stderr
    assert snapshot(project) == before
    assert proc.stdout.startswith("--- a/src/train.py\n+++ b/src/train.py\n@@ ")
    assert "-import tensorflow as tf\n" in proc.stdout
    assert "+init()\n" in proc.stdout
    assert "util.py" not in proc.stdout
    assert "1 file(s) would change, 1 unchanged" in proc.stderr


def test_diff_applies_to_give_the_converted_file(project):
    """The diff is exact: applying it to the original gives what convert writes."""
    write(project / "train.py", TF_SOURCE)
    diff = run_migrate("convert", "--diff", "train.py", cwd=project).stdout
    lines = TF_SOURCE.splitlines(keepends=True)
    out, i = [], 0
    for hunk in re.split(r"^@@ .*\n", diff, flags=re.M)[1:]:
        for line in hunk.splitlines(keepends=True):
            if line.startswith(("-", " ")):
                assert lines[i] == line[1:], "context/removed line matches the original"
                i += 1
            if line.startswith(("+", " ")):
                out.append(line[1:])
    assert "".join(out + lines[i:]) == CONVERTED


def test_diff_on_a_clean_tree_exits_0_and_prints_nothing(project):
    write(project / "util.py", PLAIN_SOURCE)
    write(project / "done.py", CONVERTED)
    proc = run_migrate("convert", "--diff", ".", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""


def test_check_writes_nothing_and_exits_1_when_something_would_change(project):
    write(project / "train.py", TF_SOURCE)
    before = snapshot(project)
    proc = run_migrate("convert", "--check", ".", cwd=project)
    assert proc.returncode == 1
    assert snapshot(project) == before
    assert "1 file(s) would change" in proc.stderr


def test_check_exits_0_when_nothing_would_change(project):
    write(project / "done.py", CONVERTED)
    write(project / "util.py", PLAIN_SOURCE)
    proc = run_migrate("convert", "--check", ".", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_modes_are_mutually_exclusive(project):
    proc = run_migrate("convert", "--check", "--diff", ".", cwd=project)
    assert proc.returncode == 2 and "not allowed with" in proc.stderr


def test_no_command_prints_help_and_exits_2(project):
    proc = run_migrate(cwd=project)
    assert proc.returncode == 2
    assert "convert" in proc.stdout and "check" in proc.stdout and "rules" in proc.stdout


def test_errors_exit_2_even_with_check(project):
    write(project / "broken.py", "import tensorflow as tf\ndef f(:\n")
    write(project / "done.py", CONVERTED)
    for args in (["convert", "--check", "."], ["convert", "--diff", "."], ["check", "."]):
        proc = run_migrate(*args, cwd=project)
        assert proc.returncode == 2, args
        assert "broken.py: error: cannot parse" in proc.stderr


# -- findings that need a person --------------------------------------------------------------


LEGACY_SOURCE = "import legacy\n" + TF_SOURCE + "legacy.sync()\n"


def test_findings_needing_a_person_exit_1_after_converting(project):
    write_rule(project / "my_rules")
    pyproject(project, '[tool.migrate]\nrules-dirs = ["my_rules"]\n')
    f = write(project / "train.py", LEGACY_SOURCE)
    proc = run_migrate("convert", "train.py", cwd=project)
    assert proc.returncode == 1, proc.stderr
    assert diagnostics(proc.stdout) == [("train.py", 7, 1, "XTR901")]
    assert "replace legacy.sync by hand" in f.read_text(), "the flag leaves a marker in the code"
    assert "init()" in f.read_text()
    assert "1 finding(s) need a person" in proc.stderr
    # Nothing changes on a second run, but the person still has to act: still exit 1.
    again = run_migrate("convert", "train.py", cwd=project)
    assert again.returncode == 1 and "0 file(s) changed" in again.stderr


# -- migrate check ----------------------------------------------------------------------------


def test_check_command_lists_every_use_and_exits_1(project):
    write(project / "src" / "train.py", TF_SOURCE)
    write(project / "src" / "ops.py", REDUCE_SOURCE)
    write(project / "src" / "util.py", PLAIN_SOURCE)
    before = snapshot(project)
    proc = run_migrate("check", "src", cwd=project)
    assert proc.returncode == 1
    assert snapshot(project) == before
    found = diagnostics(proc.stdout)
    assert ("src/ops.py", 3, 6, "TFD301") in found
    assert ("src/train.py", 3, 12, "TFD101") in found
    assert ("src/train.py", 4, 6, "TFD201") in found
    assert not any(path.endswith("util.py") for path, *_ in found)
    assert SUMMARY.match(proc.stderr.strip().splitlines()[-1])


def test_check_command_exits_0_on_clean_code(project):
    write(project / "done.py", CONVERTED)
    write(project / "util.py", PLAIN_SOURCE)
    proc = run_migrate("check", ".", cwd=project)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout == ""


def test_check_command_exits_2_on_a_missing_path(project):
    proc = run_migrate("check", "nope", cwd=project)
    assert proc.returncode == 2 and "nope: error: no such file or directory" in proc.stderr


SUPPRESSED_SOURCE = """\
import tensorflow as tf

a = tf.distribute.ReduceOp.SUM  # migrate: ignore
b = tf.distribute.ReduceOp.SUM  # migrate: ignore[TFD301]
c = tf.distribute.ReduceOp.SUM  # migrate: ignore[TFD999]
d = tf.distribute.ReduceOp.SUM
e = tf.distribute.ReduceOp.SUM  # migrate: ignore[TFD001, TFD301]
s = "# migrate: ignore"; f = tf.distribute.ReduceOp.SUM
"""


def test_inline_suppression_silences_finding_and_rewrite(project):
    f = write(project / "ops.py", SUPPRESSED_SOURCE)
    proc = run_migrate("check", "ops.py", cwd=project)
    assert proc.returncode == 1
    # Line 8's marker is inside a string, not a comment: it silences nothing.
    assert [(line, rule) for _, line, _, rule in diagnostics(proc.stdout)] == [(5, "TFD301"), (6, "TFD301"), (8, "TFD301")]

    proc = run_migrate("convert", "ops.py", cwd=project)
    assert proc.returncode == 0, proc.stderr
    lines = f.read_text().splitlines()
    assert "a = tf.distribute.ReduceOp.SUM  # migrate: ignore" in lines
    assert "b = tf.distribute.ReduceOp.SUM  # migrate: ignore[TFD301]" in lines
    assert "e = tf.distribute.ReduceOp.SUM  # migrate: ignore[TFD001, TFD301]" in lines
    assert "c = ops.ReduceOp.SUM  # migrate: ignore[TFD999]" in lines
    assert "d = ops.ReduceOp.SUM" in lines
    assert 's = "# migrate: ignore"; f = ops.ReduceOp.SUM' in lines


def test_only_a_fully_suppressed_file_checks_clean(project):
    write(project / "ops.py", "import tensorflow as tf\n\nop = tf.distribute.ReduceOp.SUM  # migrate: ignore[TFD301]\n")
    proc = run_migrate("check", "ops.py", cwd=project)
    assert proc.returncode == 0, proc.stdout


def test_inline_suppression_on_a_strategy_constructor(project):
    source = TF_SOURCE.replace("MirroredStrategy()", "MirroredStrategy()  # migrate: ignore")
    f = write(project / "train.py", source)
    check = run_migrate("check", "train.py", cwd=project)
    assert all(line != 3 for _, line, _, _ in diagnostics(check.stdout)), check.stdout
    run_migrate("convert", "train.py", cwd=project)
    assert "strategy = tf.distribute.MirroredStrategy()  # migrate: ignore\n" in f.read_text()


# -- --select / --ignore and [tool.migrate] -----------------------------------------------------


def _check_ids(project, *args):
    proc = run_migrate("check", *args, "ops.py", cwd=project)
    assert proc.returncode in (0, 1), proc.stderr
    return sorted({rule for *_, rule in diagnostics(proc.stdout)})


def test_select_and_ignore_take_ids_prefixes_and_commas(project):
    write(project / "ops.py", REDUCE_SOURCE)
    assert _check_ids(project) == ["TFD301"]
    # Without the specific rule, the runtime fallback takes the name.
    assert _check_ids(project, "--ignore", "TFD301") == ["TFD001"]
    # Without either, the name stays unconverted, which the catch-all reports.
    assert _check_ids(project, "--ignore", "TFD301,TFD001") == ["TFU901"]
    assert _check_ids(project, "--ignore", "TFD3", "--ignore", "TFD00", "--ignore", "TFU") == []
    assert _check_ids(project, "--select", "TFD0") == ["TFD001"]
    assert _check_ids(project, "--select", "tfd301") == ["TFD301"]


def test_unknown_rule_code_is_an_error(project):
    write(project / "ops.py", REDUCE_SOURCE)
    proc = run_migrate("convert", "--select", "TFQ", "ops.py", cwd=project)
    assert proc.returncode == 2
    assert "'TFQ' is not a rule id or id prefix" in proc.stderr
    assert (project / "ops.py").read_text() == REDUCE_SOURCE


def test_selection_from_pyproject_and_flags_win(project):
    write(project / "ops.py", REDUCE_SOURCE)
    pyproject(project, '[tool.migrate]\nselect = ["TFD0"]\n')
    assert _check_ids(project) == ["TFD001"]
    assert _check_ids(project, "--select", "TFD3") == ["TFD301"]
    pyproject(project, '[tool.migrate]\nignore = ["TFD301"]\n')
    assert _check_ids(project) == ["TFD001"]
    # An explicit --config wins over the nearest pyproject.toml.
    write(project / "other.toml", '[tool.migrate]\nignore = ["TFD001"]\n')
    assert _check_ids(project, "--config", "other.toml") == ["TFD301"]


@pytest.mark.parametrize(
    "body,message",
    [
        ("[tool.migrate]\ncolour = 'blue'\n", "unknown keys: colour"),
        ("[tool.migrate]\njobs = 'two'\n", "jobs must be an integer from 1 to 1024, not 'two'"),
        ("[tool.migrate]\njobs = true\n", "jobs must be an integer from 1 to 1024"),
        ("[tool.migrate]\njobs = 0\n", "jobs must be an integer from 1 to 1024, not 0"),
        ("[tool.migrate]\njobs = 100000\n", "jobs must be an integer from 1 to 1024, not 100000"),
        ("[tool.migrate]\nmax-file-size = '1e400'\n", "max-file-size must be a positive size of at most 1TB"),
        ("[tool.migrate]\nmax-file-size = 'nanMB'\n", "max-file-size must be a positive size"),
        ("[tool.migrate]\nmax-file-size = 'infKB'\n", "max-file-size must be a positive size"),
        ("[tool.migrate]\nmax-file-size = -1\n", "max-file-size must be a positive size"),
        ("[tool.migrate]\nmax-file-size = 1.5\n", "max-file-size must be a positive size"),
        ("[tool.migrate]\nmax-file-size = 10000000000000\n", "max-file-size must be a positive size of at most 1TB"),
        ("[tool.migrate]\ncache-dir = 3\n", "cache-dir must be a directory name"),
        ("[tool.migrate]\nexclude = 'a'\nignore = {a = 1}\n", "ignore must be a list of strings"),
        (b"[tool.migrate]\nmax-file-size = '\xff'\n", "cannot read configuration: not UTF-8 text (byte 32)"),
        ("[tool.migrate]\nselect = [1]\n", "select must be a list of strings"),
        ("[tool]\nmigrate = 3\n", "[tool.migrate] must be a table"),
        ("[tool.migrate\n", "cannot read configuration"),
    ],
)
def test_bad_configuration_is_a_clear_error(project, body, message):
    write(project / "train.py", TF_SOURCE)
    write(project / "pyproject.toml", body)
    proc = run_migrate("convert", "train.py", cwd=project)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ")
    assert str(project / "pyproject.toml") in proc.stderr
    assert message in proc.stderr
    assert (project / "train.py").read_text() == TF_SOURCE


def test_configuration_is_found_above_the_paths(project):
    pyproject(project, "[tool.migrate]\ncolour = 1\n")
    write(project / "deep" / "er" / "train.py", TF_SOURCE)
    proc = run_migrate("check", "train.py", cwd=project / "deep" / "er")
    assert proc.returncode == 2 and "unknown keys: colour" in proc.stderr


# -- migrate rules ---------------------------------------------------------------------------------


def test_rules_lists_every_rule(project):
    proc = run_migrate("rules", cwd=project)
    assert proc.returncode == 0, proc.stderr
    listed = [line.split()[0] for line in proc.stdout.splitlines()]
    assert listed == sorted(r.id for r in load_rules_from(default_rules_dir()))  # read afresh, not cached
    assert any(line.startswith("TFD101  mirrored-strategy") for line in proc.stdout.splitlines())


def test_rules_explains_one_rule(project):
    rule = next(r for r in load_rules_from(default_rules_dir()) if r.id == "TFD101")
    proc = run_migrate("rules", "TFD101", cwd=project)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("TFD101 mirrored-strategy (strategy, converted)")
    assert rule.summary in out
    assert "Difference:" in out and rule.difference.splitlines()[0] in out
    assert "Example 1, before:" in out and "after:" in out
    assert "    strategy = tf.distribute.MirroredStrategy()" in out
    for i, example in enumerate(rule.examples, 1):
        assert (f"Example {i} (left unchanged):" if example.after is None else f"Example {i}, before:") in out
    # By lowercase id or by name, the same text.
    assert run_migrate("rules", "tfd101", cwd=project).stdout == out
    assert run_migrate("rules", "mirrored-strategy", cwd=project).stdout == out


def test_rules_unknown_id_exits_2(project):
    proc = run_migrate("rules", "TFD101", "TFD999", cwd=project)
    assert proc.returncode == 2
    assert "TFD999" in proc.stderr


def test_rules_includes_extra_rule_directories(project):
    write_rule(project / "my_rules")
    pyproject(project, '[tool.migrate]\nrules-dirs = ["my_rules"]\n')
    proc = run_migrate("rules", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert "XTR901  legacy-sync" in proc.stdout
    assert "replace legacy.sync by hand" not in proc.stdout
    detail = run_migrate("rules", "XTR901", cwd=project)
    assert detail.returncode == 0 and "legacy.sync" in detail.stdout


# -- interruption, progress --------------------------------------------------------------------------


def test_keyboard_interrupt_exits_130_with_a_message(tmp_path, monkeypatch, capsys):
    pyproject(tmp_path)
    write(tmp_path / "a.py", TF_SOURCE)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
        yield

    monkeypatch.setattr(cli, "run_files", interrupted)
    assert cli.main(["convert", str(tmp_path)]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert (tmp_path / "a.py").read_text() == TF_SOURCE


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_tty_and_only_for_50_files_or_more():
    tty = FakeTTY()
    bar = cli.Progress(50, True, stream=tty)
    for _ in range(50):
        bar()
    assert "\r[" in tty.getvalue() and "50/50 files" in tty.getvalue()
    assert "10/50 files" in tty.getvalue()
    bar.close()
    assert tty.getvalue().endswith("\r")

    for total, enabled, stream in ((49, True, FakeTTY()), (50, False, FakeTTY()), (50, True, io.StringIO())):
        bar = cli.Progress(total, enabled, stream=stream)
        for _ in range(total):
            bar()
        bar.close()
        assert stream.getvalue() == "", (total, enabled, type(stream).__name__)


def test_progress_is_cleared_before_error_lines(tmp_path, monkeypatch):
    pyproject(tmp_path)
    for i in range(55):
        write(tmp_path / f"m{i:02d}.py", PLAIN_SOURCE)
    write(tmp_path / "m25.py", "def f(:\n")
    tty = FakeTTY()
    monkeypatch.setattr("sys.stderr", tty)
    assert cli.main(["convert", "--check", str(tmp_path)]) == 2
    err = tty.getvalue()
    assert "55/55 files" in err
    error_line = next(line for line in err.split("\n") if "m25.py: error:" in line)
    *before, last = error_line.split("\r")
    assert last.startswith(str(tmp_path)) and before[-1].strip() == "", "the bar is erased before the error"
    assert "0 file(s) would change, 54 unchanged, 0 skipped, 1 failed" in err

    quiet = FakeTTY()
    monkeypatch.setattr("sys.stderr", quiet)
    assert cli.main(["convert", "--check", "-q", str(tmp_path)]) == 2
    assert "/55 files" not in quiet.getvalue()
