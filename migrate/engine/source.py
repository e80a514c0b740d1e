"""A file's text as Python sees it, and the deep stack conversions run on.

:func:`detect_encoding` reads the encoding as Python does; :func:`python_ast` is CPython's
own parse, which every file passes first (its message for a file that is not Python 3 is
clearer than a parser's token list, and input it rejects never reaches libcst);
:func:`on_deep_stack` runs a conversion where libcst's recursion cannot crash the process.
"""

from __future__ import annotations

import ast
import io
import queue
import re
import sys
import threading
import tokenize
import warnings

# Conversions run on a thread with a deep stack and a raised recursion limit: libcst's
# native parser and its visitors recurse once per nesting level, and on a default 8 MB
# stack a long `a and b and ...` chain (which CPython accepts) crashes the process.
# Deeper than the limit allows is a clean "failed" result.
CONVERT_STACK_BYTES = 512 * 1024 * 1024
CONVERT_RECURSION_LIMIT = 12_000


def detect_encoding(data: bytes) -> str:
    """The source encoding as Python reads it: BOM, then a coding cookie, then UTF-8."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return encoding


DANGLING_CONTINUATION = re.compile(r"(?:(?<=[\r\n])|\A)[ \t\f]*\\\r\n\Z")


def python_ast(text: str, path: str) -> tuple[ast.Module | None, str | None]:
    """CPython's tree of the file, or its own message for a file that is not Python 3
    (clearer than a parser's token list)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # `1(2)`, invalid escapes: the user's business, not a conversion's
            return compile(text, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True), None
    except SyntaxError as exc:
        return None, f"cannot parse: line {exc.lineno}, column {exc.offset}: {exc.msg}"
    except ValueError as exc:  # null bytes, on some Python versions
        return None, f"cannot parse: {exc}"
    except (MemoryError, RecursionError):  # CPython's parser gives up on extreme nesting
        return None, "cannot parse: too deeply nested for Python's parser"


class _Job:
    __slots__ = ("fn", "args", "ok", "value", "done")

    def __init__(self, fn, args) -> None:
        self.fn, self.args, self.ok, self.value, self.done = fn, args, False, None, threading.Event()

    def run(self) -> None:
        try:
            self.value, self.ok = self.fn(*self.args), True
        except BaseException as exc:  # noqa: BLE001 - handed to the caller as it is
            self.value = exc
        finally:
            self.done.set()


class _DeepWorker(threading.Thread):
    """The thread conversions run on, kept for the next one: a new thread's deep stack is
    mapped afresh, and touching it again cost about a millisecond per file."""

    def __init__(self) -> None:
        super().__init__(name="migrate-convert", daemon=True)
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()

    def run(self) -> None:
        while (job := self.jobs.get()) is not None:
            job.run()


def on_deep_stack(fn, *args):
    """``fn(*args)`` on a thread with a deep stack and a raised recursion limit.

    Exceptions come back to the caller; an interrupt (Ctrl-C) stops waiting at once (the
    thread is a daemon and writes nothing; it is not used again). One call at a time: a
    call from another thread waits for the one running.
    """
    if threading.current_thread() is _DEEP["worker"]:
        return fn(*args)  # already there
    with _DEEP_CALL:
        worker = _DEEP["worker"]
        if worker is None or not worker.is_alive():
            # The stack size is process-wide and read when a thread starts (the call lock
            # keeps two callers from setting it at once).
            old_stack = threading.stack_size()
            try:
                threading.stack_size(CONVERT_STACK_BYTES)
            except (ValueError, RuntimeError):  # a platform without settable stacks: the caller's own
                return fn(*args)
            try:
                worker = _DeepWorker()
                worker.start()
            finally:
                threading.stack_size(old_stack)
            _DEEP["worker"] = worker
        # The recursion limit is process-wide too: raised while a conversion runs there and
        # put back after, so code on ordinary stacks still stops at RecursionError, not a crash.
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, CONVERT_RECURSION_LIMIT))
        job = _Job(fn, args)
        try:
            worker.jobs.put(job)
            job.done.wait()
        except BaseException:
            _DEEP["worker"] = None  # it finishes the job on its own and stops there
            worker.jobs.put(None)
            raise
        finally:
            sys.setrecursionlimit(limit)
    if job.ok:
        return job.value
    raise job.value


_DEEP_CALL = threading.Lock()  # one conversion at a time on the deep thread
_DEEP: dict = {"worker": None}
