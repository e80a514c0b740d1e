"""Operations on calls: fill a template from bound arguments, turn ``run`` into a call, drop a set-up call."""

from __future__ import annotations

from typing import Any

import libcst as cst
import libcst.matchers as m

from migrate.ops import args as argbind
from migrate.ops.base import Operation, Param, binds_tightly, parenthesized, template_expression


def call_of(node: cst.CSTNode, parent) -> cst.Call | None:
    p = parent(node)
    return p if isinstance(p, cst.Call) and p.func is node else None


def alone_on_its_line(small: cst.CSTNode, parent) -> bool:
    """``small`` is the only statement of its line, so the whole line can be replaced or removed.

    ``a = 1; b = f()`` and ``if x: b = f()`` are left to the run-time path instead.
    """
    line = parent(small)
    return isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1


def misfit(params) -> str:
    return f"the arguments do not fit `({', '.join(params['signature'])})`; convert the call by hand"


class SignatureCall(Operation):
    """An operation on calls whose arguments must bind to the TF signature in ``params``."""

    target = "call"

    def accepts(self, node, parent, params) -> bool:
        call = call_of(node, parent)
        return call is not None and argbind.bind(call, params["signature"]) is not None

    def refusal(self, params) -> str:
        return misfit(params)


class CallTemplate(SignatureCall):
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
        template_expression(params["template"], **{n: cst.Name("x") for n in names + ["receiver"] if "{%s}" % n in params["template"]})
        for key in params.get("ignored", {}):
            if key not in names:
                raise ValueError(f"ignored parameter {key!r} is not in the signature")


    def dropped(self, call, params) -> list[cst.Arg]:
        return [arg for name, arg in argbind.passed_args(call, params["signature"]).items() if "{%s}" % name not in params["template"]]

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
        return keep_layout(updated, template_expression(template, **values))


def keep_layout(old: cst.Call, new: cst.BaseExpression) -> cst.BaseExpression:
    """A rebuilt call keeps the original's layout: line breaks and comments survive.

    An argument carried over from the original keeps its own separator (and the comment
    after it); any other takes the original's separator at the same position. The last
    argument keeps what stood before ``)``: a trailing comma and the line break.
    """
    if not isinstance(new, cst.Call) or not new.args or not old.args:
        return new
    unused = list(old.args)

    def source(value: cst.BaseExpression) -> cst.Arg | None:
        for arg in unused:
            if arg.value is value or arg.value.deep_equals(value):
                unused.remove(arg)
                return arg
        return None

    args, final = list(new.args), old.args[-1]
    for i, arg in enumerate(args):
        own = source(arg.value)
        if i < len(args) - 1:
            if own is not None and own is not final:
                args[i] = arg.with_changes(comma=own.comma)
            elif i < len(old.args) - 1:
                args[i] = arg.with_changes(comma=old.args[i].comma)
            continue
        comma = final.comma
        if own is not None and own is not final and isinstance(comma, cst.Comma):
            mine, closing = own.comma.whitespace_after, comma.whitespace_after
            if isinstance(mine, cst.ParenthesizedWhitespace) and isinstance(closing, cst.ParenthesizedWhitespace):
                # Its own trailing comment, then the line break before `)`.
                comma = comma.with_changes(whitespace_after=closing.with_changes(first_line=mine.first_line))
        if len(args) == 1 and isinstance(arg.value, cst.GeneratorExp) and not arg.value.lpar:
            comma = cst.MaybeSentinel.DEFAULT  # `f(x for x in y,)` does not parse
        args[i] = arg.with_changes(comma=comma, whitespace_after_arg=final.whitespace_after_arg)
    return new.with_changes(whitespace_before_args=old.whitespace_before_args, args=args)


class RunToCall(SignatureCall):
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


    def dropped(self, call, params) -> list[cst.Arg]:
        return [arg for name, arg in argbind.passed_args(call, params["signature"]).items() if name not in ("fn", "args", "kwargs")]

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
        fn = bound["fn"]  # `(lambda: x)()`, not `lambda: x()`
        return keep_layout(updated, cst.Call(func=fn if binds_tightly(fn) else parenthesized(fn), args=call_args))


class RemoveCall(Operation):
    """Drop a statement that only calls a set-up API the launcher now does; leave a comment saying so."""

    name = "remove_call"
    target = "call"
    removes_statement = True
    params = {
        "reason": Param(str, required=True, doc="why the call is not needed any more"),
        "signature": Param(list, doc="TF parameters, for `keys`"),
        "keys": Param(dict, doc="parameter → the string keys its dict display may hold for the call to be removed "
                                "(any other key, a value that calls something, or another expression leaves it)"),
    }

    def check(self, params: dict[str, Any]) -> None:
        if "keys" in params:
            if "signature" not in params:
                raise ValueError("keys: give the signature that names its parameters")
            argbind.check_signature(params["signature"])
            names = [p[0] for p in argbind.parse_signature(params["signature"])]
            for key, allowed in params["keys"].items():
                if key not in names:
                    raise ValueError(f"keys: {key!r} is not in the signature")
                if not isinstance(allowed, list) or not all(isinstance(k, str) for k in allowed):
                    raise ValueError(f"keys: {key!r} takes a list of strings")

    def accepts(self, node, parent, params) -> bool:
        call = call_of(node, parent)
        if not (call is not None and isinstance(parent(call), cst.Expr) and alone_on_its_line(parent(call), parent)):
            return False
        if "keys" not in params:
            return True
        bound = argbind.bind(call, params["signature"])
        return bound is not None and all(_dict_of(bound.get(name), allowed) for name, allowed in params["keys"].items())

    def refusal(self, params) -> str:
        if "keys" in params:
            names = " and ".join(f"`{name}`" for name in params["keys"])
            return (f"only a call standing alone on its line, with {names} a dict display of the keys the rule lists "
                    "(values that call nothing), is removed")
        return "only a call standing alone on its line is removed; this one's result is used or it shares its line"

    def dropped(self, call, params) -> list[cst.Arg]:
        return list(call.args)


def _dict_of(value, allowed: list[str]) -> bool:
    """A dict display whose keys are string literals among ``allowed`` and whose values call nothing."""
    if not isinstance(value, cst.Dict):
        return False
    for element in value.elements:
        if not (isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)):
            return False
        if element.key.evaluated_value not in allowed or m.findall(element.value, m.Call() | m.Await() | m.NamedExpr()):
            return False
    return True
