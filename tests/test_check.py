"""``migrate check``: the CI and pre-commit guard against TF distribute code creeping back in.

Exit 1 and one ``path:line:col: ID message`` line per use of a mapped TF API (in a
notebook ``path:cell N:line:col: ID message``), 0 when clean, 2 on errors. Never
writes. Selection, configuration and suppression details are in test_cli.py; these
tests cover what the guard is for.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.cli_helpers import PLAIN_SOURCE, pyproject, run_migrate, snapshot, write

LINE = re.compile(r"^(?P<path>[^:]+?)(?::cell (?P<cell>\d+))?:(?P<line>\d+):(?P<col>\d+): (?P<id>[A-Z]{2,5}\d{3}) (?P<message>\S.*)$")

CLUSTER_SOURCE = """\
import json
import os

import tensorflow as tf

os.environ["TF_CONFIG"] = json.dumps({"cluster": {}})
resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="")
tf.config.experimental_connect_to_cluster(resolver)
tf.tpu.experimental.initialize_tpu_system(resolver)
strategy = tf.distribute.TPUStrategy(resolver)
"""

TRAIN_SOURCE = """\
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = build()
loss = strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)
"""


@pytest.fixture
def project(tmp_path):
    pyproject(tmp_path)
    return tmp_path


def parse(stdout: str) -> list[tuple]:
    out = []
    for line in stdout.splitlines():
        m = LINE.match(line)
        assert m, f"not a diagnostic line: {line!r}"
        out.append((m["path"], int(m["cell"]) if m["cell"] else None, int(m["line"]), int(m["col"]), m["id"]))
    return out


def notebook_text(*sources: list[str]) -> str:
    cells = [{"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Training"]}]
    for i, source in enumerate(sources):
        cells.append({"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [], "source": source})
    nb = {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1) + "\n"


def test_every_mapped_api_is_reported_not_only_strategies(project):
    write(project / "cluster.py", CLUSTER_SOURCE)
    proc = run_migrate("check", "--quiet", "cluster.py", cwd=project)
    assert proc.returncode == 1
    assert proc.stderr == ""  # --quiet: findings only
    found = [(line, col, rule) for _, _, line, col, rule in parse(proc.stdout)]
    assert (6, 12, "TFD501") in found  # the TF_CONFIG literal
    assert (7, 12, "TFD502") in found  # a cluster resolver
    assert (8, 1, "TFD503") in found  # tf.config.experimental_connect_to_cluster
    assert (9, 1, "TFD504") in found  # tf.tpu.experimental.initialize_tpu_system
    assert (10, 12, "TFD107") in found  # TPUStrategy
    assert {rule for *_, rule in found} == {"TFD501", "TFD502", "TFD503", "TFD504", "TFD107"}


def test_check_never_writes_and_lists_files_in_order(project):
    write(project / "b" / "train.py", TRAIN_SOURCE)
    write(project / "a" / "cluster.py", CLUSTER_SOURCE)
    write(project / "a" / "util.py", PLAIN_SOURCE)
    before = snapshot(project)
    proc = run_migrate("check", ".", cwd=project)
    assert proc.returncode == 1
    assert snapshot(project) == before
    paths = [path for path, *_ in parse(proc.stdout)]
    assert paths == sorted(paths, key=lambda p: p.split("/")[0]) and set(paths) == {"a/cluster.py", "b/train.py"}
    assert [(line, rule) for path, _, line, _, rule in parse(proc.stdout) if path == "b/train.py"] == [
        (3, "TFD101"), (4, "TFD201"), (6, "TFD204"), (6, "TFD301")
    ]


def test_converted_code_checks_clean(project):
    write(project / "train.py", TRAIN_SOURCE)
    assert run_migrate("check", "train.py", cwd=project).returncode == 1
    assert run_migrate("convert", "train.py", cwd=project).returncode == 0
    proc = run_migrate("check", "train.py", cwd=project)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout == ""


def test_a_file_that_does_not_parse_is_exit_2_and_the_rest_still_reported(project):
    write(project / "train.py", TRAIN_SOURCE)
    write(project / "broken.py", "import tensorflow as tf\ndef f(:\n")
    proc = run_migrate("check", ".", cwd=project)
    assert proc.returncode == 2
    assert "broken.py: error: cannot parse: line 2" in proc.stderr
    assert [rule for *_, rule in parse(proc.stdout)] == ["TFD101", "TFD201", "TFD204", "TFD301"]


def test_suppressed_uses_do_not_fail_the_check(project):
    source = CLUSTER_SOURCE.replace('json.dumps({"cluster": {}})', 'json.dumps({"cluster": {}})  # migrate: ignore[TFD501]')
    write(project / "cluster.py", source)
    rules = {rule for *_, rule in parse(run_migrate("check", "cluster.py", cwd=project).stdout)}
    assert "TFD501" not in rules and "TFD107" in rules
    pyproject(project, '[tool.migrate]\nignore = ["TFD5"]\n')
    rules = {rule for *_, rule in parse(run_migrate("check", "cluster.py", cwd=project).stdout)}
    # Without TFD502 the resolver falls to the run-time fallback; the cluster set-up calls
    # TFD503/TFD504 would have removed stay, reported as unconverted TF (TFU901).
    assert rules == {"TFD107", "TFD001", "TFU901"}


# -- notebooks --------------------------------------------------------------------------------------


def test_notebook_findings_name_cell_and_line(project):
    write(
        project / "explore.ipynb",
        notebook_text(
            ["%matplotlib inline\n", "import tensorflow as tf"],
            ["strategy = tf.distribute.MirroredStrategy()\n", "with strategy.scope():\n", "    model = build()"],
            ["!pip list\n", "loss = strategy.reduce(tf.distribute.ReduceOp.SUM, l, axis=None)  # migrate: ignore[TFD301]"],
        ),
    )
    before = snapshot(project)
    proc = run_migrate("check", ".", cwd=project)
    assert proc.returncode == 1, proc.stderr
    assert snapshot(project) == before
    assert parse(proc.stdout) == [
        ("explore.ipynb", 3, 1, 12, "TFD101"),
        ("explore.ipynb", 3, 2, 6, "TFD201"),
        ("explore.ipynb", 4, 2, 8, "TFD204"),
    ]
    assert proc.stdout.splitlines()[0].startswith("explore.ipynb:cell 3:1:12: TFD101 ")


def test_a_malformed_notebook_is_exit_2_and_untouched(project):
    write(project / "bad.ipynb", '{"cells": [')
    write(project / "train.py", TRAIN_SOURCE)
    before = snapshot(project)
    for command in (["check", "."], ["convert", "."]):
        proc = run_migrate(*command, cwd=project)
        assert proc.returncode == 2
        assert "bad.ipynb: error: not valid JSON" in proc.stderr
    assert snapshot(project)["bad.ipynb"] == before["bad.ipynb"]


def test_excluded_notebooks_are_not_checked(project):
    pyproject(project, '[tool.migrate]\nexclude = ["scratch/*"]\n')
    write(project / "scratch" / "try.ipynb", notebook_text(["import tensorflow as tf\n", "tf.distribute.MirroredStrategy()"]))
    proc = run_migrate("check", ".", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
