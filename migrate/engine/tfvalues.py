"""Which calls of a file stay TensorFlow, so that no MindSpore value reaches one, and no
TensorFlow value reaches MindSpore.

A call whose API no rule converts (``tf.Variable``, ``tf.io.FixedLenFeature``: the rules
mark it for a person) stays as it is, TensorFlow; so do its arguments, whole: converting
``dtype=tf.int64`` inside it to ``ms.int64`` would hand TensorFlow a MindSpore dtype.

Its value is a TensorFlow value, and so is what a name or an attribute of ``self`` is
bound to it (``self.kernel = tf.Variable(...)``), a list, tuple or dict holding one, and
what arithmetic, indexing or another call that stays makes of one. A call a rule would convert (``tf.matmul``) that is given a
TensorFlow value stays TensorFlow too, with a finding that says why: ``ops.matmul`` would
receive a TensorFlow variable. Its value is a TensorFlow value in turn, to a fixed point.

Read on CPython's tree of the whole file (statements the pruner sets aside count), names
resolved as the pruner resolves them. A name is the binding Python's scoping rules give it
(a function's own, an enclosing one's, or the module's), and ``self.x`` is one attribute
per class.
"""

from __future__ import annotations

import ast
import collections
import functools
from dataclasses import dataclass, field
from typing import Callable

from migrate import ops
from migrate.ops.scoping import Scopes as _Scopes


@dataclass
class KeptCalls:
    """The calls that stay TensorFlow, by where they start: (line, 1-based column) -> why a
    call a rule would convert stays (None: no rule converts it; it is marked as it is)."""

    calls: dict[tuple[int, int], str | None] = field(default_factory=dict)
    # Calls found to stay only when planning refused them (a rule that matched but whose
    # arguments do not fit): they are TensorFlow values as much as the calls no rule converts.
    extra: frozenset[tuple[int, int]] = frozenset()
    # extra -> the KeptCalls of the same file with those calls staying too (None: not known).
    widen: Callable[[frozenset], "KeptCalls"] | None = field(default=None, compare=False, repr=False)

    def __bool__(self) -> bool:
        return bool(self.calls)


NO_KEPT_CALLS = KeptCalls()


