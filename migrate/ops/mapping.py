"""One TF function → one MindSpore expression, for a family of functions that share a signature.

``tf.reduce_sum(x, axis=1)`` → ``ops.sum(x, dim=1)``: the call's arguments are bound
to TF's signature as Python would bind them, then put into the template for the
matched function's own name (``templates: {reduce_sum: ..., reduce_mean: ...}``).
Arguments the call leaves out stay out where MindSpore's default means the same
(``omit_unpassed``), so the output reads like code a person would write. String
literals some parameters accept (``tf.cast(x, "float32")``) are translated through
a table; one the table does not know leaves the call as it is.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrate.ops import args as argbind
from migrate.ops.base import Operation, Param, parse_expression, template_expression
from migrate.ops.calls import call_of, keep_layout, misfit


def _placeholder(value: cst.BaseExpression) -> str | None:
    """``{name}`` in a template parses as a one-element set display: the name it holds."""
    if isinstance(value, cst.Set) and len(value.elements) == 1 and isinstance(value.elements[0].value, cst.Name):
        return value.elements[0].value.value
    return None


def _leave_out(template: str, names: set[str]) -> str:
    """``template`` without the outermost call's arguments that are exactly ``{name}`` for a name in ``names``.

    Keyword arguments go freely; a positional argument only from the end, so the
    ones before it keep their positions.
    """
    if not names:
        return template
    call = parse_expression(template)
    if not isinstance(call, cst.Call):
        return template
    args = [a for a in call.args if not (a.keyword is not None and _placeholder(a.value) in names)]
    while args and args[-1].keyword is None and _placeholder(args[-1].value) in names:
        args.pop()
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return cst.Module([]).code_for_node(call.with_changes(args=args))


class MapCall(Operation):
    """``tf.f(...)`` → the template for ``f``, over the bound arguments."""

    name = "map_call"
    target = "call"
    params = {
        "signature": Param(list, required=True, doc="TF parameters shared by every matched function, e.g. ['input_tensor', 'axis=None']"),
        "templates": Param(dict, required=True, doc="matched function's last name → expression with {param} placeholders"),
        "omit_unpassed": Param(list, doc="parameters left out of the output when the call does not pass them (MindSpore's default means the same)"),
        "literals": Param(dict, doc="parameter → {string literal or None/True/False: expression}; other string literals are not converted"),
        "literal_only": Param(list, doc="parameters of `literals` whose value must be one of the table's literals (an expression leaves the call as it is)"),
        "ignored": Param(dict, doc="parameter → note when the call passes it (it has no effect in MindSpore)"),
        "unfit": Param(str, doc="what a person should do with a call whose arguments do not fit (the comment says it)"),
        "displays": Param(list, doc="parameters the call must write as a list or tuple display for this rule to apply (another rule takes the rest)"),
        "tensors": Param(list, doc="parameters MindSpore takes only as tensors: a list or tuple display there leaves the call as it is"),
        "numbers": Param(list, doc="parameters the call must pass as a number literal (`-1`, `0.5`) for this rule to apply"),
        "packed_elements": Param(dict, doc="parameter → true: the rule applies only when the call writes it as a list "
                                           "or tuple display holding a number or a display among its elements (which "
                                           "TF packs into a tensor: `[[2], tf.shape(x)]`); false: only when it does not"),
        "texts": Param(dict, doc="parameter → true: the rule applies only when the call passes it as a string literal "
                                 "or a (nested) list or tuple display of them (TF's string tensor); false: only when "
                                 "it does not"),
        "size_lists": Param(list, doc="parameters the call must write as a list or tuple display of int literals "
                                      "of 0 or more (sizes without TF's -1) for this rule to apply"),
        "pad_pairs": Param(list, doc="parameters the call must write as TF's `[[before, after], ...]` display of int "
                                     "literals of 0 or more, one pair per dimension, for this rule to apply; the "
                                     "output has MindSpore's flat tuple, last dimension first, without the zero "
                                     "pairs of the first dimensions"),
        "int_literals": Param(dict, doc="{value: param, dtype: param, to: expression}: when the call gives no dtype and "
                                        "the value is int literals that fit in int32 (a number, or list/tuple displays of "
                                        "them), the dtype TF infers for them, written out"),
    }

    def check(self, params: dict[str, Any]) -> None:
        argbind.check_signature(params["signature"])
        names = [p[0] for p in argbind.parse_signature(params["signature"])]
        for key in [*params.get("omit_unpassed", []), *params.get("literals", {}), *params.get("ignored", {}), *params.get("displays", []),
                    *params.get("tensors", []), *params.get("numbers", []), *params.get("packed_elements", {}),
                    *params.get("size_lists", []), *params.get("pad_pairs", []), *params.get("texts", {})]:
            if key not in names:
                raise ValueError(f"parameter {key!r} is not in the signature")
        ints = params.get("int_literals")
        if ints is not None:
            if set(ints) != {"value", "dtype", "to"} or ints["value"] not in names or ints["dtype"] not in names:
                raise ValueError("int_literals: give {value: param, dtype: param, to: expression} of the signature's params")
            parse_expression(str(ints["to"]))
        for key in params.get("literal_only", []):
            if key not in params.get("literals", {}):
                raise ValueError(f"literal_only: {key!r} has no literals table")
        for table in params.get("literals", {}).values():
            if not isinstance(table, dict):
                raise ValueError("literals: each parameter maps literals to expressions")
            for expression in table.values():
                parse_expression(str(expression))
        if not params["templates"]:
            raise ValueError("templates: give at least one")
        for fn, template in params["templates"].items():
            if not isinstance(template, str):
                raise ValueError(f"template for {fn!r} must be a string")
            template_expression(template, **{n: cst.Name("x") for n in names if "{%s}" % n in template})
            call = parse_expression(template)
            outer = {_placeholder(a.value) for a in call.args} if isinstance(call, cst.Call) else set()
            for n in params.get("omit_unpassed", []):
                if "{%s}" % n in template and n not in outer:
                    raise ValueError(f"template for {fn!r}: {{{n}}} must be an argument of the outermost call to be left out")

    def _literal_ok(self, call: cst.Call, params) -> bool:
        """Literals the tables know; a parameter no template carries takes nothing else (it would be lost)."""
        used = " ".join(params["templates"].values())
        passed = argbind.passed_args(call, params["signature"])
        for key, table in params.get("literals", {}).items():
            if key not in passed:
                continue  # the signature's default: the rule's own choice
            value = passed[key].value
            literal = _literal(value)
            if literal is not None:
                if literal not in _keys(table):
                    return False
            elif isinstance(value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)) or "{%s}" % key not in used \
                    or key in params.get("literal_only", ()):
                return False
        return True

    def accepts(self, node, parent, params) -> bool:
        call = call_of(node, parent)
        if call is None:
            return False
        return argbind.bind(call, params["signature"]) is not None and self._literal_ok(call, params) and self._displays_ok(call, params)

    def _displays_ok(self, call: cst.Call, params) -> bool:
        bound = argbind.bind(call, params["signature"]) or {}
        displays = (cst.List, cst.Tuple)
        return all(isinstance(bound.get(key), displays) for key in params.get("displays", [])) and not any(
            isinstance(bound.get(key), displays) for key in params.get("tensors", [])) and all(
            _number(bound.get(key)) for key in params.get("numbers", [])) and all(
            _packs_literals(bound.get(key)) == want for key, want in params.get("packed_elements", {}).items()) and all(
            _sizes(bound.get(key)) is not None for key in params.get("size_lists", [])) and all(
            _pad_pairs(bound.get(key)) is not None for key in params.get("pad_pairs", [])) and all(
            _text(bound.get(key)) == want for key, want in params.get("texts", {}).items())

    def refusal(self, params) -> str:
        if "unfit" in params:
            return f"the arguments do not fit `({', '.join(params['signature'])})`: {params['unfit']}"
        return misfit(params)

    def dropped(self, call, params) -> list[cst.Arg]:
        used = " ".join(params["templates"].values())
        return [arg for name, arg in argbind.passed_args(call, params["signature"]).items() if "{%s}" % name not in used]

    def rewrite(self, ctx, original: cst.Call, updated: cst.Call, params, suffix: str = ""):
        bound = argbind.bind(updated, params["signature"])
        passed = argbind.explicit(original, params["signature"])
        for key, note in params.get("ignored", {}).items():
            if key in passed:
                ctx.note(original, note)
        template = params["templates"][ctx.current.api.rsplit(".", 1)[-1]]
        ints = params.get("int_literals")
        if ints and ints["dtype"] not in passed and _int32_literals(bound.get(ints["value"])):
            passed = {*passed, ints["dtype"]}
            bound = {**bound, ints["dtype"]: parse_expression(ints["to"])}
        template = _leave_out(template, {n for n in params.get("omit_unpassed", []) if n not in passed})
        values = {}
        for key, value in bound.items():
            if "{%s}" % key not in template:
                continue
            table = _keys(params.get("literals", {}).get(key, {}))
            if _literal(value) in table:
                value = parse_expression(table[_literal(value)])
            if key in params.get("pad_pairs", ()):
                value = _flat_padding(_pad_pairs(value))
            values[key] = value
        return keep_layout(updated, template_expression(template, **values))


def _number(node) -> bool:
    """A number literal: ``3``, ``0.5``, ``-1``."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def _text(node) -> bool:
    """A string literal (``"hello"``, ``b"x"``, implicitly joined ones), or a list or tuple display
    of them (nested too, one at least)."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        return True
    return isinstance(node, (cst.List, cst.Tuple)) and bool(node.elements) and all(
        isinstance(e, cst.Element) and _text(e.value) for e in node.elements)


def _packs_literals(node) -> bool:
    """A list or tuple display with a number or another display among its elements: TF packs
    those into tensors, where MindSpore's list-taking ops want tensors already."""
    return isinstance(node, (cst.List, cst.Tuple)) and any(
        isinstance(e, cst.Element) and (_number(e.value) or isinstance(e.value, (cst.List, cst.Tuple)))
        for e in node.elements)


