"""The names the conversion's imports bind, and the alias each takes in a file that already uses it.

Rewritten code needs imports: ``from mindspore import ops``, ``import mindspore as ms``,
``from migrate.runtime.spmd import init``, ``from migrate.runtime import keras as mk``.
TensorFlow's own code often binds those names to something else (``from
tensorflow.python.framework import ops``, a parameter called ``init``, ``tfd =
tfp.distributions``); the added import would shadow it, and every use of the file's own
name would silently mean MindSpore's. In such a file the import takes a name nothing in
the file uses (``from mindspore import ops as ms_ops``), and the code the rules write
(templates, renamed references, literal tables, defaults, the strategy's statements;
:func:`migrate.ops.base.import_aliases`) is written with it. A file that already imports
the same module under another name (a second run: ``ms_ops``) gets that name.

The decision is made once per file, on CPython's tree of the whole file (statements
pruning sets aside count as much as those libcst sees), and file-wide: a name bound or
read anywhere, in any scope, is taken everywhere.
"""

from __future__ import annotations

import ast
import keyword
import re
from dataclasses import dataclass

from migrate.rules import Import


def bound_name(imp: Import) -> str:
    """The name ``imp`` binds (``import a.b`` binds ``a``)."""
    return imp.asname or imp.obj or imp.module.split(".")[0]


def target(imp: Import) -> str:
    """What the name ``imp`` binds stands for: ``from a import b`` and ``import a.b as c`` both ``a.b``."""
    if imp.obj is not None:
        return f"{imp.module}.{imp.obj}"
    return imp.module if imp.asname else imp.module.split(".")[0]


@dataclass(frozen=True)
class AddedImports:
    """The imports a rule set may add, by the name each binds (the first rule's, for a name two rules bind)."""

    by_name: dict[str, Import]
    pattern: re.Pattern | None  # any of those names, where it could be a variable (not after a dot)

    @classmethod
    def of(cls, rules) -> AddedImports:
        by_name: dict[str, Import] = {}
        for rule in rules:
            for imp in rule.imports:
                # `import a.b` binds `a` and needs `a.b` loaded: no alias can stand for both.
                if imp.obj is None and imp.asname is None and "." in imp.module:
                    continue
                by_name.setdefault(bound_name(imp), imp)
        names = "|".join(sorted(map(re.escape, by_name)))
        return cls(by_name, re.compile(r"(?<![\w.])(?:%s)(?!\w)" % names) if names else None)


# Modules of migrate.runtime that mirror another package's API name for name. A file's import of
# that package binds the name the runtime's import takes (`import horovod.tensorflow as hvd`,
# `from migrate.runtime import horovod as hvd`): the same binding, not a name to avoid; the
# converted module then drops the package's import (see `superseded`).
MIRRORS = {
    "migrate.runtime.horovod": frozenset({"horovod.tensorflow", "horovod.tensorflow.keras", "horovod.keras"}),
}
_MIRRORED = frozenset().union(*MIRRORS.values()) | frozenset(MIRRORS)


def import_binding(node: ast.Import | ast.ImportFrom, alias: ast.alias) -> tuple[str, str]:
    """(the name one alias of an import binds, what it stands for as :func:`target` says it)."""
    name = alias.asname or alias.name.split(".")[0]
    if isinstance(node, ast.Import):
        return name, alias.name if alias.asname else name
    return name, "." * node.level + (f"{node.module}." if node.module else "") + alias.name


@dataclass
class Bindings:
    """Every name a module uses as a variable, and how it is bound: by which imports, or otherwise."""

    names: set[str]  # read or bound anywhere
    imported: dict[str, set[str]]  # name -> what the imports that bind it stand for
    other: set[str]  # bound by something other than an import (`global x` counts)

    @classmethod
    def of(cls, tree: ast.Module) -> Bindings:
        """Read off CPython's tree (:class:`migrate.engine.prune._Pruner` makes the same on its own walk)."""
        names: set[str] = set()
        other: set[str] = set()
        imported: dict[str, set[str]] = {}
        for node in ast.walk(tree):
            kind = type(node)
            if kind is ast.Name:
                names.add(node.id)
                if type(node.ctx) is not ast.Load:
                    other.add(node.id)
            elif kind is ast.Import or kind is ast.ImportFrom:
                for alias in node.names:
                    if alias.name != "*":
                        name, what = import_binding(node, alias)
                        imported.setdefault(name, set()).add(what)
            elif kind is ast.arg:
                other.add(node.arg)
            elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                other.add(node.name)
            elif kind in (ast.ExceptHandler, ast.MatchAs, ast.MatchStar):
                if node.name:
                    other.add(node.name)
            elif kind is ast.MatchMapping:
                if node.rest:
                    other.add(node.rest)
            elif kind is ast.Global or kind is ast.Nonlocal:
                other.update(node.names)
        return cls(names | other | set(imported), imported, other)

    def only_imports(self, name: str, what: str) -> bool:
        """Whether every binding of ``name`` in the file is an import of ``what``."""
        return self.imported.get(name) == {what} and name not in self.other


