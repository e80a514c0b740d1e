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
    lines_changed: int = 0  # lines its unified diff shows removed or added, counted by the converter

    @property
    def changed(self) -> bool:
        return self.status == "changed"
