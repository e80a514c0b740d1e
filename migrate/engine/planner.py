"""The plan: which rule rewrites which node, decided on the original tree (the first half of
:mod:`migrate.engine.codemod`). Its two walks are in :mod:`migrate.engine.passes`."""

from __future__ import annotations

import re
from collections.abc import Mapping

from migrate.engine import _libcst_speed  # (first: it imports libcst.matchers, which libcst.codemod needs)

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import Assignment, MetadataWrapper, QualifiedNameSource, ScopeProvider

from migrate import ops
from migrate.engine.facts import NO_FACTS, Facts, LazyFacts
from migrate.engine.findings import Finding, one_line
from migrate.engine.index import WORD, RuleIndex, normalize
from migrate.engine.passes import Assigner, Collector, Declares
from migrate.engine.plan import Action, Plan
from migrate.engine.suppression import is_suppressed, suppressed_lines
from migrate.engine.tfvalues import NO_KEPT_CALLS
from migrate.ops.tails import owned_names, parse_tail
from migrate.rules import Rule


def _import_root(node) -> str:
    """The first name of the module an import statement imports (``tensorflow`` of
    ``from tensorflow.keras import layers``); "" for a relative import."""
    if isinstance(node, cst.ImportFrom):
        if node.relative or node.module is None:
            return ""
        module = node.module
    else:
        module = node.names[0].name
    while isinstance(module, cst.Attribute):
        module = module.value
    return module.value if isinstance(module, cst.Name) else ""


