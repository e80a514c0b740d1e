"""The planner's two walks over the tree: the first collects aliases, tracked objects' bindings
and receivers; the second gives each reference, call, scope and statement its action."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from migrate.engine import _libcst_speed  # (first: it imports libcst.matchers, which libcst.codemod needs)

import libcst as cst

from migrate import ops
from migrate.engine.index import TYPE_HINT_CALLS, WORD
from migrate.engine.plan import Action
from migrate.rules import Rule


class Declares(cst.CSTVisitor):
    """Whether a tree holds a ``global`` or ``nonlocal`` statement."""

    def __init__(self) -> None:
        self.found = False

    def visit_Global(self, node: cst.Global) -> None:
        self.found = True

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.found = True


class Collector(cst.CSTVisitor):
    """First pass: aliases, objects made by tracked constructors, and the calls used as receivers."""

    def __init__(self, planner) -> None:  # a migrate.engine.planner.Planner
        self.p = planner
        self._stack: list[cst.CSTNode] = []
        self._hints: list[cst.CSTNode] = []  # annotations, subscripts and cast/TypeVar/NewType calls open here
        self._visits, self._leaves = _libcst_speed.methods_of(type(self))

    # Parents are recorded on this walk: libcst's ParentNodeProvider would take a walk of its own.
    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._stack:
            self.p.parents[node] = self._stack[-1]
        self._stack.append(node)
        if self.p.table is not None:
            kind = type(node)
            if kind is cst.Name:
                self.p.names_by_value.setdefault(node.value, []).append(node)
            elif kind is cst.Annotation or kind is cst.Subscript or (kind is cst.Call and _hint_call(node)):
                self._hints.append(node)
            elif kind is cst.SimpleString or kind is cst.FormattedStringText:
                if self._hints:
                    self.p.hint_words.update(WORD.findall(node.value))
                if kind is cst.SimpleString and _may_match_string(node, self.p.index.strings):
                    self.p.strings.append(node)
        if type(node) is cst.Attribute and node.attr.value in self.p.index.tail_words:
            found = self.p.index.tail_of(node, self.p.parent)
            if found is not None:
                self.p.tails[node] = found
        name = self._visits.get(type(node))  # CSTVisitor.on_visit, looking up only methods it has
        return name is None or getattr(self, name)(node) is not False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        name = self._leaves.get(type(original_node))
        if name is not None:
            getattr(self, name)(original_node)
        self._stack.pop()
        if self._hints and self._hints[-1] is original_node:
            self._hints.pop()

    def visit_Import(self, node: cst.Import) -> None:
        self.p.imports.append(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.p.imports.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        target = node.targets[0].target
        if self.p.table is not None:
            self.p.bound_targets[target.value] = target
        if isinstance(node.value, (cst.Name, cst.Attribute)):
            self.p.aliases[target] = node.value
        elif isinstance(node.value, cst.Call):
            self.p.producers.append((target, node.value, node))

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, cst.Call):
            self.p.producers.append((None, node.value, node))

    def visit_Call(self, node: cst.Call) -> None:
        if self.p.kept:
            self.p.calls.append(node)
        parent = self.p.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            self.p.chained.append(node)


class Assigner(cst.CSTVisitor):
    """Second pass: give each reference, call, scope and statement its action."""

    def __init__(self, planner) -> None:  # a migrate.engine.planner.Planner
        self.p = planner
        self.dropped: set[cst.Arg] = set()
        self.blocks: list[tuple] = []  # (rule, operation, node, api) of each structural rewrite found
        self.waiting: list[tuple] = []  # (rule, node, api, suffix, reads) of each use decided after the walk
        self.work = planner.planning_work()
        self.kept_depth = 0  # inside how many arguments of calls that stay TensorFlow
        self.kept_open: set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.work is not None and node not in self.work:
            return False  # nothing below can be planned
        name = _ASSIGNER_VISITS.get(type(node))  # CSTVisitor.on_visit, looking up only methods it has
        return name is None or getattr(self, name)(node) is not False

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        action = self.p.plan.statements.get(node)
        if action is not None and not ops.REGISTRY[action.rule.operation].removes_statement:
            self.p.finding(action)
            return False  # the statement is replaced whole
        return True

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        strings = self.p.index.strings
        if not _may_match_string(node, strings):
            return
        rule = strings.get(_string_value(node))
        if rule is not None:
            action = Action(rule, node, node, repr(_string_value(node)), status=rule.status)
            self.p.add(action)
            self.p.finding(action)

    def visit_Name(self, node: cst.Name) -> bool:
        return self._reference(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        tail = self.p.tails.get(node)
        if tail is not None and not self.kept_depth and self._tail(node, *tail):
            self._visit(tail[3])  # the receiver is converted as it would be anywhere
            return False
        if not self._reference(node):
            use = self.p.use_actions.get(node)
            if use is not None and not ops.REGISTRY[use[0].operation].static:
                self._visit(node.value)  # the use stays, so its receiver does: what is in it is converted
            return False
        self._visit(node.value)  # the attribute's own name is not a reference
        return False

    def _tail(self, node: cst.Attribute, rule: Rule, api: str, target: cst.CSTNode, receiver) -> bool:
        """Plan a chain a rule matches on any receiver (``x.shape.as_list()``); False when the
        receiver is a name or attribute some rule matches whole (its own rule decides)."""
        p = self.p
        if p.resolve(receiver, instances=False) is not None or p.use_actions.get(receiver) is not None:
            return False
        if not p.imports_tensorflow or _stored(target, p.parent) or p.defines_any(rule.match_tails):
            return True  # nothing to ask of TF's tensors here; the chain stays as written
        action = Action(rule, target, node, api, "", status=rule.status)
        if p.add(action):
            p.finding(action, ops.REGISTRY[rule.operation].describe(rule.params, api))
        return True

    def _visit(self, node: cst.CSTNode) -> None:
        if self.work is None or node in self.work:
            node.visit(self)

    def _reference(self, node: cst.Name | cst.Attribute) -> bool:
        """Plan ``node``; False when it is rewritten whole (its children need nothing)."""
        p = self.p
        use = p.use_actions.get(node)
        if use is not None:
            rule, api = use
            if self.kept_depth and not ops.REGISTRY[rule.operation].marks:
                return True  # in a call that stays TensorFlow: only marks
            self._plan(rule, node, api, "")
            return False
        parent = p.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return True  # the outermost attribute decides
        if isinstance(node, cst.Name) and _is_binding_name(node, parent):
            return True
        qual, via_alias = p.resolve_ex(node, instances=False)
        if qual is None or via_alias:
            return True
        use, marking = p.index.use_of(qual)
        if use == "nothing":
            return True
        if use == "mark":  # decided by the name alone, as the pruner decides it
            self._plan(marking, node, qual, "")
            return False
        if self.kept_depth:  # in a call that stays TensorFlow: stays as written, as its call does
            found = p.index.deciding(qual)
            rule = found[0] if found else None
            if rule is not None and ops.REGISTRY[rule.operation].marks:  # still marked for a person, never renamed
                self._plan(rule if ops.REGISTRY[rule.operation].keeps_tf(rule.params) else _without_rename(rule),
                           node, qual, found[1])
                return False
            return True
        why = p.kept_refusals.get(node)
        if why is not None:  # given a TensorFlow value: the call stays TensorFlow
            p.refuse((p.index.deciding(qual) or p.index.candidates(qual)[0])[0], node, qual, why)
            return False
        refused = None
        for rule, suffix in p.index.candidates(qual):
            op = ops.REGISTRY[rule.operation]
            if refused is not None and op.fallback:
                break  # the rule that matched says better why the use stays as it is
            if op.target == "block":
                return self._plan_block(rule, op, node, qual)
            # A statement rule is reached only when the object escaped: a fallback rule takes it.
            if op.target != "statement" and op.accepts_in(p, node, rule.params):
                self._plan(rule, node, qual, suffix)
                return False
            reads = op.waits_for(p, node, rule.params) if op.target != "statement" and op.everywhere(rule.params) else []
            if reads:
                self.waiting.append((rule, node, qual, suffix, reads))
                return False
            if op.everywhere(rule.params):  # (a rule for some places only says nothing of the others)
                refused = refused or rule
        if refused is not None:
            p.refuse(refused, node, qual)
            p.keep_arguments_of(node, ops.REGISTRY[refused.operation].makes_tf_values)
        return True

    def _plan(self, rule: Rule, node: cst.CSTNode, api: str, suffix: str) -> None:
        op = ops.REGISTRY[rule.operation]
        target = self.p.parent(node) if op.target in ("call", "with_item", "decorator") else node
        if op.target == "decorator" and isinstance(target, cst.Call):
            target = self.p.parent(target)  # `@tf.function(jit_compile=True)`: the Decorator holding the call
        if op.target == "with_item":
            target = self.p.parent(target)  # the WithItem holding `<strategy>.scope()`
        action = Action(rule, target, node, api, suffix, status=rule.status)
        if self.p.add(action) and op.target in ("call", "decorator"):
            self.dropped.update(op.dropped(target, rule.params))
        if not op.removes_statement:  # (the rewrite says what went, where it goes)
            self.p.finding(action, op.describe(rule.params, api))

    def _plan_block(self, rule: Rule, op, node: cst.CSTNode, api: str) -> bool:
        """A structural rewrite of the statements around ``node`` (a tape and its gradient): examined
        once the walk is over (:meth:`plan_blocks`), when what the plan rewrites in them is known."""
        self.blocks.append((rule, op, node, api))
        return False

    def plan_waiting(self) -> None:
        """Each use that waited for the walk (:meth:`Operation.waits_for`): planned if every read it
        waited on is in an argument a planned rewrite leaves out, refused otherwise."""
        for rule, node, api, suffix, reads in self.waiting:
            if all(self.p.in_args(read, self.dropped) for read in reads):
                self._plan(rule, node, api, suffix)
            else:
                self.p.refuse(rule, node, api)
                self.p.keep_arguments_of(node, ops.REGISTRY[rule.operation].makes_tf_values)

    def plan_blocks(self) -> None:
        """Each structural rewrite found in the walk, or a refusal naming why not."""
        for rule, op, node, api in self.blocks:
            found = op.examine(self.p, node, rule.params)
            if isinstance(found, str):
                self.p.refuse(rule, node, api, found)
                continue
            if self.p.suppresses(rule, node):
                continue
            for statement in op.statements(found):
                self.p.add(Action(rule, statement, node, api, status=rule.status, detail=found))
            self.p.finding(Action(rule, node, node, api, status=rule.status))
            for absorbed, how in getattr(op, "absorbs", lambda _: [])(found):
                self.p.absorb(absorbed, rule, how)

    def visit_Arg(self, node: cst.Arg) -> bool:
        if node in self.p.kept_args:
            self.kept_open.add(id(node))  # an argument of a call that stays TensorFlow: marked, never converted
            self.kept_depth += 1
        return node not in self.dropped  # left out of the rewrite: nothing in it is converted

    def leave_Arg(self, node: cst.Arg) -> None:
        if id(node) in self.kept_open:  # (only those entered: a walk may skip a node and still leave it)
            self.kept_open.discard(id(node))
            self.kept_depth -= 1


def _stored(node: cst.CSTNode, parent) -> bool:
    """Whether ``node`` is written to, not read: an assignment's, a ``for``'s, a ``with … as``'s
    or a comprehension's target (inside a tuple or list of them too), or ``del``'s."""
    up = parent(node)
    while isinstance(up, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)) and not isinstance(node, cst.Element):
        node, up = up, parent(up)
        if isinstance(node, (cst.Element, cst.StarredElement)):
            node, up = up, parent(up)
    if isinstance(up, (cst.AssignTarget, cst.Del, cst.AsName)):
        return True
    if isinstance(up, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)):
        return up.target is node
    return False


def _without_rename(rule: Rule) -> Rule:
    """``rule`` marking a use where it stays as written (its ``to`` dropped)."""
    return replace(rule, params={k: v for k, v in rule.params.items() if k != "to"})


def _may_match_string(node: cst.SimpleString, strings: Mapping[str, Rule]) -> bool:
    """Whether the literal ``node`` may be one a rule matches. Without an escape, a literal's
    value is its text between the quotes: one that does not hold a matched string cannot be one
    (and is not evaluated)."""
    return "\\" in node.value or any(literal in node.value for literal in strings)


def _hint_call(node: cst.Call) -> bool:
    """``cast(...)``, ``TypeVar(...)``, ``NewType(...)``: libcst's scope analysis may read their strings as type hints."""
    func = node.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name in TYPE_HINT_CALLS


def _string_value(node: cst.SimpleString) -> str:
    try:
        return node.evaluated_value if isinstance(node.evaluated_value, str) else ""
    except Exception:  # noqa: BLE001 - odd literals (bytes, bad escapes) simply match nothing
        return ""


def _is_binding_name(node: cst.Name, parent: cst.CSTNode | None) -> bool:
    """Names that introduce a binding or a keyword rather than read one."""
    if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Param, cst.Arg, cst.Global, cst.Nonlocal, cst.ImportAlias, cst.AsName)):
        if isinstance(parent, cst.Arg):
            return parent.keyword is node
        return parent.name is node if isinstance(parent, cst.Param) else True  # (a default, `f(x=y)`'s `y`, is read)
    if isinstance(parent, cst.AssignTarget) or (isinstance(parent, (cst.AnnAssign, cst.AugAssign)) and parent.target is node):
        return True
    return False



_ASSIGNER_VISITS, _ = _libcst_speed.methods_of(Assigner)
