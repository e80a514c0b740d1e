"""A plan: the action chosen for each node, and what it found (plain data, built by
:class:`migrate.engine.planner.Planner` and applied by :class:`migrate.engine.rewriter.Rewriter`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from migrate.engine.findings import Finding
from migrate.rules import Rule


@dataclass
class Action:
    rule: Rule
    node: cst.CSTNode  # the original node the operation rewrites
    match: cst.CSTNode  # the matched reference (for positions and messages)
    api: str
    suffix: str = ""
    status: str = ""
    detail: object = None  # what a block operation decided while planning, for its rewrite


@dataclass
class Plan:
    refs: dict[cst.CSTNode, Action] = field(default_factory=dict)
    calls: dict[cst.CSTNode, Action] = field(default_factory=dict)
    scope_items: dict[cst.CSTNode, Action] = field(default_factory=dict)
    statements: dict[cst.CSTNode, Action] = field(default_factory=dict)
    blocks: dict[cst.CSTNode, Action] = field(default_factory=dict)  # statements a block operation replaces
    markers: dict[cst.CSTNode, list[str]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
