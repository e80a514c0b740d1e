"""The codemod: plan which rule applies where, then rewrite.

Two passes over one parsed module:

1. *Planning* (read-only). Names are resolved through imports (libcst's scope
   analysis), through module-level aliases (``ReduceOp = tf.distribute.ReduceOp``)
   and through tracked objects: a variable bound once to a strategy constructor
   resolves as ``tensorflow.distribute.Strategy``, so ``strategy.run`` matches the
   rule for ``tensorflow.distribute.Strategy.run``. A tracked object is rewritten
   away only if *every* use of it has a static rule; otherwise it *escapes* (passed
   as an argument, kept on ``self``, returned, reassigned…) and its construction is
   pointed at ``migrate.runtime`` with all call sites left as they are.
2. *Rewriting*, keyed by the original nodes the plan chose. Imports are scheduled
   through libcst's AddImportsVisitor/RemoveImportsVisitor, which
   :class:`~libcst.codemod.CodemodCommand` runs once at the end.

The module given here may be a pruned one (:mod:`migrate.engine.prune`: statements the
planner would leave alone stand as placeholders), and names that are plain imports
bound once (or module-level aliases of them) resolve from the file's import table;
libcst's scope analysis then runs only if a decision needs it. An import a rewrite
left unread is removed by RemoveImportsVisitor's own code, without its re-analysis of
the module when the rewrite shows no read is left. None of this changes what comes out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from migrate.engine import _libcst_speed  # (first: it imports libcst.matchers, which libcst.codemod needs)

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.helpers import get_full_name_for_node
from libcst.metadata import Assignment, MetadataWrapper, QualifiedNameSource, ScopeProvider

from migrate import ops
from migrate.engine.aliases import AddedImports, aliased, bound_name
from migrate.engine.facts import NO_FACTS, Facts, LazyFacts
from migrate.engine.findings import Finding, one_line
from migrate.engine.suppression import is_suppressed, suppressed_lines
from migrate.rules import Rule

# An identifier-like word of source text (names, and also words in strings and comments).
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Calls whose string arguments libcst's scope analysis may read as type hints.
TYPE_HINT_CALLS = frozenset({"cast", "TypeVar", "NewType"})

# Spellings of the same TF 2 API: `import tensorflow.compat.v2 as tf` is `tensorflow`.
# Keras is one API under four names: `tf.keras`, Keras 3's `keras` (what `tf.keras` is
# from TF 2.16 on), Keras 2's `tf_keras`, and `tf.compat.v1.keras`.
NORMALIZE_PREFIXES = (
    ("tensorflow.compat.v2.", "tensorflow."),
    ("tensorflow._api.v2.", "tensorflow."),
    ("tensorflow.compat.v1.keras.", "tensorflow.keras."),
    ("keras.", "tensorflow.keras."),
    ("tf_keras.", "tensorflow.keras."),
)


def normalize(qualname: str) -> str:
    for old, new in NORMALIZE_PREFIXES:
        if qualname.startswith(old) or qualname + "." == old:
            return new + qualname[len(old):] if qualname.startswith(old) else new[:-1]
    return qualname


class RuleIndex:
    """Rules by what they match: exact names, name prefixes (``a.b.*``) and string literals."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        self.exact: dict[str, Rule] = {}
        # Every rule for a name, in rule order: the first that can rewrite a use takes it
        # (`@tf.function` and `tf.function(fn)` are two rules for one name).
        self.named: dict[str, list[Rule]] = {}
        self.prefixes: list[tuple[str, Rule]] = []
        self._by_prefix: dict[str, list[Rule]] = {}
        self.strings: dict[str, Rule] = {}
        self.returns: dict[str, str] = {}
        facts: dict[str, set[str]] = {}
        for rule in rules:
            for fact, names in rule.facts.items():
                facts.setdefault(fact, set()).update(normalize(n) for n in names)
            for name in rule.exact_matches:
                self.exact.setdefault(name, rule)
                self.named.setdefault(name, []).append(rule)
                if rule.returns:
                    self.returns.setdefault(name, rule.returns)
            for prefix in rule.prefix_matches:
                self.prefixes.append((prefix, rule))
                self._by_prefix.setdefault(prefix, []).append(rule)
            for literal in rule.match_strings:
                self.strings.setdefault(literal, rule)
        # What rules declare the APIs they match to be (see migrate.engine.facts).
        self.fact_names: dict[str, frozenset[str]] = {fact: frozenset(names) for fact, names in facts.items()}
        self.prefixes.sort(key=lambda p: -len(p[0]))
        self.roots = {name.split(".")[0] for name in list(self.exact) + [p for p, _ in self.prefixes]}
        # Other spellings of a matched namespace (`keras` for `tensorflow.keras`) are roots too.
        matched = list(self.exact) + [p + "." for p, _ in self.prefixes]
        self.roots |= {old.split(".")[0] for old, new in NORMALIZE_PREFIXES if any(m.startswith(new) for m in matched)}
        # Words a file must contain for any rule to match in it: the last name of every
        # matched API (`MirroredStrategy`, `distribute` for `tensorflow.distribute.*`).
        # Methods of tracked objects need no word of their own: their constructor has one.
        instance_types = tuple(t + "." for t in set(self.returns.values()))
        needles = {name.rsplit(".", 1)[-1] for name in list(self.exact) + [p for p, _ in self.prefixes] if not name.startswith(instance_types)}
        # A prefix rule covering a whole namespace (`tensorflow.*`) also covers its other spellings (`keras.*`).
        needles |= {old.rstrip(".").rsplit(".", 1)[-1] for old, new in NORMALIZE_PREFIXES if any(new.startswith(p + ".") for p, _ in self.prefixes)}
        self._needles = re.compile(r"\b(?:%s)\b" % "|".join(sorted(map(re.escape, needles)))) if needles else None
        self._roots = re.compile(r"\b(?:%s)\b" % "|".join(sorted(map(re.escape, self.roots)))) if self.roots else None

    @property
    def added_imports(self) -> AddedImports:
        """The imports the rules may add, by the name each binds (see migrate.engine.aliases)."""
        found = self.__dict__.get("_added_imports")
        if found is None:
            found = self._added_imports = AddedImports.of(self.rules)
        return found

    def may_match(self, code: str) -> bool:
        """Cheap pre-filter: without these words no rule can match, so no scope analysis is needed."""
        if any(s in code for s in self.strings):
            return True
        return bool(self._roots and self._needles and self._roots.search(code) and self._needles.search(code))

    def use_of(self, qualname: str) -> tuple[str, Rule | None]:
        """What a use of ``qualname`` gets, as far as its name alone decides: ``("nothing", None)``
        when no rule matches it, ``("mark", rule)`` when the first rule only marks what no other
        rule maps (such a use needs no libcst: the pruner sets its statement aside and marks it
        there, the planner marks it the same way), else ``("rewrite", None)``: the planner decides."""
        if qualname.split(".")[0] not in self.roots:
            return "nothing", None
        found = self.candidates(qualname)
        if not found:
            return "nothing", None
        rule = found[0][0]
        return ("mark", rule) if ops.REGISTRY[rule.operation].fallback else ("rewrite", None)

    def candidates(self, qualname: str) -> list[tuple[Rule, str]]:
        """(rule, suffix) pairs, most specific first; the suffix is what a prefix rule keeps."""
        found = [(rule, "") for rule in self.named.get(qualname, ())]
        # Prefix rules by dictionary look-ups on the name's own prefixes, longest first:
        # the cost grows with the name's depth, not with the number of rules.
        end = qualname.rfind(".")
        while end > 0:
            prefix = qualname[:end]
            found += [(rule, qualname[end:]) for rule in self._by_prefix.get(prefix, ())]
            end = qualname.rfind(".", 0, end)
        return found


