"""Strategy construction → ``init()`` + ``ms.set_auto_parallel_context(...)``.

TF's strategies drive N replicas from one process; MindSpore runs one process per
device (started by ``msrun``), joined by ``init()`` and configured by the
auto-parallel context. Constructor arguments either map to a context option or
become a note saying who decides it now (mostly: the launcher).
"""

from __future__ import annotations

import math
from typing import Any

import libcst as cst

from migrate.ops import args as argbind
from migrate.ops.base import Operation, Param, parse_statement
from migrate.ops.calls import alone_on_its_line, call_of

PARALLEL_MODES = ("DATA_PARALLEL", "STAND_ALONE")
# TF cross-device ops that pack gradients; MindSpore fuses all-reduces into buckets instead.
PACKING_CROSS_DEVICE_OPS = {"tensorflow.distribute.NcclAllReduce", "tensorflow.distribute.HierarchicalCopyAllReduce"}
UNPACKED_CROSS_DEVICE_OPS = {"tensorflow.distribute.ReductionToOneDevice", "tensorflow.distribute.CrossDeviceOps"}
COMMUNICATION_OPTIONS = {
    "tensorflow.distribute.experimental.CommunicationOptions",
}


def const_int(node: cst.BaseExpression) -> int | None:
    """The value of an integer literal or of +, -, * and ** over them (``50 * 1024 * 1024``)."""
    if isinstance(node, cst.Integer):
        return int(node.value.replace("_", ""), 0)
    if isinstance(node, cst.BinaryOperation):
        left, right = const_int(node.left), const_int(node.right)
        if left is None or right is None:
            return None
        op = type(node.operator)
        if op is cst.Multiply:
            return left * right
        if op is cst.Add:
            return left + right
        if op is cst.Subtract:
            return left - right
        if op is cst.Power and 0 <= right < 64:
            return left**right
    return None


class ConstructStrategy(Operation):
    name = "construct_strategy"
    target = "statement"
    accepts_tf_values = True
    params = {
        "signature": Param(list, required=True, doc="the TF constructor's parameters"),
        "parallel_mode": Param(str, required=True, doc="DATA_PARALLEL or STAND_ALONE"),
        "init": Param(bool, doc="call mindspore.communication.init() (one process per device)"),
        "parameter_broadcast": Param(bool, doc="broadcast parameters from rank 0 (mirrored variables start equal)"),
        "notes": Param(dict, doc="constructor parameter → note when the call passes it"),
        "fusion_from": Param(list, doc="parameters whose value sets all-reduce fusion"),
    }

    def check(self, params: dict[str, Any]) -> None:
        argbind.check_signature(params["signature"])
        if params["parallel_mode"] not in PARALLEL_MODES:
            raise ValueError(f"parallel_mode must be one of {', '.join(PARALLEL_MODES)}")

    def accepts(self, node, parent, params) -> bool:
        call = call_of(node, parent)
        if call is None or argbind.bind(call, params["signature"]) is None:
            return False
        holder = parent(call)
        if not alone_on_its_line(holder, parent):
            return False
        if isinstance(holder, cst.Expr):
            return True
        return isinstance(holder, cst.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0].target, cst.Name)

    def refusal(self, params) -> str:
        return (f"not a statement of its own with arguments fitting `({', '.join(params['signature'])})`, "
                "and no run-time fallback serves this name; convert it by hand")

    # -- what the constructor's arguments say -------------------------------------------

    def fusion(self, ctx, call: cst.Call, params) -> str | None:
        """A ``comm_fusion`` value from cross_device_ops / communication_options, if they say one."""
        bound = argbind.bind(call, params["signature"]) or {}
        passed = argbind.explicit(call, params["signature"])
        for key in params.get("fusion_from", []):
            if key not in passed:
                continue
            value = bound[key]
            if not isinstance(value, cst.Call):
                ctx.note(call, f"`{key}={ctx.code(value)}` is not a literal constructor call; all-reduce fusion is left at MindSpore's default", "manual")
                continue
            kind = ctx.resolve(value.func)
            if kind in PACKING_CROSS_DEVICE_OPS:
                packs = next((a.value for a in value.args if a.keyword and a.keyword.value == "num_packs"), None)
                if packs is None and value.args and value.args[0].keyword is None:
                    packs = value.args[0].value
                if packs is not None and const_int(packs) == 0:
                    ctx.note(call, f"`{ctx.code(value)}`: no packing; MindSpore reduces each gradient on its own")
                    return '{"allreduce": {"mode": "index", "config": [0]}}'
                return '{"allreduce": {"mode": "auto", "config": None}}'
            if kind in UNPACKED_CROSS_DEVICE_OPS:
                ctx.note(call, f"`{ctx.code(value)}`: MindSpore all-reduces on every device; the result is the same sum")
                continue
            if kind in COMMUNICATION_OPTIONS:
                for arg in value.args:
                    name = arg.keyword.value if arg.keyword else "bytes_per_pack"
                    if name == "bytes_per_pack":
                        size = const_int(arg.value)
                        if size is None:
                            ctx.note(call, f"`bytes_per_pack={ctx.code(arg.value)}` is not a constant; all-reduce fusion is left at MindSpore's default", "manual")
                        elif size > 0:
                            megabytes = max(1, math.ceil(size / 2**20))
                            return '{"allreduce": {"mode": "size", "config": %d}}' % megabytes
                    if name == "implementation":
                        ctx.note(call, "`implementation`: the backend follows the device (HCCL on Ascend, NCCL on GPU, MindSpore's own on CPU)")
                    elif name == "timeout_seconds":
                        ctx.note(call, "`timeout_seconds`: set the job timeout with `migrate run --timeout`", "manual")
                continue
            ctx.note(call, f"`{key}={ctx.code(value)}` is not understood; all-reduce fusion is left at MindSpore's default", "manual")
        return None

    def statements(self, ctx, call: cst.Call, params) -> list[cst.BaseStatement]:
        passed = argbind.explicit(call, params["signature"])
        for key, note in params.get("notes", {}).items():
            if key in passed:
                ctx.note(call, note, "info")
        mode = params["parallel_mode"]
        context = [f"parallel_mode=ms.ParallelMode.{mode}"]
        if mode == "DATA_PARALLEL":
            # TF sums replica gradients (the loss is scaled by the global batch); Keras fit averages.
            mean = ctx.facts.keras_fit and not ctx.facts.gradient_tape
            context.append(f"gradients_mean={mean}")
            if params.get("parameter_broadcast", True):
                context.append("parameter_broadcast=True")
            fusion = self.fusion(ctx, call, params)
            if fusion:
                context.append(f"comm_fusion={fusion}")
        out: list[cst.BaseStatement] = []
        if params.get("init", mode == "DATA_PARALLEL"):
            out.append(parse_statement("init()"))
        out.append(parse_statement("ms.set_auto_parallel_context(%s)" % ", ".join(context)))
        return out
