"""Shared helpers for the codemod tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import libcst as cst

from migrate.engine.runner import RuleSelection, convert_source, rule_index


def convert(code: str, select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> tuple[str, list]:
    result = convert_source(code.encode("utf-8"), rule_index(RuleSelection(select=select, ignore=ignore)), "example.py")
    assert result.status != "failed", result.error
    return result.converted.decode("utf-8"), result.findings


def assert_converts(before: str, after: str | None) -> None:
    """Output equals ``after`` (or the input), parses, and a second run changes nothing."""
    once, _ = convert(before)
    expected = before if after is None else after
    assert once == expected, f"--- got ---\n{once}\n--- expected ---\n{expected}"
    cst.parse_module(once)
    twice, _ = convert(once)
    assert twice == once, f"second run changed the output:\n{twice}"


# -- the converted tree is the tree its code reads back as ------------------------------------

_LAYOUT = (cst.LeftParen, cst.RightParen, cst.Comma, cst.SimpleWhitespace, cst.ParenthesizedWhitespace,
           cst.TrailingWhitespace, cst.Newline, cst.EmptyLine, cst.Semicolon, cst.AssignEqual, cst.Colon, cst.Dot)


def shape(node: cst.CSTNode) -> tuple:
    """A node's structure without its layout (whitespace, parentheses, commas): two trees
    with the same shape read the same, whatever their spacing."""
    value = getattr(node, "value", None)
    leaf = value if isinstance(value, str) else None
    children = tuple(shape(c) for c in node.children if not isinstance(c, _LAYOUT))
    if isinstance(node, cst.IndentedBlock) and not node.body:  # libcst writes an empty block as `pass`
        children += (_PASS,)
    return (type(node).__name__, leaf, children)


_PASS = ("SimpleStatementLine", None, (("Pass", None, ()),))


class ReadsBackAsBuilt:
    """While active, every module the engine turns into code must parse back into a tree of
    the same shape: a rewrite that put, say, a lambda where a call's function stood without
    parentheses (``lambda: x()``) makes code that parses but means something else."""

    def __init__(self) -> None:
        from migrate.engine import convert

        self._module = convert._libcst_speed
        self._original = self._module.code

    def __enter__(self) -> ReadsBackAsBuilt:
        original = self._original

        def checked(module, positions):
            code = original(module, positions)
            reread = cst.parse_module(code)
            assert shape(reread) == shape(module), f"the converted code reads back as another tree:\n{code}"
            return code

        self._module.code = checked
        return self

    def __exit__(self, *exc) -> None:
        self._module.code = self._original


def python_json(code: str, *args: str, timeout: float = 300, script=None, **env: str) -> dict:
    """Run ``code`` in a fresh interpreter (TensorFlow never beside MindSpore, on the CPU) and
    read the JSON line it prints last; with ``script`` (a path), from that file, written with
    ``code`` (MindSpore's GRAPH_MODE compiles cells of files only)."""
    environ = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "3", **env}
    if script is not None:
        script.write_text(code, encoding="utf-8")
    command = [sys.executable, *([str(script)] if script is not None else ["-c", code]), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=environ,
                          cwd=script.parent if script is not None else None)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# Values as JSON the same way on TensorFlow's side (in the code a test runs with `python_json`) and
# on ours: `plain(value)` gives dtype ("string" for text), shape and the values, text decoded,
# NaN and infinities spelled out. `PLAIN_JSON` is the code; `plain` is it, here.
PLAIN_JSON = r"""
def clean(item):
    if isinstance(item, list):
        return [clean(i) for i in item]
    if isinstance(item, bytes):
        return item.decode()
    if isinstance(item, float) and item != item:
        return "nan"
    if isinstance(item, float) and item in (float("inf"), float("-inf")):
        return str(item)
    return item


def plain(value):
    value = np.asarray(value.asnumpy() if hasattr(value, "asnumpy") else value)
    return {"dtype": "string" if value.dtype.kind in "OS" else value.dtype.name, "shape": list(value.shape),
            "value": clean(value.tolist())}"""
_plain_scope: dict = {}


def plain(value) -> dict:
    if not _plain_scope:  # (NumPy only where a test compares values: the engine's tests run without it)
        exec("import numpy as np\n" + PLAIN_JSON, _plain_scope)
    return _plain_scope["plain"](value)
