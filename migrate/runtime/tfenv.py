"""TF's process-level queries, answered for a converted MindSpore program.

``tf.get_logger()`` is Python's ``logging`` logger named ``"tensorflow"`` with TF's own
handler, so what a program logs through it appears as it did. ``tf.executing_eagerly()``
says whether MindSpore runs in PyNative (eager) mode.
"""

from __future__ import annotations

import logging as _logging
import sys as _sys
import threading as _threading

_lock = _threading.Lock()
_logger: _logging.Logger | None = None


def get_logger() -> _logging.Logger:
    """TF's ``tf.get_logger()``: the ``"tensorflow"`` logger, with a stream handler in
    ``logging.BASIC_FORMAT`` added once when the root logger has none (to stdout at INFO in an
    interactive session, else to stderr), as TensorFlow does."""
    global _logger
    with _lock:
        if _logger is not None:
            return _logger
        logger = _logging.getLogger("tensorflow")
        if not _logging.getLogger().handlers:
            interactive = bool(getattr(_sys, "ps1", None) or _sys.flags.interactive)
            if interactive:
                logger.setLevel(_logging.INFO)
            handler = _logging.StreamHandler(_sys.stdout if interactive else _sys.stderr)
            handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT, None))
            logger.addHandler(handler)
        _logger = logger
        return logger


def executing_eagerly() -> bool:
    """``tf.executing_eagerly()``: True in MindSpore's PyNative mode, False in GRAPH_MODE."""
    import mindspore as ms

    return ms.get_context("mode") == ms.PYNATIVE_MODE
