"""Every rule that binds a call's arguments binds them as TF's function does.

A rule's ``signature`` names TF's parameters: an argument passed by position binds to the
parameter at that position, one passed by keyword to the parameter of that name. A
signature whose positions differ from TF's would read ``tf.argmax(x, 1, tf.int32)``'s
third argument as the op's ``name`` (and drop it) where TF reads it as ``output_type``.
So each signature's positional parameters must be TF's first parameters, in TF's order,
and each of its keyword-only parameters one that TF's function has (TF's signatures
read with ``inspect`` in a process of their own). A call TF itself refuses (more
positional arguments than TF's function takes) may bind as it likes.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from migrate.ops.args import parse_signature
from migrate.rules import load_rules

if importlib.util.find_spec("tensorflow") is None:
    pytest.skip("TensorFlow is not installed", allow_module_level=True)

SIGNED = [(rule, name) for rule in load_rules() if "signature" in rule.params for name in rule.match
          if name.startswith("tensorflow.") and "." in name]

# A rule shared by two spellings whose parameter at one position has two names with one
# meaning: (rule, TF's name) -> the rule's name.
SAME_MEANING = {
    ("TFD107", "device_assignment"): "experimental_device_assignment",  # experimental.TPUStrategy's name of it
    ("TFF321", "device_name_or_function"): "device_name",  # tf.compat.v1.device's name of it (the scope dissolves)
    ("TFG805", "dirname"): "path",  # TF 1's gfile names of the path
    ("TFG805", "filename"): "path",
}

SCRIPT = r"""
import inspect, json, sys
import tensorflow
out = {}
for name in sys.argv[1:]:
    obj = tensorflow
    for part in name.split('.')[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if obj is None or not callable(obj):
        continue
    if inspect.isclass(obj):
        obj = obj.__init__
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        continue
    params = [p for p in sig.parameters.values() if p.name != 'self']
    out[name] = {
        'positional': [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)],
        'names': [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)],
        'varargs': any(p.kind == p.VAR_POSITIONAL for p in params),
        'kwargs': any(p.kind == p.VAR_KEYWORD for p in params),
    }
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def tf_signatures() -> dict:
    names = sorted({name for _, name in SIGNED})
    done = subprocess.run([sys.executable, "-c", SCRIPT, *names], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_signatures_bind_arguments_where_tf_does(tf_signatures):
    wrong = []
    # a keyword one of a rule's functions has (argsort's `stable`, not sort's) is its own
    names_of = {}
    for rule, name in SIGNED:
        names_of.setdefault(rule.id, set()).update(tf_signatures.get(name, {}).get("names", []))
    for rule, name in SIGNED:
        tf_sig = tf_signatures.get(name)
        if tf_sig is None or tf_sig["varargs"]:
            continue  # not a Python function TF lets us read, or one taking *args (its own binding)
        params = parse_signature(rule.params["signature"])
        positional = [p for p, _, kw_only in params if not kw_only]
        keyword_only = [p for p, _, kw_only in params if kw_only]
        # (positions past TF's last are calls TF refuses: shared with another spelling that has them)
        theirs = [SAME_MEANING.get((rule.id, p), p) for p in tf_sig["positional"]]
        if any(mine != their for mine, their in zip(positional, theirs)):
            wrong.append(f"{rule.id} {name}: positions {positional} != TF's {tf_sig['positional'][:len(positional)]}")
        unknown = [p for p in keyword_only if p not in names_of[rule.id]]
        if unknown and not tf_sig["kwargs"]:
            wrong.append(f"{rule.id} {name}: keyword-only {unknown} not among TF's {tf_sig['names']}")
    assert not wrong, "\n".join(wrong)
