"""What a run is asked for and what it gives back per file: plain data, imported by every layer."""

from __future__ import annotations

from dataclasses import dataclass, field

from migrate.engine.findings import Finding


@dataclass(frozen=True)
class RuleSelection:
    """Which rules a run uses; picklable, so worker processes rebuild the same index."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extra_dirs: tuple[str, ...] = ()


@dataclass
class FileResult:
    path: str
    status: str  # changed | unchanged | skipped | failed
    findings: list[Finding] = field(default_factory=list)
    error: str = ""
    original: bytes = b""
    converted: bytes = b""
    lines_changed: int | None = None  # lines a unified diff shows removed or added (when changed)

    @property
    def changed(self) -> bool:
        return self.status == "changed"

    def count_changed_lines(self) -> int:
        """The lines a unified diff of the file shows removed or added; counted once, then kept (and cached)."""
        if self.lines_changed is None:
            from migrate.report.model import changed_line_count

            self.lines_changed = changed_line_count(self.path, self.original, self.converted) if self.changed else 0
        return self.lines_changed
