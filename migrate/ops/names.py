"""Operations on references: rename an API, rewrite an attribute, flag a use for a person."""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrate.ops.base import Operation, Param, parse_expression, target_names, template_expression


def is_store(node: cst.CSTNode, parent) -> bool:
    p = parent(node)
    return isinstance(p, (cst.AssignTarget, cst.Del)) or (isinstance(p, (cst.AugAssign, cst.AnnAssign)) and p.target is node)


def renamed(to: str, api: str, suffix: str, after: str | list | None = None) -> cst.BaseExpression:
    """``to`` plus what a prefix rule keeps; ``to`` ending in ``.*`` keeps the API's own last
    name, or all that follows ``after`` in it (``mk.datasets.*`` after ``tensorflow.keras.datasets``:
    ``mk.datasets.mnist.load_data``); ``after`` may list prefixes (the longest the API starts with counts)."""
    if to.endswith(".*"):
        prefixes = [after] if isinstance(after, str) else list(after or [])
        found = max((p for p in prefixes if api.startswith(p + ".")), key=len, default=None)
        rest = api[len(found) + 1:] if found else api.rsplit(".", 1)[-1]
        to = to[:-1] + rest
    return parse_expression(to + suffix)


def check_target(to: str) -> None:
    cst.parse_expression(to[:-2] if to.endswith(".*") else to)


class Rename(Operation):
    """``tf.distribute.X`` → ``<to>``; a rule matching ``a.b.*`` keeps the rest of the name."""

    name = "rename"
    target = "reference"
    params = {
        "to": Param(str, required=True, doc="dotted name of the replacement; 'x.*' keeps the matched last name"),
        "keeps_strategies": Param(
            bool,
            doc="the replacement asks migrate.runtime for the current strategy, so a file that uses it keeps "
            "its strategies as migrate.runtime objects instead of rewriting them away",
        ),
        "keep_after": Param((str, list), doc="'x.*' keeps all that follows this prefix of the API's name (or the "
                                             "longest of a list of prefixes it starts with), not only its last name"),
        "uncalled": Param(bool, doc="only where the name is not called but passed on or kept as a function "
                                    "(`activation=tf.nn.relu`, `self.act = tf.nn.relu`); its calls are another "
                                    "rule's"),
        "within": Param(dict, doc="only as a keyword argument (`keywords`) of `self.<one of calls>(...)` in a "
                                  "method of a class whose bases include one of `classes` (resolved names): "
                                  "where the name means what the replacement does only there"),
        "made_by": Param(list, doc="only where the name is called on what one of these APIs (resolved names) "
                                   "makes: a call of one, or a name that the nearest statement before, in the "
                                   "same block, binds to one (`tf.abs` of what `tf.signal.stft` gives)"),
        "then": Param(list, doc="only where the name is called and one of these methods is called at once on "
                                "what it gives (`tf.RaggedTensor.from_row_lengths(...).to_tensor()`)"),
    }

    def check(self, params: dict[str, Any]) -> None:
        check_target(params["to"])
        within = params.get("within")
        if within is not None:
            if set(within) != {"calls", "keywords", "classes"} or not all(
                    isinstance(v, list) and v and all(isinstance(x, str) for x in v) for v in within.values()):
                raise ValueError("within needs non-empty lists 'calls', 'keywords' and 'classes'")
        for key in ("made_by", "then"):
            names = params.get(key)
            if names is not None and not (names and all(isinstance(x, str) for x in names)):
                raise ValueError(f"{key} needs a non-empty list of names")

    def everywhere(self, params) -> bool:
        return not {"within", "made_by", "then"} & set(params)

    def accepts_in(self, view, node, params) -> bool:
        if not self.accepts(node, view.parent, params):
            return False
        if "then" in params:
            call = view.parent(node)
            method = view.parent(call) if isinstance(call, cst.Call) and call.func is node else None
            return isinstance(method, cst.Attribute) and method.value is call and \
                method.attr.value in params["then"] and isinstance(view.parent(method), cst.Call) and \
                view.parent(method).func is method
        if "made_by" in params:
            call = view.parent(node)
            return isinstance(call, cst.Call) and call.func is node and bool(call.args) and \
                _made_by(view, call.args[0].value, frozenset(params["made_by"]))
        within = params.get("within")
        if within is None:
            return True
        arg = view.parent(node)
        if not (isinstance(arg, cst.Arg) and arg.value is node and arg.keyword is not None
                and arg.keyword.value in within["keywords"]):
            return False
        call = view.parent(arg)
        func = call.func if isinstance(call, cst.Call) else None
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
                and func.attr.value in within["calls"]):
            return False
        method = call
        while method is not None and not isinstance(method, cst.FunctionDef):
            method = view.parent(method)
        block = view.parent(method) if method is not None else None
        owner = view.parent(block) if isinstance(block, cst.IndentedBlock) else None
        return isinstance(owner, cst.ClassDef) and any(view.resolve(base.value) in within["classes"]
                                                       for base in owner.bases)

    def accepts(self, node, parent, params) -> bool:
        if not params.get("uncalled"):
            return True
        # Handed on or kept as a value (an argument, an attribute, an element, a return), not
        # called. A plain name bound to it (`act = tf.nn.relu`) is an alias whose calls are
        # analysed as the API's own, so it stays with them.
        holder = parent(node)
        if isinstance(holder, cst.Call) and holder.func is node:
            return False
        if isinstance(holder, cst.Assign):
            return not all(isinstance(t.target, cst.Name) for t in holder.targets)
        if isinstance(holder, cst.AnnAssign):
            return not isinstance(holder.target, cst.Name)
        return not (isinstance(holder, cst.Attribute) and holder.value is node)

    def refusal(self, params) -> str:
        return ("only a function handed on or kept as a value (`activation=tf.nn.relu`, `self.act = tf.nn.relu`) "
                "is renamed here")

    def rewrite(self, ctx, original, updated, params, suffix: str = ""):
        return renamed(params["to"], ctx.current.api, suffix, params.get("keep_after"))


