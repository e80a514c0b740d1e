"""Imports the conversion adds never take a name the file already uses (migrate.engine.aliases)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from migrate.engine import aliases as aliasing
from migrate.engine.prune import _LINE, _Pruner
from migrate.engine.runner import RuleSelection, convert_source, rule_index
from migrate.ops import base
from migrate.rules import Import


def convert(code: str) -> str:
    result = convert_source(textwrap.dedent(code).encode(), rule_index(RuleSelection()), "case.py")
    assert result.status in ("changed", "unchanged"), result.error
    out = result.converted.decode()
    again = convert_source(result.converted, rule_index(RuleSelection()), "case.py")
    assert again.converted.decode() == out, "a second run changed the output"
    before, after = ast.parse(textwrap.dedent(code)), ast.parse(out)
    assert aliasing.shadowed_names(before, after) == set()
    return out


def added_aliases(code: str) -> dict[str, str]:
    code = textwrap.dedent(code)
    return aliasing.import_aliases(code, ast.parse(code), rule_index(RuleSelection()).added_imports)


TF_OPS = """\
import tensorflow as tf
from tensorflow.python.framework import ops


def f(x):
    y = ops.convert_to_tensor(x)
    return tf.identity(x + 1.0)
"""


def test_an_added_import_takes_another_name_where_the_file_binds_it():
    out = convert(TF_OPS)
    # Said once, as an info finding where the first converted code needs the import.
    said = [f for f in convert_source(TF_OPS.encode(), rule_index(RuleSelection()), "case.py").findings
            if "already uses" in f.message]
    assert [(f.line, f.status, f.message) for f in said] == [
        (7, "info", "`ops` is a name this file already uses: the converted code imports "
                    "`from mindspore import ops as ms_ops` and says `ms_ops`")]
    assert "from mindspore import ops as ms_ops\n" in out
    assert "from tensorflow.python.framework import ops\n" in out
    # The rule's own name is the alias. (A use of the file's TF `ops` inside the call would keep
    # the call TensorFlow: see migrate.engine.tfvalues.)
    assert "    return ms_ops.deepcopy(x + 1.0)\n" in out
    assert "    y = ops.convert_to_tensor(x)\n" in out


def test_the_same_import_already_there_is_no_conflict():
    code = "import tensorflow as tf\nfrom mindspore import ops\n\n\ndef f(x):\n    return tf.identity(ops.relu(x))\n"
    assert added_aliases(code) == {}
    out = convert(code)
    assert "    return ops.deepcopy(ops.relu(x))\n" in out
    assert out.count("from mindspore import ops") == 1


def test_the_files_own_import_of_the_module_under_another_name_is_reused():
    code = TF_OPS + "from mindspore import ops as mso\n"
    assert added_aliases(code) == {"ops": "mso"}
    out = convert(code)
    assert "    return mso.deepcopy(x + 1.0)\n" in out
    assert "ms_ops" not in out


def test_a_taken_alias_is_numbered():
    code = TF_OPS + "ms_ops = 3\n"
    assert added_aliases(code) == {"ops": "ms_ops_2"}
    assert "from mindspore import ops as ms_ops_2\n" in convert(code)


@pytest.mark.parametrize("use", [
    "y = x.ops",  # an attribute name
    "y = f(ops=1)",  # a keyword
    "y = 'ops'  # ops",  # a string and a comment
    "import mindspore.ops as ops",  # the very module, spelled otherwise
])
def test_what_is_not_a_conflict(use):
    code = f"import tensorflow as tf\n\n\ndef g(x, f):\n    {use}\n    return tf.identity(x)\n"
    assert added_aliases(code) == {}
    assert "    return ops.deepcopy(x)\n" in convert(code)


@pytest.mark.parametrize("use", [
    "def ops(): pass",
    "for ops in range(3): pass",
    "try:\n        pass\n    except Exception as ops:\n        pass",
    "global ops",
    "print(ops)",  # read, bound by nothing in the file (a star import, a builtin added at run time)
    "import numpy as ops",
    "[ops for ops in range(3)]",
    "(ops := 1)",
])
def test_what_is_a_conflict(use):
    code = f"import tensorflow as tf\n\n\ndef g(x):\n    {use}\n    return tf.identity(x)\n"
    assert added_aliases(code) == {"ops": "ms_ops"}
    assert "    return ms_ops.deepcopy(x)\n" in convert(code)


def test_ms_taken_imports_mindspore_by_its_own_name():
    code = "import tensorflow as tf\n\nms = 250\n\n\ndef f(x):\n    return tf.cast(x, tf.int64), ms\n"
    out = convert(code)
    assert "import mindspore\n" in out and "import mindspore as" not in out
    assert "    return ops.cast(x, mindspore.int64), ms\n" in out


def test_the_strategys_statements_use_the_aliases():
    code = """\
    import tensorflow as tf

    strategy = tf.distribute.MirroredStrategy()


    def build(init="zeros"):
        return init
    """
    out = convert(code)
    assert "from migrate.runtime.spmd import init as migrate_init\n" in out
    assert "\nmigrate_init()\nms.set_auto_parallel_context(" in out


def test_names_the_file_uses_only_in_set_aside_statements_count():
    # Long enough to be pruned: the statement binding `ops` has nothing to convert and is set
    # aside before libcst sees the file; the decision is made on the whole file's tree.
    filler = "".join(f"value_{i} = {i}\n" for i in range(60))
    code = "import tensorflow as tf\n\n" + filler + "ops = [abs, round]\n\n\ndef f(x):\n    return tf.identity(x)\n"
    out = convert(code)
    assert "from mindspore import ops as ms_ops\n" in out and "    return ms_ops.deepcopy(x)\n" in out


def test_rule_code_is_renamed_but_attribute_names_and_keywords_are_not():
    with base.import_aliases({"ops": "ms_ops", "ms": "mindspore"}):
        expression = base.parse_expression("ops.ops(ops=ms.float32, ms=ops)")
        statement = base.parse_statement("ms.set_auto_parallel_context(ops=ops)")
    assert base.parse_expression("x").__class__.__name__ == "Name"
    import libcst as cst

    assert cst.Module([]).code_for_node(expression) == "ms_ops.ops(ops=mindspore.float32, ms=ms_ops)"
    assert cst.Module([]).code_for_node(statement) == "mindspore.set_auto_parallel_context(ops=ms_ops)\n"
    # Outside, the cached parse is the rule's own text.
    assert cst.Module([]).code_for_node(base.parse_expression("ops.ops(ops=ms.float32, ms=ops)")) == \
        "ops.ops(ops=ms.float32, ms=ops)"


def test_templates_fill_the_files_code_after_the_renaming(monkeypatch):
    import libcst as cst

    user = cst.parse_expression("ops.convert_to_tensor(ms)")
    code = lambda node: cst.Module([]).code_for_node(node)  # noqa: E731
    with base.import_aliases({"ops": "ms_ops", "ms": "mindspore"}):
        ours = code(base.template_expression("ops.deepcopy({x}, ms.float32) + ops.abs({x})", x=user))
        # libcst without the template internals: the same code through its own function.
        monkeypatch.setattr(base, "unmangle_nodes", None)
        theirs = code(base.template_expression("ops.deepcopy({x}, ms.float32) + ops.abs({x})", x=user))
    expected = "ms_ops.deepcopy(ops.convert_to_tensor(ms), mindspore.float32) + ms_ops.abs(ops.convert_to_tensor(ms))"
    assert ours == expected and theirs == expected


def test_shadowed_names_finds_an_import_over_the_files_own_name():
    before = ast.parse("from tensorflow.python.framework import ops\nx = ops.convert_to_tensor(1)\n")
    after = ast.parse("from tensorflow.python.framework import ops\nfrom mindspore import ops\nx = ops.convert_to_tensor(1)\n")
    assert aliasing.shadowed_names(before, after) == {"ops"}
    assert aliasing.shadowed_names(before, ast.parse("from mindspore import ops as ms_ops\n")) == set()


def test_aliased_imports():
    assert str(aliasing.aliased(Import("mindspore", None, "ms"), "mindspore")) == "import mindspore"
    assert str(aliasing.aliased(Import("mindspore", "ops"), "ms_ops")) == "from mindspore import ops as ms_ops"
    assert str(aliasing.aliased(Import("migrate.runtime", "keras", "mk"), "migrate_mk")) == \
        "from migrate.runtime import keras as migrate_mk"
    # `import a.b` binds `a` and needs `a.b`: never aliased.
    added = aliasing.AddedImports.of(rule_index(RuleSelection()).rules)
    assert "ops" in added.by_name and all(i.obj or i.asname or "." not in i.module for i in added.by_name.values())


def _sources():
    root = Path(__file__).resolve().parent.parent / "fixtures"
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            continue
        yield path, text, tree


def test_the_pruners_bindings_are_those_read_off_the_tree():
    """The conversion takes them from the walk pruning makes anyway; both must agree."""
    index = rule_index(RuleSelection())
    checked = 0
    for path, text, tree in _sources():
        ours = _Pruner(text, _LINE.findall(text), tree, index).name_bindings()
        theirs = aliasing.Bindings.of(tree)
        ours.names.discard("*")  # (a star import's placeholder: names no variable)
        assert (ours.names, ours.imported, ours.other) == (theirs.names, theirs.imported, theirs.other), path
        checked += 1
    assert checked > 100


def test_no_two_rules_import_one_name_from_two_places():
    """One alias per name serves every rule only if every rule means the same thing by it."""
    seen: dict[str, tuple[str, str]] = {}
    for rule in rule_index(RuleSelection()).rules:
        for imp in rule.imports:
            name, what = aliasing.bound_name(imp), aliasing.target(imp)
            first = seen.setdefault(name, (what, rule.id))
            assert first[0] == what, f"{rule.id} imports {name} as {what}, {first[1]} as {first[0]}"
