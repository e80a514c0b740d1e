"""Running the codemod over files: discovery, per-file results, parallelism, atomic writes.

Every file gets a result, never an exception: ``changed``, ``unchanged``,
``skipped`` or ``failed``. A file that fails is left byte-identical and the run
goes on (libcst's TransformSuccess/Failure/Skip, one level up).
"""

from __future__ import annotations

import ast
import fnmatch
import io
import os
import signal
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
from migrate.engine.suppression import is_suppressed, suppressed_lines
from migrate.notebook import NOTEBOOK_SUFFIX, convert_notebook
from migrate.rules import load_rules, select_rules

SKIP_DIRS = {
    ".git", ".hg", ".svn", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", "node_modules",
    ".migrate_cache",
    ".ipynb_checkpoints",  # Jupyter's autosaved copies: converting them would only fight the autosave
}
SOURCE_SUFFIXES = (".py", NOTEBOOK_SUFFIX)


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


def _syntax_error(text: str, path: str) -> str | None:
    """CPython's own message for a file that is not Python 3 (clearer than a parser's token list)."""
    try:
        compile(text, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        return f"cannot parse: line {exc.lineno}, column {exc.offset}: {exc.msg}"
    except ValueError as exc:  # null bytes, on some Python versions
        return f"cannot parse: {exc}"
    return None


def _unsuppressed(findings: list[Finding], text: str) -> list[Finding]:
    """Findings minus those a ``# migrate: ignore`` comment on their line silences."""
    quiet = suppressed_lines(text)
    if not quiet:
        return findings
    return [f for f in findings if not is_suppressed(quiet, f.line, f.rule)]


def convert_source(data: bytes, index: RuleIndex, path: str = "<string>") -> FileResult:
    """Convert one file's bytes. Output bytes keep the input's encoding, BOM and newlines."""
    try:
        encoding = detect_encoding(data)
        text = data.decode(encoding)
    except (SyntaxError, LookupError) as exc:
        return FileResult(path, "failed", error=f"cannot read source encoding: {exc}", original=data)
    except UnicodeDecodeError as exc:
        return FileResult(path, "failed", error=f"not valid {exc.encoding} text (byte {exc.start}); file left as it was", original=data)
    if not mentions_any(text, index):
        # Nothing to rewrite, but a file that is not Python 3 is still an error, as with any linter.
        error = _syntax_error(text, path)
        if error:
            return FileResult(path, "failed", error=error, original=data)
        return FileResult(path, "unchanged", original=data, converted=data)
    command = MigrateCommand(CodemodContext(filename=path, full_module_name=None), index, path)
    result = transform_module(command, text)
    if isinstance(result, TransformFailure):
        exc = result.error
        if isinstance(exc, ParserSyntaxError):
            message = _syntax_error(text, path) or f"cannot parse: line {exc.editor_line}, column {exc.editor_column}: {exc.message}"
        else:
            message = f"internal error in a rule ({type(exc).__name__}: {exc}); file left as it was"
        return FileResult(path, "failed", error=message, original=data)
    if isinstance(result, TransformSkip):
        return FileResult(path, "skipped", error=result.skip_description, original=data, converted=data)
    try:
        converted = result.code.encode(encoding)
    except UnicodeEncodeError as exc:
        return FileResult(path, "failed", error=f"the converted code cannot be written as {encoding} ({exc.reason}); file left as it was", original=data)
    status = "changed" if converted != data else "unchanged"
    return FileResult(path, status, findings=_unsuppressed(command.findings, text), original=data, converted=converted)


def convert_bytes(data: bytes, index: RuleIndex, path: str) -> FileResult:
    """Convert a file's bytes: a notebook (``.ipynb``) cell by cell, anything else as Python source."""
    if path.endswith(NOTEBOOK_SUFFIX):
        return convert_notebook(data, index, path)
    return convert_source(data, index, path)


def _convert_path(args: tuple[str, RuleSelection]) -> FileResult:
    path, selection = args
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return FileResult(path, "failed", error=f"cannot read: {exc.strerror or exc}")
    try:
        return convert_bytes(data, rule_index(selection), path)
    except RecursionError:
        return FileResult(path, "failed", error="too deeply nested to convert; file left as it was", original=data)
    except Exception as exc:  # noqa: BLE001 - one file's crash must not end the run
        return FileResult(path, "failed", error=f"internal error ({type(exc).__name__}: {exc}); file left as it was", original=data)


def exclusion(patterns: tuple[str, ...], base: str | None = None):
    """A predicate for ``exclude`` patterns, as ruff reads them.

    A pattern without ``/`` matches any one path component (``*_pb2.py``, ``build``);
    one with ``/`` matches the path relative to ``base`` (the directory holding the
    pyproject.toml, else the current directory) or any directory above it, so
    ``third_party/*`` and ``third_party/vendor`` exclude everything below them.
    """
    root = os.path.abspath(base or os.getcwd())
    plain = [p.strip("/") for p in patterns if "/" not in p.strip("/")]
    nested = [p.strip("/").removeprefix("./") for p in patterns if "/" in p.strip("/")]

    def excluded(path: str) -> bool:
        if not patterns:
            return False
        rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
        parts = rel.split("/")
        if any(fnmatch.fnmatchcase(part, pat) for pat in plain for part in parts):
            return True
        heads = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        return any(fnmatch.fnmatchcase(head, pat) for pat in nested for head in heads)

    return excluded


def discover(
    paths: Iterable[str], exclude: tuple[str, ...] = (), base: str | None = None, prune: Iterable[str] = ()
) -> tuple[list[str], list[FileResult]]:
    """Source files under ``paths`` (sorted, de-duplicated) and results for what was passed over.

    Symbolic links are skipped, never followed or replaced: rewriting through a link
    would change a file outside the tree, and an atomic rename would turn the link
    into a plain file. ``exclude`` applies to files named on the command line too
    (pre-commit passes files one by one). ``prune`` holds directories never entered
    (an ``--out`` directory inside the tree).
    """
    files: list[str] = []
    skipped: list[FileResult] = []
    excluded = exclusion(tuple(exclude), base)
    pruned = {os.path.abspath(p) for p in prune}

    for top in paths:
        top = os.path.normpath(top)
        if os.path.islink(top) and not os.path.isdir(top):
            skipped.append(FileResult(top, "skipped", error="symbolic link; convert the file it points to"))
            continue
        if os.path.isfile(top):
            if excluded(top):
                skipped.append(FileResult(top, "skipped", error="excluded by configuration"))
            else:
                files.append(top)
            continue
        if not os.path.isdir(top):
            skipped.append(FileResult(top, "failed", error="no such file or directory"))
            continue
        for root, dirs, names in os.walk(top):
            dirs[:] = sorted(
                d for d in dirs
                if d not in SKIP_DIRS and not excluded(os.path.join(root, d)) and os.path.abspath(os.path.join(root, d)) not in pruned
            )
            for name in sorted(names):
                full = os.path.normpath(os.path.join(root, name))
                if not name.endswith(SOURCE_SUFFIXES) or excluded(full):
                    continue
                if os.path.islink(full):
                    skipped.append(FileResult(full, "skipped", error="symbolic link; convert the file it points to"))
                    continue
                files.append(full)
    return list(dict.fromkeys(files)), skipped


def _ignore_interrupts() -> None:
    """Workers leave Ctrl-C to the parent, which reports it once and stops the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


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
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_ignore_interrupts)
    try:
        chunk = max(1, min(64, len(tasks) // (jobs * 8) or 1))
        for result in pool.map(_convert_path, tasks, chunksize=chunk):
            if progress:
                progress()
            yield result
    finally:
        # On an interrupt (or any early exit) files not yet converted are dropped, not waited for.
        pool.shutdown(wait=True, cancel_futures=True)


def is_writable(path: str | Path, st: os.stat_result | None = None) -> bool:
    """Whether the file may be rewritten: the user can write it and it is not marked read-only.

    The mode bits are checked as well as access(2) because root may write anything,
    and a rename replaces a read-only file as easily as any other: a file someone
    made read-only is left alone.
    """
    st = st or os.stat(path)
    return os.access(path, os.W_OK) and bool(st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def atomic_write(path: str, data: bytes, expected: bytes | None = None, mode: int | None = None) -> None:
    """Write through a temporary file in the same directory and a rename.

    A reader sees the old file or the new one, never half of either. The file keeps
    its mode (and owner, where allowed); a new file gets ``mode`` or 0o644.

    ``expected`` marks an in-place rewrite of a file read earlier: refuse if the file
    is read-only, or no longer holds those bytes (changed or deleted meanwhile) —
    the newer content wins, nothing is lost. Errors are ``OSError`` whose message
    does not repeat the path.
    """
    target = Path(path)
    try:
        st: os.stat_result | None = target.stat()
    except FileNotFoundError:
        st = None
    if expected is not None:
        if st is None:
            raise OSError("deleted while converting; nothing written")
        if not is_writable(target, st):
            raise OSError("file is read-only; left as it was")
        if target.read_bytes() != expected:
            raise OSError("changed while converting; left as it is now")
    if mode is None:
        mode = stat.S_IMODE(st.st_mode) if st is not None else 0o644
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".migrate-tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if st is not None and (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except PermissionError:
                pass  # only root may give a file away; the content still matters more
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
