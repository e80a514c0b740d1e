"""The tf.io.gfile rules (TFG8xx) do to local files what TF does.

One program of file operations runs twice in fresh directories laid out alike: as
written, under TensorFlow (in a subprocess), and converted by ``migrate`` (plain
Python, in a subprocess too, without TensorFlow). Both print what they saw as JSON;
it must be the same.
"""

from __future__ import annotations

import importlib.util

import pytest

from tests.helpers import convert, python_json

if importlib.util.find_spec("tensorflow") is None:
    pytest.skip("TensorFlow is not installed", allow_module_level=True)

PROGRAM = '''\
import json
import os
import sys

import tensorflow as tf

root = sys.argv[1]
out = {}


def p(*parts):
    return os.path.join(root, *parts)


def raises(call):
    try:
        call()
    except Exception:
        return True
    return False


tf.io.gfile.makedirs(p("a", "b", "c"))
tf.io.gfile.makedirs(p("a", "b", "c"))  # already there: no error, as os.makedirs(exist_ok=True)
tf.io.gfile.mkdir(p("d"))
tf.io.gfile.mkdir(p("d"))  # already there: no error either
with tf.io.gfile.GFile(p("a", "x.txt"), "w") as fh:
    fh.write("h\\u00e9llo\\nworld\\n")
with tf.io.gfile.GFile(p("a", "y.bin"), mode="wb") as fh:
    fh.write(bytes([0, 1, 255]))
with tf.io.gfile.GFile(name=p("a", "z.txt"), mode="w") as fh:
    fh.write("z")
with tf.io.gfile.GFile(p("a", "x.txt")) as fh:
    out["text"] = fh.read()
out["makedirs_on_a_file_raises"] = raises(lambda: tf.io.gfile.makedirs(p("a", "x.txt")))
with tf.io.gfile.GFile(p("a", "y.bin"), "rb") as fh:
    out["bytes"] = list(fh.read())
with tf.io.gfile.GFile(p("a", "x.txt"), "a") as fh:
    fh.write("more\\n")
with tf.io.gfile.GFile(p("a", "x.txt"), "r") as fh:
    out["lines"] = fh.readlines()
out["exists"] = [tf.io.gfile.exists(p("a")), tf.io.gfile.exists(p("a", "x.txt")), tf.io.gfile.exists(p("nope"))]
out["isdir"] = [tf.io.gfile.isdir(p("a")), tf.io.gfile.isdir(p("a", "x.txt")), tf.io.gfile.isdir(p("nope"))]
out["listdir"] = sorted(tf.io.gfile.listdir(p("a")))
out["glob"] = sorted(os.path.relpath(x, root) for x in tf.io.gfile.glob(p("a", "*.txt")))
out["glob_none"] = tf.io.gfile.glob(p("a", "*.csv"))
tf.io.gfile.remove(p("a", "y.bin"))
out["remove_missing_raises"] = raises(lambda: tf.io.gfile.remove(p("a", "y.bin")))
tf.io.gfile.rmtree(p("a", "b"))
out["after"] = sorted(os.listdir(p("a")))
print(json.dumps(out))
'''


def run(program: str, root) -> dict:
    root.mkdir()
    return python_json(program, str(root))


def test_converted_file_operations_match_tensorflow(tmp_path):
    converted, findings = convert(PROGRAM)
    assert "tensorflow" not in converted and "tf." not in converted, converted
    assert {f.rule for f in findings} == {"TFG801", "TFG802", "TFG803"}
    assert all(f.status == "converted" for f in findings)
    tf_saw = run(PROGRAM, tmp_path / "tf")
    assert tf_saw["text"] == "h\u00e9llo\nworld\n" and tf_saw["after"] == ["x.txt", "z.txt"]  # the program did its work
    assert run(converted, tmp_path / "converted") == tf_saw


@pytest.mark.parametrize(
    "call",
    ["tf.io.gfile.makedirs(path=d, mode=0o700)", "tf.io.gfile.GFile(path, 'r', encoding='latin-1')", "tf.io.gfile.glob(a, b)"],
)
def test_calls_that_do_not_fit_stay_and_are_reported(call):
    converted, findings = convert(f"import tensorflow as tf\n\nx = {call}\n")
    assert call in converted
    assert any(f.status == "manual" and f.rule.startswith("TFG") for f in findings), findings
