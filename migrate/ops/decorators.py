"""Decorators with nothing to do once the code runs on MindSpore: ``@tf.function`` goes away.

A converted step runs in PyNative mode, MindSpore's eager execution, so the
function a decorator compiled runs as written. Arguments the decorator was given
say how to compile; a rule's ``ignored`` notes say what each one becomes.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrate.ops import args as argbind
from migrate.ops.base import Operation, Param


def decorator_call(node: cst.CSTNode, parent) -> tuple[cst.Decorator | None, cst.Call | None]:
    """The decorator ``node`` names (``@node``) or calls (``@node(...)``), and that call."""
    holder = parent(node)
    call = None
    if isinstance(holder, cst.Call) and holder.func is node:
        call, holder = holder, parent(holder)
    if isinstance(holder, cst.Decorator) and holder.decorator is (call or node):
        return holder, call
    return None, None


class RemoveDecorator(Operation):
    """``@tf.function`` and ``@tf.function(jit_compile=True)`` above a ``def`` → nothing; comments stay."""

    name = "remove_decorator"
    target = "decorator"
    params = {
        "signature": Param(list, required=True, doc="the decorator factory's parameters, for `@f(...)`"),
        "ignored": Param(dict, doc="parameter → note when the decorator passes it"),
    }

    def check(self, params: dict[str, Any]) -> None:
        argbind.check_signature(params["signature"])
        names = {p[0] for p in argbind.parse_signature(params["signature"])}
        for key in params.get("ignored", {}):
            if key not in names:
                raise ValueError(f"ignored parameter {key!r} is not in the signature")

    def accepts(self, node, parent, params) -> bool:
        decorator, call = decorator_call(node, parent)
        return decorator is not None and (call is None or argbind.bind(call, params["signature"]) is not None)

    def refusal(self, params) -> str:
        return f"only a decorator `@f` or `@f({', '.join(params['signature'])})` is removed"

    def dropped(self, decorator: cst.Decorator, params) -> list[cst.Arg]:
        inner = decorator.decorator
        return list(inner.args) if isinstance(inner, cst.Call) else []

    def rewrite(self, ctx, original: cst.Decorator, updated: cst.Decorator, params, suffix: str = ""):
        if isinstance(original.decorator, cst.Call):
            passed = argbind.explicit(original.decorator, params["signature"])
            for key, note in params.get("ignored", {}).items():
                if key in passed:
                    ctx.note(original, note)
        return cst.RemovalSentinel.REMOVE