def _made_by(view, value: cst.BaseExpression, apis: frozenset) -> bool:
    """Whether ``value`` is a call of one of ``apis``, or a name the nearest statement before its
    own in the same block binds to one (any other binding of the name in between: not known)."""
    if isinstance(value, cst.Call):
        return view.resolve(value.func) in apis
    if not isinstance(value, cst.Name):
        return False
    statement = view.statement_of(value)
    block = view.parent(statement)
    if not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return False
    body = list(block.body)
    for before in reversed(body[:body.index(statement)]):
        small = before.body if isinstance(before, cst.SimpleStatementLine) else ()
        if len(small) == 1 and isinstance(small[0], cst.Assign) and len(small[0].targets) == 1 and \
                isinstance(small[0].targets[0].target, cst.Name) and small[0].targets[0].target.value == value.value:
            return isinstance(small[0].value, cst.Call) and view.resolve(small[0].value.func) in apis
        if value.value in _bound_names(before):
            return False
    return False


def _bound_names(statement: cst.CSTNode) -> set[str]:
    """Names a statement may bind (assignment targets, loop and `with` targets, walrus, imports, defs)."""
    found: set[str] = set()

    class Binds(cst.CSTVisitor):
        def _target(self, target) -> None:
            found.update(target_names(target))

        def visit_AssignTarget(self, node):
            self._target(node.target)

        def visit_AugAssign(self, node):
            self._target(node.target)

        def visit_AnnAssign(self, node):
            self._target(node.target)

        def visit_For(self, node):
            self._target(node.target)

        def visit_AsName(self, node):
            self._target(node.name)

        def visit_NamedExpr(self, node):
            self._target(node.target)

        def visit_FunctionDef(self, node):
            found.add(node.name.value)
            return False

        def visit_ClassDef(self, node):
            found.add(node.name.value)
            return False

    statement.visit(Binds())
    return found


class AttributeTemplate(Operation):
    """``<receiver>.attr`` → an expression, e.g. ``strategy.num_replicas_in_sync`` → ``get_group_size()``."""

    name = "attribute_template"
    target = "reference"
    params = {"template": Param(str, required=True, doc="expression; {receiver} is the object")}

    def check(self, params: dict[str, Any]) -> None:
        kwargs = {"receiver": cst.Name("x")} if "{receiver}" in params["template"] else {}
        template_expression(params["template"], **kwargs)

    def accepts(self, node, parent, params) -> bool:
        return not is_store(node, parent)

    def refusal(self, params) -> str:
        return "it is assigned to, not read; convert it by hand"

    def rewrite(self, ctx, original, updated, params, suffix: str = ""):
        receiver = updated.value if isinstance(updated, cst.Attribute) else updated
        kwargs = {"receiver": receiver} if "{receiver}" in params["template"] else {}
        return template_expression(params["template"], **kwargs)


class Flag(Operation):
    """Leave the code as it is; mark it with a comment and a finding for a person."""

    name = "flag"
    target = "reference"
    static = False
    marks = True
    params = {
        "message": Param(str, required=True, doc="what a person has to do"),
        "to": Param(str, doc="also rename the reference (e.g. to the migrate.runtime equivalent)"),
    }

    def check(self, params: dict[str, Any]) -> None:
        if "to" in params:
            check_target(params["to"])

    def keeps_tf(self, params: dict[str, Any]) -> bool:
        return "to" not in params

    def rewrite(self, ctx, original, updated, params, suffix: str = ""):
        if "to" in params:
            return renamed(params["to"], ctx.current.api, suffix)
        return updated
