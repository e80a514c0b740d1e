"""The second stage of a conversion: the native tier's lowerings (:mod:`migrate.ops.native`) on
the converted file.

The rules rewrite TF into the shim, statement by statement, and may set statements aside
(:mod:`migrate.engine.prune`); a lowering must see *every* use of an object before it
replaces the object, so it runs on the whole converted text, once the statements set aside
are back. It is a libcst codemod of its own (imports scheduled through libcst's
AddImportsVisitor/RemoveImportsVisitor), and it runs only on files whose converted text
holds a name some lowering lowers. What it did is reported as findings at the original
file's lines: the object's own statement (``model = ...``), or a function's ``def``.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Mapping

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from migrate import ops
from migrate.engine.aliases import aliased, bound_name
from migrate.engine.findings import Finding, one_line
from migrate.engine.imports import with_our_import_visitors
from migrate.engine.index import lowered_words
from migrate.rules import Import, Rule


class NativeCommand(CodemodCommand):
    """Apply the lowerings; add the imports of those that lowered something, drop shim imports left unread."""

    DESCRIPTION = "Lower the shim's objects to MindSpore's own where proven equal."

    def __init__(self, context: CodemodContext, rules: tuple[Rule, ...], jitted: frozenset[str],
                 aliases: Mapping[str, str] | None = None, arrays: dict | None = None) -> None:
        super().__init__(context)
        self.rules = rules
        self.arrays = arrays  # (the NumPy-array rule's parameters, where it runs: a model's NumPy input is wrapped)
        self.jitted = jitted
        self.aliases = dict(aliases or {})  # name -> the alias a file using it takes (migrate.engine.aliases)
        self.notes: list = []
        self.positions = None  # (what migrate.engine.convert's guarded run asks every command)
        self.source: str | None = None

    def _instantiate_and_run(self, transform, tree: cst.Module) -> cst.Module:
        return super()._instantiate_and_run(with_our_import_visitors(transform), tree)

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        # (set here, on the thread the codemod runs on: the rules' text is written with the aliases)
        with ops.import_aliases(self.aliases):
            new, self.notes, used = ops.native.lower(tree, self.rules, self.jitted, self.arrays)
        if new is tree:
            return tree
        for rule in self.rules:
            if rule.id not in used:
                continue
            for imp in _spelled(rule, self.aliases):  # (a rule's imports serve all it may write; those this file does not read go)
                AddImportsVisitor.add_needed_import(self.context, imp.module, imp.obj, imp.asname)
                RemoveImportsVisitor.remove_unused_import(self.context, imp.module, imp.obj, imp.asname)
            for text in rule.params.get("shim_imports", ()):
                imp = Import.parse(text)
                RemoveImportsVisitor.remove_unused_import(self.context, imp.module, imp.obj, imp.asname)
        # (an activation handed on as `ops.relu` became the layer's own: the conversion's `ops` may go)
        RemoveImportsVisitor.remove_unused_import(self.context, "mindspore", "ops")
        return new


class ArraysCommand(CodemodCommand):
    """Give the NumPy arrays MindSpore's ops are handed as tensors (:mod:`migrate.ops.arrays`)."""

    DESCRIPTION = "Wrap NumPy arrays given to MindSpore's ops as tensors."

    def __init__(self, context: CodemodContext, rule: Rule, found, aliases: Mapping[str, str] | None = None) -> None:
        super().__init__(context)
        self.rule = rule
        self.found = found  # (what migrate.ops.arrays.find gave for the code this command runs on)
        self.aliases = dict(aliases or {})
        self.notes: list[tuple[int, int, str]] = []
        self.positions = None
        self.source: str | None = None

    def _instantiate_and_run(self, transform, tree: cst.Module) -> cst.Module:
        return super()._instantiate_and_run(with_our_import_visitors(transform), tree)

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        with ops.import_aliases(self.aliases):
            new, self.notes = ops.arrays.wrap(tree, self.rule, self.source if self.source is not None else tree.code,
                                              self.found)
        if not self.notes:
            return tree
        for imp in _spelled(self.rule, self.aliases):
            AddImportsVisitor.add_needed_import(self.context, imp.module, imp.obj, imp.asname)
            # (each is for some wraps only, `ops` for a stacked list: one this file does not read goes again)
            RemoveImportsVisitor.remove_unused_import(self.context, imp.module, imp.obj, imp.asname)
        return new


def _spelled(rule: Rule, aliases: Mapping[str, str]) -> list[Import]:
    """The rule's imports, each binding the alias the file takes for its name (migrate.engine.aliases)."""
    out = []
    for imp in rule.imports:
        alias = aliases.get(bound_name(imp))
        out.append(aliased(imp, alias) if alias is not None else imp)
    return out


def _column_of(line: str, text: str, nth: int) -> int:
    """The 1-based column of the ``nth`` (from 0) occurrence of ``text`` in ``line`` as a whole
    expression (not inside a longer name); the line's first non-blank character's if it is not there."""
    found = [m.start() for m in re.finditer(r"(?<![\w.])%s(?!\w)" % re.escape(text), line)]
    if nth < len(found):
        return found[nth] + 1
    return len(line) - len(line.lstrip()) + 1


def _line_map(before: str, after: str):
    """A function from a line of ``after`` (a conversion of ``before``) to the line of ``before`` it
    comes from: the same line where the conversion kept it, else the first of the lines it replaced."""
    old, new = ops.arrays.source_lines(before), ops.arrays.source_lines(after)
    blocks = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()

    def line_of(line: int) -> tuple[int, bool]:
        at = line - 1
        for tag, i1, i2, j1, j2 in blocks:
            if j1 <= at < j2:
                if tag == "equal":
                    return i1 + (at - j1) + 1, True
                return min(i1 + (at - j1), max(i2 - 1, i1)) + 1, False
        return max(len(old), 1), False
    return line_of


