"""Running the codemod over files: discovery, per-file results, parallelism, atomic writes.

Every file gets a result, never an exception: ``changed``, ``unchanged``,
``skipped`` or ``failed``. A file that fails is left byte-identical and the run
goes on (libcst's TransformSuccess/Failure/Skip, one level up). That holds for
inputs that break the parser too: CPython's parser sees every file first, libcst
runs on a deep stack, files past ``max-file-size`` are reported rather than parsed,
and a worker process that dies takes only its own file with it.

Results come from the content-hash cache (:mod:`migrate.engine.cache`) when one is
given and holds an entry for the file's bytes; the caller writes, so a result is
written whole or not at all, whatever happens to a worker.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator

from migrate.engine.cache import Cache
from migrate.engine.diff import python_changed_lines
from migrate.engine.results import ConvertOptions, FileResult, RuleSelection
from migrate.engine.source import detect_encoding
from migrate.rules import load_rules, select_rules
from migrate.safe_io import read_source

if TYPE_CHECKING:  # libcst and the engine load with the first file converted: a cached run needs neither
    from migrate.engine.index import RuleIndex

# A file a rule may match is parsed into a full syntax tree: past this size it is reported,
# not converted (``max-file-size`` in [tool.migrate]).
MAX_FILE_BYTES = 1_000_000
# What libcst holds costs memory per syntax node, not per byte: 5.4-6.4 KB a node, expression
# contexts not counted (its tree, positions, scopes, the rewritten copy; measured on tensorflow's
# gen_nn_ops.py and math_grad.py converted whole, and on one line of 30,000 `tf.constant(1)`
# calls: 120,000 nodes, 0.8 GB). Bytes alone do not bound that: real code holds 0.05-0.21 nodes
# a byte (medians and maxima over tensorflow's, keras's and mindspore's own sources), a dense
# line twice the most. So the statements handed to libcst may hold at most one node per this
# many bytes of max-file-size: about 167,000 for 1 MB, about 1 GB.
BYTES_PER_NODE = 6
@dataclass(frozen=True)
class RunOptions:
    """Everything a worker needs besides the path; picklable (``converter`` is a module-level
    function, ``(data, index, path, max_bytes) -> FileResult`` with its changed lines counted)."""

    selection: RuleSelection = RuleSelection()
    cache: Cache | None = None
    max_bytes: int | None = MAX_FILE_BYTES
    converter: Callable[..., FileResult] | None = None


_INDEX_CACHE: dict[RuleSelection, RuleIndex] = {}


def rule_index(selection: RuleSelection) -> RuleIndex:
    index = _INDEX_CACHE.get(selection)
    if index is None:
        from migrate.engine.index import RuleIndex

        rules = select_rules(load_rules(selection.extra_dirs), selection.select, selection.ignore)
        index = _INDEX_CACHE[selection] = RuleIndex(rules)
    return index


def node_budget(max_bytes: int | None) -> int | None:
    """The syntax nodes a file may hand libcst, for a ``max-file-size`` (see :data:`BYTES_PER_NODE`)."""
    return None if max_bytes is None else max(1, max_bytes // BYTES_PER_NODE)


def convert_source(data: bytes, index: RuleIndex, path: str = "<string>", options: ConvertOptions | None = None,
                   max_nodes: int | None = None) -> FileResult:
    """Convert one file's bytes (see :func:`migrate.engine.convert.convert_source`)."""
    from migrate.engine.convert import convert_source as convert

    return convert(data, index, path, options, max_nodes)


def convert_bytes(data: bytes, index: RuleIndex, path: str, max_bytes: int | None = MAX_FILE_BYTES,
                  options: ConvertOptions | None = None) -> FileResult:
    """Convert a Python file's bytes, within ``max_bytes`` and its :func:`node_budget`."""
    max_nodes = node_budget(max_bytes)
    if max_bytes is not None and len(data) > max_bytes and _needs_parse(data, index):
        return FileResult(
            path, "failed", original=data,
            error=f"too large to convert ({len(data):,} bytes; max-file-size is {max_bytes:,}); file left as it was",
        )
    return convert_source(data, index, path, options, max_nodes)


