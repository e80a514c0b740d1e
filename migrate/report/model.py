"""The report model: what a run found, per file and per API, independent of any output format.

Built one file result at a time (:class:`ReportBuilder`), so a run over a large tree
keeps each file's bytes only while its result is being added.

Counting: every finding with status ``converted``, ``runtime`` or ``manual`` is one
use of a TF API (an *occurrence*). ``info`` findings are notes about an occurrence at
the same place (a behaviour worth reading after a conversion) and are counted apart.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from migrate import __version__
from migrate.safe_io import display
from migrate.engine.findings import Finding
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


def decode_source(data: bytes) -> str:
    """Source bytes as text, the way Python reads them (BOM, coding cookie, else UTF-8)."""
    from migrate.engine.runner import detect_encoding

    try:
        encoding = detect_encoding(data)
    except SyntaxError:
        encoding = "utf-8"
    try:
        return data.decode(encoding, "replace")
    except LookupError:
        return data.decode("utf-8", "replace")


def file_diff(path: str, original: bytes, converted: bytes) -> str:
    """The unified diff of one file; a notebook's is per changed code cell."""
    from migrate import notebook

    label = Path(path).as_posix()
    if notebook.is_notebook(path):
        return notebook.unified_diff(original, converted, label)
    old, new = _source_lines(original), _source_lines(converted)
    if old and not old[-1].endswith(("\n", "\r")):
        old[-1] += "\n\\ No newline at end of file\n"
    if new and not new[-1].endswith(("\n", "\r")):
        new[-1] += "\n\\ No newline at end of file\n"
    return "".join(difflib.unified_diff(old, new, f"a/{label}", f"b/{label}"))


def changed_line_count(path: str, original: bytes, converted: bytes) -> int:
    """``count_changed_lines(file_diff(path, original, converted))``, without writing the diff
    out: the lines removed or added in the same line matching the diff is made from."""
    from migrate import notebook

    if notebook.is_notebook(path):
        return count_changed_lines(file_diff(path, original, converted))
    # file_diff's "No newline at end of file" marker, added to a last line without a line end,
    # makes no two lines equal that were not, nor the reverse: the matching is the same.
    matcher = difflib.SequenceMatcher(None, _source_lines(original), _source_lines(converted))
    return sum((i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


def _source_lines(data: bytes) -> list[str]:
    return decode_source(data).splitlines(keepends=True)


def count_changed_lines(diff: str) -> int:
    return sum(1 for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++ ", "--- ")))


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
    from migrate import notebook

    if not findings or not original:
        return []
    by_cell: dict[int, set[int]] = {}
    for f in findings:
        by_cell.setdefault(finding_cell(f), set()).add(f.line)
    if notebook.is_notebook(path):
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
        """Add one :class:`~migrate.engine.runner.FileResult` (or anything shaped like it)."""
        from migrate import notebook

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
            kind="notebook" if notebook.is_notebook(result.path) else "python",
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
