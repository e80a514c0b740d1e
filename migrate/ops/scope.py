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
_EFFECTS = m.Await() | m.Yield() | m.NamedExpr()
# ...save formatting a string literal (`tf.device("/gpu:{}".format(rank))`), which has none.
_FORMAT = m.Call(func=m.Attribute(value=m.SimpleString() | m.ConcatenatedString(), attr=m.Name("format")))


def _computes(value: cst.CSTNode) -> bool:
    """Whether computing ``value`` may have an effect: a call (other than a string literal's
    ``format``, whose arguments are checked in turn), an ``await``, a ``yield`` or a walrus."""
    return bool(m.findall(value, _EFFECTS)) or any(not m.matches(call, _FORMAT) for call in m.findall(value, m.Call()))


class UnwrapScope(Operation):
    name = "unwrap_scope"
    target = "with_item"
    # Dissolving drops the arguments: a TensorFlow value among them reaches no MindSpore kernel.
    accepts_tf_values = True
    params = {
        "signature": Param(list, doc="TF parameters of a context manager taking arguments, e.g. ['name']; "
                                     "without it the call must take none"),
        "hoists": Param(str, doc="the parameter whose list or tuple display may compute its elements (a call): "
                                 "those become statements before the body, in order, where TF ran them eagerly"),
    }

    def check(self, params: dict[str, Any]) -> None:
        if "signature" in params:
            argbind.check_signature(params["signature"])
        if "hoists" in params and params["hoists"] not in [p[0] for p in argbind.parse_signature(params.get("signature", []))]:
            raise ValueError(f"hoists: {params['hoists']!r} is not in the signature")

    def accepts(self, node, parent, params) -> bool:
        call = parent(node)
        if not (isinstance(call, cst.Call) and call.func is node):
            return False
        item = parent(call)
        if not (isinstance(item, cst.WithItem) and isinstance(parent(item), cst.With)):
            return False
        if item.asname is not None and _reads_after(item, parent) != []:
            return False
        return self._fits(call, item, parent, params)

    def waits_for(self, view, node, params) -> list[cst.CSTNode]:
        """The reads of the ``as`` name that keep the scope, when each is in a call's argument
        (``tf.cond(p, f, g, name=scope)``): a rewrite that leaves that argument out drops the read."""
        call = view.parent(node)
        if not (isinstance(call, cst.Call) and call.func is node):
            return []
        item = view.parent(call)
        if not (isinstance(item, cst.WithItem) and isinstance(view.parent(item), cst.With)) or item.asname is None:
            return []
        reads = _reads_after(item, view.parent)
        if not reads or not all(_in_argument(read, view.parent) for read in reads):
            return []
        return reads if self._fits(call, item, view.parent, params) else []

    def _fits(self, call: cst.Call, item: cst.WithItem, parent, params) -> bool:
        """Whether the scope's own arguments let it dissolve."""
        if "signature" not in params:
            return not call.args
        bound = argbind.bind(call, params["signature"])
        if bound is None:
            return False
        hoisted = hoisted_elements(call, params)
        if hoisted and parent(item).items[0] is not item:
            return False  # (run before the whole `with`, they would run before the items to their left)
        effects = [value for name, value in bound.items() if name != params.get("hoists") or hoisted is None]
        return not any(_computes(value) for value in effects)

    def refusal(self, params) -> str:
        if "signature" not in params:
            return super().refusal(params)
        if "hoists" in params:
            return (f"only `with <scope>(...):` with arguments that fit `({', '.join(params['signature'])})` and "
                    f"bind no `as` name read later dissolves, its `{params['hoists']}` a list or tuple display (computed "
                    "elements become statements before the body) and first among the `with`'s items")
        return (f"only `with <scope>(...):` with arguments that fit `({', '.join(params['signature'])})`, "
                "compute nothing (no call but a string literal's `format`) and bind no `as` name read later (but in "
                "an argument the conversion leaves out) dissolves")


class _Reads(cst.CSTVisitor):
    """The occurrences of a name in a scope, in source order: whether each comes after the
    ``with`` and whether it is inside a function or class nested in the scope."""

    def __init__(self, name: str, with_node: cst.With, root: cst.CSTNode) -> None:
        self.name, self.with_node, self.root = name, with_node, root
        self.after = False
        self.nested = 0
        self.found: list[tuple[cst.Name, bool, bool]] = []

    def visit_With(self, node: cst.With) -> None:
        if node is self.with_node:
            self.after = True

    def _scope(self, node) -> None:
        if node is not self.root:
            self.nested += 1

    def _unscope(self, node) -> None:
        if node is not self.root:
            self.nested -= 1

    visit_FunctionDef = visit_Lambda = visit_ClassDef = _scope
    leave_FunctionDef = leave_Lambda = leave_ClassDef = _unscope

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            self.found.append((node, self.after, self.nested > 0))


def _in_argument(node: cst.CSTNode, parent) -> bool:
    """Whether ``node`` is inside an argument of a call, in its own statement."""
    while node is not None and not isinstance(node, cst.BaseStatement):
        if isinstance(node, cst.Arg):
            return True
        node = parent(node)
    return False


def _reads_after(item: cst.WithItem, parent) -> list[cst.Name] | None:
    """The reads of the name ``item`` binds (``with tf.name_scope(...) as scope:``) that dissolving,
    which leaves the name as it was, would change: those after the ``with`` starts. Reads in the
    item's own arguments are dropped with it; reads before the ``with`` count only when a loop
    brings them round again; any in a function or class nested in the scope counts. None: the
    name may be read where this cannot see (a class attribute, a ``global``, not a plain name)."""
    if not isinstance(item.asname.name, cst.Name):
        return None
    own = item.asname.name
    with_node = parent(item)
    node, looped = with_node, False
    while True:
        up = parent(node)
        if up is None or isinstance(up, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            root = up or node
            break
        looped = looped or isinstance(up, (cst.For, cst.While))
        node = up
    if isinstance(root, cst.ClassDef):
        return None  # (a class body's name is an attribute of the class: read as `A.scope`)
    declared = m.findall(root, m.Global() | m.Nonlocal())
    if any(n.name.value == own.value for d in declared for n in d.names):
        return None  # (the name lives in another scope, which may read it)
    reads = _Reads(own.value, with_node, root)
    root.visit(reads)
    found: list[cst.Name] = []
    for name, after, nested in reads.found:
        up = parent(name)
        if name is own or (isinstance(up, cst.Attribute) and up.attr is name) or (
                isinstance(up, (cst.Arg, cst.Param)) and name in (getattr(up, "keyword", None), getattr(up, "name", None))):
            continue
        holder = name
        while holder is not None and holder is not item.item:
            holder = parent(holder)
        if holder is item.item or not (after or looped or nested):
            continue
        found.append(name)
    return found


def hoisted_elements(call: cst.Call, params) -> list[cst.BaseExpression] | None:
    """The elements of the ``hoists`` parameter's list or tuple display in ``call`` that compute
    something (a call), in order: TF evaluates them before the block, so dissolving keeps them as
    statements. ``None`` when the parameter is not a display (or the rule hoists nothing)."""
    name = params.get("hoists")
    if name is None:
        return None
    value = (argbind.bind(call, params["signature"]) or {}).get(name)
    if value is None:
        return []
    if not isinstance(value, (cst.List, cst.Tuple)) or any(isinstance(e, cst.StarredElement) for e in value.elements):
        return None
    return [e.value for e in value.elements if _computes(e.value)]
