"""The report model: what a run found, per file and per API, independent of any output format.

Built one file result at a time (:class:`ReportBuilder`), so a run over a large tree
keeps each file's bytes only while its result is being added.

Counting: every finding with status ``converted``, ``runtime`` or ``manual`` is one
use of a TF API (an *occurrence*). ``info`` findings are notes about an occurrence at
the same place (a behaviour worth reading after a conversion) and are counted apart.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from migrate import __version__, notebook
from migrate.safe_io import display
from migrate.engine.findings import Finding
from migrate.engine.diff import count_changed_lines, decode_source
from migrate.filetypes import file_diff, is_notebook
from migrate.rules import Rule

OCCURRENCE_STATUSES = ("converted", "runtime", "manual")
STATUSES = ("manual", "runtime", "converted", "info")  # most urgent first
CONTEXT_LINES = 2
MAX_EXCERPT_LINE = 400  # characters of one source line shown in an excerpt


@dataclass(frozen=True)
class Excerpt:
    """Consecutive source lines around one or more findings. ``cell`` is 0 for a .py file."""

    cell: int
    first_line: int
    lines: tuple[str, ...]


@dataclass
class FileReport:
    path: str  # as shown: a name that is not UTF-8 shows its bytes as \xNN (migrate.engine.display)
    kind: str  # python | notebook
    status: str  # changed | unchanged | skipped | failed
    error: str = ""
    findings: list[Finding] = field(default_factory=list)
    diff: str = ""
    lines_changed: int = 0
    excerpts: list[Excerpt] = field(default_factory=list)
    fs_path: str = ""  # the path as the file system has it (SARIF's URI is made of its bytes)


@dataclass
class ApiRow:
    """One TF API as one rule handles it, and how often each status came up."""

    api: str
    rule: str
    maps_to: str
    counts: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.counts.get(s, 0) for s in OCCURRENCE_STATUSES)

    @property
    def status(self) -> str:
        """The most urgent status among the occurrences."""
        return next((s for s in STATUSES if self.counts.get(s)), "info")


@dataclass
class Summary:
    files_scanned: int = 0  # read and converted or checked (changed, unchanged or failed)
    files_changed: int = 0
    files_skipped: int = 0
    files_failed: int = 0
    files_with_findings: int = 0
    apis_found: int = 0  # occurrences: converted + runtime + manual
    converted: int = 0
    runtime: int = 0
    manual: int = 0
    notes: int = 0  # info findings
    lines_changed: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Report:
    summary: Summary
    files: list[FileReport]
    apis: list[ApiRow]
    rules: list[Rule]  # every rule a finding refers to, by id
    written: bool  # convert wrote the changes (else the diffs are what convert would do)
    tool_version: str = __version__

    def rule(self, rule_id: str) -> Rule | None:
        return next((r for r in self.rules if r.id == rule_id), None)


def finding_cell(f: Finding) -> int:
    return getattr(f, "cell", 0) or 0


def _windows(lines_wanted: Iterable[int], total: int) -> list[tuple[int, int]]:
    """Merged [first, last] line windows with context around each wanted line."""
    out: list[list[int]] = []
    for line in sorted(set(lines_wanted)):
        first, last = max(1, line - CONTEXT_LINES), min(total, line + CONTEXT_LINES)
        if first > last:
            continue
        if out and first <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], last)
        else:
            out.append([first, last])
    return [(a, b) for a, b in out]


def _clip(line: str) -> str:
    line = line.rstrip("\r\n")
    return line if len(line) <= MAX_EXCERPT_LINE else line[:MAX_EXCERPT_LINE] + " …"


def excerpts_for(path: str, original: bytes, findings: list[Finding]) -> list[Excerpt]:
    if not findings or not original:
        return []
    by_cell: dict[int, set[int]] = {}
    for f in findings:
        by_cell.setdefault(finding_cell(f), set()).add(f.line)
    if is_notebook(path):
        sources = {c.number: c.source for c in notebook.cell_sources(original)}
    else:
        sources = {0: decode_source(original)}
    out = []
    for cell, wanted in sorted(by_cell.items()):
        text = sources.get(cell)
        if text is None:
            continue
        lines = notebook.physical_lines(text)
        for first, last in _windows(wanted, len(lines)):
            out.append(Excerpt(cell, first, tuple(_clip(s) for s in lines[first - 1 : last])))
    return out


class ReportBuilder:
    """Collects file results into a :class:`Report`.

    ``written`` says whether the run wrote its conversions; the diffs and line counts
    are then what changed, else what ``migrate convert`` would change.
    """

    def __init__(self, rules: Iterable[Rule], *, written: bool = False) -> None:
        self.rules = {r.id: r for r in rules}
        self.written = written
        self.files: list[FileReport] = []
        self.summary = Summary()

    def add(self, result) -> FileReport:
        """Add one :class:`~migrate.engine.results.FileResult` (or anything shaped like it)."""
        s = self.summary
        status = result.status
        if status == "skipped":
            s.files_skipped += 1
        else:
            s.files_scanned += 1
        if status == "failed":
            s.files_failed += 1
        diff = ""
        if status == "changed":
            s.files_changed += 1
            diff = file_diff(display(result.path), result.original, result.converted)
        findings = list(result.findings)
        entry = FileReport(
            path=display(result.path),
            fs_path=result.path,
            kind="notebook" if is_notebook(result.path) else "python",
            status=status,
            error=result.error,
            findings=findings,
            diff=diff,
            lines_changed=count_changed_lines(diff),
            excerpts=excerpts_for(result.path, result.original, findings),
        )
        s.lines_changed += entry.lines_changed
        counts = Counter(f.status for f in findings)
        s.converted += counts["converted"]
        s.runtime += counts["runtime"]
        s.manual += counts["manual"]
        s.notes += counts["info"]
        s.apis_found += sum(counts[k] for k in OCCURRENCE_STATUSES)
        s.files_with_findings += bool(findings)
        self.files.append(entry)
        return entry

    def mark_failed(self, path: str, error: str) -> None:
        """A file that converted but could not be written (the run's own error, after the fact)."""
        for entry in reversed(self.files):
            if entry.fs_path == path:
                if entry.status != "failed":
                    self.summary.files_failed += 1
                    if entry.status == "changed":
                        self.summary.files_changed -= 1
                        self.summary.lines_changed -= entry.lines_changed
                    entry.status, entry.error = "failed", error
                    entry.diff, entry.lines_changed = "", 0
                return

    def finish(self) -> Report:
        rows: dict[tuple[str, str], ApiRow] = {}
        used: set[str] = set()
        for entry in self.files:
            for f in entry.findings:
                used.add(f.rule)
                row = rows.get((f.api, f.rule))
                if row is None:
                    maps_to = f.maps_to or (self.rules[f.rule].maps_to if f.rule in self.rules else "")
                    row = rows[(f.api, f.rule)] = ApiRow(f.api, f.rule, maps_to, {})
                row.counts[f.status] = row.counts.get(f.status, 0) + 1
        apis = sorted(rows.values(), key=lambda r: (STATUSES.index(r.status), -r.total, r.api, r.rule))
        rules = [self.rules[i] for i in sorted(used) if i in self.rules]
        files = sorted(self.files, key=lambda e: e.path)
        return Report(self.summary, files, apis, rules, self.written)


def build_report(results: Iterable, rules: Iterable[Rule], *, written: bool = False) -> Report:
    builder = ReportBuilder(rules, written=written)
    for result in results:
        builder.add(result)
    return builder.finish()
