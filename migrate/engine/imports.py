"""The imports a conversion adds and removes, through libcst's AddImportsVisitor and
RemoveImportsVisitor, each run once at the end, reading only what they act on."""

from __future__ import annotations

import importlib
from contextlib import contextmanager
from dataclasses import replace

# Before libcst.codemod, which imports libcst.matchers: migrate.engine._libcst_speed imports it
# the quick way (without rendering ~175 dataclass signatures nobody reads).
importlib.import_module("migrate.engine._libcst_speed")

import libcst as cst  # noqa: E402
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.helpers import get_full_name_for_node
from libcst.metadata import MetadataWrapper

from migrate.engine.index import WORD


class NamesAndWords(cst.CSTVisitor):
    """See :func:`names_and_words` (one class for every call: a class made per call costs more than its walk)."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.reads: set[str] = set()
        self.skip: set[int] = set()  # attribute and keyword names: no read

    def visit_Attribute(self, n: cst.Attribute) -> None:
        self.skip.add(id(n.attr))

    def visit_Arg(self, n: cst.Arg) -> None:
        if n.keyword is not None:
            self.skip.add(id(n.keyword))

    def visit_Name(self, n: cst.Name) -> None:
        self.names.add(n.value)
        if id(n) not in self.skip:
            self.reads.add(n.value)

    def visit_SimpleString(self, n: cst.SimpleString) -> None:
        self.reads.update(WORD.findall(n.value))

    def visit_FormattedStringText(self, n: cst.FormattedStringText) -> None:
        self.reads.update(WORD.findall(n.value))


class AttributeObjects(cst.CSTVisitor):
    """See :func:`attribute_objects`."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.found: set[str] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if type(node.value) is cst.Name and node.value.value in self.names:
            self.found.add(node.value.value)

    def visit_Import(self, node: cst.Import) -> bool:
        return False  # `import a.b` binds, `from a.b import c` names a module: neither reads `a`

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False


def attribute_objects(module: cst.Module, names: set[str]) -> set[str]:
    """Which of ``names`` ``module`` reads as the object of an attribute (``tf`` of ``tf.x``)."""
    if not names:
        return set()
    visitor = AttributeObjects(names)
    module.visit(visitor)
    return visitor.found


def names_and_words(node) -> tuple[set[str], set[str]]:
    """The names in ``node`` (a node or a FlattenSentinel); and the names it may read (not
    the ``b`` of ``a.b``, nor keywords) with the words of its strings."""
    visitor = NamesAndWords()
    for n in node.nodes if isinstance(node, cst.FlattenSentinel) else [node]:
        n.visit(visitor)
    return visitor.names, visitor.reads


def aliases_of(node: cst.Import | cst.ImportFrom) -> list[cst.ImportAlias]:
    return [] if isinstance(node.names, cst.ImportStar) else list(node.names)


def import_key(node: cst.Import | cst.ImportFrom, alias: cst.ImportAlias) -> tuple:
    """What a RemoveImportsVisitor request for ``alias`` names: (module, object, alias)."""
    if isinstance(node, cst.Import):
        return (alias.evaluated_name, None, alias.evaluated_alias)
    module = get_full_name_for_node(node.module) if node.module is not None else None
    return ("." * len(node.relative) + (module or ""), alias.evaluated_name, alias.evaluated_alias)


class FreshTree:
    """Metadata without MetadataWrapper's defensive deep copy of the module.

    The copy guards against one node object standing at two places in a hand-built
    tree. The codemod's input comes straight from the parser, and AddImportsVisitor
    reads no metadata, so for them the copy (a third of the cost of a parse) buys
    nothing. RemoveImportsVisitor, which does resolve scopes on the rewritten tree,
    keeps it.
    """

    @contextmanager
    def _handle_metadata_reference(self, module: cst.Module):
        old = self.context.wrapper
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        with self.resolve(wrapper):
            self.context = replace(self.context, wrapper=wrapper)
            try:
                yield wrapper.module
            finally:
                self.context = replace(self.context, wrapper=old)