@dataclass
class Action:
    rule: Rule
    node: cst.CSTNode  # the original node the operation rewrites
    match: cst.CSTNode  # the matched reference (for positions and messages)
    api: str
    suffix: str = ""
    status: str = ""
    detail: object = None  # what a block operation decided while planning, for its rewrite


@dataclass
class Plan:
    refs: dict[cst.CSTNode, Action] = field(default_factory=dict)
    calls: dict[cst.CSTNode, Action] = field(default_factory=dict)
    scope_items: dict[cst.CSTNode, Action] = field(default_factory=dict)
    statements: dict[cst.CSTNode, Action] = field(default_factory=dict)
    blocks: dict[cst.CSTNode, Action] = field(default_factory=dict)  # statements a block operation replaces
    markers: dict[cst.CSTNode, list[str]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)


class Planner:
    """Decides, on the original tree, which rule rewrites which node."""

    def __init__(self, module: cst.Module, wrapper, index: RuleIndex, path: str,
                 facts: Facts | LazyFacts | None = None, names_set_aside: frozenset[str] = frozenset(), table=None,
                 source: str | None = None) -> None:
        self.module = module
        self.index = index
        self.path = path
        self._wrapper = wrapper
        self._scopes = None
        self._function_scopes: dict[cst.FunctionDef, Mapping] = {}  # see scopes_around
        # A migrate.engine.prune.ImportTable when the file's matched names are plain imports:
        # names resolve from it, and libcst's scope analysis runs only if something asks for it.
        self.table = table
        # With a table, every Name node by its value, and the words of strings libcst's scope
        # analysis may read as type hints: enough to list the reads of an import bound once.
        self.names_by_value: dict[str, list[cst.Name]] = {}
        self.hint_words: set[str] = set()
        self.strings: list[cst.SimpleString] = []  # with a table: the string literals a rule may match
        self.bound_targets: dict[str, cst.Name] = {}  # with a table: `name = …` targets by name
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}  # filled by the first pass (_Collector)
        self._positions = None
        self.aliases: dict[cst.Name, cst.BaseExpression] = {}
        self.producers: list[tuple[cst.Name | None, cst.Call, cst.CSTNode]] = []
        self.chained: list[cst.Call] = []  # `make_thing().method(...)`: a call used directly as a receiver
        self.instances: dict[cst.Name, str] = {}
        self.imports: list[cst.Import | cst.ImportFrom] = []
        self.use_actions: dict[cst.CSTNode, tuple[Rule, str]] = {}
        self.plan = Plan()
        self.facts = facts or NO_FACTS  # where the file trains with Keras fit or a tape
        self.original_line = lambda line: line  # a line of the module libcst sees -> the file's
        # Identifiers of statements the runner set aside (see migrate.engine.prune): a new
        # name must not collide with them either. A set, or what finds it when first asked.
        self._names_set_aside = names_set_aside
        self.reads_aside: frozenset[str] = frozenset()  # matched imports read by statements set aside
        self.exports = True  # whether the file may have an `__all__` (MigrateCommand says)
        code = module.code if source is None else source
        self.lines = re.split(r"\r\n|\r|\n", code)  # as libcst counts lines (not str.splitlines)
        self.suppressed = suppressed_lines(code)
        self.keep_strategies = False
        self._resolving: set[int] = set()
        self.memo: dict = {}  # what operations work out once per file (keyed by who asks)

    # -- small helpers --------------------------------------------------------------

    @property
    def positions(self):
        """Every node's position (as libcst's PositionProvider has it), computed the first time it is needed."""
        if self._positions is None:
            self._positions = _libcst_speed.positions(self.module)
        return self._positions

    @property
    def scopes(self):
        """libcst's scope analysis of the module, computed the first time it is needed."""
        if self._scopes is None:
            self._scopes = self._wrapper.resolve(ScopeProvider)
        return self._scopes

    def scopes_around(self, node: cst.CSTNode) -> tuple[Mapping, bool]:
        """Scope analysis good for the nodes of the outermost function holding ``node``, and
        whether it is of that function alone.

        Python binds a name assigned in a function in that function: every binding and every
        read of it is inside the outermost function around it, so libcst's analysis of that
        function (as a module of its own, the same node objects) ties them as its analysis
        of the whole module does. Not so for a name a ``global``/``nonlocal`` statement
        declares, nor for what the module itself binds: a function with such a statement,
        and a node outside every function, get the whole module's analysis (:attr:`scopes`);
        so does every node without the import table's shortcuts, or once that analysis ran,
        and every node of a file whose imports change how libcst reads a function's own names
        (:meth:`_imports_shape_scopes`).
        """
        if self.table is None or self._scopes is not None or self._imports_shape_scopes():
            return self.scopes, False
        outermost, up = None, self.parent(node)
        while up is not None:
            if isinstance(up, cst.FunctionDef):
                outermost = up
            up = self.parent(up)
        if outermost is None:
            return self.scopes, False
        found = self._function_scopes.get(outermost)
        if found is None:
            declares = _Declares()
            outermost.visit(declares)
            if declares.found:
                return self.scopes, False
            found = MetadataWrapper(cst.Module(body=[outermost]), unsafe_skip_copy=True).resolve(ScopeProvider)
            self._function_scopes[outermost] = found
        return found, True

    def _imports_shape_scopes(self) -> bool:
        """Whether the file imports what libcst's scope analysis reads a function's own names
        through: ``import a.b`` (a read of ``a.b`` is tied to it, even where a local ``a``
        is bound), or ``typing``/``typing_extensions`` (strings in ``cast``/``TypeVar``/
        ``NewType`` calls and ``typing`` subscripts are read as type hints, ``Literal``'s are not)."""
        if self._shaping is None:
            self._shaping = False
            for node in self.imports:
                if isinstance(node, cst.ImportFrom):
                    modules = [get_full_name_for_node(node.module) or ""] if node.module is not None and not node.relative else []
                else:
                    if any(alias.asname is None and "." in alias.evaluated_name for alias in node.names):
                        self._shaping = True
                        break
                    modules = [alias.evaluated_name for alias in node.names]
                if any(m.split(".")[0] in ("typing", "typing_extensions") for m in modules):
                    self._shaping = True
                    break
        return self._shaping

    _shaping: bool | None = None

    @property
    def names_set_aside(self) -> frozenset[str]:
        if callable(self._names_set_aside):
            self._names_set_aside = frozenset(self._names_set_aside())
        return self._names_set_aside

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def line_col(self, node: cst.CSTNode) -> tuple[int, int]:
        pos = self.positions[node].start
        return pos.line, pos.column + 1

    def _rows(self, node: cst.CSTNode) -> range:
        """Indexes into ``lines`` of the source lines ``node`` spans (a node of this module)."""
        pos = self.positions[node]
        return range(pos.start.line - 1, min(pos.end.line, len(self.lines)))

    def words_of(self, nodes) -> set[str]:
        """Every identifier-like word in the source lines of ``nodes`` (a superset of their names)."""
        rows = {i for node in nodes for i in self._rows(node)}
        return {word for i in rows for word in WORD.findall(self.lines[i])}

    def has_comment(self, node: cst.CSTNode) -> bool:
        """Whether the source text of ``node`` may hold a comment (a ``#`` anywhere in its lines)."""
        return any("#" in self.lines[i] for i in self._rows(node))

    def static_reads(self, name: str) -> list[cst.Name] | None:
        """The Names libcst's scope analysis may count as reads of ``name`` (with a table):
        every Name of that value but an attribute's or keyword's own name and those in
        import statements (``from name import x``). For an import bound nowhere else in
        the file, these are its reads. None when unsure (a string that may be a type hint
        mentions it, or a match pattern's keyword)."""
        if name in self.hint_words:
            return None
        reads = []
        for node in self.names_by_value.get(name, ()):
            parent = self.parent(node)
            if (isinstance(parent, cst.Attribute) and parent.attr is node) or (isinstance(parent, cst.Arg) and parent.keyword is node):
                continue
            if isinstance(parent, cst.MatchKeywordElement):
                return None
            if self._in_import(node):
                continue
            reads.append(node)
        return reads

    def _in_import(self, node: cst.CSTNode) -> bool:
        cur = self.parent(node)
        while cur is not None and not isinstance(cur, (cst.Import, cst.ImportFrom, cst.BaseStatement)):
            cur = self.parent(cur)
        return isinstance(cur, (cst.Import, cst.ImportFrom))

    def _scope_chain(self, node: cst.CSTNode) -> list[cst.CSTNode] | None:
        """The nodes whose scopes hold ``node``, innermost first, the module last: a
        function, lambda or class counts only for what is in its body. None when ``node``
        is in the header of one (decorators, defaults, annotations, bases) or in a
        comprehension: where libcst's scope analysis puts those is its own business."""
        chain: list[cst.CSTNode] = []
        child, cur = node, self.parent(node)
        while cur is not None:
            if isinstance(cur, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                if child is not cur.body:
                    return None
                chain.append(cur)
            elif isinstance(cur, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
                return None
            child, cur = cur, self.parent(cur)
        chain.append(self.module)
        return chain

    def _sole_binding(self, name: str) -> tuple[cst.Name | None, list[cst.CSTNode] | None] | None:
        """For a name the file binds once, not by an import (see ImportTable.bound_once): its
        ``name = …`` target if that is the binding (else None), and that target's scope
        chain. None when the scope analysis must answer."""
        if self.table is None or name not in self.table.bound_once or name in self.hint_words:
            return None
        target = self.bound_targets.get(name)
        if target is None:
            return None, None
        chain = self._scope_chain(target)
        if chain is None or not isinstance(chain[0], (cst.FunctionDef, cst.Module)):
            return None
        return target, chain

    def static_references(self, target: cst.Name) -> list[cst.Name] | None:
        """The reads libcst's scope analysis ties to ``target`` (``name = …``, the file's only
        binding of the name), found without it: every read of the name in a scope nested in
        the binding's (a function or the module), and those in the binding's own scope that
        come after its statement. None when unsure (see :meth:`_scope_chain`)."""
        found = self._sole_binding(target.value)
        if found is None or found[0] is not target:
            return None
        reads = self.static_reads(target.value)
        if reads is None:
            return None
        owner = found[1][0]
        assign = self.parent(self.parent(target))  # AssignTarget, then the Assign
        end = self.positions[assign].end
        end = (end.line, end.column)
        references = []
        for node in reads:
            if node is target:
                continue
            chain = self._scope_chain(node)
            if chain is None:
                return None
            if owner not in chain:
                continue  # out of the binding's sight: no read of it
            start = self.positions[node].start
            if chain[0] is not owner or (start.line, start.column) >= end:
                references.append(node)
        return references

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        cur = node
        while cur is not None and not isinstance(cur, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            cur = self.parent(cur)
        return cur

    # -- name resolution ------------------------------------------------------------

    def resolve(self, node: cst.CSTNode, *, instances: bool = True) -> str | None:
        qual, _ = self.resolve_ex(node, instances=instances)
        return qual

    def resolve_ex(self, node: cst.CSTNode, *, instances: bool = True) -> tuple[str | None, bool]:
        """The fully-qualified name ``node`` stands for, and whether an alias was followed."""
        if isinstance(node, cst.Attribute):
            base, via = self.resolve_ex(node.value, instances=instances)
            # Normalized whole: `tf.compat.v1` + `.keras.layers` is a spelling of `tensorflow.keras.layers`.
            return (normalize(f"{base}.{node.attr.value}"), via) if base else (None, False)
        if isinstance(node, cst.Call) and instances:
            func = self.resolve(node.func)  # `make().method()` is typed too when `method` has `returns`
            if func in self.index.returns:
                return self.index.returns[func], False
            return None, False
        if not isinstance(node, cst.Name) or id(node) in self._resolving:
            return None, False
        if self.table is not None:  # a plain import, bound once: nothing else can be meant
            qual = self.table.quals.get(node.value)
            if qual is not None:
                return normalize(qual), False
            qual = self.table.aliases.get(node.value)
            if qual is not None:  # `FLAGS = tf.flags.FLAGS`, bound once at module level
                return normalize(qual), True
            if self.table.complete or node.value not in self.table.relevant:  # nothing matched can be meant
                return None, False
            sole = self._sole_binding(node.value)
            chain = self._scope_chain(node) if sole is not None else None
            if chain is not None:  # the file's only binding of the name, seen from here or not at all
                target, scopes = sole
                if target is None or scopes[0] not in chain:
                    return None, False
                return self._resolve_assignment(node, target, instances)
        scope = self.scopes.get(node)
        if scope is None:
            return None, False
        names = {q.name for q in scope.get_qualified_names_for(node) if q.source is QualifiedNameSource.IMPORT}
        if len(names) == 1:
            return normalize(names.pop()), False
        assignments = list(scope[node.value]) if node.value in scope else []
        if len(assignments) != 1 or not isinstance(assignments[0], Assignment):
            return None, False
        return self._resolve_assignment(node, assignments[0].node, instances)

    def _resolve_assignment(self, node: cst.Name, target: cst.CSTNode, instances: bool) -> tuple[str | None, bool]:
        """What ``node`` stands for when ``target`` is its only binding."""
        if instances and target in self.instances:
            return self.instances[target], False
        if target in self.aliases:
            self._resolving.add(id(node))
            try:
                qual, _ = self.resolve_ex(self.aliases[target], instances=False)
            finally:
                self._resolving.discard(id(node))
            return qual, qual is not None
        return None, False

    # -- planning ---------------------------------------------------------------------

    def run(self) -> Plan:
        self.module.visit(_Collector(self))
        self._plan_everything()
        if self._asks_for_strategies() and self._rewrites_strategies():
            # The file asks migrate.runtime for the current strategy or replica context
            # (`get_strategy()`, `ctx.merge_call`): its strategies must exist there as
            # objects for the answers to be true, so none is rewritten away.
            self.keep_strategies = True
            self.plan, self.instances, self.use_actions = Plan(), {}, {}
            self._plan_everything()
        self.plan.findings.sort()
        return self.plan

    def _plan_everything(self) -> None:
        self._decide_bindings()
        self._decide_chains()
        assigner = _Assigner(self)
        self.module.visit(assigner)
        assigner.plan_blocks()
        self._drop_feeders()

    def planning_work(self) -> set[cst.CSTNode] | None:
        """The nodes the planning walk (:class:`_Assigner`) visits: with the import table, the
        ancestors of what it can plan (a name that may stand for a matched API, a string a rule
        may match, a tracked object's use, a statement the plan replaces); None: every node.
        Any other name resolves to nothing (see :meth:`resolve_ex`), so nothing else is planned."""
        table = self.table
        if table is None:
            return None
        starts: list[cst.CSTNode] = [*self.strings, *self.use_actions, *self.plan.statements]
        for value in {*table.quals, *table.aliases, *table.relevant}:
            starts += self.names_by_value.get(value, ())
        work: set[cst.CSTNode] = set()
        parents = self.parents
        for node in starts:
            while node is not None and node not in work:
                work.add(node)
                node = parents.get(node)
        return work

    def rewritten_reads(self) -> set[cst.Name]:
        """The names read at the root of an API the plan rewrites (``dist`` of a converted
        ``dist.MirroredStrategy()``): the converted code no longer reads them there. Known once
        every reference and call is planned, which is when structural rewrites are examined."""
        roots = set()
        for action in (*self.plan.refs.values(), *self.plan.calls.values()):
            op = ops.REGISTRY[action.rule.operation]
            if op.marks or not op.static:
                continue  # reported, or kept with its object: the name is still read
            node = action.match
            while isinstance(node, cst.Attribute):
                node = node.value
            if isinstance(node, cst.Name):
                roots.add(node)
        return roots

    def _drop_feeders(self) -> None:
        """`cpu = tf.config.list_physical_devices("CPU")[0]`, read only by set-up calls that are removed, goes with them."""
        removed = {s for s, a in self.plan.statements.items() if ops.REGISTRY[a.rule.operation].removes_statement}
        queries = [a for a in self.plan.refs.values() if ops.REGISTRY[a.rule.operation].goes_with_readers]
        for action in queries if removed else []:
            stmt = self.statement_of(action.match)
            small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)):
                continue
            target = small.targets[0].target
            scope = self.scopes.get(target)
            bound = list(scope.assignments[target.value]) if scope is not None else []
            if len(bound) != 1 or not bound[0].references or not all(self.statement_of(r.node) in removed for r in bound[0].references):
                continue
            self.plan.statements[stmt] = Action(action.rule, stmt, action.match, action.api, status="converted")
            self.plan.markers.pop(stmt, None)
            where = self.line_col(action.match)
            self.plan.findings = [f for f in self.plan.findings if (f.rule, f.line, f.col) != (action.rule.id, *where)]

    def _asks_for_strategies(self) -> bool:
        return any(a.rule.params.get("keeps_strategies") for a in self.plan.refs.values())

    def _rewrites_strategies(self) -> bool:
        return any(ops.REGISTRY[a.rule.operation].target == "statement" for a in self.plan.statements.values())

    def _decide_bindings(self) -> None:
        """Track objects made by rules with ``returns``; keep them only if every use is static."""
        for target, call, holder in self.producers:
            qual = self.resolve(call.func)  # `ds2 = ds.batch(8)` makes a dataset too when `ds` is one
            kind = self.index.returns.get(qual or "")
            if kind is None:
                continue
            rule = self.index.exact[qual]
            op = ops.REGISTRY[rule.operation]
            if op.target == "statement" and (self.keep_strategies or not op.accepts(call.func, self.parent, rule.params)):
                continue
            if not ops.alone_on_its_line(holder, self.parent):
                continue  # the binding's line holds other statements: it cannot go away whole
            if self.suppresses(rule, call.func):
                continue  # kept as an object: what the rule would have removed stays
            uses = self._static_uses(target, kind) if target is not None else {}
            if target is not None:
                self.instances[target] = kind  # known by its type whether it goes away or stays
            if uses is None:
                continue  # escaped: a fallback rule points the construction at migrate.runtime
            if not uses and op.target != "statement":
                continue  # nothing uses it: nothing shows it can go, so its construction is converted where it stands
            self.use_actions.update(uses)
            stmt = self.parent(holder)
            self.plan.statements[stmt] = Action(rule, stmt, call.func, qual or "", status=rule.status)

    def _decide_chains(self) -> None:
        """``tf.distribute.get_replica_context().all_reduce(...)``: the call is the receiver."""
        for call in self.chained:
            kind = self.index.returns.get(self.resolve(call.func) or "")
            found = self._use_rule(call, kind) if kind else None
            if found is None:
                continue
            node, rule, api = found
            op = ops.REGISTRY[rule.operation]
            if op.marks or op.accepts(node, self.parent, rule.params):
                self.use_actions[node] = (rule, api)

    def _static_uses(self, target: cst.Name, kind: str) -> dict[cst.CSTNode, tuple[Rule, str]] | None:
        reads = self.static_references(target)
        if reads is None:
            scope = self.scopes.get(target)
            if scope is None:
                return None
            assignments = [a for a in scope.assignments[target.value]]
            if len(assignments) != 1 or not isinstance(assignments[0], Assignment) or assignments[0].node is not target:
                return None
            reads = [access.node for access in assignments[0].references]
        else:
            assignments = None  # the file's only binding: every read sees that one alone
        uses: dict[cst.CSTNode, tuple[Rule, str]] = {}
        static = True
        for read in reads:
            found = self._use_rule(read, kind)
            if found is None:
                static = False
                continue
            node, rule, api = found
            op = ops.REGISTRY[rule.operation]
            if op.marks or (not op.static and op.accepts(node, self.parent, rule.params)):
                self.use_actions[node] = (rule, api)  # flagged or kept whether or not the object escapes
            if not op.static or not op.accepts(node, self.parent, rule.params) or self.suppresses(rule, node):
                static = False  # a use left as it is needs the object
            uses[node] = (rule, api)
        if not static:
            return None
        # A name bound again elsewhere (a global statement, a nested scope) is not ours alone.
        for access in assignments[0].references if assignments is not None else ():
            if len([a for a in access.scope[target.value]]) != 1:
                return None
        return uses

    def _use_rule(self, node: cst.CSTNode, kind: str) -> tuple[cst.CSTNode, Rule, str] | None:
        """The deepest attribute chain above ``node`` that a static rule handles where it stands."""
        best = None
        cur, qual = node, kind
        while True:
            parent = self.parent(cur)
            if not (isinstance(parent, cst.Attribute) and parent.value is cur):
                break
            cur, qual = parent, f"{qual}.{parent.attr.value}"
            rule = self.index.exact.get(qual)
            if rule is not None:
                best = (cur, rule, qual)
        return best

    def suppresses(self, rule: Rule, node: cst.CSTNode) -> bool:
        """A ``# migrate: ignore`` comment on the line where ``node`` starts silences ``rule``."""
        line, _ = self.line_col(node)
        return is_suppressed(self.suppressed, line, rule.id)

    def add(self, action: Action) -> bool:
        """Put ``action`` in the plan unless a comment silences it; say whether it went in."""
        op = ops.REGISTRY[action.rule.operation]
        if self.suppresses(action.rule, action.match):
            return False
        if op.target == "call":
            self.plan.calls[action.node] = action
            if op.removes_statement:
                stmt = self.statement_of(action.node)
                self.plan.statements[stmt] = action
        elif op.target == "with_item":
            self.plan.scope_items[action.node] = action
        elif op.target == "block":
            self.plan.blocks[action.node] = action
        else:
            self.plan.refs[action.node] = action
        if op.marks:
            stmt = self.statement_of(action.match)
            message = op.mark(action.rule.params, action.api)
            self.plan.markers.setdefault(stmt, []).append(f"# migrate: {action.rule.id} {message}")
        return True

    def refuse(self, rule: Rule, node: cst.CSTNode, api: str, why: str | None = None) -> None:
        """``rule`` matched ``node`` but cannot rewrite it where it stands, and no other rule can: a person must."""
        if self.suppresses(rule, node):
            return
        reason = one_line(f"not converted: {why or ops.REGISTRY[rule.operation].refusal(rule.params)}")
        self.plan.markers.setdefault(self.statement_of(node), []).append(f"# migrate: {rule.id} {reason}")
        self.finding(Action(rule, node, node, api), reason, "manual")

    def finding(self, action: Action, message: str | None = None, status: str | None = None) -> None:
        line, col = self.line_col(action.match)
        self.plan.findings.append(
            Finding(
                self.path,
                line,
                col,
                action.rule.id,
                status or action.status or action.rule.status,
                one_line(message or action.rule.summary),
                action.api,
                action.rule.maps_to,
            )
        )


class _Declares(cst.CSTVisitor):
    """Whether a tree holds a ``global`` or ``nonlocal`` statement."""

    def __init__(self) -> None:
        self.found = False

    def visit_Global(self, node: cst.Global) -> None:
        self.found = True

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.found = True


class _Collector(cst.CSTVisitor):
    """First pass: aliases, objects made by tracked constructors, and the calls used as receivers."""

    def __init__(self, planner: Planner) -> None:
        self.p = planner
        self._stack: list[cst.CSTNode] = []
        self._hints: list[cst.CSTNode] = []  # annotations, subscripts and cast/TypeVar/NewType calls open here
        self._visits, self._leaves = _libcst_speed.methods_of(type(self))

    # Parents are recorded on this walk: libcst's ParentNodeProvider would take a walk of its own.
    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._stack:
            self.p.parents[node] = self._stack[-1]
        self._stack.append(node)
        if self.p.table is not None:
            kind = type(node)
            if kind is cst.Name:
                self.p.names_by_value.setdefault(node.value, []).append(node)
            elif kind is cst.Annotation or kind is cst.Subscript or (kind is cst.Call and _hint_call(node)):
                self._hints.append(node)
            elif kind is cst.SimpleString or kind is cst.FormattedStringText:
                if self._hints:
                    self.p.hint_words.update(WORD.findall(node.value))
                if kind is cst.SimpleString and _may_match_string(node, self.p.index.strings):
                    self.p.strings.append(node)
        name = self._visits.get(type(node))  # CSTVisitor.on_visit, looking up only methods it has
        return name is None or getattr(self, name)(node) is not False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        name = self._leaves.get(type(original_node))
        if name is not None:
            getattr(self, name)(original_node)
        self._stack.pop()
        if self._hints and self._hints[-1] is original_node:
            self._hints.pop()

    def visit_Import(self, node: cst.Import) -> None:
        self.p.imports.append(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.p.imports.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        target = node.targets[0].target
        if self.p.table is not None:
            self.p.bound_targets[target.value] = target
        if isinstance(node.value, (cst.Name, cst.Attribute)):
            self.p.aliases[target] = node.value
        elif isinstance(node.value, cst.Call):
            self.p.producers.append((target, node.value, node))

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, cst.Call):
            self.p.producers.append((None, node.value, node))

    def visit_Call(self, node: cst.Call) -> None:
        parent = self.p.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            self.p.chained.append(node)


class _Assigner(cst.CSTVisitor):
    """Second pass: give each reference, call, scope and statement its action."""

    def __init__(self, planner: Planner) -> None:
        self.p = planner
        self.dropped: set[cst.Arg] = set()
        self.blocks: list[tuple] = []  # (rule, operation, node, api) of each structural rewrite found
        self.work = planner.planning_work()

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.work is not None and node not in self.work:
            return False  # nothing below can be planned
        name = _ASSIGNER_VISITS.get(type(node))  # CSTVisitor.on_visit, looking up only methods it has
        return name is None or getattr(self, name)(node) is not False

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        action = self.p.plan.statements.get(node)
        if action is not None and not ops.REGISTRY[action.rule.operation].removes_statement:
            self.p.finding(action)
            return False  # the statement is replaced whole
        return True

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        strings = self.p.index.strings
        if not _may_match_string(node, strings):
            return
        rule = strings.get(_string_value(node))
        if rule is not None:
            action = Action(rule, node, node, repr(_string_value(node)), status=rule.status)
            self.p.add(action)
            self.p.finding(action)

    def visit_Name(self, node: cst.Name) -> bool:
        return self._reference(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if not self._reference(node):
            use = self.p.use_actions.get(node)
            if use is not None and not ops.REGISTRY[use[0].operation].static:
                self._visit(node.value)  # the use stays, so its receiver does: what is in it is converted
            return False
        self._visit(node.value)  # the attribute's own name is not a reference
        return False

    def _visit(self, node: cst.CSTNode) -> None:
        if self.work is None or node in self.work:
            node.visit(self)

    def _reference(self, node: cst.Name | cst.Attribute) -> bool:
        """Plan ``node``; False when it is rewritten whole (its children need nothing)."""
        p = self.p
        use = p.use_actions.get(node)
        if use is not None:
            rule, api = use
            self._plan(rule, node, api, "")
            return False
        parent = p.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return True  # the outermost attribute decides
        if isinstance(node, cst.Name) and _is_binding_name(node, parent):
            return True
        qual, via_alias = p.resolve_ex(node, instances=False)
        if qual is None or via_alias:
            return True
        use, marking = p.index.use_of(qual)
        if use == "nothing":
            return True
        if use == "mark":  # decided by the name alone, as the pruner decides it
            self._plan(marking, node, qual, "")
            return False
        refused = None
        for rule, suffix in p.index.candidates(qual):
            op = ops.REGISTRY[rule.operation]
            if refused is not None and op.fallback:
                break  # the rule that matched says better why the use stays as it is
            if op.target == "block":
                return self._plan_block(rule, op, node, qual)
            # A statement rule is reached only when the object escaped: a fallback rule takes it.
            if op.target not in ("statement", "with_item") and op.accepts(node, p.parent, rule.params):
                self._plan(rule, node, qual, suffix)
                return False
            refused = refused or rule
        if refused is not None:
            p.refuse(refused, node, qual)
        return True

    def _plan(self, rule: Rule, node: cst.CSTNode, api: str, suffix: str) -> None:
        op = ops.REGISTRY[rule.operation]
        target = self.p.parent(node) if op.target in ("call", "with_item", "decorator") else node
        if op.target == "decorator" and isinstance(target, cst.Call):
            target = self.p.parent(target)  # `@tf.function(jit_compile=True)`: the Decorator holding the call
        if op.target == "with_item":
            target = self.p.parent(target)  # the WithItem holding `<strategy>.scope()`
        action = Action(rule, target, node, api, suffix, status=rule.status)
        if self.p.add(action) and op.target in ("call", "decorator"):
            self.dropped.update(op.dropped(target, rule.params))
        if not op.removes_statement:  # (the rewrite says what went, where it goes)
            self.p.finding(action, op.describe(rule.params, api))

    def _plan_block(self, rule: Rule, op, node: cst.CSTNode, api: str) -> bool:
        """A structural rewrite of the statements around ``node`` (a tape and its gradient): examined
        once the walk is over (:meth:`plan_blocks`), when what the plan rewrites in them is known."""
        self.blocks.append((rule, op, node, api))
        return False

    def plan_blocks(self) -> None:
        """Each structural rewrite found in the walk, or a refusal naming why not."""
        for rule, op, node, api in self.blocks:
            found = op.examine(self.p, node, rule.params)
            if isinstance(found, str):
                self.p.refuse(rule, node, api, found)
                continue
            if self.p.suppresses(rule, node):
                continue
            for statement in op.statements(found):
                self.p.add(Action(rule, statement, node, api, status=rule.status, detail=found))
            self.p.finding(Action(rule, node, node, api, status=rule.status))

    def visit_Arg(self, node: cst.Arg) -> bool:
        return node not in self.dropped  # left out of the rewrite: nothing in it is converted


def _may_match_string(node: cst.SimpleString, strings: Mapping[str, Rule]) -> bool:
    """Whether the literal ``node`` may be one a rule matches. Without an escape, a literal's
    value is its text between the quotes: one that does not hold a matched string cannot be one
    (and is not evaluated)."""
    return "\\" in node.value or any(literal in node.value for literal in strings)


def _hint_call(node: cst.Call) -> bool:
    """``cast(...)``, ``TypeVar(...)``, ``NewType(...)``: libcst's scope analysis may read their strings as type hints."""
    func = node.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name in TYPE_HINT_CALLS


def _string_value(node: cst.SimpleString) -> str:
    try:
        return node.evaluated_value if isinstance(node.evaluated_value, str) else ""
    except Exception:  # noqa: BLE001 - odd literals (bytes, bad escapes) simply match nothing
        return ""


def _is_binding_name(node: cst.Name, parent: cst.CSTNode | None) -> bool:
    """Names that introduce a binding or a keyword rather than read one."""
    if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Param, cst.Arg, cst.Global, cst.Nonlocal, cst.ImportAlias, cst.AsName)):
        if isinstance(parent, cst.Arg):
            return parent.keyword is node
        return parent.name is node if isinstance(parent, cst.Param) else True  # (a default, `f(x=y)`'s `y`, is read)
    if isinstance(parent, cst.AssignTarget) or (isinstance(parent, (cst.AnnAssign, cst.AugAssign)) and parent.target is node):
        return True
    return False


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
                if name not in words or name in self.p.reads_aside:
                    continue  # (a statement set aside reads it: see migrate.engine.prune)
                # The file's only binding of the name: its reads are known without scope analysis.
                reads = self.p.static_reads(bound) if table is not None and bound in table.sole_imports else None
                if reads is None:
                    scope = self.p.scopes.get(node)
                    if scope is None:
                        continue
                    reads = [access.node for assignment in (scope.assignments[bound] if bound in scope.assignments else ())
                             if getattr(assignment, "node", None) is node for access in assignment.references]
                if not reads or not all(self._inside_replaced(read) for read in reads):
                    continue
                if self.known_unused is not None:
                    # Every read was replaced; unless a replacement reads the name again (or
                    # `__all__` may export it), nothing reads it now.
                    if (name in self.new_words and not self.p.exports and new is not None and bound == name and table is not None
                            and bound in table.sole_imports):
                        if reread is None:
                            reread = _attribute_objects(new, {w for w in self.new_words if w in table.sole_imports})
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
            spelled = Counter(_import_key(node, alias) for node in self.p.imports for alias in _aliases(node))
            if any(spelled[_import_key(n, a)] > 1 for a, n in self.known_unused.items()):
                self.known_unused = None

    def _inside_replaced(self, node: cst.CSTNode) -> bool:
        cur = node
        while cur is not None:
            if cur in self.replaced:
                return True
            cur = self.p.parent(cur)
        return False

    def _add_imports(self, rule: Rule, new) -> None:
        used, reads = _names_and_words(new)
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

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        action = self.plan.refs.get(original)
        return self._apply(action, original, updated) if action else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        action = self.plan.refs.get(original)
        return self._apply(action, original, updated) if action else updated

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString):
        action = self.plan.refs.get(original)
        return self._apply(action, original, updated) if action else updated

    def leave_Decorator(self, original: cst.Decorator, updated: cst.Decorator):
        action = self.plan.refs.get(original)
        return self._apply(action, original, updated) if action else updated

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
        for old in original.items:
            if old in self.plan.scope_items:
                self._removed(old)
        if keep:
            keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(items=keep)
        self.unwrap[id(updated)] = updated
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
        return updated.with_changes(leading_lines=[*updated.leading_lines, *(cst.EmptyLine(comment=cst.Comment(c)) for c in extra)])

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
        if not any(id(s) in self.unwrap or id(s) in self.removed for s in body):
            return body, footer
        out: list[cst.BaseStatement] = []
        carry: list[cst.EmptyLine] = []
        for stmt in body:
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
_ASSIGNER_VISITS, _ = _libcst_speed.methods_of(_Assigner)


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


