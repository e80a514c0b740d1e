"""Operations on calls: fill a template from bound arguments, turn ``run`` into a call, drop a set-up call."""

from __future__ import annotations

from typing import Any

import libcst as cst
from libcst.helpers import parse_template_expression

from migrate.ops import args as argbind
from migrate.ops.base import Operation, Param


def call_of(node: cst.CSTNode, parent) -> cst.Call | None:
    p = parent(node)
    return p if isinstance(p, cst.Call) and p.func is node else None


class CallTemplate(Operation):
    """``f(a, b=c)`` → a template expression over the bound arguments (and ``{receiver}``)."""

    name = "call_template"
    target = "call"
    params = {
        "signature": Param(list, required=True, doc="TF parameters, e.g. ['op', 'value', 'axis=None']"),
        "template": Param(str, required=True, doc="expression with {param} and {receiver} placeholders"),
        "ignored": Param(dict, doc="parameter → note when the call passes it (it has no effect in MindSpore)"),
    }

    def check(self, params: dict[str, Any]) -> None:
        argbind.check_signature(params["signature"])
        names = [p[0] for p in argbind.parse_signature(params["signature"])]
        parse_template_expression(params["template"], **{n: cst.Name("x") for n in names + ["receiver"] if "{%s}" % n in params["template"]})
        for key in params.get("ignored", {}):
            if key not in names:
                raise ValueError(f"ignored parameter {key!r} is not in the signature")

    def accepts(self, node, parent, params) -> bool:
        call = call_of(node, parent)
        return call is not None and argbind.bind(call, params["signature"]) is not None

    def rewrite(self, ctx, original: cst.Call, updated: cst.Call, params, suffix: str = ""):
        bound = argbind.bind(updated, params["signature"])
        passed = argbind.explicit(original, params["signature"])
        for key, note in params.get("ignored", {}).items():
            if key in passed:
                ctx.note(original, note)
        template = params["template"]
        values = {k: v for k, v in bound.items() if "{%s}" % k in template}
        if "{receiver}" in template and isinstance(updated.func, cst.Attribute):
            values["receiver"] = updated.func.value
        return keep_layout(updated, parse_template_expression(template, **values))


def keep_layout(old: cst.Call, new: cst.BaseExpression) -> cst.BaseExpression:
    """A rebuilt call keeps the original's line breaks after ``(`` and before ``)``."""
    if not isinstance(new, cst.Call) or not new.args or not old.args:
        return new
    last = new.args[-1].with_changes(whitespace_after_arg=old.args[-1].whitespace_after_arg)
    return new.with_changes(whitespace_before_args=old.whitespace_before_args, args=[*new.args[:-1], last])


class RunToCall(Operation):
    """``strategy.run(fn, args=(a,), kwargs={"k": v})`` → ``fn(a, k=v)``: in SPMD each process is one replica."""

    name = "run_to_call"
    target = "call"
    params = {
        "signature": Param(list, required=True, doc="TF parameters naming fn, args and kwargs"),
        "ignored": Param(dict, doc="parameter → note when passed"),
    }

    def check(self, params: dict[str, Any]) -> None:
        argbind.check_signature(params["signature"])
        names = {p[0] for p in argbind.parse_signature(params["signature"])}
        if not {"fn", "args", "kwargs"} <= names:
            raise ValueError("run_to_call's signature must name 'fn', 'args' and 'kwargs'")

    def accepts(self, node, parent, params) -> bool:
        call = call_of(node, parent)
        return call is not None and argbind.bind(call, params["signature"]) is not None

    def rewrite(self, ctx, original, updated: cst.Call, params, suffix: str = ""):
        bound = argbind.bind(updated, params["signature"])
        passed = argbind.explicit(original, params["signature"])
        for key, note in params.get("ignored", {}).items():
            if key in passed:
                ctx.note(original, note)
        call_args: list[cst.Arg] = []
        args = bound["args"]
        if isinstance(args, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in args.elements):
            call_args += [cst.Arg(e.value) for e in args.elements]
        elif not (isinstance(args, cst.Tuple) and not args.elements):
            call_args.append(cst.Arg(args, star="*"))
        kwargs = bound["kwargs"]
        if isinstance(kwargs, cst.Dict) and all(
            isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) and e.key.evaluated_value.isidentifier()
            for e in kwargs.elements
        ):
            tight = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
            call_args += [cst.Arg(e.value, keyword=cst.Name(e.key.evaluated_value), equal=tight) for e in kwargs.elements]
        elif not (isinstance(kwargs, cst.Name) and kwargs.value == "None"):
            call_args.append(cst.Arg(kwargs, star="**"))
        # Commas between the rebuilt arguments, none after the last.
        call_args = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for a in call_args[:-1]] + call_args[-1:]
        return keep_layout(updated, cst.Call(func=bound["fn"], args=call_args))


class RemoveCall(Operation):
    """Drop a statement that only calls a set-up API the launcher now does; leave a comment saying so."""

    name = "remove_call"
    target = "call"
    params = {"reason": Param(str, required=True, doc="why the call is not needed any more")}

    def accepts(self, node, parent, params) -> bool:
        call = call_of(node, parent)
        return call is not None and isinstance(parent(call), cst.Expr)
