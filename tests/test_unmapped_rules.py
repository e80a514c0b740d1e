"""TFU901: what no rule converts stays and is reported, with MindSpore's counterpart from a data table."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap

import pytest

from migrate.engine.index import RuleIndex
from migrate.rules import load_rules
from tests.helpers import convert

RULE = next(r for r in load_rules() if r.id == "TFU901")
# Names the table keeps for code written against older TF releases.
GONE_FROM_INSTALLED_TF = {"tf.estimator"}


def resolve(dotted: str):
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(dotted)


@pytest.mark.parametrize("tf_name", sorted(RULE.params["counterparts"]))
def test_every_mindspore_counterpart_exists(tf_name):
    target = RULE.params["counterparts"][tf_name]
    assert target.startswith("mindspore."), target
    pytest.importorskip("mindspore")
    resolve(target)  # raises if the installed MindSpore has no such name


def test_every_tf_name_in_the_tables_exists_in_tensorflow():
    names = sorted((set(RULE.params["counterparts"]) | set(RULE.params["notes"])) - GONE_FROM_INSTALLED_TF)
    script = textwrap.dedent("""\
        import sys, tensorflow
        for name in sys.argv[1:]:
            obj = tensorflow
            for part in name.split(".")[1:]:
                obj = getattr(obj, part, None)
            if obj is None:
                print(name)
    """)
    done = subprocess.run([sys.executable, "-c", script, *names], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == []


def test_each_use_is_a_finding_but_a_statement_gets_one_comment():
    source = "import tensorflow as tf\n\nx = tf.qux(tf.foo(1), tf.foo(2), tf.bar())\ny = tf.foo(3)\n"
    code, findings = convert(source)
    unmapped = [f for f in findings if f.rule == "TFU901"]
    assert [(f.line, f.api) for f in unmapped] == [(3, "tensorflow.qux"), (3, "tensorflow.foo"), (3, "tensorflow.foo"), (3, "tensorflow.bar"), (4, "tensorflow.foo")]
    assert all(f.status == "manual" for f in unmapped)
    markers = [line for line in code.splitlines() if line.startswith("# migrate: TFU901")]
    assert len(markers) == 2
    assert markers[0].count("`tf.foo`") == 1 and "`tf.qux`" in markers[0] and "`tf.bar`" in markers[0]
    assert convert(code)[0] == code  # stable: a second run adds nothing


def test_the_longest_listed_prefix_names_the_counterpart():
    _, findings = convert("import tensorflow as tf\n\ntf.summary.audio('clip', clip, 16000, step=3)\n")
    (finding,) = [f for f in findings if f.rule == "TFU901"]
    assert "`tf.summary.audio` is not converted; MindSpore: `mindspore.SummaryRecord`" in finding.message


def test_a_rule_that_matched_but_could_not_convert_explains_instead():
    code, findings = convert("import tensorflow as tf\n\ny = tf.transpose(x, conjugate=True)\n")
    assert [f.rule for f in findings] == ["TFM213"]
    assert "# migrate: TFM213 not converted" in code


def test_names_not_from_tensorflow_are_not_reported():
    code, findings = convert("import numpy as tf\n\ny = tf.frobnicate(3)\n")
    assert not findings and "# migrate" not in code


def test_keras_only_files_are_examined():
    index = RuleIndex(load_rules())
    assert index.may_match("import keras\n\nboard = keras.callbacks.TensorBoard()\n")
    assert not index.may_match("import numpy as np\n\nx = np.zeros(3)\n")


def test_prefix_look_up_does_not_scan_every_rule():
    """Candidates come from dictionary look-ups on the name's own prefixes."""
    index = RuleIndex(load_rules())
    found = index.candidates("tensorflow.keras.callbacks.RemoteMonitor")
    assert [rule.id for rule, _ in found] == ["TFU901"]
    assert found[0][1] == ".keras.callbacks.RemoteMonitor"
    assert [r.id for r, _ in index.candidates("tensorflow.distribute.Strategy.foo")][-2:] == ["TFD001", "TFU901"]
