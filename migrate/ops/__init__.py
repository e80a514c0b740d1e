"""The closed set of rewrite operations rules refer to by name.

A rule file says ``operation: <name>`` and gives the parameters; the code is here.
"""

from __future__ import annotations

from migrate.ops.base import FileFacts, Operation, Param
from migrate.ops.calls import CallTemplate, RemoveCall, RunToCall, alone_on_its_line
from migrate.ops.names import AttributeTemplate, Flag, Rename
from migrate.ops.scope import UnwrapScope
from migrate.ops.strategy import ConstructStrategy

REGISTRY: dict[str, Operation] = {
    op.name: op
    for op in (
        Rename(),
        AttributeTemplate(),
        Flag(),
        CallTemplate(),
        RunToCall(),
        RemoveCall(),
        UnwrapScope(),
        ConstructStrategy(),
    )
}

__all__ = ["REGISTRY", "FileFacts", "Operation", "Param", "alone_on_its_line"]
