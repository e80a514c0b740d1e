"""`ReduceOp`: how values from several replicas are combined.

TensorFlow accepts the enum or its name (``"SUM"``/``"MEAN"``, any case).
MindSpore's ``ops.ReduceOp.SUM`` is the string ``"sum"``, so it is accepted
too. Anything else raises ``ValueError("'MAX' is not a valid ReduceOp")``,
the message TensorFlow gives.
"""

from __future__ import annotations

import enum


class ReduceOp(enum.Enum):
    """Indicates how a set of values should be reduced (same as ``tf.distribute.ReduceOp``)."""

    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_variable_aggregation(aggregation) -> "ReduceOp":
        """Map a variable aggregation name (``"sum"``, ``"mean"``) onto a ReduceOp."""
        return resolve_reduce_op(getattr(aggregation, "name", aggregation))


def resolve_reduce_op(op) -> ReduceOp:
    """Return the ReduceOp for `op`: a ReduceOp, a TF ReduceOp, or a name in any case."""
    if isinstance(op, ReduceOp):
        return op
    # tf.distribute.ReduceOp and other enums: use their name without importing TF.
    name = getattr(op, "name", None) if isinstance(op, enum.Enum) else op
    if isinstance(name, str):
        try:
            return ReduceOp(name.upper())
        except ValueError:
            pass
        raise ValueError(f"{name.upper()!r} is not a valid ReduceOp")
    raise ValueError(f"{op!r} is not a valid ReduceOp")
