"""Notebooks: code cells converted as one module, everything else kept byte for byte."""

from __future__ import annotations

import json

import pytest

from migrate.engine.runner import RuleSelection, rule_index
from migrate.notebook import CellFinding, cell_sources, convert_notebook, mask_cell, parse_notebook, unified_diff


@pytest.fixture(scope="module")
def index():
    return rule_index(RuleSelection())


def code(source, cell_id="c", **extra):
    cell = {"cell_type": "code", "execution_count": None, "id": cell_id, "metadata": {}, "outputs": [], "source": source}
    cell.update(extra)
    return cell


def markdown(source, cell_id="m"):
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": source}


def notebook(*cells, language="python"):
    return {
        "cells": list(cells),
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": language, "name": "python3"},
            "language_info": {"name": language, "version": "3.11.0"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def lines(text):
    return text.splitlines(keepends=True)


def dump(nb, indent=1, ensure_ascii=False, newline="\n", final="\n", separators=None):
    text = json.dumps(nb, indent=indent, ensure_ascii=ensure_ascii, separators=separators) + final
    return text.replace("\n", newline).encode("utf-8")


TRAINING = notebook(
    markdown(lines("# Training\nWith `tf.distribute.MirroredStrategy()` <script>alert(1)</script>\n"), "intro"),
    code(lines("%matplotlib inline\nimport numpy as np\nimport tensorflow as tf\n!pip install tensorflow==2.21"), "imports"),
    code(
        lines(
            "strategy = tf.distribute.MirroredStrategy()\n"
            "with strategy.scope():\n"
            "    model = build()  # é, 模型\n"
            "    %time warm_up(model)\n"
        ),
        "setup",
        execution_count=3,
        outputs=[{"name": "stdout", "output_type": "stream", "text": ["ready\n"]}],
        metadata={"tags": ["setup"], "collapsed": False},
    ),
    code("%%bash\necho tf.distribute.MirroredStrategy\n", "shell"),
    code(lines("loss = strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)\nprint(loss)"), "train"),
    code([], "empty"),
)

EXPECTED_SOURCES = {
    2: (
        "import mindspore as ms\n"
        "from migrate.runtime import spmd\n"
        "from migrate.runtime.spmd import init\n"
        "from mindspore import ops\n"
        "\n"
        "%matplotlib inline\n"
        "import numpy as np\n"
        "!pip install tensorflow==2.21"
    ),
    3: (
        "init()\n"
        "ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=False, parameter_broadcast=True)\n"
        "model = build()  # é, 模型\n"
        "%time warm_up(model)\n"
    ),
    5: "loss = spmd.reduce(ops.ReduceOp.SUM, per_replica, axis=None)\nprint(loss)",
}


def with_sources(nb, sources):
    out = json.loads(json.dumps(nb))
    for number, text in sources.items():
        cell = out["cells"][number - 1]
        cell["source"] = lines(text) if isinstance(cell["source"], list) else text
    return out


def test_cells_convert_as_one_module_and_the_rest_is_untouched(index):
    raw = dump(TRAINING)
    result = convert_notebook(raw, index, "train.ipynb")
    assert result.status == "changed", result.error
    # Exactly what nbformat would write after editing those three sources: ids, outputs,
    # metadata, the markdown cell, the %%bash cell and the formatting are all as they were.
    assert result.converted == dump(with_sources(TRAINING, EXPECTED_SOURCES))
    # The strategy made in cell 3 resolved in cell 5 (a static rewrite, not the run-time shim).
    assert "spmd.reduce" in json.loads(result.converted)["cells"][4]["source"][0]
    again = convert_notebook(result.converted, index, "train.ipynb")
    assert again.status == "unchanged" and again.converted == result.converted


def test_findings_name_the_cell_and_the_line_within_it(index):
    raw = dump(TRAINING)
    result = convert_notebook(raw, index, "train.ipynb")
    assert all(isinstance(f, CellFinding) for f in result.findings)
    got = [(f.cell, f.line, f.col, f.rule, f.status) for f in result.findings]
    assert got == [
        (3, 1, 12, "TFD101", "converted"),
        (3, 2, 6, "TFD201", "converted"),
        (5, 1, 8, "TFD204", "converted"),
        (5, 1, 24, "TFD301", "converted"),
    ]
    first = result.findings[0]
    assert first.format() == f"train.ipynb:cell 3:1:12: TFD101 {first.message}"
    # file_line points into the .ipynb text at that very source line.
    text_lines = raw.decode().splitlines()
    for f in result.findings:
        cell_source = TRAINING["cells"][f.cell - 1]["source"]
        wanted = json.dumps(cell_source[f.line - 1])
        assert text_lines[f.file_line - 1].strip().rstrip(",") == wanted


@pytest.mark.parametrize(
    "style",
    [
        {"indent": 1},
        {"indent": 2},
        {"indent": 4},
        {"indent": 1, "ensure_ascii": True},
        {"indent": 1, "newline": "\r\n"},
        {"indent": 1, "final": ""},
        {"indent": None},
        {"indent": None, "separators": (",", ":")},
    ],
    ids=["nbformat", "indent2", "indent4", "ascii-escapes", "crlf", "no-final-newline", "one-line", "compact"],
)
def test_json_formatting_is_kept(index, style):
    raw = dump(TRAINING, **style)
    result = convert_notebook(raw, index, "train.ipynb")
    assert result.status == "changed", result.error
    assert result.converted == dump(with_sources(TRAINING, EXPECTED_SOURCES), **style)


def test_key_order_and_a_string_source_are_kept(index):
    cell = {"source": "import tensorflow as tf\nn = tf.distribute.MirroredStrategy().num_replicas_in_sync\n", "outputs": [], "metadata": {}, "cell_type": "code", "execution_count": None}
    nb = {"nbformat_minor": 4, "nbformat": 4, "metadata": {}, "cells": [cell]}
    result = convert_notebook(dump(nb), index, "n.ipynb")
    assert result.status == "changed", result.error
    out = json.loads(result.converted)
    assert list(out) == ["nbformat_minor", "nbformat", "metadata", "cells"]
    assert list(out["cells"][0]) == list(cell)
    assert isinstance(out["cells"][0]["source"], str)
    assert result.converted == dump({**nb, "cells": [{**cell, "source": out["cells"][0]["source"]}]})


def test_magics_and_shell_escapes_survive(index):
    nb = notebook(
        code(lines("import tensorflow as tf\nfiles = !ls -la\nhelp_me = 1\ntf.distribute?\n%load_ext autoreload\n"), "a"),
        code(
            lines(
                "%%time\n"
                "strategy = tf.distribute.MirroredStrategy()\n"
                "with strategy.scope():\n"
                "    !nvidia-smi \\\n"
                "        --query\n"
                "    msg = ('%s'\n"
                "           % size)\n"
            ),
            "b",
        ),
    )
    result = convert_notebook(dump(nb), index, "m.ipynb")
    assert result.status == "changed", result.error
    cells = [c.source for c in cell_sources(result.converted)]
    assert "files = !ls -la\n" in cells[0] and "tf.distribute?\n" in cells[0] and "%load_ext autoreload\n" in cells[0]
    # The cell magic stays first; the shell escape moved out of the unwrapped block with its continuation.
    assert cells[1].startswith("%%time\ninit()\n")
    assert "\n!nvidia-smi \\\n    --query\n" in cells[1]
    # A `%` that continues an expression is Python, not a magic: it was converted with the rest.
    assert "msg = ('%s'\n       % size)\n" in cells[1]


def test_a_cell_magic_cell_is_not_python_and_is_left_alone(index):
    shell = "%%bash\nexport TF_CONFIG='{}'\npython -c 'import tensorflow as tf; tf.distribute.MirroredStrategy()'\n"
    nb = notebook(code(shell, "a"), code(lines("x = 1\n"), "b"))
    raw = dump(nb)
    result = convert_notebook(raw, index, "s.ipynb")
    assert result.status == "unchanged" and result.findings == []
    assert result.converted == raw


def test_masking_decides_by_statement_start():
    masked = mask_cell("x = ('%d'\n  % 3)\n%env A=1\ns = '''\n!not a shell line\n'''\n", "_P_", [0])
    assert masked.code == "x = ('%d'\n  % 3)\n_P_0__\ns = '''\n!not a shell line\n'''\n"
    assert masked.magics == {0: ("", "%env A=1")}


def ipython_dedent(source):
    """IPython's leading_indent: the first non-blank line's indentation off every line that starts with it."""
    rows = source.splitlines(keepends=True)
    first = next((r for r in rows if r.strip()), "")
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    return "".join(r[len(indent):] if indent and r.startswith(indent) else r for r in rows)


def test_an_indented_cell_is_dedented_as_ipython_does_and_keeps_its_indentation(index):
    pasted = (
        "  strategy = tf.distribute.MirroredStrategy()\n"
        "  with strategy.scope():\n"
        "      model = build()\n"
        "\n"
        "  total = strategy.reduce(tf.distribute.ReduceOp.SUM, v, axis=None)  # kept\n"
    )
    nb = notebook(code(lines("import tensorflow as tf\n"), "a"), code(lines(pasted), "b"))
    result = convert_notebook(dump(nb), index, "i.ipynb")
    assert result.status == "changed", result.error
    cells = [c.source for c in cell_sources(result.converted)]
    assert cells[1] == (
        "  init()\n"
        "  ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=False, parameter_broadcast=True)\n"
        "  model = build()\n"
        "\n"
        "  total = spmd.reduce(ops.ReduceOp.SUM, v, axis=None)  # kept\n"
    )
    compile(ipython_dedent(cells[1]), "cell", "exec")
    # Columns are those of the cell as written.
    got = {(f.line, f.col, f.rule) for f in result.findings if f.cell == 2}
    assert (1, 14, "TFD101") in got and (5, 11, "TFD204") in got
    again = convert_notebook(result.converted, index, "i.ipynb")
    assert again.status == "unchanged" and again.converted == result.converted


def test_a_cell_indented_only_on_its_first_line_keeps_its_other_lines(index):
    # IPython takes the first line's indentation off the lines that have it; the others stay.
    source = " x = tf.constant([1.0,\n               2.0])\nprint(x)  # as written\n"
    nb = notebook(code(lines("import tensorflow as tf\n"), "a"), code(lines(source), "b"))
    result = convert_notebook(dump(nb), index, "f.ipynb")
    assert result.status == "changed", result.error
    cell = cell_sources(result.converted)[1].source
    assert cell.startswith(" x = ms.Tensor([1.0,\n") and cell.endswith("\nprint(x)  # as written\n")
    compile(ipython_dedent(cell), "cell", "exec")


def test_an_indented_cell_that_does_not_parse_names_the_column_as_written(index):
    nb = notebook(code(lines("import tensorflow as tf\n"), "a"), code(lines("    x = 1\n    y = (2,,)\n"), "b"))
    result = convert_notebook(dump(nb), index, "e.ipynb")
    assert result.status == "failed"
    assert "cell 2, line 2, column 12" in result.error, result.error


@pytest.mark.parametrize("line", ["pip install -q tensorflow==2.21", "cd data/train", "ls ./data/train/", "load_ext tensorboard"])
def test_a_one_line_cell_ipython_runs_as_a_magic_survives(index, line):
    nb = notebook(code(lines("import tensorflow as tf\nx = tf.constant(1.0)\n"), "a"), code(line, "b"))
    result = convert_notebook(dump(nb), index, "m.ipynb")
    assert result.status == "changed", result.error
    assert cell_sources(result.converted)[1].source == line


def test_automagic_is_for_one_line_cells_and_lines_that_are_not_python():
    # Python that starts with a magic's name stays Python (converted as such), assignments included.
    for python in ("ls", "time.sleep(1)", "env = {'A': 1}", "pwd()", "history = await fetch()", "cd, ls = 1, 2"):
        assert mask_cell(python, "_P_", [0]).magics == {}, python
    # IPython drops leading blank lines, then applies automagic if one line is left (trailing blank lines count).
    assert mask_cell("\ncd data\n", "_P_", [0]).code == "\n_P_0__\n"
    assert mask_cell("cd data\n\n", "_P_", [0]).magics == {}
    assert mask_cell("cd data\nx = 1\n", "_P_", [0]).magics == {}


def test_a_first_cell_that_gains_imports_keeps_its_magics_working(index):
    # The imports go to the first code cell: a one-line automagic cell gets its `%` (automagic
    # is for one-line cells only), and a cell magic stays the cell's first line.
    for first, expected in (("pip install -q tensorflow", "%pip install -q tensorflow"), ("%%time\nx = 1\n", None)):
        nb = notebook(code(lines(first), "a"), code(lines("import tensorflow as tf\ny = tf.add_n([a, b])\n"), "b"))
        result = convert_notebook(dump(nb), index, "f.ipynb")
        assert result.status == "changed", result.error
        cell = cell_sources(result.converted)[0].source
        assert "from mindspore import ops" in cell
        if expected:
            assert cell.endswith("\n" + expected) and "\npip" not in cell
        else:
            assert cell.startswith("%%time\n") and cell.count("%%time") == 1
        again = convert_notebook(result.converted, index, "f.ipynb")
        assert again.status == "unchanged" and again.converted == result.converted


def test_an_indented_cell_stays_valid_when_its_first_line_goes(index):
    # The first (indented) line is removed as a duplicate import; a column-0 comment would
    # become the first line, and IPython would take nothing off: every line gets the indent.
    nb = notebook(code(lines("import tensorflow as tf\nx = tf.add_n([a, b])\n"), "a"),
                  code(lines("    import tensorflow as tf\n# c\n    y = tf.add_n([x])\n"), "b"))
    result = convert_notebook(dump(nb), index, "g.ipynb")
    assert result.status == "changed", result.error
    cell = cell_sources(result.converted)[1].source
    converted = ipython_dedent(cell)
    compile(converted, "cell", "exec")
    assert "ops.addn([x])" in converted
    again = convert_notebook(result.converted, index, "g.ipynb")
    assert again.status == "unchanged" and again.converted == result.converted


def test_lines_added_inside_an_indented_cell_get_its_indentation():
    from migrate.notebook import _reindent

    masked = mask_cell("    def f():\n        a = 1\n\n        return a\n", "_P_", [0])
    out = _reindent("def f():\n    a = 1\n    b = 2\n\n    return a\n", masked)
    assert out == "    def f():\n        a = 1\n        b = 2\n\n        return a\n"


@pytest.mark.parametrize(
    "raw, message",
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "top level is not a JSON object"),
        (json.dumps({"nbformat": 3, "worksheets": []}).encode(), "nbformat 3 is not supported"),
        (json.dumps({"nbformat": 4, "cells": {}}).encode(), "'cells' is not a list"),
        (json.dumps({"nbformat": 4, "cells": [{"cell_type": "code", "source": 3}]}).encode(), "cell 1: 'source' must be"),
        (b"\xff\xfe{}", "not UTF-8"),
    ],
    ids=["json", "array", "nbformat3", "cells", "source", "encoding"],
)
def test_malformed_notebook_is_an_error_and_left_as_it_was(index, raw, message):
    result = convert_notebook(raw, index, "bad.ipynb")
    assert result.status == "failed"
    assert message in result.error and "left as it was" in result.error
    assert result.original == raw and result.converted == b""


