"""Applying a plan: the rewrite of every node it chose, keyed by the original nodes, with the
comments of what it replaces kept (the second half of :mod:`migrate.engine.codemod`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from migrate.engine import _libcst_speed  # (first: it imports libcst.matchers, which libcst.codemod needs)

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.helpers import get_full_name_for_node

from migrate import ops
from migrate.engine.aliases import aliased, bound_name
from migrate.ops.scope import hoisted_elements
from migrate.engine.imports import aliases_of, attribute_objects, import_key, names_and_words
from migrate.engine.plan import Action
from migrate.engine.planner import Planner
from migrate.rules import Rule


class Rewriter(cst.CSTTransformer):
    """Applies a :class:`Plan`; every lookup is by original node."""

    def __init__(self, planner: Planner, context: CodemodContext, aliases: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.p = planner
        self.aliases = aliases or {}  # names the file uses otherwise -> what the added imports bind instead
        self.plan = planner.plan
        self.context = context
        # Statements to splice out of their body, by id; the node is held so its id stays unique.
        self.unwrap: dict[int, cst.With] = {}
        # Statements a dissolved `with` item computed (`tf.control_dependencies([check(x)])`), by the
        # id of the `with` they go before (or into the place of, when it is unwrapped).
        self.hoisted: dict[int, list[cst.SimpleStatementLine]] = {}
        self.removed: dict[int, tuple[cst.SimpleStatementLine, list[str]]] = {}
        self.orphans: dict[cst.CSTNode, list[str]] = {}  # comments a rewrite displaced, by original statement
        self.scheduled: set = set()  # imports already asked of AddImportsVisitor
        # Original nodes this pass replaced or removed: an import still read outside all of
        # them stays in use, so RemoveImportsVisitor need not run for it (see schedule_unused_imports).
        self.replaced: set[cst.CSTNode] = set()
        self.new_words: set[str] = set()  # names the nodes this pass built may read, and their strings' words
        # Requested imports known to be unused after the rewrite (see schedule_unused_imports),
        # or None when RemoveImportsVisitor must find out for itself.
        self.known_unused: dict[cst.ImportAlias, cst.Import | cst.ImportFrom] | None = {}
        # Imports inside a function or block whose every read this pass replaced by code that
        # reads the same name as an import it added at the top of the module: left there, they
        # would shadow that import (`import horovod.tensorflow as hvd` in a function, whose
        # `hvd.init()` became `migrate.runtime.horovod`'s). Dropped after the pass, by id.
        self.shadowing: dict[int, set[int]] = {}
        # The plan's nodes and their ancestors: only there can anything change, so the walk
        # goes down nowhere else (a skipped subtree comes back as it was).
        self.work: set[cst.CSTNode] = set()
        plan = self.plan
        for targets in (plan.refs, plan.calls, plan.scope_items, plan.statements, plan.blocks, plan.markers):
            for node in targets:
                while node is not None and node not in self.work:
                    self.work.add(node)
                    node = planner.parent(node)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node not in self.work:
            return False
        name = _REWRITER_VISITS.get(type(node))  # CSTTransformer.on_visit, looking up only methods it has
        return name is None or getattr(self, name)(node) is not False

    # The class has no visit_<Node>_<field> methods (a test checks): libcst's attribute
    # callbacks would look one up by name for every field of every node visited.
    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass

    # -- ops' view of the engine ------------------------------------------------------

    @property
    def facts(self) -> ops.ScopeFacts:
        """What the code around the current rewrite does (its function's, or the file's)."""
        line, _ = self.p.line_col(self._current.match)
        return self.p.facts.at(self.p.original_line(line))

    def code(self, node: cst.CSTNode) -> str:
        try:
            return self.p.code(node)
        except Exception:  # noqa: BLE001 - a node built by an op has no place in the module
            return cst.Module([]).code_for_node(node)

    def resolve(self, node: cst.CSTNode) -> str | None:
        return self.p.resolve(node, instances=False)

    def leaves_block(self, statement: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        """An op's rewrite of a whole statement that goes: ``statement`` leaves its block once the
        block is rewritten, its leading lines (blank lines, comments) going to the statement after it."""
        self.removed[id(statement)] = (statement, [])
        return statement

    def note(self, node: cst.CSTNode, message: str, status: str = "info") -> None:
        action = self._current
        self.p.finding(Action(action.rule, action.node, action.match, action.api), message, status)

    # -- applying -----------------------------------------------------------------------

    @property
    def current(self) -> Action:
        return self._current

    def _apply(self, action: Action, original: cst.CSTNode, updated: cst.CSTNode):
        self._current = action
        op = ops.REGISTRY[action.rule.operation]
        new = op.rewrite(self, original, updated, action.rule.params, action.suffix)
        if isinstance(new, cst.RemovalSentinel):  # a decorator that goes away; its comments stay
            self._removed(original)
            self.orphans.setdefault(self.p.statement_of(original), []).extend(_comments_of(updated))
            return new
        if new is not updated:
            if _needs_parentheses(new, original, self.p.parent(original)):
                new = ops.parenthesized(new)
            self._removed(original)
            self._add_imports(action.rule, new)
            lost = _lost_comments(updated, new) if self.p.has_comment(original) else []
            if lost:  # a comment inside a rebuilt node moves above its statement, never away
                self.orphans.setdefault(self.p.statement_of(original), []).extend(lost)
        return new

    def _removed(self, original: cst.CSTNode) -> None:
        """``original`` leaves the module: imports only it read may become unused."""
        self.replaced.add(original)

    def schedule_unused_imports(self, new: cst.Module | None = None) -> None:
        """Ask RemoveImportsVisitor to remove the imports whose every read this pass replaced.

        This is ``RemoveImportsVisitor.remove_unused_import_by_node`` for every replaced node,
        less the requests that cannot succeed: a read of the import outside every replaced
        node survives as it is. The reads come from libcst's scope analysis, or, for an
        import that is the file's only binding of its name, from the planner's own walk
        (:meth:`Planner.static_reads`). When no replacement reads the name again either,
        the import is known unused (``known_unused``) and RemoveImportsVisitor removes it
        without analysing the converted module; otherwise it re-analyses and has the last
        word. Except in one case it need not be asked: an import bound nowhere else whose
        name the converted module ``new`` reads as the object of an attribute (``tf`` in
        ``tf.float32.max``, an argument a conversion carried over) is in use, as its analysis
        would find; the request is not made and the others need no analysis.
        """
        if not self.replaced:
            return
        table = self.p.table
        words = self.p.words_of(self.replaced)  # a name no replaced node mentions keeps all its reads
        reread: set[str] | None = None  # names the converted module reads as an attribute's object (made when asked)
        for node in self.p.imports:
            if isinstance(node, cst.ImportFrom) and (node.relative or isinstance(node.names, cst.ImportStar) or node.module is None):
                continue  # as remove_unused_import_by_node: relative and star imports are never removed
            module = get_full_name_for_node(node.module) if isinstance(node, cst.ImportFrom) else None
            for alias in node.names:
                bound = alias.evaluated_alias or alias.evaluated_name
                name = bound.split(".")[0]  # what `import a.b` binds: `a`
                # An import of TensorFlow (or of Horovod's TensorFlow API) that nothing reads (unused in the original too) goes with the
                # conversion: the converted file should not import TensorFlow for nothing. (Not in a
                # file with `__all__`, which may export it: the pruned and whole conversions agree so.)
                tensorflow = _loads_tensorflow(f"{module}.{alias.evaluated_name}" if module else alias.evaluated_name)
                if (name not in words and not tensorflow) or name in self.p.reads_aside:
                    continue  # (a statement set aside reads it: see migrate.engine.prune)
                # The file's only binding of the name: its reads are known without scope analysis.
                reads = self.p.static_reads(bound) if table is not None and bound in table.sole_imports else None
                if reads is None:
                    scope = self.p.scopes.get(node)
                    if scope is None:
                        continue
                    reads = [access.node for assignment in (scope.assignments[bound] if bound in scope.assignments else ())
                             if getattr(assignment, "node", None) is node for access in assignment.references]
                if not reads and (not tensorflow or self.p.exports):
                    continue  # (a file with `__all__` may export an unread import: it stays)
                if not all(self._inside_replaced(read) for read in reads):
                    continue
                if reads and name in self.new_words and name in self._added_names() and not self._top_level(node):
                    self.shadowing.setdefault(id(node), set()).add(id(alias))
                    continue
                if self.known_unused is not None:
                    # Every read was replaced; unless a replacement reads the name again (or
                    # `__all__` may export it), nothing reads it now.
                    if (name in self.new_words and not self.p.exports and new is not None and bound == name and table is not None
                            and bound in table.sole_imports):
                        if reread is None:
                            reread = attribute_objects(new, {w for w in self.new_words if w in table.sole_imports})
                        if name in reread:
                            continue  # still read: RemoveImportsVisitor would keep it
                    if name in self.new_words or self.p.exports:
                        self.known_unused = None
                    else:
                        self.known_unused[alias] = node
                if module is None:
                    RemoveImportsVisitor.remove_unused_import(self.context, alias.evaluated_name, asname=alias.evaluated_alias)
                else:
                    RemoveImportsVisitor.remove_unused_import(self.context, module, obj=alias.evaluated_name, asname=alias.evaluated_alias)

        if self.known_unused:
            # A request names (module, object, alias), and RemoveImportsVisitor applies it to
            # every import spelled so: with another such import anywhere, it decides.
            spelled = Counter(import_key(node, alias) for node in self.p.imports for alias in aliases_of(node))
            if any(spelled[import_key(n, a)] > 1 for a, n in self.known_unused.items()):
                self.known_unused = None

    def _added_names(self) -> set[str]:
        """The names the imports this pass added bind at the top of the module."""
        return {bound_name(imp) for imp in self.scheduled}

    def _top_level(self, node: cst.Import | cst.ImportFrom) -> bool:
        line = self.p.parent(node)
        return isinstance(line, cst.SimpleStatementLine) and isinstance(self.p.parent(line), cst.Module)

    def drop_shadowing_imports(self, new: cst.Module) -> cst.Module:
        """``new`` without the imports :attr:`shadowing` names (a block left empty gets ``pass``)."""
        if not self.shadowing:
            return new
        return new.visit(_DropAliases(self.shadowing))

    def _inside_replaced(self, node: cst.CSTNode) -> bool:
        cur = node
        while cur is not None:
            if cur in self.replaced:
                return True
            cur = self.p.parent(cur)
        return False

    def _add_imports(self, rule: Rule, new) -> None:
        used, reads = names_and_words(new)
        self.new_words |= reads
        for imp in rule.imports:
            name = bound = bound_name(imp)
            alias = self.aliases.get(bound)
            if alias is not None:  # the file uses the name for something else (see migrate.engine.aliases)
                imp, bound = aliased(imp, alias), alias
            # Once per file: AddImportsVisitor repeats `from a import b as c` once per request.
            if bound in used and imp not in self.scheduled:
                self.scheduled.add(imp)
                AddImportsVisitor.add_needed_import(self.context, imp.module, imp.obj, imp.asname)
                if alias is not None:  # said once, where the first converted code needs it
                    self.note(new, f"`{name}` is a name this file already uses: the converted code imports `{imp}` "
                                   f"and says `{alias}`", "info")

    def leave_Name(self, original: cst.CSTNode, updated: cst.CSTNode):
        """A reference, string or decorator the plan rewrites (the same for the four node kinds)."""
        action = self.plan.refs.get(original)
        return self._apply(action, original, updated) if action else updated

    leave_Attribute = leave_SimpleString = leave_Decorator = leave_Name

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        action = self.plan.calls.get(original)
        new = updated if action is None or ops.REGISTRY[action.rule.operation].removes_statement else self._apply(action, original, updated)
        return self._realign(original, new)

    def _realign(self, original: cst.Call, new):
        """Arguments aligned with the call's ``(`` stay aligned when the name before it changes length.

        Separators are the original's (see ``ops.calls.keep_layout``): the original argument
        after the same separator tells whether the line it starts was aligned.
        """
        if new is original or not isinstance(new, cst.Call):
            return new
        func = self.p.positions.get(original.func)
        head = self.code(new.func) + self.code(new.whitespace_after_func)
        if func is None or func.start.line != func.end.line or "\n" in head:
            return new
        inside = func.end.column + len(self.code(original.whitespace_after_func)) + 1  # first column after `(`
        shift = func.start.column + len(head) + 1 - inside
        if shift == 0:
            return new
        args = list(new.args)
        separators = [(a.comma, self.p.positions.get(b)) for a, b in zip(original.args, original.args[1:])]
        for i, arg in enumerate(args[:-1]):
            ws = arg.comma.whitespace_after if isinstance(arg.comma, cst.Comma) else None
            after = next((pos for comma, pos in separators if comma.deep_equals(arg.comma)), None)
            if not isinstance(ws, cst.ParenthesizedWhitespace) or after is None or after.start.column != inside:
                continue
            width = len(ws.last_line.value) + shift
            if width >= 0 and not ws.last_line.value.strip(" "):
                args[i] = arg.with_changes(comma=arg.comma.with_changes(whitespace_after=ws.with_changes(last_line=cst.SimpleWhitespace(" " * width))))
        return new.with_changes(args=args)

    def leave_With(self, original: cst.With, updated: cst.With):
        keep = [new for old, new in zip(original.items, updated.items) if old not in self.plan.scope_items]
        if len(keep) == len(updated.items):
            return updated
        hoisted = []
        for old, new in zip(original.items, updated.items):
            if old in self.plan.scope_items:
                self._removed(old)
                rule = self.plan.scope_items[old].rule
                if isinstance(new.item, cst.Call):
                    hoisted += [cst.SimpleStatementLine(body=[cst.Expr(value=_statement_value(e))])
                                for e in hoisted_elements(new.item, rule.params) or ()]
        if keep:
            keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            updated = updated.with_changes(items=keep)
        else:
            self.unwrap[id(updated)] = updated
        if hoisted:
            self.hoisted[id(updated)] = hoisted
            for stmt in hoisted:  # (kept from a removed item: what they read is read still)
                self.new_words |= names_and_words(stmt)[1]
        return updated

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        action = self.plan.statements.get(original)
        if action is None:
            return self._mark(original, updated)
        self._current = action
        self._removed(original)
        op = ops.REGISTRY[action.rule.operation]
        if op.removes_statement or op.goes_with_readers:
            text = " ".join(self.p.code(original.body[0]).split())
            if len(text) > 60:
                text = text[:57] + "..."
            reason = op.removal_reason(action.rule.params)
            comments = [*_comments_of(original.body, original.trailing_whitespace), f"# migrate: {action.rule.id} removed `{text}`: {reason}"]
            self.removed[id(updated)] = (updated, comments)
            self.p.finding(action, f"removed `{text}`: {reason}")
            return updated
        if op.target != "statement":
            # A tracked binding whose every use was rewritten; its comments stay.
            self.removed[id(updated)] = (updated, _comments_of(original.body, original.trailing_whitespace))
            return updated
        call = original.body[0].value if isinstance(original.body[0], (cst.Assign, cst.Expr)) else None
        statements = op.statements(self, call, action.rule.params)
        for stmt in statements:
            self._add_imports(action.rule, stmt)
        lost = [cst.EmptyLine(comment=cst.Comment(c)) for c in _lost_comments(original.body, [s.body for s in statements])]
        statements[0] = statements[0].with_changes(leading_lines=[*updated.leading_lines, *lost])
        statements[-1] = statements[-1].with_changes(trailing_whitespace=updated.trailing_whitespace)
        return cst.FlattenSentinel(statements)

    def on_leave(self, original, updated):
        name = _REWRITER_LEAVES.get(type(original))  # CSTTransformer.on_leave, looking up only methods it has
        result = updated if name is None else getattr(self, name)(original, updated)
        block = self.plan.blocks.get(original)
        if block is not None:
            result = self._apply(block, original, result)
            if isinstance(result, cst.FlattenSentinel):  # one statement became several: the first carries the marks
                first, *rest = result.nodes
                return cst.FlattenSentinel([self._mark(original, first), *rest])
        if (block is not None or isinstance(original, cst.BaseCompoundStatement)) and isinstance(
                result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            result = self._mark(original, result)
        return result

    def _mark(self, original, updated):
        """Above a statement: comments its rewrites displaced, then the markers for a person."""
        orphans = self.orphans.pop(original, [])
        markers = self.plan.markers.get(original, [])
        if not orphans and not markers:
            return updated
        have = {line.comment.value for line in updated.leading_lines if line.comment}
        extra = [*orphans, *(c for c in one_line_per_rule(markers) if c not in have)]
        if not extra:
            return updated
        marked = updated.with_changes(leading_lines=[*updated.leading_lines, *(cst.EmptyLine(comment=cst.Comment(c)) for c in extra)])
        if id(updated) in self.removed:  # (a statement that leaves its block takes its marks to the next)
            self.removed[id(marked)] = (marked, self.removed.pop(id(updated))[1])
        for table in (self.unwrap, self.hoisted):  # (and a dissolved `with` its marks to its first statement)
            if id(updated) in table:
                value = table.pop(id(updated))
                table[id(marked)] = marked if table is self.unwrap else value
        return marked

    # -- bodies: statements removed or unwrapped are spliced here, keeping their comments --

    def leave_IndentedBlock(self, original, updated: cst.IndentedBlock):
        body, footer = self._splice(updated.body, updated.footer)
        if body is updated.body:
            return updated
        return updated.with_changes(body=body, footer=footer)

    def leave_Module(self, original, updated: cst.Module):
        body, footer = self._splice(updated.body, updated.footer)
        if body is updated.body:
            return updated
        return updated.with_changes(body=body, footer=footer)

    def _splice(self, body, footer):
        if not any(id(s) in self.unwrap or id(s) in self.removed or id(s) in self.hoisted for s in body):
            return body, footer
        out: list[cst.BaseStatement] = []
        carry: list[cst.EmptyLine] = []
        for stmt in body:
            hoisted = self.hoisted.pop(id(stmt), [])
            if hoisted:  # (before the `with`, with its leading lines; then the `with` or its body)
                hoisted[0] = hoisted[0].with_changes(leading_lines=[*carry, *stmt.leading_lines])
                carry = []
                out += hoisted
                unwrapped = self.unwrap.pop(id(stmt), None) is not None
                stmt = stmt.with_changes(leading_lines=[])
                if unwrapped:
                    self.unwrap[id(stmt)] = stmt
            if id(stmt) in self.removed:
                _, comments = self.removed.pop(id(stmt))
                carry += [*stmt.leading_lines, *(cst.EmptyLine(comment=cst.Comment(c)) for c in comments)]
                continue
            if id(stmt) in self.unwrap:
                del self.unwrap[id(stmt)]
                inner = stmt.body
                lead = carry + list(stmt.leading_lines)
                carry = []
                if isinstance(inner, cst.IndentedBlock):
                    if inner.header.comment:
                        lead.append(cst.EmptyLine(comment=inner.header.comment))
                    statements = list(inner.body)
                    carry = list(inner.footer)
                else:
                    statements = [cst.SimpleStatementLine(body=inner.body, trailing_whitespace=inner.trailing_whitespace)]
                if statements:
                    statements[0] = statements[0].with_changes(leading_lines=[*lead, *statements[0].leading_lines])
                    out += statements
                else:
                    carry = lead + carry
                continue
            if carry:
                stmt = stmt.with_changes(leading_lines=[*carry, *stmt.leading_lines])
                carry = []
            out.append(stmt)
        if not out:
            out = [cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=carry)]
            carry = []
        return out, [*carry, *footer]


_REWRITER_VISITS, _REWRITER_LEAVES = _libcst_speed.methods_of(Rewriter)


def _statement_value(value: cst.BaseExpression) -> cst.BaseExpression:
    """An element of a list as an expression statement: an assignment expression needs its
    parentheses there (``(y := check(x))``)."""
    if isinstance(value, cst.NamedExpr) and not value.lpar:
        return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return value


_OPERATORS = (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.BooleanOperation, cst.Await)


def _needs_parentheses(new, original: cst.CSTNode, parent: cst.CSTNode | None) -> bool:
    """Whether a rewrite's expression needs parentheses where the node it replaces stood: a
    template that is one argument (``tf.function(fn)`` -> ``fn``) may give a lambda or a
    conditional where a call's function or an operand stood (``tf.function(lambda: 1)()``
    must become ``(lambda: 1)()``, not ``lambda: 1()``)."""
    if not isinstance(new, cst.BaseExpression) or ops.binds_tightly(new):
        return False
    if isinstance(parent, cst.Call):
        return parent.func is original
    if isinstance(parent, (cst.Attribute, cst.Subscript)):
        return parent.value is original
    if isinstance(parent, cst.IfExp):
        return isinstance(new, (cst.Lambda, cst.IfExp))
    return isinstance(parent, _OPERATORS)


class _Comments(cst.CSTVisitor):
    def __init__(self, found: list[str]) -> None:
        self.found = found

    def visit_Comment(self, n: cst.Comment) -> None:
        self.found.append(n.value)


def _comments_of(*nodes) -> list[str]:
    """The comments inside ``nodes`` (nodes, or lists of them), in source order."""
    found: list[str] = []
    visitor = _Comments(found)

    def walk(item) -> None:
        if isinstance(item, (list, tuple, cst.FlattenSentinel)):
            for each in (item.nodes if isinstance(item, cst.FlattenSentinel) else item):
                walk(each)
        elif item is not None:
            item.visit(visitor)

    walk(nodes)
    return found


def one_line_per_rule(markers: list[str]) -> list[str]:
    """Markers of one rule on one statement share a line (a statement with five unconverted calls gets one)."""
    texts: dict[str, list[str]] = {}
    for marker in dict.fromkeys(markers):
        rule, _, text = marker.removeprefix("# migrate: ").partition(" ")
        texts.setdefault(rule, []).append(text)
    return [f"# migrate: {rule} {'; '.join(parts)}" for rule, parts in texts.items()]


def _lost_comments(old, new) -> list[str]:
    """Comments in ``old`` that ``new`` no longer holds (counted, so a repeated comment is kept each time)."""
    left = Counter(_comments_of(new))
    lost = []
    for comment in _comments_of(old):
        if left[comment]:
            left[comment] -= 1
        else:
            lost.append(comment)
    return lost


def _loads_tensorflow(name: str) -> bool:
    """Whether importing ``name`` loads TensorFlow: TensorFlow's modules, and Horovod's for it."""
    return name.split(".")[0] == "tensorflow" or any(
        name == root or name.startswith(root + ".") for root in ("horovod.tensorflow", "horovod.keras"))


class _DropAliases(cst.CSTTransformer):
    """Removes the import aliases given by (id of their import, ids of the aliases): the import
    nodes the rewrite left as they were, so the same objects stand in the converted module."""

    def __init__(self, drops: dict[int, set[int]]) -> None:
        self.drops = drops

    def _leave(self, original, updated):
        dropped = self.drops.get(id(original))
        if dropped is None:
            return updated
        kept = [alias for alias in original.names if id(alias) not in dropped]
        if not kept:
            return cst.RemoveFromParent()
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(names=kept)

    leave_Import = leave_ImportFrom = _leave
