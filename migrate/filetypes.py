"""Python files and notebooks: which conversion and which diff a path takes.

The engine converts Python source; :mod:`migrate.notebook` converts a notebook's code
cells through it. This module, above both, is where a path's suffix decides between
them, for the command line, the report and the run's worker processes
(:func:`convert_file` is what :func:`migrate.engine.runner.run_files` is given).
"""

from __future__ import annotations

from pathlib import Path

from migrate import notebook
from migrate.engine import runner
from migrate.engine.diff import count_changed_lines, python_changed_lines, python_diff
from migrate.engine.paths import NOTEBOOK_SUFFIX
from migrate.engine.results import ConvertOptions, FileResult


def is_notebook(path: str) -> bool:
    return path.endswith(NOTEBOOK_SUFFIX)


def convert_file(data: bytes, index, path: str, max_bytes: int | None = runner.MAX_FILE_BYTES,
                 options: ConvertOptions | None = None) -> FileResult:
    """Convert a file's bytes: a notebook cell by cell, anything else as Python source; the
    result's changed lines counted (in the worker that converted it, so the summary only adds)."""
    if is_notebook(path):
        # Outputs make notebooks big: their bytes are not limited, their code's syntax nodes are.
        result = notebook.convert_notebook(data, index, path, runner.node_budget(max_bytes), options)
    else:
        result = runner.convert_bytes(data, index, path, max_bytes, options)
    result.lines_changed = changed_line_count(path, result.original, result.converted) if result.changed else 0
    return result


def file_diff(path: str, original: bytes, converted: bytes) -> str:
    """The unified diff of one file (labelled with ``path``); a notebook's is per changed code cell."""
    label = Path(path).as_posix()
    if is_notebook(path):
        return notebook.unified_diff(original, converted, label)
    return python_diff(label, original, converted)


def changed_line_count(path: str, original: bytes, converted: bytes) -> int:
    """The lines :func:`file_diff` shows removed or added."""
    if is_notebook(path):
        return count_changed_lines(file_diff(path, original, converted))
    return python_changed_lines(original, converted)