def find_kept_calls(tree: ast.Module, lines: list[str], index, qual_of: Callable[[ast.expr], set[str]],
                    kids: dict, parents: dict, extra: frozenset = frozenset()) -> KeptCalls:
    """The :class:`KeptCalls` of ``tree`` (``lines``: the file's lines, for columns in characters;
    ``kids`` and ``parents``: every node's children and parent, as the pruner maps them;
    ``extra``: where calls start that planning refused, which stay too)."""

    def quals(func: ast.expr) -> set[str]:
        return {q for q in qual_of(func) if q.split(".")[0] in index.roots}

    def first_ops_of(func: ast.expr) -> list:
        return [(ops.REGISTRY[found[0].operation], found[0].params)
                for found in map(index.deciding, quals(func)) if found]

    def first_ops(call: ast.Call) -> list:
        return first_ops_of(call.func)

    def stays(call: ast.Call) -> bool:
        """No rule converts the API called: the first rule of its name marks it as it is."""
        return any(op.marks and op.keeps_tf(params) for op, params in first_ops(call))

    def left_as_tf_value(func: ast.expr) -> bool:
        """The first rule of the name marks it as it is, and what it gives is a TensorFlow value."""
        return any(op.marks and op.keeps_tf(params) and op.makes_tf_values for op, params in first_ops_of(func))

    def makes_tf_value(call: ast.Call) -> bool:
        return left_as_tf_value(call.func)

    def converts(call: ast.Call) -> bool:
        """A rule rewrites the call into something that takes its arguments (one that removes the
        statement, a set-up call the launcher does, takes none of them anywhere)."""
        return any(index.use_of(q)[0] == "rewrite" for q in quals(call.func)) and not stays(call) and not any(
            op.removes_statement or op.accepts_tf_values for op, _ in first_ops(call))

    flagged_refs: dict[int, bool] = {}

    def flagged_reference(node: ast.expr) -> bool:
        """A name no rule converts, used whole and not called (``tf.keras.constraints.NonNeg``
        handed on): it stays as written, a TensorFlow value."""
        if id(node) not in flagged_refs:
            up = parents.get(node)
            whole = not (isinstance(up, ast.Attribute) and up.value is node) and not (
                isinstance(up, ast.Call) and up.func is node)
            flagged_refs[id(node)] = whole and left_as_tf_value(node)
        return flagged_refs[id(node)]

    def start(call: ast.Call) -> tuple[int, int]:
        line = call.lineno
        return line, len(lines[line - 1].encode("utf-8")[: call.col_offset].decode("utf-8", "replace")) + 1

    scopes = _Scopes(tree, kids, parents)
    calls = scopes.calls
    staying = [call for call in calls if stays(call) or (extra and start(call) in extra)]
    converting = [call for call in calls if converts(call)]
    if not staying and not any(isinstance(sub, (ast.Name, ast.Attribute)) and flagged_reference(sub)
                               for call in converting for arg in [*call.args, *(k.value for k in call.keywords)]
                               for sub in ast.walk(arg)):
        return KeptCalls(extra=extra)
    # what is bound to a TensorFlow value -> the call that stays (or the flagged name) that made it
    names: dict[tuple[int, str], ast.expr] = {}  # (id of the scope binding it, name)
    attributes: dict[tuple[int, str], ast.expr] = {}  # (id of the class, attribute of self)
    given: dict[int, str] = {}  # id(call) -> the TensorFlow value given to a call a rule would convert

    def key(node: ast.expr) -> tuple[str, tuple[int, str]] | None:
        if isinstance(node, ast.Name):
            return "name", (id(scopes.binding_scope(node)), node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            cls = scopes.class_of(node)
            return ("self", (id(cls), node.attr)) if cls is not None else None
        return None

    def tf_value(node: ast.expr) -> ast.expr | None:
        """The TensorFlow value ``node`` is made from (the call that stays, or a flagged name), or None."""
        if isinstance(node, (ast.Name, ast.Attribute)) and flagged_reference(node):
            return node
        found = key(node)
        if found is not None:
            kind, k = found
            return (names if kind == "name" else attributes).get(k)
        if isinstance(node, ast.BinOp):
            return tf_value(node.left) or tf_value(node.right)
        if isinstance(node, ast.UnaryOp):
            return tf_value(node.operand)
        if isinstance(node, ast.Subscript):
            return tf_value(node.value)
        if isinstance(node, ast.Call):
            return valued.get(id(node))
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):  # a container holding one (a feature spec)
            return next(filter(None, map(tf_value, node.elts)), None)
        if isinstance(node, ast.Dict):
            return next(filter(None, map(tf_value, node.values)), None)
        return None

    def tf_value_in(node: ast.expr) -> tuple[ast.expr, ast.expr] | None:
        """A TensorFlow value anywhere in ``node`` (an argument) and what made it, or None. What
        ``.numpy()`` makes of one is a NumPy array (``BytesList(value=[data.numpy()])``)."""
        stack = collections.deque([node])
        while stack:
            sub = stack.popleft()
            if _numpy_of(sub):
                continue
            if isinstance(sub, (ast.Name, ast.Attribute, ast.Call)):
                root = tf_value(sub)
                if root is not None:
                    return sub, root
            stack.extend(ast.iter_child_nodes(sub))
        return None

    kept_ids = {id(call) for call in staying}
    # calls whose value is a TensorFlow value
    valued = {id(call): call for call in staying if makes_tf_value(call) or (extra and start(call) in extra)}
    changed = True
    while changed:  # to a fixed point: bindings of TensorFlow values, and the calls given one
        changed = False
        for node in scopes.assignments:
            root = tf_value(node.value)
            if root is None:
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
                        table[k] = root
                        changed = True
        for call in converting:
            if id(call) in kept_ids:
                continue
            value, root = next((v for v in map(tf_value_in, [*call.args, *(k.value for k in call.keywords)])
                                if v is not None), (None, None))
            if value is not None and isinstance(value, (ast.Name, ast.Attribute)) and flagged_reference(value):
                given[id(call)] = (f"`{ast.unparse(value)}` stays TensorFlow here (no rule converts it): converted "
                                   "alone, this call would hand it to MindSpore; it stays TensorFlow with it")
            elif value is not None:
                given[id(call)] = (f"`{ast.unparse(value)}` is a TensorFlow value here ({_made_by(root)}): converted "
                                   "alone, this call would hand it to MindSpore; it stays TensorFlow with the calls "
                                   "that make it")
            else:
                beside = _beside(call, parents, tf_value)
                if beside is None:
                    continue
                root = tf_value(beside)
                given[id(call)] = (f"`{ast.unparse(beside)}` stays TensorFlow in the same "
                                   f"{type(parents[call]).__name__.lower()}: converted alone, this call would put a "
                                   "MindSpore value beside it; it stays TensorFlow with it")
            kept_ids.add(id(call))
            valued[id(call)] = root if root is not None else call
            changed = True

    kept = KeptCalls(extra=extra)
    for call in calls:
        if id(call) in kept_ids:
            kept.calls[start(call)] = given.get(id(call))
    return kept