def test_syntax_error_names_the_cell_and_line(index):
    nb = notebook(code(lines("import tensorflow as tf\n"), "a"), code(lines("x = 1\ndef broken(:\n    pass\n"), "b"))
    result = convert_notebook(dump(nb), index, "e.ipynb")
    assert result.status == "failed"
    assert "cell 2, line 2" in result.error


def test_other_kernels_are_skipped(index):
    nb = notebook(code(lines("library(tensorflow)\n"), "a"), language="R")
    raw = dump(nb)
    result = convert_notebook(raw, index, "r.ipynb")
    assert result.status == "skipped" and "not a Python notebook" in result.error
    assert result.converted == raw


def test_notebook_without_tf_is_unchanged_byte_for_byte(index):
    nb = notebook(markdown(["# notes"]), code(lines("import numpy as np\nnp.zeros(3)\n"), "a"))
    raw = dump(nb, indent=2)
    result = convert_notebook(raw, index, "plain.ipynb")
    assert result.status == "unchanged" and result.converted == raw and result.findings == []


def test_a_byte_order_mark_is_kept(index):
    raw = b"\xef\xbb\xbf" + dump(TRAINING)
    result = convert_notebook(raw, index, "bom.ipynb")
    assert result.status == "changed", result.error
    assert result.converted == b"\xef\xbb\xbf" + dump(with_sources(TRAINING, EXPECTED_SOURCES))


