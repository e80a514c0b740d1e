"""The closed set of rewrite operations rules refer to by name.

A rule file says ``operation: <name>`` and gives the parameters; the code is here.
"""

from __future__ import annotations

from migrate.ops.arrays import WrapArrays
from migrate.ops.base import ScopeFacts, Operation, Param, binds_tightly, import_aliases, parenthesized
from migrate.ops.calls import CallTemplate, RemoveCall, RunToCall, alone_on_its_line
from migrate.ops.keep import KeepCall
from migrate.ops.decorators import RemoveDecorator
from migrate.ops.devices import SetupQuery
from migrate.ops.mapping import MapCall
from migrate.ops.names import AttributeTemplate, Flag, Rename
from migrate.ops.native import LowerNative
from migrate.ops.scope import UnwrapScope
from migrate.ops.strategy import ConstructStrategy
from migrate.ops.tails import TailCallTemplate, TailTemplate
from migrate.ops.unmapped import FlagUnmapped
from migrate.ops.tape import GradientTapeToValueAndGrad

REGISTRY: dict[str, Operation] = {
    op.name: op
    for op in (
        Rename(),
        AttributeTemplate(),
        Flag(),
        FlagUnmapped(),
        SetupQuery(),
        CallTemplate(),
        RunToCall(),
        RemoveCall(),
        RemoveDecorator(),
        MapCall(),
        UnwrapScope(),
        ConstructStrategy(),
        GradientTapeToValueAndGrad(),
        KeepCall(),
        LowerNative(),
        WrapArrays(),
        TailTemplate(),
        TailCallTemplate(),
    )
}

__all__ = ["REGISTRY", "ScopeFacts", "Flag", "SetupQuery", "FlagUnmapped", "Operation", "Param", "alone_on_its_line",
           "binds_tightly", "import_aliases", "parenthesized"]