class _NamesAndWords(cst.CSTVisitor):
    """See :func:`_names_and_words` (one class for every call: a class made per call costs more than its walk)."""

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


class _AttributeObjects(cst.CSTVisitor):
    """See :func:`_attribute_objects`."""

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


def _attribute_objects(module: cst.Module, names: set[str]) -> set[str]:
    """Which of ``names`` ``module`` reads as the object of an attribute (``tf`` of ``tf.x``)."""
    if not names:
        return set()
    visitor = _AttributeObjects(names)
    module.visit(visitor)
    return visitor.found


def _names_and_words(node) -> tuple[set[str], set[str]]:
    """The names in ``node`` (a node or a FlattenSentinel); and the names it may read (not
    the ``b`` of ``a.b``, nor keywords) with the words of its strings."""
    visitor = _NamesAndWords()
    for n in node.nodes if isinstance(node, cst.FlattenSentinel) else [node]:
        n.visit(visitor)
    return visitor.names, visitor.reads


def _aliases(node: cst.Import | cst.ImportFrom) -> list[cst.ImportAlias]:
    return [] if isinstance(node.names, cst.ImportStar) else list(node.names)


def _import_key(node: cst.Import | cst.ImportFrom, alias: cst.ImportAlias) -> tuple:
    """What a RemoveImportsVisitor request for ``alias`` names: (module, object, alias)."""
    if isinstance(node, cst.Import):
        return (alias.evaluated_name, None, alias.evaluated_alias)
    module = get_full_name_for_node(node.module) if node.module is not None else None
    return ("." * len(node.relative) + (module or ""), alias.evaluated_name, alias.evaluated_alias)


