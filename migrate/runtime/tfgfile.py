"""``tf.io.gfile``'s calls on two paths and ``stat``, on local files with Python's ``os`` and ``shutil``.

The one-path calls (``exists``, ``makedirs``, ``remove``...) convert to ``os`` and ``shutil`` directly
(TFG801). These keep what TF adds to them: ``copy`` and ``rename`` refuse to replace a file unless
``overwrite=True``, and ``stat`` answers with TF's ``FileStatistics``. Errors are Python's ``OSError``
subclasses (``FileNotFoundError``, ``FileExistsError``) where TF raises ``NotFoundError`` and
``AlreadyExistsError``. Paths of other file systems (``gs://``, ``s3://``) are not there.
"""

from __future__ import annotations

import collections
import errno
import os
import shutil
import stat as _stat

__all__ = ["FileStatistics", "copy", "rename", "stat"]


class FileStatistics(collections.namedtuple("FileStatistics", ["length", "mtime_nsec", "is_directory"])):
    """TF's ``FileStatistics``: the size in bytes, the modification time in nanoseconds (whole
    seconds, as TF's local file system gives it) and whether the path is a directory."""


def stat(path) -> FileStatistics:
    """``tf.io.gfile.stat``: the path's :class:`FileStatistics` (links followed, as TF's)."""
    st = os.stat(os.fspath(path))
    return FileStatistics(st.st_size, int(st.st_mtime) * 1_000_000_000, _stat.S_ISDIR(st.st_mode))


def _refuse_existing(dst, overwrite: bool) -> None:
    if not overwrite and os.path.exists(dst):
        raise FileExistsError(errno.EEXIST, "file already exists", os.fspath(dst))


def copy(src, dst, overwrite=False) -> None:
    """``tf.io.gfile.copy``: ``src``'s bytes to ``dst``; an existing ``dst`` only with ``overwrite``."""
    _refuse_existing(dst, overwrite)
    shutil.copyfile(os.fspath(src), os.fspath(dst))


def rename(src, dst, overwrite=False) -> None:
    """``tf.io.gfile.rename``: ``src`` moved to ``dst``; an existing ``dst`` only with ``overwrite``."""
    _refuse_existing(dst, overwrite)
    os.replace(os.fspath(src), os.fspath(dst))