def _numpy_of(node: ast.AST) -> bool:
    """``x.numpy()``: a tensor's values as a NumPy array, whichever framework ``x`` is of."""
    return (isinstance(node, ast.Call) and not node.args and not node.keywords and isinstance(node.func, ast.Attribute)
            and node.func.attr == "numpy")


def _made_by(root: ast.expr) -> str:
    """Where a TensorFlow value comes from, for a finding: the call that stays, by its name (not its
    line: the finding is written into the output as a comment, and a second run must not change it)."""
    if isinstance(root, ast.Call):
        return f"made by `{ast.unparse(root.func)}`, which stays TensorFlow"
    return f"made from `{ast.unparse(root)}`, which stays TensorFlow"


def _beside(call: ast.Call, parents: dict, tf_value) -> ast.expr | None:
    """A TensorFlow value in the list, tuple, set or dict (as a value) that holds ``call``
    directly, beside it: such a container goes to TensorFlow or MindSpore whole."""
    box = parents.get(call)
    if isinstance(box, (ast.List, ast.Tuple, ast.Set)):
        items = box.elts
    elif isinstance(box, ast.Dict) and any(v is call for v in box.values):
        items = [v for v in box.values if v is not None]
    else:
        return None
    return next((item for item in items if item is not call and tf_value(item)), None)


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
    plain = {name: _plain_functions(what) for name, what in new.items() if name in added}

    def names_in(node: ast.AST):
        """The names read in ``node``, but those in a call of an added module's function that gives
        a plain Python value (``hvd.rank()``: ``def rank() -> int``), which is no MindSpore value."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.attr in plain.get(node.func.value.id, ()):
            yield from (n for a in [*node.args, *(k.value for k in node.keywords)] for n in names_in(a))
            return
        if isinstance(node, ast.Name):
            yield node
        for child in ast.iter_child_nodes(node):
            yield from names_in(child)

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
            if any(n.id in added for n in names_in(arg)):
                found.append(ast.unparse(node))
                break
    return found


_PLAIN = {"int", "float", "bool", "str"}


@functools.lru_cache(maxsize=None)
def _plain_functions(module: str) -> frozenset[str]:
    """The module-level functions of a ``migrate.runtime`` module whose return annotation is a plain
    Python type (``int``, ``float``, ``bool``, ``str``), read off its source; none for another module."""
    if not module.startswith("migrate.runtime."):
        return frozenset()
    from pathlib import Path

    base = Path(__file__).resolve().parent.parent.joinpath(*module.split(".")[1:])
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return frozenset()
    return frozenset(node.name for node in tree.body if isinstance(node, ast.FunctionDef)
                     and isinstance(node.returns, ast.Name) and node.returns.id in _PLAIN)
