"""Running the codemod over files: discovery, per-file results, parallelism, atomic writes.

Every file gets a result, never an exception: ``changed``, ``unchanged``,
``skipped`` or ``failed``. A file that fails is left byte-identical and the run
goes on (libcst's TransformSuccess/Failure/Skip, one level up).
"""

from __future__ import annotations

import fnmatch
import io
import os
import stat
import tempfile
import tokenize
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from libcst import ParserSyntaxError
from libcst.codemod import CodemodContext, TransformFailure, TransformSkip, transform_module

from migrate.engine.codemod import MigrateCommand, RuleIndex, mentions_any
from migrate.engine.findings import Finding
from migrate.rules import load_rules, select_rules

SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", "node_modules", ".migrate_cache"}
SOURCE_SUFFIXES = (".py",)


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

    @property
    def changed(self) -> bool:
        return self.status == "changed"


_INDEX_CACHE: dict[RuleSelection, RuleIndex] = {}


def rule_index(selection: RuleSelection) -> RuleIndex:
    index = _INDEX_CACHE.get(selection)
    if index is None:
        rules = select_rules(load_rules(selection.extra_dirs), selection.select, selection.ignore)
        index = _INDEX_CACHE[selection] = RuleIndex(rules)
    return index


def detect_encoding(data: bytes) -> str:
    """The source encoding as Python reads it: BOM, then a coding cookie, then UTF-8."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return encoding


def convert_source(data: bytes, index: RuleIndex, path: str = "<string>") -> FileResult:
    """Convert one file's bytes. Output bytes keep the input's encoding, BOM and newlines."""
    try:
        encoding = detect_encoding(data)
        text = data.decode(encoding)
    except (SyntaxError, LookupError) as exc:
        return FileResult(path, "failed", error=f"cannot read source encoding: {exc}", original=data)
    except UnicodeDecodeError as exc:
        return FileResult(path, "failed", error=f"not valid {exc.encoding} text (byte {exc.start})", original=data)
    if not mentions_any(text, index):
        return FileResult(path, "unchanged", original=data, converted=data)
    command = MigrateCommand(CodemodContext(filename=path, full_module_name=None), index, path)
    result = transform_module(command, text)
    if isinstance(result, TransformFailure):
        exc = result.error
        if isinstance(exc, ParserSyntaxError):
            message = f"cannot parse: line {exc.raw_line}:{exc.raw_column + 1}: {exc.message}"
        else:
            message = f"internal error in a rule ({type(exc).__name__}: {exc}); file left as it was"
        return FileResult(path, "failed", error=message, original=data)
    if isinstance(result, TransformSkip):
        return FileResult(path, "skipped", error=result.skip_description, original=data, converted=data)
    new_text = result.code
    converted = new_text.encode(encoding)
    status = "changed" if converted != data else "unchanged"
    return FileResult(path, status, findings=command.findings, original=data, converted=converted)


def _convert_path(args: tuple[str, RuleSelection]) -> FileResult:
    path, selection = args
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return FileResult(path, "failed", error=f"cannot read: {exc.strerror or exc}")
    try:
        return convert_source(data, rule_index(selection), path)
    except RecursionError:
        return FileResult(path, "failed", error="too deeply nested to convert; file left as it was", original=data)


def discover(paths: Iterable[str], exclude: tuple[str, ...] = ()) -> tuple[list[str], list[FileResult]]:
    """Source files under ``paths`` (sorted, de-duplicated) and results for what was passed over."""
    files: list[str] = []
    skipped: list[FileResult] = []

    def excluded(p: str) -> bool:
        parts = Path(p).parts
        return any(fnmatch.fnmatch(p, pat) or any(fnmatch.fnmatch(part, pat) for part in parts) for pat in exclude)

    for top in paths:
        if os.path.islink(top) and not os.path.isdir(top):
            skipped.append(FileResult(top, "skipped", error="symbolic link; convert the file it points to"))
            continue
        if os.path.isfile(top):
            files.append(top)
            continue
        if not os.path.isdir(top):
            skipped.append(FileResult(top, "failed", error="no such file or directory"))
            continue
        for root, dirs, names in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not excluded(os.path.join(root, d)))
            for name in sorted(names):
                full = os.path.join(root, name)
                if not name.endswith(SOURCE_SUFFIXES) or excluded(full):
                    continue
                if os.path.islink(full):
                    skipped.append(FileResult(full, "skipped", error="symbolic link; convert the file it points to"))
                    continue
                files.append(full)
    return list(dict.fromkeys(files)), skipped


def run_files(files: list[str], selection: RuleSelection, jobs: int = 1, progress=None) -> Iterator[FileResult]:
    """Results in the order of ``files``, whatever ``jobs`` is."""
    rule_index(selection)  # fail early (and once) on a bad rule set
    tasks = [(f, selection) for f in files]
    if jobs <= 1 or len(files) < 2:
        for task in tasks:
            result = _convert_path(task)
            if progress:
                progress()
            yield result
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        chunk = max(1, min(64, len(tasks) // (jobs * 8) or 1))
        for result in pool.map(_convert_path, tasks, chunksize=chunk):
            if progress:
                progress()
            yield result


def atomic_write(path: str, data: bytes, expected: bytes | None = None) -> None:
    """Write through a temporary file and a rename, keeping the file's mode.

    With ``expected``, refuse if the file no longer holds those bytes (changed or
    deleted since it was read): the newer content wins, nothing is lost.
    """
    target = Path(path)
    try:
        st = target.stat()
        mode = stat.S_IMODE(st.st_mode)
    except FileNotFoundError:
        if expected is not None:
            raise OSError(f"{path} was deleted while converting; nothing written")
        mode = 0o644
    if expected is not None and target.read_bytes() != expected:
        raise OSError(f"{path} changed while converting; left as it is now")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".migrate-tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