def test_imports_go_to_the_first_code_cell_even_when_tf_is_imported_later(index):
    nb = notebook(
        code(lines("%matplotlib inline\n"), "a"),
        code(lines("import tensorflow as tf\nn = tf.distribute.MirroredStrategy().num_replicas_in_sync\n"), "b"),
    )
    result = convert_notebook(dump(nb), index, "late.ipynb")
    assert result.status == "changed", result.error
    first, second = (c.source for c in cell_sources(result.converted))
    assert first == "from mindspore.communication import get_group_size\n\n%matplotlib inline\n"
    assert "tensorflow" not in second


def test_diff_is_per_cell(index):
    raw = dump(TRAINING)
    result = convert_notebook(raw, index, "train.ipynb")
    diff = unified_diff(result.original, result.converted, "nb/train.ipynb")
    headers = [line for line in diff.splitlines() if line.startswith(("--- ", "+++ "))]
    assert headers == [
        "--- a/nb/train.ipynb:cell 2",
        "+++ b/nb/train.ipynb:cell 2",
        "--- a/nb/train.ipynb:cell 3",
        "+++ b/nb/train.ipynb:cell 3",
        "--- a/nb/train.ipynb:cell 5",
        "+++ b/nb/train.ipynb:cell 5",
    ]
    assert "-strategy = tf.distribute.MirroredStrategy()\n" in diff


