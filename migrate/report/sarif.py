"""``--format sarif``: the findings as a SARIF 2.1.0 log (GitHub code scanning, IDE viewers).

- One ``result`` per finding. ``level`` says who acts: ``error`` for *manual* (a
  person must change the code), ``warning`` for *runtime* (works through
  ``migrate.runtime``; worth a review), ``note`` for *converted* and *info*.
- Paths are relative to ``%SRCROOT%`` (the current directory when the log was
  written) where they can be, so the log is portable between checkouts.
- A notebook's location is the line of the ``.ipynb`` file holding the source line
  (what a viewer can open); the cell, line and column within the cell are in the
  result's ``properties`` and its message.
- A file that failed (cannot be read, parsed or written) is a tool execution
  notification, and ``executionSuccessful`` is false.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote_from_bytes

from migrate.report.model import Report, finding_cell

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"manual": "error", "runtime": "warning", "converted": "note", "info": "note"}


def _uri(path: str, root: str) -> tuple[str, bool]:
    """(URI reference, relative to the root?) for a path."""
    absolute = os.path.abspath(path)
    try:
        rel = os.path.relpath(absolute, root)
    except ValueError:  # another drive
        rel = ""
    if rel and not rel.startswith(".."):
        # Of the name's bytes, so a name that is not UTF-8 is still its own file (%FF...).
        return quote_from_bytes(os.fsencode(Path(rel).as_posix())), True
    return Path(absolute).as_uri(), False


def _rule_descriptor(rule) -> dict:
    help_text = f"{rule.summary}\n\nMindSpore: {rule.maps_to}\n\n{rule.difference}"
    out = {
        "id": rule.id,
        "name": "".join(part.capitalize() for part in rule.name.split("-")),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.difference},
        "help": {"text": help_text, "markdown": f"{rule.summary}\n\n**MindSpore:** {rule.maps_to}\n\n{rule.difference}"},
        "defaultConfiguration": {"level": LEVELS.get(rule.status, "note")},
        "properties": {"status": rule.status, "area": rule.area, "mapsTo": rule.maps_to, "tags": ["tensorflow", "mindspore", rule.area]},
    }
    if rule.links:
        out["helpUri"] = rule.links[0]
    return out


def to_sarif(report: Report, root: str | None = None) -> dict:
    root = os.path.abspath(root or os.getcwd())
    rules = list(report.rules)
    known = {r.id for r in rules}
    # Findings of a rule the report was not given still need a descriptor for ruleIndex.
    for entry in report.files:
        for f in entry.findings:
            if f.rule not in known:
                known.add(f.rule)
                rules.append(_Stub(f.rule, f.message, f.maps_to, f.status))
    index = {r.id: i for i, r in enumerate(rules)}
    results = []
    notifications = []
    for entry in report.files:
        uri, relative = _uri(entry.fs_path or entry.path, root)
        artifact = {"uri": uri, **({"uriBaseId": "SRCROOT"} if relative else {})}
        if entry.status == "failed":
            notifications.append(
                {
                    "level": "error",
                    "message": {"text": f"{entry.path}: {entry.error}"},
                    "locations": [{"physicalLocation": {"artifactLocation": artifact}}],
                }
            )
        for f in entry.findings:
            cell = finding_cell(f)
            if cell:
                region = {"startLine": max(1, getattr(f, "file_line", 0) or 1)}
                where = f"cell {cell}, line {f.line}, column {f.col}: "
                props = {"cell": cell, "cellLine": f.line, "cellColumn": f.col}
            else:
                region = {"startLine": f.line, "startColumn": f.col}
                where = ""
                props = {}
            results.append(
                {
                    "ruleId": f.rule,
                    "ruleIndex": index[f.rule],
                    "level": LEVELS.get(f.status, "note"),
                    "message": {"text": where + f.message},
                    "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": region}}],
                    "properties": {"status": f.status, "api": f.api, "mapsTo": f.maps_to, **props},
                }
            )
    run = {
        "tool": {
            "driver": {
                "name": "migrate",
                "version": report.tool_version,
                "semanticVersion": report.tool_version,
                "rules": [_rule_descriptor(r) for r in rules],
            }
        },
        "originalUriBaseIds": {"SRCROOT": {"uri": Path(root).as_uri() + "/"}},
        "invocations": [{"executionSuccessful": not notifications, "toolExecutionNotifications": notifications}],
        "results": results,
        "properties": {"summary": report.summary.as_dict(), "written": report.written},
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


class _Stub:
    """Enough of a rule for a descriptor, from a finding whose rule was not loaded."""

    def __init__(self, rule_id: str, summary: str, maps_to: str, status: str) -> None:
        self.id, self.name, self.summary, self.maps_to, self.status = rule_id, rule_id.lower(), summary, maps_to, status
        self.difference, self.area, self.links = summary, "unknown", ()


def render_sarif(report: Report, root: str | None = None) -> str:
    return json.dumps(to_sarif(report, root), indent=2, ensure_ascii=False) + "\n"