class _FreshTree:
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


class _AddImports(_FreshTree, AddImportsVisitor):
    """AddImportsVisitor reading only what it acts on: the imports at the top of the module.

    It finds the imports before the first other statement, extends those ``from``
    imports and inserts new ones after them; nothing below the module's top-level
    statements matters to it, so its two passes stop there instead of walking every
    expression of the module.
    """

    def visit_Module(self, node: cst.Module) -> None:
        # Its gatherer reads the imports before the first other statement (after a docstring
        # or `__strict__` line): it is given just those, not the module to walk whole.
        body = list(node.body)
        start = 1 if body and isinstance(body[0], cst.SimpleStatementLine) and not _is_import_line(body[0]) else 0
        end = next((i for i in range(start, len(body)) if not _is_import_line(body[i])), len(body))
        super().visit_Module(node.with_changes(body=body[:end]))

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.ImportFrom):
            super().on_visit(node)
            return False  # its leave_ImportFrom rebuilds the names; nothing below calls anything
        if isinstance(node, cst.Module) or (isinstance(node, cst.SimpleStatementLine) and _is_import_line(node)):
            return super().on_visit(node)
        return False


class _RemoveKnownUnused(_FreshTree, RemoveImportsVisitor):
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
        if isinstance(node, cst.Module) or _is_import_line(node):
            return super().on_visit(node)
        return False