class _Definitions(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.FunctionDef] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.found.append(node)


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
        # Attributes ending a chain a rule matches on any receiver (migrate.ops.tails):
        # attribute -> (rule, api, the node replaced, the receiver).
        self.tails: dict[cst.Attribute, tuple] = {}
        self.bound_targets: dict[str, cst.Name] = {}  # with a table: `name = …` targets by name
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}  # filled by the first pass (Collector)
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
        self.kept = NO_KEPT_CALLS  # the calls that stay TensorFlow (migrate.engine.tfvalues)
        self.calls: list[cst.Call] = []  # every call, when some stay TensorFlow (the first walk)
        self.kept_args: set[cst.Arg] = set()  # arguments of calls that stay TensorFlow: nothing in them converts
        self.kept_refusals: dict[cst.CSTNode, str] = {}  # callee of a call a rule would convert that stays -> why
        # Where calls start (as KeptCalls keys them) that a rule matched but refused: they stay TensorFlow.
        self.refused_calls: set[tuple[int, int]] = set()
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
            declares = Declares()
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

    @property
    def imports_tensorflow(self) -> bool:
        """Whether the file imports a module a rule matches (TensorFlow, Keras, Horovod): where
        a chain matched on any receiver (migrate.ops.tails) may be asked of TF's tensors."""
        found = self.memo.get("imports_tensorflow")
        if found is None:
            roots = self.index.roots
            found = self.memo["imports_tensorflow"] = any(
                _import_root(node) in roots for node in self.imports)
        return found

    def defines_any(self, tails) -> bool:
        """Whether the file defines a function or method named as a name of ``tails`` its own
        objects may answer (``def get_shape(self)``, see ``owned_names``)."""
        defined = self.memo.get("defined_functions")
        if defined is None:  # (the pruner keeps such definitions: pruned and whole agree)
            definitions = _Definitions()
            self.module.visit(definitions)
            defined = self.memo["defined_functions"] = {node.name.value for node in definitions.found}
        return not defined.isdisjoint(owned_names(map(parse_tail, tails)))

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
        # (imports that are spellings of one API, `try: from tensorflow.keras import layers` /
        # `except ImportError: from keras import layers`, name it once)
        names = {normalize(q.name) for q in scope.get_qualified_names_for(node) if q.source is QualifiedNameSource.IMPORT}
        if len(names) == 1:
            return names.pop(), False
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
        self.module.visit(Collector(self))
        self._keep_tf_calls()
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

    def _keep_tf_calls(self) -> None:
        """The calls that stay TensorFlow keep their arguments as written; those a rule would convert
        are refused, saying why (see migrate.engine.tfvalues)."""
        if not self.kept:
            return
        here = {self.original_line(i) for i in range(1, len(self.lines) + 1)}
        if not any(line in here for line, _ in self.kept.calls):
            return  # every call that stays is in a statement set aside: nothing here to keep (no positions needed)
        for call in self.calls:
            line, col = self.line_col(call)
            if (self.original_line(line), col) not in self.kept.calls:
                continue
            self.kept_args.update(call.args)
            why = self.kept.calls[(self.original_line(line), col)]
            if why is not None:
                self.kept_refusals[call.func] = why

    def keep_arguments_of(self, func: cst.CSTNode, makes_tf_value: bool = False) -> None:
        """A call refused where it stands stays TensorFlow: so do its arguments (planned after its
        callee), unless a tracked object is used there (its uses were planned with it: converted
        they stay, for the object may be gone). Its value is a TensorFlow value when its rule
        would have made one (``makes_tf_value``): the command plans again knowing that."""
        call = self.parents.get(func)
        if not (isinstance(call, cst.Call) and call.func is func):
            return
        if makes_tf_value:
            line, col = self.line_col(call)
            self.refused_calls.add((self.original_line(line), col))
        if self.use_actions and any(self.inside(use, call) for use in self.use_actions):
            return
        self.kept_args.update(call.args)

    def inside(self, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
        while node is not None:
            if node is ancestor:
                return True
            node = self.parents.get(node)
        return False

    def inside_kept(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is in an argument of a call that stays TensorFlow."""
        return self.in_args(node, self.kept_args)

    def in_args(self, node: cst.CSTNode, args) -> bool:
        """Whether ``node`` is in one of ``args`` (call arguments), in its own statement."""
        while node is not None and not isinstance(node, cst.BaseStatement):
            if node in args:
                return True
            node = self.parents.get(node)
        return False

    def _plan_everything(self) -> None:
        self._decide_bindings()
        self._decide_chains()
        assigner = Assigner(self)
        self.module.visit(assigner)
        assigner.plan_waiting()
        assigner.plan_blocks()
        self._drop_feeders()

    def planning_work(self) -> set[cst.CSTNode] | None:
        """The nodes the planning walk (:class:`Assigner`) visits: with the import table, the
        ancestors of what it can plan (a name that may stand for a matched API, a string a rule
        may match, a tracked object's use, a statement the plan replaces); None: every node.
        Any other name resolves to nothing (see :meth:`resolve_ex`), so nothing else is planned."""
        table = self.table
        if table is None:
            return None
        starts: list[cst.CSTNode] = [*self.strings, *self.tails, *self.use_actions, *self.plan.statements]
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
        queries = [(n, a) for n, a in self.plan.refs.items() if ops.REGISTRY[a.rule.operation].goes_with_readers]
        for node, action in queries if removed else []:
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
            del self.plan.refs[node]  # the statement goes: its query is not rewritten (nor its import added)
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
            if op.marks or op.accepts_in(self, node, rule.params):
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
            if self.kept_args and self.inside_kept(read):
                static = False  # left as it is in a call that stays TensorFlow: the object must exist
                continue
            found = self._use_rule(read, kind)
            if found is None:
                static = False
                continue
            node, rule, api = found
            op = ops.REGISTRY[rule.operation]
            if op.marks or (not op.static and op.accepts_in(self, node, rule.params)):
                self.use_actions[node] = (rule, api)  # flagged or kept whether or not the object escapes
            if not op.static or not op.accepts_in(self, node, rule.params) or self.suppresses(rule, node):
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

    def absorb(self, node: cst.CSTNode, by: Rule, how: str) -> None:
        """A reference another rule reported where it stands is converted as part of `by`'s
        rewrite (``how`` says what became of it): its marker goes, and its finding says converted."""
        action = self.plan.refs.get(node)
        if action is None:
            return
        stmt = self.statement_of(action.match)
        prefix = f"# migrate: {action.rule.id} "
        kept = [m for m in self.plan.markers.get(stmt, []) if not m.startswith(prefix)]
        if kept:
            self.plan.markers[stmt] = kept
        else:
            self.plan.markers.pop(stmt, None)
        where = (action.rule.id, *self.line_col(action.match))
        self.plan.findings = [f for f in self.plan.findings if (f.rule, f.line, f.col) != where]
        self.finding(Action(action.rule, action.node, action.match, action.api, status="converted"),
                     f"with {by.id}: {how}")

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
