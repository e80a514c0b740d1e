"""``with strategy.scope():`` dissolves into its body: in SPMD every variable is already per process.

The same operation dissolves TF's other context managers that mean nothing to an eager
MindSpore process (``with tf.name_scope("block"):``, ``with tf.device("/cpu:0"):``): a rule
gives their ``signature``, and the ``with`` dissolves when the arguments bind to it and
computing them has no effect that dissolving would lose (no call, no ``await``, no walrus).
"""

from __future__ import annotations

from typing import Any

import libcst as cst
import libcst.matchers as m

from migrate.ops import args as argbind
from migrate.ops.base import Operation, Param

# What computing an argument may not do, for the argument to be dropped with its `with`.
_EFFECTS = m.Call() | m.Await() | m.Yield() | m.NamedExpr()


class UnwrapScope(Operation):
    name = "unwrap_scope"
    target = "with_item"
    # Dissolving drops the arguments: a TensorFlow value among them reaches no MindSpore kernel.
    accepts_tf_values = True
    params = {
        "signature": Param(list, doc="TF parameters of a context manager taking arguments, e.g. ['name']; "
                                     "without it the call must take none"),
    }

    def check(self, params: dict[str, Any]) -> None:
        if "signature" in params:
            argbind.check_signature(params["signature"])

    def accepts(self, node, parent, params) -> bool:
        call = parent(node)
        if not (isinstance(call, cst.Call) and call.func is node):
            return False
        if "signature" in params:
            if argbind.bind(call, params["signature"]) is None:
                return False
            if any(m.findall(arg.value, _EFFECTS) for arg in call.args):
                return False
        elif call.args:
            return False
        item = parent(call)
        return isinstance(item, cst.WithItem) and item.asname is None and isinstance(parent(item), cst.With)

    def refusal(self, params) -> str:
        if "signature" not in params:
            return super().refusal(params)
        return (f"only `with <scope>(...):` with arguments that fit `({', '.join(params['signature'])})`, "
                "compute nothing (no call) and take no `as` name dissolves")
