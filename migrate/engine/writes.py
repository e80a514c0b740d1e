"""A file replaced whole: written beside itself under a temporary name, then renamed over it.

Used for converted sources, ``--out`` copies, reports and the cache's entries alike: a
reader sees the old file or the new one, and nothing is left behind by a failed write or
by Ctrl-C in the middle of one.
"""

from __future__ import annotations

import os
import signal
import stat
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

from migrate.safe_io import read_source


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


def is_writable(path: str | Path, st: os.stat_result | None = None) -> bool:
    """Whether the file may be rewritten: the user can write it and it is not marked read-only.

    The mode bits are checked as well as access(2) because root may write anything,
    and a rename replaces a read-only file as easily as any other: a file someone
    made read-only is left alone.
    """
    st = st or os.stat(path)
    return os.access(path, os.W_OK) and bool(st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _read_only_what(path: Path) -> str:
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return "file system"
    except (OSError, AttributeError):
        pass
    return "file"


def atomic_write(path: str, data: bytes, expected: bytes | None = None, mode: int | None = None,
                 durable: bool = True) -> None:
    """Write through a temporary file in the same directory and a rename.

    A reader sees the old file or the new one, never half of either. The file keeps
    its mode (and owner, where allowed); a new file gets ``mode`` or 0o644. With
    ``durable`` the data reaches the disk before the rename, so a power cut cannot
    leave an empty file in place of a user's source; a copy written beside an
    untouched source (``--out``) can do without.

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
            raise OSError(f"{_read_only_what(target)} is read-only; left as it was")
        current = read_source(path)
        if current == data:
            return  # another run wrote the same conversion meanwhile: done
        if current != expected:
            raise OSError("changed while converting; left as it is now")
    if mode is None:
        mode = stat.S_IMODE(st.st_mode) if st is not None else 0o644
    with temporary_beside(target) as (fd, tmp):
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if st is not None and (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except PermissionError:
                pass  # only root may give a file away; the content still matters more
        os.replace(tmp, target)
