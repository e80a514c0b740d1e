"""``--format json``: the report as one JSON document.

Its shape is the JSON Schema in ``schema/report.schema.json`` (shipped in the
package; ``schema_path()`` finds it). ``version`` changes when a field changes
meaning or goes away; new fields may appear without a new version.
"""

from __future__ import annotations

import json
from importlib import resources

from migrate.report.model import Report, finding_cell

FORMAT_VERSION = 1
SCHEMA_ID = "urn:migrate-tf2ms:report:1"


def schema() -> dict:
    return json.loads(resources.files("migrate.report").joinpath("schema/report.schema.json").read_text(encoding="utf-8"))


def finding_dict(f) -> dict:
    out = {
        "rule": f.rule,
        "status": f.status,
        "line": f.line,
        "col": f.col,
        "message": f.message,
        "api": f.api,
        "maps_to": f.maps_to,
    }
    cell = finding_cell(f)
    if cell:
        out["cell"] = cell
    return out


def rule_dict(rule, count: int) -> dict:
    return {
        "id": rule.id,
        "name": rule.name,
        "area": rule.area,
        "status": rule.status,
        "summary": rule.summary,
        "maps_to": rule.maps_to,
        "difference": rule.difference,
        "match": list(rule.match) + list(rule.match_strings) + [f"<any>{t}" for t in rule.match_tails],
        "links": list(rule.links),
        "occurrences": count,
    }


def to_dict(report: Report) -> dict:
    per_rule: dict[str, int] = {}
    for row in report.apis:
        per_rule[row.rule] = per_rule.get(row.rule, 0) + row.total
    return {
        "$schema": SCHEMA_ID,
        "version": FORMAT_VERSION,
        "tool": {"name": "migrate", "version": report.tool_version},
        "written": report.written,
        "summary": report.summary.as_dict(),
        "apis": [
            {"api": r.api, "rule": r.rule, "maps_to": r.maps_to, "status": r.status, "occurrences": r.total, "counts": dict(sorted(r.counts.items()))}
            for r in report.apis
        ],
        "rules": [rule_dict(r, per_rule.get(r.id, 0)) for r in report.rules],
        "files": [
            {
                "path": e.path,
                "kind": e.kind,
                "status": e.status,
                "error": e.error,
                "lines_changed": e.lines_changed,
                "diff": e.diff,
                "findings": [finding_dict(f) for f in e.findings],
            }
            for e in report.files
        ],
    }


def render_json(report: Report) -> str:
    return json.dumps(to_dict(report), indent=2, ensure_ascii=False) + "\n"