def jitted_functions(tree: ast.Module, findings, rules: tuple[Rule, ...]) -> frozenset[str]:
    """Module-level functions whose decorator a rule the jit lowering follows removed (``@tf.function``)."""
    after = {rule_id for rule in rules if rule.params["kind"] == "jit" for rule_id in rule.params["decorators"]}
    lines = {f.line for f in findings if f.rule in after}
    return frozenset(node.name for node in tree.body if isinstance(node, (ast.FunctionDef,))
                     and any(d.lineno in lines for d in node.decorator_list))


def _where(tree: ast.Module) -> dict[str, tuple[int, int]]:
    """Original line and column of each ``name = ...``, ``def name``, ``class name`` and ``name.method(...)``
    statement (as ``"name.method"``) the module's code runs, outside functions and classes
    (``with strategy.scope():`` blocks included: the conversion dissolves them): the first
    under its key, the n-th also under ``key@n``."""
    found: dict[str, tuple[int, int]] = {}
    counts: dict[str, int] = {}

    def add(key: str, node: ast.stmt) -> None:
        counts[key] = counts.get(key, 0) + 1
        found.setdefault(key, (node.lineno, node.col_offset + 1))
        found[f"{key}@{counts[key]}"] = (node.lineno, node.col_offset + 1)

    statements = list(tree.body)
    while statements:
        node = statements.pop(0)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
                and isinstance(node.value.func.value, ast.Name):
            add(f"{node.value.func.value.id}.{node.value.func.attr}", node)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            add(node.targets[0].id, node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.setdefault(node.name, (node.lineno, node.col_offset + 1))
        elif isinstance(node, (ast.With, ast.If, ast.Try)):
            statements[:0] = [*node.body, *getattr(node, "orelse", ()), *getattr(node, "finalbody", ())]
    return found


def lower_text(code: str, tree: ast.Module, rules: tuple[Rule, ...], path: str, findings,
               aliases: Mapping[str, str] | None, transform, original: str = "") -> tuple[str, list[Finding]]:
    """The converted ``code`` lowered, and the findings saying what was lowered or why not.
    ``tree`` is the original file's syntax tree and ``original`` its text (for lines);
    ``transform`` runs a codemod command on code (the engine's guarded libcst run). The native
    tier's lowerings run first, then the arrays' wrapping (on what they wrote)."""
    native = tuple(r for r in rules if r.operation == "lower_native")
    notes: list[Finding] = []
    words = lowered_words(native)
    if native and words is not None and words.search(code):
        arrays = next((r.params for r in rules if r.operation == "wrap_arrays"), None)
        code, notes = _lower_native(code, tree, native, path, findings, aliases, transform, arrays, original)
    for rule in (r for r in rules if r.operation == "wrap_arrays"):
        words = lowered_words([rule])
        found = ops.arrays.find(code, rule.params) if words is not None and words.search(code) else None
        if not found:  # (read on CPython's tree: libcst parses only a file with something to wrap)
            continue
        command = ArraysCommand(CodemodContext(filename=path, full_module_name=None), rule, found, aliases)
        result = transform(command, code)
        code_out = getattr(result, "code", None)
        if code_out is None:
            raise getattr(result, "error", RuntimeError("wrapping NumPy arrays failed"))
        if command.notes:
            line_of, old_lines = _line_map(original, code), ops.arrays.source_lines(original)
            seen: dict[tuple[int, str], int] = {}
            for line, col, argument, message in command.notes:
                at, same = line_of(line)
                if not same:  # (a line the rules rewrote: where the argument stands in it, else its first character)
                    text = old_lines[at - 1] if at <= len(old_lines) else ""
                    col = _column_of(text, argument, seen.setdefault((at, argument), 0))
                    seen[(at, argument)] += 1
                notes.append(Finding(path, at, col, rule.id, "converted", one_line(message),
                                     rule.match[0], rule.maps_to))
        code = code_out
    return code, notes


def _lower_native(code: str, tree: ast.Module, rules: tuple[Rule, ...], path: str, findings,
                  aliases: Mapping[str, str] | None, transform, arrays: dict | None,
                  original: str) -> tuple[str, list[Finding]]:
    jitted = jitted_functions(tree, findings, rules)
    command = NativeCommand(CodemodContext(filename=path, full_module_name=None), rules, jitted, aliases, arrays)
    result = transform(command, code)
    code_out = getattr(result, "code", None)
    if code_out is None:
        raise getattr(result, "error", RuntimeError("the native lowering failed"))
    where = _where(tree)
    line_of = None
    notes = []
    for name, rule, status, message in command.notes:
        if isinstance(name, tuple):  # (a place in the converted text: a call lowered where it stands)
            line_of = line_of or _line_map(original, code)
            (line, same), col = line_of(name[0]), name[1]
            if not same:  # (a line the rules rewrote: the TF use of that function in the call's order on it)
                at = sorted(f.col for f in findings if f.line == line and f.api.rsplit(".", 1)[-1] == name[2])
                col = at[name[3]] if name[3] < len(at) else col
        else:
            line, col = where.get(name, (1, 1))
        notes.append(Finding(path, line, col, rule.id, status, one_line(message), rule.params["lowers"][0], rule.maps_to))
    return code_out, notes
