"""TF's error classes, for what a converted program catches (``except tf.errors.InvalidArgumentError``).

``migrate.runtime`` raises :class:`InvalidArgumentError` where TF does for the same input: a failed
``tf.debugging`` check, ``Dataset.list_files`` matching nothing, a TFRecord feature of the wrong
type, ``tf.case`` with no true predicate and no default. It is also a ``ValueError``, which is what
MindSpore's own operations raise for a bad argument, so code written before this class existed
(``except ValueError``) still catches it. MindSpore's operations do not raise this class: an ``except``
around them catches what the runtime raises, not MindSpore's ``ValueError``/``TypeError``.
"""

from __future__ import annotations

__all__ = ["InvalidArgumentError", "NotFoundError", "OpError"]


class OpError(Exception):
    """TF's ``tf.errors.OpError``: the base of the errors an operation raises."""


class InvalidArgumentError(OpError, ValueError):
    """TF's ``tf.errors.InvalidArgumentError``: an operation received an argument it cannot take."""


class NotFoundError(OpError):
    """TF's ``tf.errors.NotFoundError``: a file or a key that is not there (a checkpoint reader's
    ``get_tensor`` of an unknown name, a checkpoint path that matches no file)."""
