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


@dataclass(frozen=True)
class ConvertOptions:
    """How a file is converted. Every choice gives the same output: the tests and
    ``benchmarks/corpus_check.py`` convert both ways and compare.

    ``pruning``: set aside the statements no rule can reach (:mod:`migrate.engine.prune`)
    in files of at least ``MIN_LINES`` lines (True), of at least that many lines (an int),
    or never (False). ``scope_shortcut``: resolve names from the file's import table, and
    remove the imports a conversion left unused without RemoveImportsVisitor's own analysis
    when the rewrite shows it. ``fallback``: when converting the pruned module fails (an
    engine error), convert the whole file instead and say so in the result's
    ``engine_error``; without it (the tests), the engine error is the file's failure.
    """

    pruning: bool | int = True
    scope_shortcut: bool = True
    fallback: bool = True


@dataclass
class FileResult:
    path: str
    status: str  # changed | unchanged | skipped | failed
    findings: list[Finding] = field(default_factory=list)
    error: str = ""
    original: bytes = b""
    converted: bytes = b""
    lines_changed: int = 0  # lines its unified diff shows removed or added, counted by the converter
    # An engine error the conversion recovered from (see ConvertOptions.fallback): the output is
    # right, and the run reports it as a bug.
    engine_error: str = ""

    @property
    def changed(self) -> bool:
        return self.status == "changed"