def test_parse_locates_every_source(index):
    raw = dump(TRAINING, indent=None)
    nb = parse_notebook(raw)
    text = raw.decode()
    for cell, data in zip(nb.cells, TRAINING["cells"]):
        start, end = cell.span
        assert json.loads(text[start:end]) == data["source"]


SAMPLES = ("tutorial_custom_loop", "trainer_self_strategy", "alias_from_imports", "keras_fit_in_scope")


def _split_into_cells(text: str) -> list[str]:
    """Cells at blank-line-separated top-level statements, as people lay out notebooks."""
    lines = text.splitlines(keepends=True)
    cells, current = [], []
    for i, line in enumerate(lines):
        starts = line.strip() and not line[0].isspace() and not line.startswith((")", "]", "}", "#", "else", "elif", "except", "finally"))
        if current and starts and i and not lines[i - 1].strip():
            cells.append("".join(current))
            current = []
        current.append(line)
    cells.append("".join(current))
    return cells


def _shape(code: str) -> tuple[list[str], list[str]]:
    """Imports (as a sorted list: they may land in another cell) and the other non-blank lines in order."""
    lines = [line for line in code.splitlines() if line.strip()]
    is_import = [line.startswith(("import ", "from ")) for line in lines]
    return sorted(l for l, i in zip(lines, is_import) if i), [l for l, i in zip(lines, is_import) if not i]


