"""The codemod: plan which rule applies where, then rewrite (:class:`MigrateCommand`).

Two passes over one parsed module, each in a module of its own:

1. *Planning* (read-only). Names are resolved through imports (libcst's scope
   analysis), through module-level aliases (``ReduceOp = tf.distribute.ReduceOp``)
   and through tracked objects: a variable bound once to a strategy constructor
   resolves as ``tensorflow.distribute.Strategy``, so ``strategy.run`` matches the
   rule for ``tensorflow.distribute.Strategy.run``. A tracked object is rewritten
   away only if *every* use of it has a static rule; otherwise it *escapes* (passed
   as an argument, kept on ``self``, returned, reassigned…) and its construction is
   pointed at ``migrate.runtime`` with all call sites left as they are
   (:mod:`migrate.engine.planner`, its walks in :mod:`migrate.engine.passes`, the rules by
   what they match in :mod:`migrate.engine.index`).
2. *Rewriting*, keyed by the original nodes the plan chose (:mod:`migrate.engine.rewriter`).
   Imports are scheduled through libcst's AddImportsVisitor/RemoveImportsVisitor, which
   :class:`~libcst.codemod.CodemodCommand` runs once at the end (:mod:`migrate.engine.imports`).

The module given here may be a pruned one (:mod:`migrate.engine.prune`: statements the
planner would leave alone stand as placeholders), and names that are plain imports
bound once (or module-level aliases of them) resolve from the file's import table;
libcst's scope analysis then runs only if a decision needs it. An import a rewrite
left unread is removed by RemoveImportsVisitor's own code, without its re-analysis of
the module when the rewrite shows no read is left. None of this changes what comes out.
"""

from __future__ import annotations

from collections.abc import Mapping

from migrate.engine.imports import FreshTree, RemoveKnownUnused, top_level_aliases, with_our_import_visitors  # (first)

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext
from libcst.codemod.visitors import RemoveImportsVisitor

from migrate import ops
from migrate.engine.aliases import superseded
from migrate.engine.facts import Facts, LazyFacts
from migrate.engine.findings import Finding
from migrate.engine.index import RuleIndex
from migrate.engine.planner import Planner
from migrate.engine.tfvalues import NO_KEPT_CALLS, KeptCalls
from migrate.engine.rewriter import Rewriter


# How many times a module is planned again as refusals show more calls that stay TensorFlow.
_MAX_REPLANS = 4


