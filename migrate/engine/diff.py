"""Unified diffs of Python source, and the count of lines they change (what `--diff`, the
summary and the report show for a .py file; notebooks build theirs per cell on these)."""

from __future__ import annotations

import difflib
import io
import tokenize


def decode_source(data: bytes) -> str:
    """Source bytes as text, the way Python reads them (BOM, coding cookie, else UTF-8);
    undecodable bytes are replaced, never an error."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        encoding = "utf-8"
    try:
        return data.decode(encoding, "replace")
    except LookupError:
        return data.decode("utf-8", "replace")


def source_lines(data: bytes) -> list[str]:
    return decode_source(data).splitlines(keepends=True)


def python_diff(label: str, original: bytes, converted: bytes) -> str:
    """The unified diff of one source file, a missing final newline marked as ``diff`` marks it."""
    old, new = source_lines(original), source_lines(converted)
    if old and not old[-1].endswith(("\n", "\r")):
        old[-1] += "\n\\ No newline at end of file\n"
    if new and not new[-1].endswith(("\n", "\r")):
        new[-1] += "\n\\ No newline at end of file\n"
    return "".join(difflib.unified_diff(old, new, f"a/{label}", f"b/{label}"))


def python_changed_lines(original: bytes, converted: bytes) -> int:
    """``count_changed_lines(python_diff(...))`` without writing the diff out: the lines removed
    or added, in the same line matching the diff is made from. (The diff's "No newline at end
    of file" marker makes no two lines equal that were not, nor the reverse.)"""
    matcher = difflib.SequenceMatcher(None, source_lines(original), source_lines(converted))
    return sum((i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


def count_changed_lines(diff: str) -> int:
    return sum(1 for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++ ", "--- ")))
