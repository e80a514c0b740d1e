"""``with strategy.scope():`` dissolves into its body: in SPMD every variable is already per process."""

from __future__ import annotations

import libcst as cst

from migrate.ops.base import Operation


class UnwrapScope(Operation):
    name = "unwrap_scope"
    target = "with_item"
    params = {}

    def accepts(self, node, parent, params) -> bool:
        call = parent(node)
        if not (isinstance(call, cst.Call) and call.func is node and not call.args):
            return False
        item = parent(call)
        return isinstance(item, cst.WithItem) and item.asname is None and isinstance(parent(item), cst.With)