def convert_python_file(data: bytes, index: RuleIndex, path: str, max_bytes: int | None = MAX_FILE_BYTES,
                        options: ConvertOptions | None = None) -> FileResult:
    """:func:`convert_bytes` with the changed lines counted: a run's converter for Python files
    alone (the command line gives :func:`migrate.filetypes.convert_file`, notebooks too)."""
    result = convert_bytes(data, index, path, max_bytes, options)
    result.lines_changed = python_changed_lines(result.original, result.converted) if result.changed else 0
    return result


def _needs_parse(data: bytes, index: RuleIndex) -> bool:
    """Whether a rule may match (so the file would be parsed); undecodable text is convert_source's to report."""
    try:
        return index.may_match(data.decode(detect_encoding(data)))
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return False


def _convert_path(args: tuple[str, RuleSelection | RunOptions]) -> FileResult:
    path, options = args
    if isinstance(options, RuleSelection):
        options = RunOptions(options)
    try:
        data = read_source(path)
    except OSError as exc:
        return FileResult(path, "failed", error=f"cannot read: {exc.strerror or exc}")
    cache = options.cache
    if cache is not None:
        hit = cache.get(path, data)
        if hit is not None:
            return hit
    try:
        result = (options.converter or convert_python_file)(data, rule_index(options.selection), path, options.max_bytes)
    except RecursionError:
        return FileResult(path, "failed", error="too deeply nested to convert; file left as it was", original=data)
    except MemoryError:
        return FileResult(path, "failed", error="out of memory while converting; file left as it was", original=data)
    except Exception as exc:  # noqa: BLE001 - one file's crash must not end the run
        return FileResult(path, "failed", error=f"internal error ({type(exc).__name__}: {exc}); file left as it was", original=data)
    # The changed lines were counted by the converter, here in the worker: the summary only adds
    # them up (and the cache keeps them, so a second run need not diff again).
    if cache is not None and _deterministic(result) and not result.engine_error:  # (reported every run)
        cache.put(result, data)
    return result


def _deterministic(result: FileResult) -> bool:
    """Whether the result follows from the bytes alone (a crash or a resource limit might not recur)."""
    if result.status != "failed":
        return True
    return result.error.startswith(("cannot parse", "not valid", "cannot read source encoding", "too large"))