def _stem(name: str, imp: Import) -> str:
    if imp.module.split(".")[0] == "mindspore":
        return "mindspore" if name == "ms" else f"ms_{name}"
    if imp.module.split(".")[0] == "migrate":
        return f"migrate_{name}"
    return f"{name}_module"


def import_aliases(text: str, tree: ast.Module, added: AddedImports, bindings: Bindings | None = None) -> dict[str, str]:
    """Name an added import binds -> the name it is imported as in this file, for the names
    the file already uses for something else (empty for almost every file: a scan of the
    text for the names decides before any walk). ``bindings``: the file's, when the caller
    has them (else they are read off ``tree``)."""
    if added.pattern is None or added.pattern.search(text) is None:
        return {}
    found = set(added.pattern.findall(text))
    if bindings is None:
        bindings = Bindings.of(tree)
    aliases: dict[str, str] = {}
    taken = bindings.names | set(added.by_name)
    for name in sorted(found & bindings.names):
        imp = added.by_name[name]
        what = target(imp)
        if bindings.only_imports(name, what):
            continue  # the file imports the very module under that name: the same binding
        if what in MIRRORS and name not in bindings.other and bindings.imported.get(name, set()) <= _MIRRORED | {what}:
            continue  # the file imports a package a runtime module mirrors under that name
        # The file's own import of that module under another name, if it has one.
        same = sorted(n for n in bindings.imported if n != name and bindings.only_imports(n, what) and n not in aliases.values())
        if same:
            aliases[name] = same[0]
            continue
        stem = alias = _stem(name, imp)
        k = 2
        while alias in taken or keyword.iskeyword(alias):
            alias, k = f"{stem}_{k}", k + 1
        aliases[name] = alias
        taken.add(alias)
    return aliases


def aliased(imp: Import, alias: str) -> Import:
    """``imp`` binding ``alias`` instead of its own name."""
    if imp.obj is None and alias == imp.module:
        return Import(imp.module)  # `import mindspore`, not `import mindspore as mindspore`
    return Import(imp.module, imp.obj, alias)


def shadowed_names(before: ast.Module, after: ast.Module) -> set[str]:
    """Names ``after`` binds by an import of something ``before`` never bound them to, though
    ``before`` uses them: what a conversion's imports would take from the file's own code
    (none, when :func:`import_aliases` did its work; the fuzz and corpus checks assert it)."""
    old, new = Bindings.of(before), Bindings.of(after)

    def takes(name: str, targets: set) -> bool:
        was = old.imported.get(name, set())
        # (a runtime module that mirrors the package the name was imported as stands in for it)
        return any(t not in was and not (t in MIRRORS and was and was <= MIRRORS[t] | {t}) for t in targets)

    return {name for name, targets in new.imported.items() if name in old.names and takes(name, targets)}


def superseded(module):
    """``module`` without its top-level imports of a package another of its top-level imports
    mirrors under the same name (``import horovod.tensorflow as hvd`` once the conversion
    added ``from migrate.runtime import horovod as hvd``): the later import would win anyway,
    and the package's import would still load it (Horovod loads TensorFlow)."""
    import libcst as cst
    from libcst.helpers import get_full_name_for_node

    def bindings(statement):
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                and isinstance(statement.body[0], (cst.Import, cst.ImportFrom))):
            return []
        node = statement.body[0]
        if isinstance(node, cst.ImportFrom) and (node.relative or node.module is None
                                                 or isinstance(node.names, cst.ImportStar)):
            return []
        out = []
        for alias in node.names:
            if alias.asname is None and isinstance(node, cst.Import):
                continue
            name = alias.evaluated_alias or alias.evaluated_name
            full = alias.evaluated_name if isinstance(node, cst.Import) else \
                f"{get_full_name_for_node(node.module)}.{alias.evaluated_name}"
            out.append((name, full))
        return out

    runtime = {name: full for statement in module.body for name, full in bindings(statement) if full in MIRRORS}
    if not runtime:
        return module
    body, comments = [], []
    for statement in module.body:
        found = bindings(statement)
        if found and len(found) == 1 and found[0][0] in runtime and found[0][1] in MIRRORS[runtime[found[0][0]]]:
            comments += [line for line in statement.leading_lines if line.comment is not None]
            continue
        if comments:  # the comments above a dropped import stay, above what follows it
            statement = statement.with_changes(leading_lines=[*statement.leading_lines, *comments])
            comments = []
        body.append(statement)
    return module.with_changes(body=body) if len(body) != len(module.body) else module