class AddImports(FreshTree, AddImportsVisitor):
    """AddImportsVisitor reading only what it acts on: the imports at the top of the module.

    It extends the ``from`` imports before the first other statement and inserts new
    ones after them. It knows a module as imported where those imports import it, and
    where a later top-level import line does (a notebook's second cell's ``import numpy as
    np``) that no statement before it reads the name of: a name read first and imported
    later is imported again at the top. Nothing below the module's top-level statements
    matters to it, so its two passes stop there instead of walking every expression of
    the module (statements before a later import line are read for their names).
    """

    def visit_Module(self, node: cst.Module) -> None:
        # Its gatherer reads the import lines that count: it is given just those, not the
        # module to walk whole.
        body = list(node.body)
        start = 1 if body and isinstance(body[0], cst.SimpleStatementLine) and not is_import_line(body[0]) else 0
        end = next((i for i in range(start, len(body)) if not is_import_line(body[i])), len(body))
        counted, read = body[:end], set()
        for statement in body[end:]:
            if not is_import_line(statement):
                read |= names_and_words(statement)[1]
                continue
            lines = [small for small in statement.body if isinstance(small, (cst.Import, cst.ImportFrom))]
            bound = {(a.evaluated_alias or a.evaluated_name).split(".")[0] for small in lines for a in aliases_of(small)}
            if bound and not bound & read:
                counted.append(statement)
        super().visit_Module(node.with_changes(body=counted))

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.ImportFrom):
            super().on_visit(node)
            return False  # its leave_ImportFrom rebuilds the names; nothing below calls anything
        if isinstance(node, cst.Module) or (isinstance(node, cst.SimpleStatementLine) and is_import_line(node)):
            return super().on_visit(node)
        return False


class KeepsRemovedComments:
    """An import line that a removal takes whole leaves its comments behind: the lines above it
    (comments, with the blank lines among them) go to the next statement of its block, or to
    the block's end. libcst drops a statement with its leading lines, and a comment there
    (``# Prepare the data.`` above ``import tensorflow as tf``) is the program's text, not the
    import's."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._kept_comments: list[list[cst.EmptyLine]] = []  # the lines waiting, per block being visited

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.Module, cst.IndentedBlock)):
            self._kept_comments.append([])
        return super().on_visit(node)

    def on_leave(self, original: cst.CSTNode, updated):
        updated = super().on_leave(original, updated)
        waiting = self._kept_comments
        if not waiting:
            return updated
        if isinstance(original, (cst.Module, cst.IndentedBlock)):
            lines = waiting.pop()
            if lines and isinstance(updated, cst.IndentedBlock) and not updated.body:  # (libcst writes `pass` there)
                updated = updated.with_changes(body=[cst.SimpleStatementLine([cst.Pass()], leading_lines=lines)])
            elif lines and isinstance(updated, (cst.Module, cst.IndentedBlock)):
                updated = updated.with_changes(footer=[*lines, *updated.footer])
            return updated
        if isinstance(original, cst.SimpleStatementLine) and original.body and isinstance(updated, cst.SimpleStatementLine) \
                and not updated.body:
            if any(line.comment is not None for line in original.leading_lines):
                waiting[-1].extend(original.leading_lines)
            return updated  # (removed by its block)
        if waiting[-1] and isinstance(original, cst.BaseStatement) and isinstance(updated, cst.BaseStatement):
            updated = updated.with_changes(leading_lines=[*waiting[-1], *updated.leading_lines])
            waiting[-1] = []
        return updated


class RemoveImports(KeepsRemovedComments, RemoveImportsVisitor):
    """RemoveImportsVisitor that keeps the comments above an import line it removes."""


class RemoveKnownUnused(KeepsRemovedComments, FreshTree, RemoveImportsVisitor):
    """RemoveImportsVisitor told which of the requested imports nothing reads any more.

    :meth:`Rewriter.schedule_unused_imports` knows it when every read of an import was
    inside a node the pass replaced, and no replacement reads the name again: then the
    visitor's own analysis of the converted module (scope, qualified names, string
    annotations, ``__all__``) could only agree, and it is skipped. Its removal code runs
    as it is, on the top-level import lines that hold those imports.
    """

    METADATA_DEPENDENCIES = ()

    @classmethod
    def get_inherited_dependencies(cls):
        return frozenset()  # RemoveImportsVisitor's analysis is what this class does without

    def __init__(self, context: CodemodContext, unused: dict) -> None:
        super().__init__(context)
        self.known = unused

    def visit_Module(self, node: cst.Module) -> None:
        self._unused_imports = dict(self.known)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            super().on_visit(node)
            return False  # its leave_Import/leave_ImportFrom read the names; nothing below calls anything
        if isinstance(node, cst.Module) or is_import_line(node):
            return super().on_visit(node)
        return False


def top_level_aliases(module: cst.Module) -> set[cst.ImportAlias]:
    return {alias for statement in module.body if is_import_line(statement) for small in statement.body
            if isinstance(small, (cst.Import, cst.ImportFrom)) for alias in aliases_of(small)}


def is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)


def with_our_import_visitors(transform):
    """The class a codemod runs for libcst's import visitor ``transform`` (AddImports, RemoveImports);
    any other transform as it is."""
    return {AddImportsVisitor: AddImports, RemoveImportsVisitor: RemoveImports}.get(transform, transform)
