"""Attribute chains matched at the end of any expression: ``x.shape.as_list()``, ``x.get_shape()``.

Most of what a TF program asks of a tensor is asked of whatever holds it (a parameter, an
attribute, a call's result), which no name resolution can tie to TensorFlow. A few of those
questions are TF's alone and fail on a MindSpore tensor, whose shape is a tuple: a rule's
``match_tails`` lists them, and the converter rewrites them wherever they end an expression,
into what both tensors answer alike (``list(x.shape)`` is ``x.shape.as_list()`` for TF's).

A tail is a chain of names, each maybe called without arguments (``.get_shape().as_list()``):
it matches an expression that ends with exactly that, whatever comes before (the receiver).
Only in files that mention TensorFlow: the rules' index asks for a TF name first. The
matching is here (the engine's index and first pass call it), and so are the operations that
rewrite a matched chain into an expression over its receiver.
"""

from __future__ import annotations

import ast
from typing import Any

import libcst as cst

from migrate.ops.base import Operation, Param, template_expression

_CALL = "()"


def parse_tail(tail: str) -> tuple[tuple[str, bool], ...]:
    """``".get_shape().as_list()"`` as ``(("get_shape", True), ("as_list", True))``: names, called or not."""
    return tuple((part[:-2], True) if part.endswith(_CALL) else (part, False) for part in tail.split(".")[1:])


def last_word(tail: str) -> str:
    return parse_tail(tail)[-1][0]


def _down(node: cst.CSTNode, tail: tuple[tuple[str, bool], ...]) -> cst.BaseExpression | None:
    """The receiver when ``node`` (the call of the last name, or its attribute) ends with
    ``tail``, walking down from it; else None. Every call in the chain takes no arguments."""
    value = node
    for name, called in reversed(tail):
        if called:
            if not (isinstance(value, cst.Call) and not value.args):
                return None
            value = value.func
        if not (isinstance(value, cst.Attribute) and value.attr.value == name):
            return None
        value = value.value
    return value


def match_cst(node: cst.Attribute, tail: tuple[tuple[str, bool], ...], parent) -> tuple[cst.CSTNode, cst.BaseExpression] | None:
    """Whether ``node`` (an attribute) ends an expression with ``tail``: then (the node the
    rewrite replaces: ``node`` or the call of it; the receiver), else None."""
    target = parent(node) if tail[-1][1] else node
    if tail[-1][1] and not (isinstance(target, cst.Call) and target.func is node):
        return None
    receiver = _down(target, tail)
    return None if receiver is None else (target, receiver)


def ends_ast(node, tails) -> bool:
    """Whether ``node`` (an attribute of CPython's tree) may end one of ``tails`` (parsed): its
    names from the last down (calls taken as written, their arguments not looked at: the
    pruner keeps a few lines too many rather than one too few)."""
    for tail in tails:
        if tail[-1][0] != node.attr:
            continue
        value = node.value
        for name, called in reversed(tail[:-1]):
            if called:
                if not isinstance(value, ast.Call):
                    break
                value = value.func
            if not (isinstance(value, ast.Attribute) and value.attr == name):
                break
            value = value.value
        else:
            return True
    return False


def receiver_in(node: cst.CSTNode, tails) -> cst.BaseExpression | None:
    """The receiver of ``node`` (a call or an attribute, as rewritten) under the first of
    ``tails`` (longest first) whose chain it ends with; else None."""
    for tail in sorted(map(parse_tail, tails), key=len, reverse=True):
        receiver = _down(node, tail)
        if receiver is not None:
            return receiver
    return None


def owned_names(tails) -> set[str]:
    """The names of parsed ``tails`` a file's own objects may answer (a ``def get_shape``), which
    then leaves the chains alone: all but ``shape``, which every array has."""
    return {name for tail in tails for name, _ in tail} - {"shape"}


def words(tails) -> set[str]:
    """The names a file must hold for any of ``tails`` to match in it (their last names)."""
    return {last_word(t) for t in tails}


class TailTemplate(Operation):
    """``<receiver>.shape.ndims`` → an expression over the receiver (``len({receiver}.shape)``)."""

    name = "tail_template"
    target = "reference"
    tails = True  # its rule matches `match_tails`, each ending in a name (no call)
    params = {"template": Param(str, required=True, doc="expression; {receiver} is what comes before the chain")}

    def check(self, params: dict[str, Any]) -> None:
        template_expression(params["template"], receiver=cst.Name("x"))

    def rewrite(self, ctx, original, updated, params, suffix: str = ""):
        receiver = receiver_in(updated, ctx.current.rule.match_tails)
        if receiver is None:  # (the planner matched the original; a rewrite inside kept the chain)
            return updated
        return template_expression(params["template"], receiver=receiver)


class TailCallTemplate(TailTemplate):
    """``<receiver>.shape.as_list()`` → an expression over the receiver (``list({receiver}.shape)``)."""

    name = "tail_call_template"
    target = "call"
    # its rule's `match_tails` each end in a call without arguments
