"""A file replaced whole: written beside itself under a temporary name, then renamed over it.

Used for converted sources, ``--out`` copies, reports and the cache's entries alike: a
reader sees the old file or the new one, and nothing is left behind by a failed write or
by Ctrl-C in the middle of one.
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def temporary_beside(target: Path):
    """A temporary file in ``target``'s directory, as (descriptor, path), for the caller to fill
    and rename over ``target``; removed if anything fails before that. Ctrl-C meanwhile takes
    effect when it is one or the other (see :class:`_InterruptAfter`)."""
    with _InterruptAfter():
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".migrate-tmp")
        try:
            yield fd, tmp
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise


class _InterruptAfter:
    """Ctrl-C during a write takes effect when the write is over (the file replaced, or its
    temporary file removed): an interrupt between creating the temporary file and the
    ``try`` that removes it would leave it behind. Only in the main thread (where Python
    runs signal handlers) and only over a handler that raises (``default_int_handler``) or
    another Python handler, which is then called."""

    def __enter__(self) -> None:
        self.old = None
        self.got = False
        if threading.current_thread() is not threading.main_thread():
            return
        old = signal.getsignal(signal.SIGINT)
        if not callable(old):  # ignored (a worker) or the OS default: nothing to defer
            return
        self.old = old
        signal.signal(signal.SIGINT, self._note)

    def _note(self, signum, frame) -> None:
        self.got = True

    def __exit__(self, *exc) -> bool:
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)
            if self.got:  # (also over a write's error: the interrupt is what the user asked for)
                self.old(signal.SIGINT, None)  # default_int_handler raises KeyboardInterrupt here
        return False
