"""What a strategy's conversion needs to know of the code around it, from resolved names.

TF sums replica gradients (a custom loop scales its loss by the global batch); Keras
``fit`` averages them. So a strategy whose scope trains with ``fit`` and no
``GradientTape`` is converted with ``gradients_mean=True``. Which APIs are a Keras model
and which a tape is declared by rules (``facts: [keras_model]``, ``facts:
[gradient_tape]``), and a use counts only when its name resolves to one of them:

* a tape: a name or attribute that resolves to a ``gradient_tape`` API;
* Keras ``fit``: a ``.fit(...)`` call on a model: a call of a ``keras_model`` API or of a
  class of the file derived from one, a name bound to such a call (``model = ...``), or an
  attribute of ``self`` bound to one in its class (``self.model = ...``); or on a name (or
  ``self`` attribute) the file also calls ``compile(...)`` on, Keras's training protocol,
  for a model made in another module.

Names resolve as the pruner resolves them (imports and the aliases of matched names,
:meth:`migrate.engine.prune._Pruner.qual_of`), on CPython's tree of the whole file, so
statements the pruner sets aside count too. Facts are kept per function: a strategy
made in a function sees the uses in that function, the functions inside it (by their
lines) and the functions of the file it calls by name, and theirs (``with
strategy.scope(): train(model)``); one made at module level sees the whole file.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from typing import Callable, Iterable

from migrate.ops.base import ScopeFacts


class Facts:
    """Where in a file Keras ``fit`` and tapes are used, its functions, and the calls of them."""

    def __init__(self, fits: Iterable[int] = (), tapes: Iterable[int] = (),
                 functions: Iterable[tuple[int, int, str]] = (), calls: Iterable[tuple[int, str]] = ()) -> None:
        self.fits, self.tapes = sorted(fits), sorted(tapes)
        self.functions = sorted(functions)  # (first line, last line, name)
        self.calls = sorted(calls)  # (line, name of a function called by name)

    def at(self, line: int) -> ScopeFacts:
        """The facts of the innermost function holding ``line``, with the functions of the file it
        calls (the whole file's outside any function)."""
        scope = None
        for start, end, name in self.functions[: bisect_right(self.functions, (line, float("inf"), ""))]:
            if start <= line <= end:
                scope = (start, end)  # functions nest or stand apart: a later start is deeper
        if scope is None:
            return ScopeFacts(bool(self.fits), bool(self.tapes))
        ranges, todo, seen = [scope], [scope], set()
        while todo:  # the functions called from the ranges so far, to a fixed point
            first, last = todo.pop()
            for _, name in self.calls[bisect_right(self.calls, (first - 1, "\uffff")): bisect_right(self.calls, (last, "\uffff"))]:
                if name in seen:
                    continue
                seen.add(name)
                for start, end, defined in self.functions:
                    if defined == name:
                        ranges.append((start, end))
                        todo.append((start, end))

        def within(lines: list[int]) -> bool:
            for first, last in ranges:
                i = bisect_right(lines, first - 1)
                if i < len(lines) and lines[i] <= last:
                    return True
            return False

        return ScopeFacts(within(self.fits), within(self.tapes))


NO_FACTS = Facts()


class LazyFacts:
    """:class:`Facts` found when first asked: only a strategy's conversion asks, and most files
    converted make none."""

    def __init__(self, find: Callable[[], Facts]) -> None:
        self._find, self._facts = find, None

    def at(self, line: int) -> ScopeFacts:
        if self._facts is None:
            self._facts, self._find = self._find(), None
        return self._facts.at(line)


def find_facts(tree: ast.Module, fact_names: dict[str, frozenset[str]],
               qual_of: Callable[[ast.expr], set[str]]) -> Facts:
    """The :class:`Facts` of ``tree``; ``fact_names`` maps each fact to the qualified names
    rules declare for it, ``qual_of`` resolves a name or attribute to qualified names."""
    models = fact_names.get("keras_model", frozenset())
    tapes = fact_names.get("gradient_tape", frozenset())
    if not models and not tapes:
        return NO_FACTS

    model_prefixes = tuple(n[:-1] for n in models if n.endswith(".*"))  # `a.b.*` -> `a.b.`
    tape_prefixes = tuple(n[:-1] for n in tapes if n.endswith(".*"))
    prefixes = {id(models): model_prefixes, id(tapes): tape_prefixes}

    def resolves_into(node: ast.expr, names: frozenset[str]) -> bool:
        if not names:
            return False
        under = prefixes[id(names)]
        return any(q in names or (under and q.startswith(under)) for q in qual_of(node))

    # Classes of the file derived from a Keras model (also through one another), file-wide.
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    model_classes: set[str] = set()
    changed = True
    while changed:
        changed = False
        for cls in classes:
            if cls.name not in model_classes and any(
                    resolves_into(base, models) or (isinstance(base, ast.Name) and base.id in model_classes)
                    for base in cls.bases):
                model_classes.add(cls.name)
                changed = True

    # Functions of the file that return a model (``def build_model(): ... return tf.keras.Model(...)``).
    factories: set[str] = set()

    def makes_model(value: ast.expr) -> bool:
        if not isinstance(value, ast.Call):
            return False
        func = value.func
        return resolves_into(func, models) or (isinstance(func, ast.Name) and (func.id in model_classes or func.id in factories))

    assignments = [n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None]
    returns = [(f.name, [r.value for r in _own_returns(f) if r.value is not None])
               for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    model_names: set[str] = set()
    self_models: set[str] = set()  # `self.model = tf.keras.Sequential(...)`

    def is_model(receiver: ast.expr) -> bool:
        if makes_model(receiver):
            return True
        if isinstance(receiver, ast.Name):
            return receiver.id in model_names
        return (isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name)
                and receiver.value.id == "self" and receiver.attr in self_models)

    # Names bound to models (a name counts when every binding of it by assignment is one), and
    # factories, to a fixed point: `model = build_model()` is a model once build_model is a factory.
    while True:
        bound: dict[str, list[bool]] = {}
        attributes: set[str] = set()
        for node in assignments:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(makes_model(node.value))
                elif (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                      and target.value.id == "self" and makes_model(node.value)):
                    attributes.add(target.attr)
        names = {name for name, kinds in bound.items() if all(kinds)}
        made = {name for name, values in returns if values and any(is_model(v) for v in values)}
        if names == model_names and attributes == self_models and made <= factories:
            break
        model_names, self_models = names, attributes
        factories |= made

    # A model made in another module (`model = resnet_model.ResNet50()`) is known by Keras's
    # training protocol: `compile(...)` then `fit(...)` on the same name (scikit-learn's
    # estimators, for one, have no `compile`).
    compiled = {key for node in ast.walk(tree)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "compile"
                and (key := _receiver_key(node.func.value)) is not None}
    fits: list[int] = []
    tapes_seen: list[int] = []
    functions: list[tuple[int, int, str]] = []
    calls: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append((node.lineno, node.end_lineno or node.lineno, node.name))
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr == "fit" and (
                    is_model(node.func.value) or _receiver_key(node.func.value) in compiled):
                fits.append(node.lineno)
            elif isinstance(node.func, ast.Name):
                calls.append((node.lineno, node.func.id))
        elif isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) and tapes:
            if resolves_into(node, tapes):
                tapes_seen.append(node.lineno)
    defined = {name for _, _, name in functions}
    return Facts(fits, tapes_seen, functions, [c for c in calls if c[1] in defined])


def _receiver_key(node: ast.expr) -> tuple[str, str] | None:
    """A receiver as a key: a name (``model``), or an attribute of ``self`` (``self.model``)."""
    if isinstance(node, ast.Name):
        return "name", node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return "self", node.attr
    return None


def _own_returns(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Return]:
    """The ``return`` statements of ``function`` itself, not of functions or classes inside it."""
    found, stack = [], list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return found