class MigrateCommand(FreshTree, CodemodCommand):
    """The whole conversion of one module, as a libcst codemod command."""

    DESCRIPTION = "Convert tf.distribute training code to MindSpore data parallelism."
    METADATA_DEPENDENCIES = ()  # positions and scopes: on demand (Planner.positions, Planner.scopes)

    def __init__(self, context: CodemodContext, index: RuleIndex, path: str = "<string>", pruned=None, table=None,
                 exports: bool = True, shortcuts: bool = True, aliases: Mapping[str, str] | None = None,
                 facts: Facts | LazyFacts | None = None, kept: KeptCalls | None = None) -> None:
        super().__init__(context)
        self.kept = kept  # migrate.engine.tfvalues.KeptCalls: the calls that stay TensorFlow
        self.facts = facts  # migrate.engine.facts.Facts of the whole file (None: none found)
        # Names an added import binds that the file uses for something else -> the name it
        # binds instead (migrate.engine.aliases.import_aliases; None: not worked out, none).
        self.aliases = aliases or {}
        self.shortcuts = shortcuts  # False: RemoveImportsVisitor always analyses for itself
        self.exports = exports  # whether the file may name an `__all__` (imports it lists are in use)
        self.known_unused = None  # see Rewriter.known_unused
        self.source: str | None = None  # the text ``tree`` was parsed from, when the caller has it
        self.index = index
        self.path = path
        self.pruned = pruned  # a migrate.engine.prune.Pruned when the module is a pruned one
        self.table = table  # a migrate.engine.prune.ImportTable, or None
        self.findings: list[Finding] = []
        self.positions: Mapping | None = None

    def transform_module(self, tree: cst.Module) -> cst.Module:
        new = super().transform_module(tree)
        if new is not tree:
            new = superseded(new)
        return _blank_line_after_docstring(tree, _no_leading_blank_lines(tree, new))

    def _instantiate_and_run(self, transform, tree: cst.Module) -> cst.Module:
        if (transform is RemoveImportsVisitor and self.shortcuts and self.known_unused
                and set(self.known_unused) <= top_level_aliases(tree)):
            return RemoveKnownUnused(self.context, self.known_unused).transform_module(tree)
        return super()._instantiate_and_run(with_our_import_visitors(transform), tree)

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        if not self.aliases:
            return self._transform(tree)
        with ops.import_aliases(self.aliases):
            return self._transform(tree)

    def _plan(self, tree: cst.Module, aside, kept: KeptCalls) -> Planner:
        planner = Planner(tree, self.context.wrapper, self.index, self.path, self.facts, aside, self.table, self.source)
        planner.kept = kept
        if self.pruned is not None:
            planner.reads_aside = frozenset(self.pruned.reads)
            planner.original_line = self.pruned.original_line
        planner.exports = self.exports
        planner.run()
        return planner

    def _transform(self, tree: cst.Module) -> cst.Module:
        aside = frozenset()
        if self.pruned is not None:
            aside = lambda: self.pruned.names  # noqa: E731 - only a tape's new names need them
        kept = self.kept if self.kept is not None else NO_KEPT_CALLS
        planner = self._plan(tree, aside, kept)
        # A call its rule refused stays TensorFlow, and so must every call given its value: plan
        # again while that finds more (rare: a refusal whose value reaches a converted call).
        for _ in range(_MAX_REPLANS):
            extra = frozenset(planner.refused_calls) - set(kept.calls)
            if not extra or kept.widen is None:
                break
            wider = kept.widen(kept.extra | extra)
            if not set(wider.calls) - set(kept.calls) - extra:
                break
            kept = wider
            planner = self._plan(tree, aside, kept)
        plan = planner.plan
        self.positions = planner._positions  # (when the planner made them: the final code copies what did not change)
        if not (plan.refs or plan.calls or plan.scope_items or plan.statements or plan.blocks or plan.markers):
            self.findings = plan.findings
            return tree
        rewriter = Rewriter(planner, self.context, self.aliases)
        new = tree.visit(rewriter)
        rewriter.schedule_unused_imports(new)
        new = rewriter.drop_shadowing_imports(new)
        self.known_unused = rewriter.known_unused
        self.findings = sorted(plan.findings)
        return new


def _no_leading_blank_lines(old: cst.Module, new: cst.Module) -> cst.Module:
    """Removing a file's first import must not leave the file starting with a blank line."""
    if new is old or not new.body or new.header or old.header:
        return new
    if old.body and any(not line.comment for line in old.body[0].leading_lines[:1]):
        return new  # the input itself started with a blank line
    first = new.body[0]
    lines = list(first.leading_lines)
    while lines and lines[0].comment is None:
        lines.pop(0)
    if len(lines) == len(first.leading_lines):
        return new
    return new.with_changes(body=[first.with_changes(leading_lines=lines), *new.body[1:]])


def _blank_line_after_docstring(old: cst.Module, new: cst.Module) -> cst.Module:
    """Replacing the import under a module docstring must not glue the new imports to the docstring."""
    if new is old or len(old.body) < 2 or len(new.body) < 2 or not (_is_docstring(old.body[0]) and _is_docstring(new.body[0])):
        return new
    before, after = old.body[1].leading_lines, new.body[1].leading_lines
    if not (before and before[0].comment is None) or (after and after[0].comment is None):
        return new
    second = new.body[1].with_changes(leading_lines=[cst.EmptyLine(), *after])
    return new.with_changes(body=[new.body[0], second, *new.body[2:]])


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))
