"""Which calls of a file stay TensorFlow, so that no MindSpore value reaches one, and no
TensorFlow value reaches MindSpore.

A call whose API no rule converts (``tf.Variable``, ``tf.io.FixedLenFeature``: the rules
mark it for a person) stays as it is, TensorFlow; so do its arguments, whole: converting
``dtype=tf.int64`` inside it to ``ms.int64`` would hand TensorFlow a MindSpore dtype.

Its value is a TensorFlow value, and so is what a name or an attribute of ``self`` is
bound to it (``self.kernel = tf.Variable(...)``), and what arithmetic, indexing or another
call that stays makes of one. A call a rule would convert (``tf.matmul``) that is given a
TensorFlow value stays TensorFlow too, with a finding that says why: ``ops.matmul`` would
receive a TensorFlow variable. Its value is a TensorFlow value in turn, to a fixed point.

Read on CPython's tree of the whole file (statements the pruner sets aside count), names
resolved as the pruner resolves them. A name is the binding Python's scoping rules give it
(a function's own, an enclosing one's, or the module's), and ``self.x`` is one attribute
per class.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable

from migrate import ops


@dataclass
class KeptCalls:
    """The calls that stay TensorFlow, by where they start: (line, 1-based column) -> why a
    call a rule would convert stays (None: no rule converts it; it is marked as it is)."""

    calls: dict[tuple[int, int], str | None] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.calls)


NO_KEPT_CALLS = KeptCalls()


def find_kept_calls(tree: ast.Module, lines: list[str], index, qual_of: Callable[[ast.expr], set[str]]) -> KeptCalls:
    """The :class:`KeptCalls` of ``tree`` (``lines``: the file's lines, for columns in characters)."""

    def quals(func: ast.expr) -> set[str]:
        return {q for q in qual_of(func) if q.split(".")[0] in index.roots}

    def first_ops(call: ast.Call) -> list:
        return [(ops.REGISTRY[found[0][0].operation], found[0][0].params)
                for found in map(index.candidates, quals(call.func)) if found]

    def stays(call: ast.Call) -> bool:
        """No rule converts the API called: the first rule of its name marks it as it is."""
        return any(op.marks and op.keeps_tf(params) for op, params in first_ops(call))

    def makes_tf_value(call: ast.Call) -> bool:
        return any(op.marks and op.keeps_tf(params) and op.makes_tf_values for op, params in first_ops(call))

    def converts(call: ast.Call) -> bool:
        """A rule rewrites the call into something that takes its arguments (one that removes the
        statement, a set-up call the launcher does, takes none of them anywhere)."""
        return any(index.use_of(q)[0] == "rewrite" for q in quals(call.func)) and not stays(call) and not any(
            op.removes_statement or op.accepts_tf_values for op, _ in first_ops(call))

    scopes = _Scopes(tree)
    calls = scopes.calls
    staying = [call for call in calls if stays(call)]
    if not staying:
        return NO_KEPT_CALLS
    names: set[tuple[int, str]] = set()  # (id of the scope binding it, name)
    attributes: set[tuple[int, str]] = set()  # (id of the class, attribute of self)
    given: dict[int, str] = {}  # id(call) -> the TensorFlow value given to a call a rule would convert

    def key(node: ast.expr) -> tuple[str, tuple[int, str]] | None:
        if isinstance(node, ast.Name):
            return "name", (id(scopes.binding_scope(node)), node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            cls = scopes.class_of(node)
            return ("self", (id(cls), node.attr)) if cls is not None else None
        return None

    def tf_value(node: ast.expr) -> bool:
        found = key(node)
        if found is not None:
            kind, k = found
            return k in (names if kind == "name" else attributes)
        if isinstance(node, ast.BinOp):
            return tf_value(node.left) or tf_value(node.right)
        if isinstance(node, ast.UnaryOp):
            return tf_value(node.operand)
        if isinstance(node, ast.Subscript):
            return tf_value(node.value)
        if isinstance(node, ast.Call):
            return id(node) in valued
        return False

    def tf_value_in(node: ast.expr) -> ast.expr | None:
        """A TensorFlow value anywhere in ``node`` (an argument), or None."""
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Name, ast.Attribute, ast.Call)) and tf_value(sub):
                return sub
        return None

    kept_ids = {id(call) for call in staying}
    valued = {id(call) for call in staying if makes_tf_value(call)}  # calls whose value is a TensorFlow value
    converting = [call for call in calls if converts(call)]
    changed = True
    while changed:  # to a fixed point: bindings of TensorFlow values, and the calls given one
        changed = False
        for node in scopes.assignments:
            if not tf_value(node.value):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for bound in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]):
                    found = key(bound)
                    if found is None:
                        continue
                    kind, k = found
                    table = names if kind == "name" else attributes
                    if k not in table:
                        table.add(k)
                        changed = True
        for call in converting:
            if id(call) in kept_ids:
                continue
            value = next((v for v in map(tf_value_in, [*call.args, *(k.value for k in call.keywords)]) if v is not None), None)
            if value is not None:
                kept_ids.add(id(call))
                valued.add(id(call))
                given[id(call)] = ast.unparse(value)
                changed = True

    def start(call: ast.Call) -> tuple[int, int]:
        line = call.lineno
        return line, len(lines[line - 1].encode("utf-8")[: call.col_offset].decode("utf-8", "replace")) + 1

    kept = KeptCalls()
    for call in calls:
        if id(call) in kept_ids:
            why = given.get(id(call))
            kept.calls[start(call)] = None if why is None else (
                f"`{why}` is a TensorFlow value here (made by a call that stays TensorFlow): converted "
                "alone, this call would hand it to MindSpore; it stays TensorFlow with the calls that make it")
    return kept


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class _Scopes:
    """Python's scopes on CPython's tree, enough to tell which binding a name reads: the names
    each function (or class, or the module) binds, and where each name, call and assignment is."""

    def __init__(self, tree: ast.Module) -> None:
        self.module = tree
        self.scope_of: dict[int, ast.AST] = {}  # id(node) -> the scope it is in
        self.parent: dict[int, ast.AST | None] = {id(tree): None}  # id(scope) -> the scope around it
        self.bound: dict[int, set[str]] = {id(tree): set()}  # id(scope) -> names bound there
        self.globals: dict[int, set[str]] = {}  # id(scope) -> names it declares global
        self.classes: dict[int, ast.ClassDef | None] = {}  # id(node) -> the class whose method holds it
        self.calls: list[ast.Call] = []
        self.assignments: list[ast.Assign | ast.AnnAssign] = []
        stack: list[tuple[ast.AST, ast.AST, ast.ClassDef | None]] = [(child, tree, None) for child in ast.iter_child_nodes(tree)]
        while stack:
            node, scope, cls = stack.pop()
            self.scope_of[id(node)] = scope
            self.classes[id(node)] = cls
            inner, inner_cls = scope, cls
            if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
                if not isinstance(node, ast.Lambda):
                    self.bound[id(scope)].add(node.name)
                inner = node
                self.parent[id(node)] = scope
                self.bound[id(node)] = set()
                if isinstance(node, ast.ClassDef):
                    inner_cls = node
                elif not isinstance(scope, ast.ClassDef):
                    inner_cls = cls  # a function nested in a method still sees its `self`
                if not isinstance(node, ast.ClassDef):
                    args = node.args
                    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                        if arg is not None:
                            self.bound[id(node)].add(arg.arg)
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                self.bound[id(scope)].add(node.id)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                self.globals.setdefault(id(scope), set()).update(node.names)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self.bound[id(scope)].update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
            elif isinstance(node, ast.Call):
                self.calls.append(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                self.assignments.append(node)
            # A decorator, a default and a base are read where the definition stands, not inside it.
            if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
                outside = [*getattr(node, "decorator_list", []), *getattr(node, "bases", []), *getattr(node, "keywords", [])]
                if not isinstance(node, ast.ClassDef):
                    outside += [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
                ids = {id(n) for n in outside}
                for child in ast.iter_child_nodes(node):
                    stack.append((child, scope if id(child) in ids else inner, cls if id(child) in ids else inner_cls))
            else:
                stack.extend((child, inner, inner_cls) for child in ast.iter_child_nodes(node))

    def binding_scope(self, name: ast.Name) -> ast.AST:
        """The scope whose binding ``name`` reads (or binds): Python's rule, classes skipped from inside."""
        scope = self.scope_of.get(id(name), self.module)
        first = True
        while scope is not None:
            if name.id in self.globals.get(id(scope), ()):
                return self.module
            if name.id in self.bound.get(id(scope), ()) and (first or not isinstance(scope, ast.ClassDef)):
                return scope
            first = False
            scope = self.parent.get(id(scope))
        return self.module

    def class_of(self, node: ast.AST) -> ast.ClassDef | None:
        """The class whose method ``node`` is in (``self`` there is an instance of it)."""
        return self.classes.get(id(node))


def mixed_calls(before: ast.Module, after: ast.Module) -> list[str]:
    """Calls of TensorFlow in ``after`` (a conversion of ``before``) given something an import the
    conversion added binds (``tf.Variable(0, dtype=ms.int64)``): each as its source text. The
    property the fuzz tests and ``benchmarks/corpus_check.py`` check: there must be none."""

    def imported(tree: ast.Module) -> dict[str, str]:
        found = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                for alias in node.names:
                    if alias.name != "*":
                        found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        return found

    old, new = imported(before), imported(after)
    added = {name for name, what in new.items() if old.get(name) != what}
    tf_names = {name for name, what in new.items() if what.split(".")[0] in ("tensorflow", "keras", "tf_keras")}
    found = []
    for node in ast.walk(after):
        if not isinstance(node, ast.Call):
            continue
        root = node.func
        while isinstance(root, ast.Attribute):
            root = root.value
        if not (isinstance(root, ast.Name) and root.id in tf_names):
            continue
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if any(isinstance(n, ast.Name) and n.id in added for n in ast.walk(arg)):
                found.append(ast.unparse(node))
                break
    return found
