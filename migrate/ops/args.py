"""Binding a call's arguments to a TF signature, as Python would."""

from __future__ import annotations

import libcst as cst

from migrate.ops.base import parse_expression


def parse_signature(signature: list[str]) -> list[tuple[str, str | None, bool]]:
    """``["op", "value", "axis=None", "*", "options=None"]`` → (name, default text, keyword-only)."""
    out, kw_only = [], False
    for item in signature:
        if item == "*":
            kw_only = True
            continue
        name, sep, default = item.partition("=")
        out.append((name.strip(), default.strip() if sep else None, kw_only))
    return out


def check_signature(signature: list[str]) -> None:
    seen_default = False
    for name, default, kw_only in parse_signature(signature):
        if not name.isidentifier():
            raise ValueError(f"signature entry {name!r} is not an identifier")
        if default is not None:
            cst.parse_expression(default)
            seen_default = True
        elif seen_default and not kw_only:
            raise ValueError(f"signature: parameter {name!r} without default follows one with a default")


def bind(call: cst.Call, signature: list[str]) -> dict[str, cst.BaseExpression] | None:
    """The call's arguments by parameter name, defaults filled in; None if they do not fit.

    ``*args``/``**kwargs`` at the call site cannot be bound statically, nor can
    unknown keywords or too many positionals: the caller then leaves the call alone.
    """
    params = parse_signature(signature)
    bound: dict[str, cst.BaseExpression] = {}
    positional = [p for p in params if not p[2]]
    pos_i = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if pos_i >= len(positional):
                return None
            bound[positional[pos_i][0]] = arg.value
            pos_i += 1
        else:
            key = arg.keyword.value
            if key in bound or key not in {p[0] for p in params}:
                return None
            bound[key] = arg.value
    for name, default, _ in params:
        if name not in bound:
            if default is None:
                return None
            bound[name] = parse_expression(default)
    return bound


def passed_args(call: cst.Call, signature: list[str]) -> dict[str, cst.Arg]:
    """The call's own ``Arg`` nodes by the parameter they bind (only those it passes)."""
    params = parse_signature(signature)
    positional = [p[0] for p in params if not p[2]]
    out: dict[str, cst.Arg] = {}
    pos_i = 0
    for arg in call.args:
        if arg.star:
            continue
        if arg.keyword is not None:
            out[arg.keyword.value] = arg
        elif pos_i < len(positional):
            out[positional[pos_i]] = arg
            pos_i += 1
    return out


def explicit(call: cst.Call, signature: list[str]) -> set[str]:
    """Names of the parameters the call passes explicitly."""
    params = [p for p in parse_signature(signature) if not p[2]]
    names: set[str] = set()
    pos_i = 0
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            if pos_i < len(params):
                names.add(params[pos_i][0])
            pos_i += 1
        elif arg.keyword is not None:
            names.add(arg.keyword.value)
    return names
