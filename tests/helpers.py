"""Shared helpers for the codemod tests."""

from __future__ import annotations

import libcst as cst

from migrate.engine.runner import RuleSelection, convert_source, rule_index


def convert(code: str, select: tuple[str, ...] = ()) -> tuple[str, list]:
    result = convert_source(code.encode("utf-8"), rule_index(RuleSelection(select=select)), "example.py")
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