def _size(node) -> int | None:
    """The value of an int literal of 0 or more (``3``), else None."""
    return int(node.evaluated_value) if isinstance(node, cst.Integer) else None


def _sizes(node) -> list[int] | None:
    """A non-empty list or tuple display of int literals of 0 or more: their values."""
    if not isinstance(node, (cst.List, cst.Tuple)) or not node.elements:
        return None
    sizes = [_size(e.value) if isinstance(e, cst.Element) else None for e in node.elements]
    return None if None in sizes else sizes


def _pad_pairs(node) -> list[list[int]] | None:
    """TF's paddings written out: a display of ``[before, after]`` displays of int literals of 0 or more."""
    if not isinstance(node, (cst.List, cst.Tuple)) or not node.elements:
        return None
    pairs = [_sizes(e.value) if isinstance(e, cst.Element) else None for e in node.elements]
    return None if any(p is None or len(p) != 2 for p in pairs) else pairs


def _flat_padding(pairs: list[list[int]]) -> cst.Tuple:
    """MindSpore's padding for TF's pairs: flat, last dimension first; the zero pairs of the first
    dimensions, which pad nothing, are left out (one pair always stays)."""
    while len(pairs) > 1 and pairs[0] == [0, 0]:
        pairs = pairs[1:]
    flat = [n for pair in reversed(pairs) for n in pair]
    return parse_expression("(%s)" % ", ".join(map(str, flat)))


def _int32_literals(node) -> bool:
    """An int literal that fits in int32, or a non-empty list/tuple display of only such (nested):
    what TF makes an int32 tensor of."""
    if isinstance(node, (cst.List, cst.Tuple)):
        return bool(node.elements) and all(not isinstance(e, cst.StarredElement) and _int32_literals(e.value)
                                           for e in node.elements)
    sign = 1
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        sign, node = (-1 if isinstance(node.operator, cst.Minus) else 1), node.expression
    if not isinstance(node, cst.Integer):
        return False
    value = sign * int(node.evaluated_value)
    return -2**31 <= value < 2**31


def _keys(table: dict) -> dict[str, str]:
    """A literals table with YAML's ``True:``/``None:`` keys read as the words they are."""
    return {str(k): str(v) for k, v in table.items()}


def _literal(node: cst.BaseExpression) -> str | None:
    """The key a literal has in a ``literals`` table: a string's value, or ``None``/``True``/``False``."""
    if isinstance(node, cst.SimpleString):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - bytes or odd escapes: no key
            return None
        return value if isinstance(value, str) else None
    if isinstance(node, cst.Name) and node.value in ("None", "True", "False"):
        return node.value
    return None
