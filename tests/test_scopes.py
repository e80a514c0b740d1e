"""Context managers that dissolve: what their items computed stays, names bound by `as` only when unread."""

from __future__ import annotations

import pytest

from tests.helpers import assert_converts, convert

HOIST = "tfdebug.assert_positive(x)\n"


def test_computed_dependencies_run_before_the_with_they_led():
    before = ("import tensorflow as tf\n\n"
              "with tf.control_dependencies([tf.debugging.assert_positive(x)]), open(f) as g:\n"
              "    y = g.read()\n")
    after = ("from migrate.runtime import tfdebug\n\n"
             f"{HOIST}with open(f) as g:\n"
             "    y = g.read()\n")
    assert_converts(before, after)


def test_dependencies_after_another_item_stay_for_a_person():
    code, findings = convert("import tensorflow as tf\n\n"
                             "with open(f) as g, tf.control_dependencies([tf.debugging.assert_positive(x)]):\n"
                             "    y = g.read()\n")
    assert "with open(f) as g, tf.control_dependencies(" in code
    assert [f.rule for f in findings if f.status == "manual"] == ["TFF322"]


@pytest.mark.parametrize("deps, stays", [("deps", False), ("make_deps()", True), ("[*deps, check(x)]", True)])
def test_dependencies_not_written_out(deps, stays):
    code, _ = convert(f"import tensorflow as tf\n\nwith tf.control_dependencies({deps}):\n    y = 1\n")
    assert ("tf.control_dependencies" in code) == stays, code


def test_an_unconverted_dependency_keeps_its_mark_on_its_statement():
    code, findings = convert("import tensorflow as tf\n\n"
                             "with tf.control_dependencies([tf.raw_ops.Foo(x), flag]):  # why\n"
                             "    y = 3\n")
    assert code == ("import tensorflow as tf\n\n"
                    "# migrate: TFU901 `tf.raw_ops.Foo` is not converted; MindSpore's API mapping lists no direct counterpart\n"
                    "tf.raw_ops.Foo(x)\n# why\ny = 3\n")
    assert [f.rule for f in findings if f.status == "manual"] == ["TFU901"]


def test_one_line_body():
    assert_converts("import tensorflow as tf\n\n"
                    "with tf.control_dependencies([tf.debugging.check_numerics(x, 'x')]): y = 4\n",
                    "from migrate.runtime import tfdebug\n\ntfdebug.check_numerics(x, 'x')\ny = 4\n")


SCOPES = """import tensorflow as tf

def loop(levels):
    for level in levels:
        with tf.name_scope('level_%d' % level) as scope:
            y = g(level, scope_arg=None)
    return y

def warm(self, step):
    with tf.name_scope(self.name or 'WarmUp') as name:
        return f(step, name=name)

def loop_read(levels):
    scope = "a"
    for level in levels:
        print(scope)
        with tf.name_scope('level_%d' % level) as scope:
            y = g(level)
    return y

def after(x):
    with tf.name_scope("n") as s:
        y = x
    return s

def nested(x):
    def inner():
        return s
    with tf.name_scope("n") as s:
        y = x
    return inner

def earlier(x, s=None):
    print(s.upper)
    with tf.name_scope("n") as s:
        return x
"""


def test_an_as_name_dissolves_only_when_nothing_reads_it_later():
    code, findings = convert(SCOPES)
    manual = sorted(f.line for f in findings if f.rule == "TFF320" and f.status == "manual")
    # kept: `warm` (read in the body), `loop_read` (read before, but in the loop), `after`, `nested`
    assert manual == [10, 17, 22, 29], code
    assert "with tf.name_scope('level_%d' % level) as scope:\n            y = g" not in code.split("def warm")[0]
    assert "    print(s.upper)\n    return x\n" in code


@pytest.mark.parametrize("read, dissolves", [
    ("tf.cond(step < 1, lambda: step, lambda: 1.0, name=name)", True),  # TFM237 leaves `name` out
    ("tf.cond(step < 1, lambda: name, lambda: 1.0)", False),  # read in a branch the conversion keeps
    ("tf.raw_ops.Foo(x=step, name=name)", False),  # a call that stays TensorFlow keeps its `name`
])
def test_an_as_name_read_only_in_arguments_the_conversion_leaves_out_dissolves(read, dissolves):
    code, findings = convert(f"import tensorflow as tf\n\ndef warm(step):\n"
                             f"    with tf.name_scope('w') as name:\n        return {read}\n")
    assert ("as name:" not in code) == dissolves, code
    assert ("TFF320" in [f.rule for f in findings if f.status == "manual"]) != dissolves
    assert convert(code)[0] == code  # (the second run had dissolved what the first kept)


def test_a_computed_assignment_expression_keeps_its_parentheses_as_a_statement():
    code, _ = convert("import tensorflow as tf\n\n"
                      "with tf.control_dependencies([ok := tf.debugging.assert_positive(x)]):\n    y = 1\n")
    assert "\n(ok := tfdebug.assert_positive(x))\ny = 1\n" in code
    compile(code, "case.py", "exec")


@pytest.mark.parametrize("code", [
    "def build():\n    global scope\n    with tf.name_scope('n') as scope:\n        return 1\n",
    "def outer():\n    s = None\n    def inner():\n        nonlocal s\n        with tf.name_scope('n') as s:\n"
    "            return 1\n    inner()\n    return s\n",
    "class A:\n    with tf.name_scope('n') as scope:\n        x = 1\n",
])
def test_an_as_name_of_another_scope_is_not_dissolved(code):
    out, findings = convert("import tensorflow as tf\n\n" + code)
    assert "tf.name_scope('n') as" in out
    assert [f.rule for f in findings if f.status == "manual"] == ["TFF320"]
