"""The HTML report: one self-contained page, rendered from the templates in ``templates/``.

Nothing is loaded from anywhere: the style sheet and the script are inlined, and a
Content-Security-Policy meta tag allows exactly those two (by hash) and nothing
else, so a scanned file can never run script in the page even if an escape were
missed somewhere.

Small parts are rendered on the server (summary, per-API table, rule texts). The
per-finding and per-file parts, which grow with the tree, travel as one JSON blob
in a ``<script type="application/json">`` element and are drawn by the script a
page at a time, a file's section when it is opened. Source text reaches the page
only through ``textContent``; the blob is escaped so it cannot close its element.
"""

from __future__ import annotations

import base64
import hashlib
import json
from functools import lru_cache
from importlib import resources

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup

from migrate.report.model import STATUSES, Report, finding_cell

STATUS_LABELS = {
    "manual": "needs manual work",
    "runtime": "handled at run time",
    "converted": "converted",
    "info": "note",
}
SAFE_LINK_SCHEMES = ("https://", "http://")
_SCRIPT_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def script_json(data) -> str:
    """JSON that is safe inside ``<script type="application/json">``: it cannot close the element
    or open a comment (``<``, ``>``, ``&`` escaped), and has no raw U+2028/U+2029."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.translate(_SCRIPT_ESCAPES)


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # html=False: any HTML in a rule's markdown is shown as text, never as markup.
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})


def markdown_block(text: str) -> Markup:
    return Markup(_markdown().render(text or ""))


def markdown_inline(text: str) -> Markup:
    return Markup(_markdown().renderInline(text or ""))


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


@lru_cache(maxsize=1)
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("migrate.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["md"] = markdown_block
    env.filters["md_inline"] = markdown_inline
    env.globals["STATUS_LABELS"] = STATUS_LABELS
    env.globals["safe_link"] = lambda url: url if url.startswith(SAFE_LINK_SCHEMES) else None
    return env


def _asset(name: str) -> str:
    return resources.files("migrate.report").joinpath("templates", name).read_text(encoding="utf-8")


def page_data(report: Report) -> dict:
    """The blob the script draws findings and files from (lists, indexes into tables, to stay small)."""
    rules: dict[str, int] = {}
    apis: dict[str, int] = {}
    messages: dict[str, int] = {}

    def intern(table: dict[str, int], value: str) -> int:
        if value not in table:
            table[value] = len(table)
        return table[value]

    files = []
    findings = []
    for file_index, entry in enumerate(report.files):
        files.append(
            [
                entry.path,
                entry.kind,
                entry.status,
                entry.error,
                entry.lines_changed,
                entry.diff,
                [[x.cell, x.first_line, list(x.lines)] for x in entry.excerpts],
            ]
        )
        for f in entry.findings:
            findings.append(
                [
                    file_index,
                    finding_cell(f),
                    f.line,
                    f.col,
                    intern(rules, f.rule),
                    STATUSES.index(f.status) if f.status in STATUSES else STATUSES.index("info"),
                    intern(apis, f.api),
                    intern(messages, f.message),
                ]
            )
    return {
        "statuses": list(STATUSES),
        "statusLabels": [STATUS_LABELS[s] for s in STATUSES],
        "rules": list(rules),
        "apis": list(apis),
        "messages": list(messages),
        "files": files,
        "findings": findings,
        "written": report.written,
    }


def render_html(report: Report) -> str:
    css = _asset("report.css")
    js = _asset("report.js")
    csp = (
        "default-src 'none'; "
        f"script-src '{_sha256(js)}'; "
        f"style-src '{_sha256(css)}'; "
        "base-uri 'none'; form-action 'none'"
    )
    summary = report.summary
    cards = [
        ("files_scanned", "Files scanned", ""),
        ("apis_found", "TF APIs found", ""),
        ("converted", "Converted automatically", "converted"),
        ("runtime", "Handled at run time by migrate.runtime", "runtime"),
        ("manual", "Needing manual work", "manual"),
        ("notes", "Behaviour notes", "info"),
        ("lines_changed", "Lines changed" if report.written else "Lines convert would change", ""),
        ("files_failed", "Files that failed", "failed" if summary.files_failed else ""),
    ]
    if summary.files_skipped:
        cards.append(("files_skipped", "Files skipped", ""))
    template = _environment().get_template("report.html.j2")
    return template.render(
        report=report,
        summary=summary,
        cards=[(key, label, css_class, getattr(summary, key)) for key, label, css_class in cards],
        statuses=STATUSES,
        api_names=sorted({row.api for row in report.apis}),
        rule_ids=[r.id for r in report.rules] or sorted({row.rule for row in report.apis}),
        failed=[f for f in report.files if f.status == "failed"],
        csp=csp,
        css=Markup(css),
        js=Markup(js),
        data=Markup(script_json(page_data(report))),
    )