def _top_level_aliases(module: cst.Module) -> set[cst.ImportAlias]:
    return {alias for statement in module.body if _is_import_line(statement) for small in statement.body
            if isinstance(small, (cst.Import, cst.ImportFrom)) for alias in _aliases(small)}


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)


class MigrateCommand(_FreshTree, CodemodCommand):
    """The whole conversion of one module, as a libcst codemod command."""

    DESCRIPTION = "Convert tf.distribute training code to MindSpore data parallelism."
    METADATA_DEPENDENCIES = ()  # positions and scopes: on demand (Planner.positions, Planner.scopes)

    def __init__(self, context: CodemodContext, index: RuleIndex, path: str = "<string>", pruned=None, table=None,
                 exports: bool = True, shortcuts: bool = True, aliases: Mapping[str, str] | None = None,
                 facts: Facts | LazyFacts | None = None) -> None:
        super().__init__(context)
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
        return _blank_line_after_docstring(tree, _no_leading_blank_lines(tree, new))

    def _instantiate_and_run(self, transform, tree: cst.Module) -> cst.Module:
        if (transform is RemoveImportsVisitor and self.shortcuts and self.known_unused
                and set(self.known_unused) <= _top_level_aliases(tree)):
            return _RemoveKnownUnused(self.context, self.known_unused).transform_module(tree)
        return super()._instantiate_and_run(_AddImports if transform is AddImportsVisitor else transform, tree)

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        if not self.aliases:
            return self._transform(tree)
        with ops.import_aliases(self.aliases):
            return self._transform(tree)

    def _transform(self, tree: cst.Module) -> cst.Module:
        aside = frozenset()
        if self.pruned is not None:
            aside = lambda: self.pruned.names  # noqa: E731 - only a tape's new names need them
        planner = Planner(tree, self.context.wrapper, self.index, self.path, self.facts, aside, self.table, self.source)
        if self.pruned is not None:
            planner.reads_aside = frozenset(self.pruned.reads)
            planner.original_line = self.pruned.original_line
        planner.exports = self.exports
        plan = planner.run()
        self.positions = planner._positions  # (when the planner made them: the final code copies what did not change)
        if not (plan.refs or plan.calls or plan.scope_items or plan.statements or plan.blocks or plan.markers):
            self.findings = plan.findings
            return tree
        rewriter = Rewriter(planner, self.context, self.aliases)
        new = tree.visit(rewriter)
        rewriter.schedule_unused_imports(new)
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


def mentions_any(code: str, index: RuleIndex) -> bool:
    """Cheap pre-filter: a file that cannot match any rule needs no parse and no scope analysis."""
    return index.may_match(code)

