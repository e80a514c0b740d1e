"""``tf.compat.v1.logging`` (TF 1's ``tf.logging``) for a converted program, without TensorFlow.

TF's module is a thin layer over Python's ``logging`` logger named ``"tensorflow"``
(:func:`migrate.runtime.tfenv.get_logger`, with TF's handler): ``info``/``warning``/...
log through it, ``set_verbosity`` sets its level, and the level constants are Python's.
The functions here do the same, so what a program logs this way appears as it did, with
the caller's file and line in each record (for ``fatal`` too, where TF's names its own
file). ``log_every_n``/``log_first_n`` count per place as TF's do, which in a one-file script
means one count shared by all of them.
"""

from __future__ import annotations

import logging as _logging
import sys as _sys

from .tfenv import get_logger

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_counts: dict[tuple[str, int], int] = {}


def log(level, msg, *args, **kwargs) -> None:
    kwargs.setdefault("stacklevel", 2)
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs) -> None:
    log(DEBUG, msg, *args, stacklevel=3, **kwargs)


def info(msg, *args, **kwargs) -> None:
    log(INFO, msg, *args, stacklevel=3, **kwargs)


def warning(msg, *args, **kwargs) -> None:
    log(WARN, msg, *args, stacklevel=3, **kwargs)


warn = warning


def error(msg, *args, **kwargs) -> None:
    log(ERROR, msg, *args, stacklevel=3, **kwargs)


def fatal(msg, *args, **kwargs) -> None:
    """Logs at FATAL (CRITICAL) and carries on, as TF's does."""
    log(FATAL, msg, *args, stacklevel=3, **kwargs)


def vlog(level, msg, *args, **kwargs) -> None:
    log(level, msg, *args, stacklevel=3, **kwargs)


def TaskLevelStatusMessage(msg) -> None:  # noqa: N802 - TF's name
    log(ERROR, msg, stacklevel=3)


def flush() -> None:
    raise NotImplementedError()  # as TF's


def _next_count() -> int:
    """How many times this place has logged this way before. TF's place (its ``_GetFileAndLine``)
    is the nearest frame, going outwards from the caller, in another file than the caller's;
    with none, one place for all: so every call in a one-file script shares one count."""
    caller = _sys._getframe(2)
    frame = caller.f_back
    while frame is not None and frame.f_code.co_filename == caller.f_code.co_filename:
        frame = frame.f_back
    token = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("<unknown>", 0)
    _counts[token] = _counts.get(token, -1) + 1
    return _counts[token]


def log_if(level, msg, condition, *args) -> None:
    if condition:
        log(level, msg, *args, stacklevel=3)


def log_every_n(level, msg, n, *args) -> None:
    """The 1st, (n+1)th, (2n+1)th ... call from one line logs."""
    if not _next_count() % n:
        log(level, msg, *args, stacklevel=3)


def log_first_n(level, msg, n, *args) -> None:
    """The first ``n`` calls from one line log."""
    if _next_count() < n:
        log(level, msg, *args, stacklevel=3)


def get_verbosity() -> int:
    return get_logger().getEffectiveLevel()


def set_verbosity(v) -> None:
    get_logger().setLevel(v)


# -- `tensorflow.python.util.deprecation.deprecated`: TF's decorator, logging as TF logs ----------

_warned: set = set()


def _notice(doc, date, instructions) -> str:
    """TF's docstring for a deprecated function: " (deprecated)" after the first line, then the notice."""
    import inspect

    lines = inspect.cleandoc(doc).splitlines() if doc else ["DEPRECATED FUNCTION"]
    if doc:
        lines[0] += " (deprecated)"
    removal = "in a future version" if date is None else f"after {date}"
    notice = ["", f"Deprecated: THIS FUNCTION IS DEPRECATED. It will be removed {removal}.",
              "Instructions for updating:", instructions]
    if len(lines) > 1:
        if lines[1].strip():
            notice.append("")
        lines[1:1] = notice
    else:
        lines += notice
    return "\n".join(lines)


def deprecated(date, instructions, warn_once=True):
    """TF's ``deprecated(date, instructions, warn_once=True)`` decorator (of a function, a method or
    a class's constructor): a call logs TF's warning on the ``"tensorflow"`` logger, once per
    function with ``warn_once``, naming the caller's file and line; the docstring gets TF's notice.
    The date must be ``YYYY-MM-DD`` or None and the instructions not empty, as TF requires."""
    import functools
    import re

    if date is not None and not re.match(r"20\d\d-[01]\d-[0123]\d", date):
        raise ValueError(f"Date must be in format YYYY-MM-DD. Received: {date}")
    if not instructions:
        raise ValueError("Don't deprecate things without conversion instructions! Specify the `instructions` argument.")
    removal = "in a future version" if date is None else f"after {date}"

    def wrapper(func_or_class):
        cls = func_or_class if isinstance(func_or_class, type) else None
        name = None
        if cls is not None:
            name = "__init__" if cls.__new__ is object.__new__ else "__new__"
            func = getattr(cls, name)
            if name == "__init__" and getattr(func, "_migrate_deprecated", False):
                return cls  # (its parent's constructor is deprecated already: nothing to do, as in TF)
        else:
            func = func_or_class
        if not callable(func):
            raise ValueError(f"deprecated is not a function. If this is a property, make sure @property appears "
                             f"before @deprecated in your source code:\n\n@property\n@deprecated\ndef method(...)")

        @functools.wraps(func)
        def new_func(*args, **kwargs):
            if func not in _warned and cls not in _warned:
                if warn_once:
                    _warned.add(func)
                    if cls is not None:
                        _warned.add(cls)
                caller = _sys._getframe(1)
                get_logger().warning(
                    "From %s: %s (from %s) is deprecated and will be removed %s.\nInstructions for updating:\n%s",
                    f"{caller.f_code.co_filename}:{caller.f_lineno}", getattr(func, "__qualname__", func.__name__),
                    func_or_class.__module__, removal, instructions, stacklevel=2)
            return func(*args, **kwargs)

        new_func.__doc__ = _notice(func.__doc__, date, instructions)
        new_func._migrate_deprecated = True
        if cls is None:
            return new_func
        setattr(cls, name, new_func)
        cls.__doc__ = _notice(cls.__doc__, date, instructions)
        return cls

    return wrapper