@pytest.mark.parametrize("name", SAMPLES)
def test_a_script_split_into_cells_converts_like_the_script(index, name):
    from pathlib import Path

    from migrate.engine.runner import convert_source

    path = Path(__file__).resolve().parent.parent / "fixtures" / "convert" / name / "input.py"
    if not path.exists():
        pytest.skip(f"fixture {name} is gone")
    text = path.read_text()
    cells = _split_into_cells(text)
    assert len(cells) > 2
    raw = dump(notebook(*(code(lines(c), f"c{i}") for i, c in enumerate(cells))))
    as_notebook = convert_notebook(raw, index, "nb.ipynb")
    as_script = convert_source(text.encode(), index, "nb.py")
    assert as_notebook.status == as_script.status == "changed", as_notebook.error
    joined = "".join(c.source for c in cell_sources(as_notebook.converted))
    assert _shape(joined) == _shape(as_script.converted.decode())
    assert sorted((f.rule, f.status, f.message) for f in as_notebook.findings) == sorted((f.rule, f.status, f.message) for f in as_script.findings)


def test_repeated_keys_count_once_the_last_time_as_json_reads_them(index):
    raw = (
        b'{"cells": [{"cell_type": "code", "source": "old"}], "nbformat": 4, "nbformat_minor": 5, "metadata": {},\n'
        b' "cells": [{"cell_type": "code", "source": "x = 1\\n", "outputs": [], "metadata": {},\n'
        b'   "source": ["import tensorflow as tf\\n", "n = tf.distribute.MirroredStrategy().num_replicas_in_sync"]}]}\n'
    )
    result = convert_notebook(raw, index, "dup.ipynb")
    assert result.status == "changed", result.error
    text = result.converted.decode()
    assert text.startswith('{"cells": [{"cell_type": "code", "source": "old"}]')  # the first one is not touched
    assert '"source": "x = 1\\n"' in text
    assert json.loads(text)["cells"][0]["source"][-1] == "n = get_group_size()"