def _ignore_interrupts(selection: RuleSelection | None = None) -> None:
    """Workers leave Ctrl-C to the parent, which reports it once and stops the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if selection is not None:
        rule_index(selection)  # built once per worker (already there when the worker was forked)
    _SpeedupsHeld().take()  # never released: a worker lives for one run
    gc.freeze()  # as run_files does in one process: what every conversion reads is never garbage


class _SpeedupsHeld:
    """libcst's speed-ups (:mod:`migrate.engine._libcst_speed`) swapped in once for a run, not in
    and out at every file (each swap costs every libcst node class its attribute caches). Taken
    once libcst is loaded: a run whose every file comes from the cache never imports it."""

    def __init__(self) -> None:
        self.held = None

    def take(self) -> None:
        if self.held is None:
            speed = sys.modules.get("migrate.engine._libcst_speed")
            if speed is not None:
                held = speed.held()
                held.__enter__()  # (interrupted here, there is nothing to release)
                self.held = held

    def release(self) -> None:
        if self.held is not None:
            self.held.__exit__(None, None, None)
            self.held = None


def _convert_chunk(tasks: list[tuple[str, RunOptions]]) -> list[FileResult]:
    return [_convert_path(task) for task in tasks]


def _crashed(path: str) -> FileResult:
    return FileResult(path, "failed", error="the converter crashed on this file (its worker process died); file left as it was")


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_count(jobs: int, files: int) -> int:
    """Worker processes for a run: what was asked, but never more than there are files or CPUs
    (``--jobs 1000`` on five files starts at most five, on two CPUs two)."""
    return max(1, min(jobs, files, usable_cpus()))


def run_files(
    files: list[str],
    selection: RuleSelection,
    jobs: int = 1,
    progress=None,
    *,
    cache: Cache | None = None,
    max_bytes: int | None = MAX_FILE_BYTES,
    converter: Callable[..., FileResult] | None = None,
) -> Iterator[FileResult]:
    """Results in the order of ``files``, whatever ``jobs`` is; each file converted by
    ``converter`` (see :class:`RunOptions`; Python source by default).

    With ``jobs > 1`` files go to worker processes in small chunks (a few per worker
    in flight, so results stream and an interrupt stops within a chunk). Results
    carry the bytes back and the caller writes: a worker that dies (a crash in
    native code) has written nothing, so its files are converted again one by one
    in a fresh pool, and the file that kills a worker on its own is a failed result.
    """
    if cache is None:
        rule_index(selection)  # fail early (and once) on a bad rule set; with a cache, the caller has loaded the rules
    options = RunOptions(selection, cache, max_bytes, converter)
    jobs = worker_count(jobs, len(files))
    if jobs <= 1:
        # What is alive now (libcst's classes, the rules) is read by every conversion and is
        # never garbage: while the files convert, the collector's passes leave it alone. (Not
        # when the process froze its heap itself: unfreezing would undo that too.)
        ours = gc.get_freeze_count() == 0
        if ours:
            gc.freeze()
        speedups = _SpeedupsHeld()
        try:
            for path in files:
                speedups.take()
                result = _convert_path((path, options))
                if progress:
                    progress()
                yield result
        finally:
            speedups.release()
            if ours:
                gc.unfreeze()
        return
    # Small chunks: per-chunk overhead is ~0.1 ms, a converted file ~10-500 ms, and the
    # last chunks decide how long the other workers wait at the end.
    size = max(1, min(8, len(files) // (jobs * 32)))
    chunks = deque([files[i:i + size] for i in range(0, len(files), size)])
    for result in _run_pool(chunks, options, jobs):
        if progress:
            progress()
        yield result


def _run_pool(chunks: deque, options: RunOptions, jobs: int) -> Iterator[FileResult]:
    from concurrent.futures import ProcessPoolExecutor  # (here: a run in one process never needs it)
    from concurrent.futures.process import BrokenProcessPool

    ahead = jobs * 4
    single: deque = deque()  # files to retry one per task after a worker died
    while chunks or single:
        pool = ProcessPoolExecutor(max_workers=jobs, initializer=_ignore_interrupts, initargs=(options.selection,))
        pending: deque = deque()
        broken = False
        try:
            while chunks or single or pending:
                # A file retried after a crash runs alone: if the pool breaks now, it was that file.
                while len(pending) < (1 if single else ahead) and (single or chunks) and not broken:
                    if single:
                        if pending:
                            break
                        chunk, alone = [single.popleft()], True
                    else:
                        chunk, alone = chunks.popleft(), False
                    try:
                        future = pool.submit(_convert_chunk, [(path, options) for path in chunk])
                    except BrokenProcessPool:
                        (single.appendleft if alone else chunks.appendleft)(chunk[0] if alone else chunk)
                        broken = True
                        break
                    pending.append((chunk, alone, future))
                if not pending:
                    break
                chunk, alone, future = pending.popleft()
                try:
                    results = future.result()
                except BrokenProcessPool:
                    broken = True
                    if alone:
                        yield _crashed(chunk[0])
                    # Which file killed the worker is unknown, and everything in flight died
                    # with it: each is tried again on its own, in the order of files.
                    retry = ([] if alone else list(chunk)) + [path for c, _, _ in pending for path in c]
                    single.extendleft(reversed(retry))
                    pending.clear()
                    break
                yield from results
        finally:
            # On an interrupt (or any early exit) files not yet converted are dropped, not waited for.
            pool.shutdown(wait=True, cancel_futures=True)
        if not broken:
            return
