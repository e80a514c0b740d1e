"""Python's scopes on CPython's tree: which binding a name reads (the TF-value search of
:mod:`migrate.engine.tfvalues` and the NumPy-array search of :mod:`migrate.ops.arrays` share it)."""

from __future__ import annotations

import ast

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_SCOPES = (*_FUNCTIONS, ast.ClassDef)


class Scopes:
    """Python's scopes on CPython's tree, enough to tell which binding a name reads, worked out
    only for the names asked about: the pruner's map of every node's children and parent
    (``kids``, ``parents``) gives the way up, and a scope's own bindings are listed when first
    asked."""

    def __init__(self, tree: ast.Module, kids: dict, parents: dict) -> None:
        self.module, self.kids, self.parents = tree, kids, parents
        self.calls = [node for node in kids if type(node) is ast.Call]
        self.assignments = [node for node in kids if type(node) in (ast.Assign, ast.AnnAssign) and node.value is not None]
        self._scope: dict[int, ast.AST] = {}
        self._bound: dict[int, tuple[set[str], set[str]]] = {}  # id(scope) -> (names bound, names declared global)

    def scope_of(self, node: ast.AST) -> ast.AST:
        """The scope ``node`` is read or bound in (a default, a decorator or a base is in the one
        around the definition)."""
        found = self._scope.get(id(node))
        if found is None:
            child, up = node, self.parents.get(node)
            while up is not None:
                if isinstance(up, _SCOPES) and not _outside(up, child):
                    break
                child, up = up, self.parents.get(up)
            found = self._scope[id(node)] = up if up is not None else self.module
        return found

    def bound(self, scope: ast.AST) -> tuple[set[str], set[str]]:
        found = self._bound.get(id(scope))
        if found is None:
            names: set[str] = set()
            declared: set[str] = set()
            if isinstance(scope, _FUNCTIONS):
                args = scope.args
                names.update(a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
                             if a is not None)
            stack = list(self.kids.get(scope, ()))
            while stack:
                node = stack.pop()
                if isinstance(node, _SCOPES):
                    if not isinstance(node, ast.Lambda):
                        names.add(node.name)
                    stack.extend(n for n in self.kids.get(node, ()) if _outside(node, n))
                    continue
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                    names.add(node.id)
                elif isinstance(node, (ast.Global, ast.Nonlocal)):
                    declared.update(node.names)
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
                stack.extend(self.kids.get(node, ()))
            found = self._bound[id(scope)] = (names, declared)
        return found

    def binding_scope(self, name: ast.Name) -> ast.AST:
        """The scope whose binding ``name`` reads (or binds): Python's rule, classes skipped from inside."""
        scope, first = self.scope_of(name), True
        while True:
            names, declared = self.bound(scope)
            if name.id in declared:
                return self.module
            if name.id in names and (first or not isinstance(scope, ast.ClassDef)):
                return scope
            if scope is self.module:
                return scope
            first = False
            scope = self.scope_of(scope)

    def class_of(self, node: ast.AST) -> ast.ClassDef | None:
        """The class whose method ``node`` is in (``self`` there is an instance of it)."""
        scope = self.scope_of(node)
        while isinstance(scope, _FUNCTIONS):
            outer = self.scope_of(scope)
            if isinstance(outer, ast.ClassDef):
                return outer
            scope = outer
        return None


def _outside(definition: ast.AST, child: ast.AST) -> bool:
    """Whether ``child`` of a definition is evaluated where the definition stands: a decorator,
    a default, a base or a class keyword."""
    if isinstance(definition, ast.ClassDef):
        return child in definition.decorator_list or child in definition.bases or child in definition.keywords
    if isinstance(definition, ast.Lambda):
        return child in definition.args.defaults or child in definition.args.kw_defaults
    return (child in definition.decorator_list or child in definition.args.defaults
            or child in definition.args.kw_defaults or child is definition.returns)
