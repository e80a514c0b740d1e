"""Reading files and naming them safely (a leaf module: every layer may import it).

:func:`open_regular` opens a file without blocking and refuses anything but a regular
file (a named pipe would wait for a writer forever). :func:`display` gives a path as
text that every stream and report format can hold.
"""

from __future__ import annotations

import os
import stat

_CONTROL = {i: f"\\x{i:02x}" for i in (*range(32), 127)}


def display(path: str) -> str:
    """``path`` as printable UTF-8 text: bytes of a name that is not UTF-8 (which Python holds
    as lone surrogates) show as ``\\xff``, and so do control characters, so a name can neither
    break a report's encoding nor split a ``path:line:col`` line."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        path = os.fsencode(path).decode("utf-8", "backslashreplace")
    return path.translate(_CONTROL)


def kind_of(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


class NotRegularFile(OSError):
    """A path that is a named pipe, a socket, a device or a directory where a file was expected."""

    def __init__(self, mode: int) -> None:
        super().__init__(f"not a regular file: {kind_of(mode)}")
        self.strerror = f"not a regular file: {kind_of(mode)}"


def _open_nonblocking(path: str, flags: int) -> int:
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))


def open_regular(path: str):
    """A regular file, open for reading in binary. Opened without blocking (a named pipe would
    wait for a writer forever) and checked on the open descriptor, so nothing swapped in after
    discovery is read.

    Only the file object ever closes the descriptor (``open`` with an opener): a cleanup
    closing it too after a Ctrl-C would close it twice, and the second close can hit a file
    another part of the run has just opened under the same number (or raise ``EBADF`` in
    place of the interrupt). A Ctrl-C between the opener's ``os.open`` and its return can
    still leave the descriptor open, in a run that is ending."""
    try:
        handle = open(path, "rb", opener=_open_nonblocking)  # noqa: SIM115 - returned to the caller
    except IsADirectoryError:  # (io's own check, made before ours)
        raise NotRegularFile(stat.S_IFDIR) from None
    try:
        mode = os.fstat(handle.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(mode)
    except BaseException:
        handle.close()
        raise
    return handle


def read_source(path: str) -> bytes:
    """A regular file's bytes (see :func:`open_regular`)."""
    with open_regular(path) as handle:
        return handle.read()
