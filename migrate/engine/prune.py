"""Statements the planner would leave alone are set aside before libcst sees a file, and put back after.

Most of a TensorFlow file that needs conversion is code no rule rewrites: statements
that mention no relevant name, and statements whose only matches are names a flag
reports (``tf.reduce_max`` unconverted: a finding and a ``# migrate: TFU901`` comment
above it). libcst costs about ten times CPython's own parser per line, and its scope
analysis as much again, so such statements are swapped for one-line placeholders (one
per run of adjacent statements) and the codemod runs on what is left; in
tensorflow/tpu that leaves 17 % of the analysed lines to libcst, and 78 % of its
analysed files none at all (their conversion is then only the comments, put back with
the statements).

The cut is decided on CPython's syntax tree, which the runner builds anyway to check
the file. A name is *relevant* when the planner may resolve it to something a rule
matches:

- a name bound by an import of a module a rule matches (``tf``, ``keras``…);
- a name a kept statement binds (``strategy = tf.distribute…``, ``tape`` in
  ``with tf.GradientTape() as tape``), to a fixed point, so every use of a tracked
  object is seen when the planner decides whether it escapes.

A statement is set aside when it mentions no relevant word and no string a rule
matches, or when every relevant name in it is a plain top-level import bound once in
the file (or a module-level alias of one, or a ``with … as`` name) and every attribute
chain such a name starts is one whose first matching rule is a flag
(:meth:`_Pruner.flags`): then its findings and comment lines are made here, exactly as
the planner would make them. Imports, docstrings, ``global``/``nonlocal``, ``elif``
clauses and statements that share a line with another are always kept. A function
holding a ``with`` whose items are relevant (a scope to unwrap, a tape to turn into a
closure) is kept whole, as is the module when such a ``with`` sits at its top level:
those rewrites move statements. A ``with`` whose items hold only chains a flag reports
(``with tf.name_scope("x"):``) moves nothing and keeps nothing whole.

A placeholder lists the unmatched imports its statements read
(``__migrate_pruned_3__(np)``) so RemoveImportsVisitor sees them; the matched ones they
read are handed to the planner, which then never asks for their removal. After
conversion each placeholder line must appear once, at its original indentation; then
the original lines go back byte for byte, with the flags' comment lines. Anything else
and the caller converts the whole file instead: pruning changes how fast a file
converts, never what it converts to (the test suite checks both ways give the same
bytes and findings on every fixture and on generated programs; locally, on every file
of three TensorFlow repositories).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field

from migrate import ops
from migrate.engine.aliases import Bindings, import_binding
from migrate.engine.facts import LazyFacts, find_facts
from migrate.engine.tfvalues import KeptCalls, find_kept_calls
from migrate.engine.index import TYPE_HINT_CALLS, WORD, normalize
from migrate.engine.rewriter import one_line_per_rule
from migrate.engine.suppression import is_suppressed, suppressed_lines
from migrate.ops.tails import ends_ast, owned_names

PLACEHOLDER = "__migrate_pruned_"
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_BODIES = ("body", "orelse", "finalbody")
_IDENTIFIER_FIELDS = ("id", "attr", "name", "arg", "asname", "module", "rest")
# Never set aside: the structure the import and docstring handling reads, and scope declarations.
_ALWAYS_KEPT = (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)
# Pruning a file below this many lines saves less than it costs.
MIN_LINES = 40


@dataclass
class Pruned:
    """The text the codemod sees, and how to turn its output back into the whole file."""

    text: str
    runs: dict[int, tuple[str, str]]  # placeholder number -> (indent, original lines)
    line_map: list[int]  # line in ``text`` (1-based; index 0 unused) -> line in the original
    set_aside: list[ast.stmt] = field(default_factory=list)  # CPython's nodes of the statements set aside
    # Statements set aside whose only matches are flag-only rules (see ``_Pruner.flags``):
    # their findings (line, col, rule, api, message, on original lines), and the matched
    # imports they read, which must stay imported.
    flagged: list[tuple[int, int, object, str, str]] = field(default_factory=list)
    reads: set[str] = field(default_factory=set)
    # False when the statements left hold nothing the planner could act on: the
    # conversion is then ``restore(text)``, with no libcst at all.
    needs_planner: bool = True

    @property
    def names(self) -> set[str]:
        """The names the statements set aside use (a new name must not take one), found when asked."""
        if self._names is None:
            self._names = variable_names(self.set_aside)
        return self._names

    _names = None

    def original_line(self, line: int) -> int:
        return self.line_map[line] if 0 < line < len(self.line_map) else line

    def restore(self, converted: str) -> str | None:
        """The converted text with every placeholder back to its original lines, or None if one moved."""
        seen: set[int] = set()
        ok = True

        def put_back(match: re.Match) -> str:
            nonlocal ok
            number = int(match.group("n"))
            indent, original = self.runs.get(number, (None, ""))
            if number in seen or indent != match.group("indent") or not ok:
                ok = False
                return match.group(0)
            seen.add(number)
            return original

        out = _PLACEHOLDER_LINE.sub(put_back, converted)
        if not ok or len(seen) != len(self.runs):
            return None
        return out


_PLACEHOLDER_LINE = re.compile(
    r"^(?P<indent>[ \t\f]*)" + PLACEHOLDER + r"(?P<n>\d+)__(?:\([A-Za-z0-9_, ]*\))?(?:\r\n|\n|$)", re.M)


def _children(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes(node)`` as a list, without its generators (the cut walks every tree
    several times) and without the context and operator singletons (``Load``, ``Add``), which
    nothing here reads."""
    fields = _CHILD_FIELDS.get(type(node))
    if fields is None:
        fields = _CHILD_FIELDS[type(node)] = tuple(f for f in node._fields if f not in ("ctx", "op", "ops"))
    found = []
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            found.append(value)
        elif isinstance(value, list):
            found += [item for item in value if isinstance(item, ast.AST)]
    return found


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: ()}
# The node types the first walk of the cut reads (every other node only passes its children on).
_NOTED = frozenset({ast.Import, ast.ImportFrom, ast.arg, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Global,
                    ast.Nonlocal, ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping, ast.Assign, ast.Constant,
                    ast.Call, ast.With, ast.AsyncWith})


def identifiers(nodes) -> set[str]:
    """Every identifier in ``nodes`` (each node of a tree): what libcst would hold as ``Name`` nodes."""
    found: set[str] = set()
    for each in nodes:
        for name, value in ast.iter_fields(each):
            if isinstance(value, str) and name in _IDENTIFIER_FIELDS:
                found.update(value.split("."))
            elif name in ("names", "kwd_attrs") and value and isinstance(value[0], str):
                found.update(value)
    return found


_DEFINED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def variable_names(statements: list[ast.stmt]) -> set[str]:
    """The names in ``statements`` that libcst holds as ``Name`` nodes, other than attribute
    names and keyword arguments' names: what a conversion finds in the same statements
    parsed by libcst when it picks a name nothing uses (``forward_2`` when ``forward`` is
    taken). ``b.forward()`` and ``f(forward=1)`` take no name; ``import a.b`` and
    ``from a.b import c`` take ``a`` (and ``c``); ``None``, ``True`` and ``False`` are names there."""
    found: set[str] = set()
    for statement in statements:
        for node in ast.walk(statement):
            kind = type(node)
            if kind is ast.Name:
                found.add(node.id)
            elif kind is ast.Constant:
                if node.value is None or node.value is True or node.value is False:
                    found.add(repr(node.value))  # (libcst's Name nodes too)
            elif kind is ast.arg:
                found.add(node.arg)
            elif kind in _DEFINED:
                found.add(node.name)
            elif kind is ast.alias:
                if node.name != "*":
                    found.add(node.name.split(".", 1)[0])
                if node.asname:
                    found.add(node.asname)
            elif kind is ast.ImportFrom:
                if node.module:
                    found.add(node.module.split(".", 1)[0])
            elif kind is ast.Global or kind is ast.Nonlocal:
                found.update(node.names)
            elif kind is ast.ExceptHandler or kind is ast.MatchAs or kind is ast.MatchStar:
                if node.name:
                    found.add(node.name)
            elif kind is ast.MatchMapping:
                if node.rest:
                    found.add(node.rest)
            elif kind is ast.MatchClass:
                found.update(node.kwd_attrs)
    return found


def prune(text: str, tree: ast.Module, index, min_lines: int = MIN_LINES) -> Pruned | None:
    """``text`` with the statements no rule can reach replaced by placeholders, or None when nothing is gained.

    ``tree`` is CPython's tree of ``text``; ``index`` the run's :class:`~migrate.engine.index.RuleIndex`.
    """
    return analyse(text, tree, index, min_lines)[0]


@dataclass(frozen=True)
class ImportTable:
    """What the planner may know about names without libcst's scope analysis (see ``_Pruner.import_table``)."""

    quals: dict[str, str]  # matched name -> its qualified name
    sole_imports: frozenset[str]  # names bound once in the file, by a top-level import
    # Whether ``quals`` holds every matched name of the file; if not, it holds those bound
    # once, by a plain top-level import, and other names need libcst's scope analysis.
    complete: bool = True
    # Names that may stand for something a rule matches (see ``_Pruner.grow``): any other
    # name resolves to nothing a rule matches, without the scope analysis.
    relevant: frozenset[str] = frozenset()
    # Names bound once in the file, at module level, to an attribute of a plain import
    # (``FLAGS = tf.flags.FLAGS``): what they alias, resolved as the planner would.
    aliases: dict[str, str] = field(default_factory=dict)
    # Relevant names bound exactly once in the whole file, not by an import (a tracked
    # ``strategy = …``, a ``with … as tape``): the planner may find their binding's reads
    # without libcst's scope analysis (``Planner.static_references``).
    bound_once: frozenset[str] = frozenset()
    # Every name the file uses and how it is bound (what the imports a conversion adds must
    # not take: migrate.engine.aliases).
    bindings: Bindings | None = field(default=None, compare=False)


def analyse(text: str, tree: ast.Module, index, min_lines: int | None = MIN_LINES
            ) -> tuple[Pruned | None, ImportTable | None, LazyFacts, KeptCalls]:
    """:func:`prune` (not tried when ``min_lines`` is None), the file's import table (None when
    names need the full scope analysis), where it trains with Keras fit or a tape, and the
    calls that stay TensorFlow (:mod:`migrate.engine.tfvalues`)."""
    lines = _LINE.findall(text)
    pruner = _Pruner(text, lines, tree, index)
    pruner.grow()
    facts = pruner.facts()
    kept = find_kept_calls(tree, lines, index, lambda node: pruner.qual_of(node, instances=False), pruner.kids,
                           pruner.parents)
    kept.widen = lambda extra: _kept_calls(text, index, extra)
    quals = pruner.import_table()
    relevant = frozenset(pruner.relevant - pruner.only_with_names())
    bound_once = frozenset(n for n in relevant if pruner.bindings[n] == 1 and n not in pruner.imported)
    if quals is None:
        table = ImportTable(pruner.static_imports(), pruner.sole_imports, False, relevant, pruner.static_aliases, bound_once,
                            pruner.name_bindings())
    else:
        table = ImportTable(quals, pruner.sole_imports, True, relevant, pruner.static_aliases, bound_once, pruner.name_bindings())
    if min_lines is None or PLACEHOLDER in text or len(lines) < min_lines or _mixed_newlines(text):
        return None, table, facts, kept
    return pruner.run(), table, facts, kept


def _kept_calls(text: str, index, extra: frozenset) -> KeptCalls:
    """The calls of ``text`` that stay TensorFlow, with those at ``extra`` staying too (planning
    refused them): worked out again from the text, only for a file where that happens."""
    lines = _LINE.findall(text)
    tree = ast.parse(text)
    pruner = _Pruner(text, lines, tree, index)
    pruner.grow()
    kept = find_kept_calls(tree, lines, index, lambda node: pruner.qual_of(node, instances=False), pruner.kids,
                           pruner.parents, extra)
    kept.widen = lambda more: _kept_calls(text, index, more)
    return kept


def _mixed_newlines(text: str) -> bool:
    crlf = text.count("\r\n")
    return text.count("\r") != crlf or (crlf and text.count("\n") != crlf)


class _Pruner:
    def __init__(self, text: str, lines: list[str], tree: ast.Module, index) -> None:
        self.text, self.lines, self.tree, self.index = text, lines, tree, index
        roots, strings = index.roots, set(index.strings)
        tail_words, tails = index.tail_words, index.tail_chains
        tail_names = owned_names(tails)
        self.words = [set(WORD.findall(line)) for line in lines]
        self.imported: set[str] = set()  # every name an import binds
        self.relevant: set[str] = set()
        # What a name may stand for, as the planner resolves it: imports, aliases, tracked objects.
        self.quals: dict[str, set[str]] = {}
        self.types: dict[str, set[str]] = {}
        self.assigns: list[tuple[list[str], ast.expr]] = []
        self.pinned: set[int] = set()  # lines that hold a string a rule matches, or a chain's last name
        self.tape = False
        self.bindings: Counter[str] = Counter()  # how often each name is bound anywhere in the file
        self.with_names: set[str] = set()  # made relevant only as `with … as` names
        self.withs: list[ast.With | ast.AsyncWith] = []
        self.top_aliases: list[tuple[str, ast.expr, int]] = []  # module-level `name = a.b`, and its line
        top_level = {id(s) for s in tree.body}
        first_use: dict[str, int] = {}  # the first line each name is read or bound on (as a Name)
        self.plain_imports = True  # every matched-module import is `import a [as b]` / `from a import b [as c]` at top level
        self.import_targets: dict[str, set[str]] = {}  # name -> what the imports binding it stand for
        import_bindings: Counter[str] = Counter()
        # One walk, in ast.walk's order, noting each node's children and parent for the later ones.
        self.kids: dict[ast.AST, list[ast.AST]] = {}
        self.parents: dict[ast.AST, ast.AST] = {}
        order, at, kids, parents = [tree], 0, self.kids, self.parents
        while at < len(order):
            node = order[at]
            at += 1
            children = kids[node] = _children(node)
            for child in children:
                parents[child] = node
            order += children
        for node in order:
            kind = type(node)
            if kind is ast.Name:
                if node.lineno < first_use.get(node.id, node.lineno + 1):
                    first_use[node.id] = node.lineno
                if not isinstance(node.ctx, ast.Load):
                    self.bindings[node.id] += 1
                continue
            if kind is ast.Attribute:
                if node.attr in tail_words and ends_ast(node, tails):  # a chain a rule matches on any receiver
                    self.pinned.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
                continue
            if kind not in _NOTED:
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                module = node.module if isinstance(node, ast.ImportFrom) else None
                for alias in node.names:
                    bound, what = import_binding(node, alias)
                    self.imported.add(bound)
                    self.bindings[bound] += 1
                    if alias.name != "*":
                        self.import_targets.setdefault(bound, set()).add(what)
                    import_bindings[bound] += 1
                    source = (module if isinstance(node, ast.ImportFrom) else alias.name) or ""
                    if (not getattr(node, "level", 0)) and source.split(".")[0] in roots:
                        self.relevant.add(bound)
                        full = f"{module}.{alias.name}" if isinstance(node, ast.ImportFrom) else (alias.name if alias.asname else bound)
                        self.quals.setdefault(bound, set()).add(normalize(full))
                        if id(node) not in top_level or alias.name == "*" or (
                                isinstance(node, ast.Import) and not alias.asname and "." in alias.name):
                            self.plain_imports = False
            elif isinstance(node, ast.arg):
                self.bindings[node.arg] += 1
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bindings[node.name] += 1
                if node.name in tail_names and not isinstance(node, ast.ClassDef):
                    self.pinned.add(node.lineno)  # the planner asks whether the file defines it
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                self.bindings.update(node.names)
            elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
                self.bindings[node.name] += 1
            elif isinstance(node, ast.MatchMapping) and node.rest:
                self.bindings[node.rest] += 1
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                # The only binding the planner follows (an alias, a tracked object, a query):
                # `self.x = …`, `a, b = …`, `a = b = …` and annotated ones make nothing it tracks.
                self.assigns.append(([node.targets[0].id], node.value))
                if id(node) in top_level and isinstance(node.value, (ast.Name, ast.Attribute)):
                    self.top_aliases.append((node.targets[0].id, node.value, node.lineno))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _holds_any(node.value, strings):
                self.pinned.update(range(node.lineno, node.end_lineno + 1))
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                self.withs.append(node)
        self.tape = "GradientTape" in text and "GradientTape" in identifiers(order)
        self.bound_otherwise = {name for name, count in self.bindings.items() if count > import_bindings[name]}
        self.import_quals = {name: set(quals) for name, quals in self.quals.items()}
        top_imports = {alias.asname or alias.name.split(".")[0] for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))
                       for alias in s.names if alias.name != "*" and (alias.asname or "." not in alias.name)}
        # Imports that are the only binding of their name in the file: `np.x` anywhere reads them.
        # ... and read only below it: libcst's scope analysis does not tie a module-level read
        # that comes before the import to it.
        import_line = {alias.asname or alias.name.split(".")[0]: s.lineno for s in reversed(tree.body)
                       if isinstance(s, (ast.Import, ast.ImportFrom)) for alias in s.names}
        self.sole_imports = frozenset(n for n in top_imports if self.bindings[n] == 1 and first_use.get(n, 1 << 30) > import_line[n])
        self.first_use = first_use
        # Matched names a statement may use and still be set aside, its findings made here:
        # top-level plain imports, the only binding of their name in the file. libcst's
        # scope analysis could only resolve them to that import too.
        self.static = {name for name in self.sole_imports if len(self.import_quals.get(name, ())) == 1}

    def name_bindings(self) -> Bindings:
        """The names the file uses and how each is bound (what ``Bindings.of`` reads off the tree)."""
        names = set(self.first_use) | set(self.bindings)
        return Bindings(names, self.import_targets, self.bound_otherwise)

    def import_table(self) -> dict[str, str] | None:
        """Name -> qualified name, when a file's matched names are all plain module-level imports.

        That holds when every relevant name (after :meth:`grow`) is bound exactly once in
        the whole file, by a top-level ``import tensorflow as tf`` or ``from tensorflow
        import keras``; when no alias, tracked object or set-up query is bound from one;
        and when the file holds no GradientTape (whose conversion reads every binding of
        its function). Then a ``tf`` anywhere in the file can only mean that import, and
        the planner resolves names from this table instead of libcst's scope analysis of
        the whole module (about 40 % of a conversion). Anything the table cannot answer
        (escapes, aliases, imports that may become unused) still goes to that analysis.
        """
        if self.tape or not self.plain_imports:
            return None
        if self.relevant - set(self.import_quals) - self.with_names:
            return None
        table = {}
        for name, quals in self.import_quals.items():
            if self.bindings[name] != 1 or len(quals) != 1 or name not in self.sole_imports:
                return None
            table[name] = next(iter(quals))
        return table

    def only_with_names(self) -> set[str]:
        """``f`` of ``with open(p) as f``: relevant to keep a tape's statements, but nothing the
        planner resolves (libcst's scopes would find a binding it does not track)."""
        return {name for name in self.with_names if name not in self.quals and name not in self.types}

    @property
    def static_aliases(self) -> dict[str, str]:
        """Names bound once in the file, by a module-level ``name = imported.attribute``."""
        if self._static_aliases is None:
            found = {}
            for name, value, line in self.top_aliases:
                root, attrs = value, []
                while isinstance(root, ast.Attribute):
                    attrs.append(root.attr)
                    root = root.value
                if (self.bindings[name] != 1 or not isinstance(root, ast.Name) or root.id not in self.static
                        or self.first_use.get(name, line) < line):  # the assignment's own target is on `line`
                    continue
                qual = normalize(next(iter(self.import_quals[root.id])))
                for attr in reversed(attrs):
                    qual = normalize(f"{qual}.{attr}")
                found[name] = qual
            self._static_aliases = found
        return self._static_aliases

    _static_aliases = None

    def static_imports(self) -> dict[str, str]:
        """Matched names bound once in the file, by a plain top-level import: what they stand
        for is that import wherever they are read, as libcst's scope analysis would find."""
        return {name: next(iter(self.import_quals[name])) for name in self.static}

    # -- spans ----------------------------------------------------------------------------

    def first_line(self, stmt: ast.stmt) -> int:
        decorators = getattr(stmt, "decorator_list", None)
        return min([d.lineno for d in decorators] + [stmt.lineno]) if decorators else stmt.lineno

    def mentions(self, first: int, last: int) -> bool:
        relevant = self.relevant
        return any(not relevant.isdisjoint(self.words[i]) or (i + 1) in self.pinned for i in range(first - 1, last))

    def starts_line(self, stmt: ast.stmt) -> bool:
        first = self.first_line(stmt)
        line = self.lines[first - 1]
        if first != stmt.lineno:
            return line.lstrip(" \t\f").startswith("@")
        return not line.encode("utf-8")[: stmt.col_offset].strip(b" \t\f")

    def ends_line(self, stmt: ast.stmt) -> bool:
        rest = self.lines[stmt.end_lineno - 1].encode("utf-8")[stmt.end_col_offset:].strip(b" \t\f\r\n")
        return not rest or rest.startswith(b"#")

    # -- what is relevant ------------------------------------------------------------------

    def grow(self) -> None:
        """Names the planner may track become relevant, to a fixed point: aliases of matched
        names (``dist = tf.distribute``), objects a rule with ``returns`` makes (``strategy =
        tf.distribute.MirroredStrategy()``, ``ds2 = ds.batch(8)``), bindings of set-up queries
        (``cpu = tf.config.list_physical_devices("CPU")[0]``), and ``with … as`` names of
        relevant items (``tape``). A name is one name file-wide here, whatever its scope:
        that can only keep more."""
        withs = [(node.lineno, _header_end(node), _bound_by(node)) for node in self.withs]
        changed = True
        while changed:
            changed = False
            for names, value in self.assigns:
                kind, quals = self.classify(value)
                if kind is None:
                    continue
                for name in names:
                    table = self.types if kind == "instance" else self.quals
                    before = len(table.get(name, ())), name in self.relevant
                    table.setdefault(name, set()).update(quals)
                    self.relevant.add(name)
                    changed |= (len(table[name]), True) != before
            for first, last, bound in withs:
                if bound and not bound <= self.relevant and self.mentions(first, last):
                    self.with_names |= bound - self.relevant
                    self.relevant |= bound
                    changed = True

    def facts(self) -> LazyFacts:
        """Where the file trains with Keras fit or a tape, names resolved as here (migrate.engine.facts);
        found when first asked."""
        tree, names = self.tree, self.index.fact_names
        return LazyFacts(lambda: find_facts(tree, names, lambda node: self.qual_of(node, instances=False)))

    def qual_of(self, node: ast.expr, instances: bool = True) -> set[str]:
        if isinstance(node, ast.Name):
            return self.quals.get(node.id, set()) | (self.types.get(node.id, set()) if instances else set())
        if isinstance(node, ast.Attribute):
            return {normalize(f"{q}.{node.attr}") for q in self.qual_of(node.value, instances)}
        if isinstance(node, ast.Call) and instances:
            returns = self.index.returns
            return {returns[q] for q in self.qual_of(node.func) if q in returns}
        return set()

    def classify(self, value: ast.expr) -> tuple[str | None, set[str]]:
        """What binding a name to ``value`` makes of the name: an alias, a tracked object, a set-up query, or nothing."""
        if isinstance(value, (ast.Name, ast.Attribute)):
            quals = self.qual_of(value, instances=False)
            if quals:
                return "alias", quals
        if isinstance(value, ast.Call):
            types = self.qual_of(value)
            if types:
                return "instance", types
        for node in self.walk(value):
            if isinstance(node, (ast.Name, ast.Attribute)) and any(self.is_query(q) for q in self.qual_of(node, instances=False)):
                return "query", set()
        return None, set()

    def chain(self, name: ast.Name, qual: str) -> tuple[ast.expr, str]:
        """The outermost attribute chain ``name`` starts (``tf.a.b`` of ``tf.a.b(x).c``) and its
        qualified name, ``qual`` being the name's own: the planner decides on that chain."""
        chain, parents = name, self.parents
        while isinstance(up := parents.get(chain), ast.Attribute) and up.value is chain:
            chain, qual = up, normalize(f"{qual}.{up.attr}")
        return chain, qual

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """``node`` and every node under it, in ``ast.walk``'s order."""
        order, at, kids = [node], 0, self.kids
        while at < len(order):
            order += kids[order[at]]
            at += 1
        return order

    def is_query(self, qual: str) -> bool:
        return any(ops.REGISTRY[rule.operation].goes_with_readers for rule, _ in self.index.candidates(qual))

    def has_relevant_with(self, body: list[ast.stmt], into_functions: bool = True) -> bool:
        """Whether ``body`` holds a ``with`` whose items are relevant (in nested functions too, if asked)."""
        stack = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.With, ast.AsyncWith)) and self.mentions(node.lineno, _header_end(node)) \
                    and not self.flagged_only(node):
                return True
            if not into_functions and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            stack.extend(self.kids[node])
        return False

    def flagged_only(self, node: ast.With | ast.AsyncWith) -> bool:
        """Whether every matched name in the items of ``node`` starts a chain only a flag reports
        (``with tf.name_scope("x"):``): the planner then puts a comment above the ``with`` and
        moves no statement, so the code around it need not be kept whole."""
        if any(line in self.pinned for line in range(node.lineno, _header_end(node) + 1)):
            return False
        with_names = self.only_with_names()
        for item in node.items:
            for sub in self.walk(item):
                if not (isinstance(sub, ast.Name) and sub.id in self.relevant) or sub.id in with_names:
                    continue
                if sub.id not in self.static:
                    return False
                _, qual = self.chain(sub, normalize(next(iter(self.import_quals[sub.id]))))
                if self.index.use_of(qual)[0] == "rewrite":
                    return False
        return True

    # -- the cut ------------------------------------------------------------------------------

    def run(self) -> Pruned | None:
        if self.has_relevant_with(self.tree.body, into_functions=False):
            return None  # a scope or tape at top level: the module is one scope, kept whole
        self.cuts: list[tuple[int, int, str, list[str], list[tuple[int, str]]]] = []  # (first line, last line, indent, imports used, markers)
        self.cut: list[ast.stmt] = []
        # Names a statement may use and still have its flags made here (see flags()).
        self.flag_names = self.static | set(self.static_aliases) | self.only_with_names()
        self.unit_flags: dict[int, list[tuple[ast.stmt, int, int, object, str]]] = {}
        self.flagged: list[tuple[int, int, object, str, str]] = []
        self.reads: set[str] = set()
        self.quiet = None
        ending = re.search(r"\r\n|\r|\n", self.text)
        self.newline = ending.group() if ending else "\n"
        self.visit_body(self.tree.body)
        if not self.cuts:
            return None
        return self.build()

    def planner_has_work(self) -> bool:
        """Whether the statements left for libcst may give the planner anything to do.

        Everything the planner acts on starts at a name that may stand for something a
        rule matches (every such name is relevant, see :meth:`grow`) or at a string a rule
        matches, or at a chain a rule matches on any receiver. When the kept statements hold
        none (their imports hold no names: libcst never plans an import), libcst would give the
        pruned text back as it is."""
        relevant, strings, cut = self.relevant, self.index.strings, {id(stmt) for stmt in self.cut}
        tail_words, tails = self.index.tail_words, self.index.tail_chains
        stack: list[ast.AST] = list(self.tree.body)
        while stack:
            node = stack.pop()
            if id(node) in cut:
                continue
            if isinstance(node, ast.Name):
                if node.id in relevant:
                    return True
            elif isinstance(node, ast.Attribute) and node.attr in tail_words and ends_ast(node, tails):
                return True  # a chain a rule matches on any receiver
            elif isinstance(node, ast.Constant):
                if isinstance(node.value, str) and _holds_any(node.value, strings):
                    return True
            else:
                stack.extend(self.kids[node])
        return False

    def visit_body(self, body: list[ast.stmt]) -> None:
        run: list[ast.stmt] = []
        for i, stmt in enumerate(body):
            if self.prunable(stmt, i, body):
                if run and self.first_line(stmt) == run[-1].end_lineno:
                    self.flush(run)
                    run = []
                run.append(stmt)
                continue
            self.flush(run)
            run = []
            self.descend(stmt)
        self.flush(run)

    def prunable(self, stmt: ast.stmt, i: int, body: list[ast.stmt]) -> bool:
        if isinstance(stmt, _ALWAYS_KEPT) or (i == 0 and _is_docstring(stmt)):
            return False
        if not (self.starts_line(stmt) and self.ends_line(stmt)):
            return False
        before = body[i - 1].end_lineno if i else 0
        after = self.first_line(body[i + 1]) if i + 1 < len(body) else None
        if not (before < self.first_line(stmt) and (after is None or after > stmt.end_lineno)):
            return False
        if not self.mentions(self.first_line(stmt), stmt.end_lineno):
            return True
        found = self.flags(stmt)
        if found is None:
            return False
        self.unit_flags[id(stmt)] = found
        return True

    def flags(self, stmt: ast.stmt) -> list[tuple[ast.stmt, int, int, object, str]] | None:
        """What the planner would do with ``stmt`` when every matched name in it is one only a flag reports.

        That is the common case in TensorFlow code: ``tf.reduce_sum``, ``tf.compat.v1.layers``
        are left as they are, with a finding and a ``# migrate: TFU901`` comment above their
        statement. Such a statement is set aside like one that mentions no relevant name, and
        its findings and comment lines are made here, on CPython's tree, exactly as the
        planner would make them: one per outermost attribute chain (``tf.a.b`` of
        ``tf.a.b(x).c``) whose qualified name a flag-only rule matches first, at the chain's
        start, above the statement holding it. Returns (statement, line, column, rule,
        qualified name) for each, or None when anything in ``stmt`` needs the planner: a
        relevant name other than a plain import bound once, a chain another rule matches, a
        rule-matched string, a chain in an f-string or a ``match``, a marked statement that
        shares a line or is an ``elif``, or a ``# migrate:`` comment already above one.
        """
        if "\f" in self.text:
            return None  # a form feed in an indentation changes where libcst puts a comment line
        first, last = self.first_line(stmt), stmt.end_lineno
        relevant, aliases, static = self.relevant, self.static_aliases, self.flag_names
        for i in range(first - 1, last):
            if not relevant.isdisjoint(self.words[i]) and not (self.words[i] & relevant) <= static or (i + 1) in self.pinned:
                return None
        parents = self.parents
        roots: list[ast.Name] = []
        strings: list[ast.Constant] = []
        for node in self.walk(stmt):
            if isinstance(node, ast.Match):
                return None
            if isinstance(node, ast.Name) and node.id in relevant:
                roots.append(node)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and not relevant.isdisjoint(WORD.findall(node.value)):
                strings.append(node)
        # A string libcst's scope analysis may read as a type hint would be a use of the import.
        if any(_maybe_type_hint(string, parents) for string in strings):
            return None
        found = []
        index = self.index
        for name in roots:
            if name.id not in static:
                return None
            if name.id not in self.static and name.id not in aliases:
                continue  # a `with … as` name: the planner resolves it to nothing
            alias = name.id in aliases
            chain, qual = self.chain(name, aliases[name.id] if alias else normalize(next(iter(self.import_quals[name.id]))))
            if alias:
                # The planner flags nothing through an alias, but calling one may make a tracked object.
                if qual in index.returns:
                    return None
                continue
            use, rule = index.use_of(qual)
            if use == "nothing":
                continue
            if use == "rewrite":
                return None
            holder = parents.get(chain)
            while not isinstance(holder, ast.stmt):
                if isinstance(holder, (ast.JoinedStr, ast.FormattedValue)) or holder is None:
                    return None
                holder = parents.get(holder)
            if not self.markable(holder):
                return None
            line = chain.lineno
            if self.quiet is None:
                self.quiet = suppressed_lines(self.text)
            if is_suppressed(self.quiet, line, rule.id):
                continue
            col = len(self.lines[line - 1].encode("utf-8")[: chain.col_offset].decode("utf-8", "replace")) + 1
            found.append((holder, line, col, rule, qual))
        return found

    def markable(self, stmt: ast.stmt) -> bool:
        """Whether a comment line above ``stmt`` is where libcst puts its markers: a statement
        alone on its lines (not an ``elif``) with no ``# migrate:`` comment already above it."""
        if not self.starts_line(stmt) or (not hasattr(stmt, "body") and not self.ends_line(stmt)):
            return False
        if isinstance(stmt, ast.If) and self._is_elif(stmt):
            return False
        i = self.first_line(stmt) - 2
        while i >= 0:
            line = self.lines[i].strip()
            if line and not line.startswith("#"):
                return True
            if "migrate:" in line:
                return False
            i -= 1
        return True

    def descend(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and self.has_relevant_with(stmt.body):
            return  # a scope or a tape inside: the function is kept whole
        for name in _BODIES:
            body = getattr(stmt, name, None)
            if not body or not isinstance(body[0], ast.stmt):
                continue
            if name == "orelse" and len(body) == 1 and isinstance(body[0], ast.If) and self._is_elif(body[0]):
                self.descend(body[0])
                continue
            self.visit_body(body)
        for handler in getattr(stmt, "handlers", ()) or ():
            self.visit_body(handler.body)
        for case in getattr(stmt, "cases", ()) or ():
            self.visit_body(case.body)

    def _is_elif(self, stmt: ast.If) -> bool:
        return self.lines[stmt.lineno - 1].lstrip(" \t\f").startswith("elif")

    def flush(self, run: list[ast.stmt]) -> None:
        if not run:
            return
        first, last = self.first_line(run[0]), run[-1].end_lineno
        line = self.lines[first - 1]
        indent = line[: len(line) - len(line.lstrip(" \t\f"))]
        # What RemoveImportsVisitor would count as a use of an import in these statements:
        # names read, and (to keep rather than lose) words of strings, for string annotations.
        uses: set[str] = set()
        names: set[str] = set()
        markers: dict[ast.stmt, list[str]] = {}
        for stmt in run:
            self.cut.append(stmt)
            for node in self.walk(stmt):
                if isinstance(node, ast.Name):
                    names.add(node.id)
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    uses.update(WORD.findall(node.value))
            for holder, line, col, rule, qual in sorted(self.unit_flags.get(id(stmt), ()), key=lambda f: (f[1], f[2])):
                message = ops.REGISTRY[rule.operation].mark(rule.params, qual)
                markers.setdefault(holder, []).append(f"# migrate: {rule.id} {message}")
                self.flagged.append((line, col, rule, qual, message))
        # Matched imports these statements read are not listed in the placeholder (the planner
        # would take a bare `keras` there for a use of its own): they are kept imported instead.
        self.reads |= names & self.relevant
        uses |= names
        lines = []
        for holder, texts in markers.items():
            line = self.lines[self.first_line(holder) - 1]
            lead = line[: len(line) - len(line.lstrip(" \t\f"))]
            lines += [(self.first_line(holder), f"{lead}{text}{self.newline}") for text in one_line_per_rule(texts)]
        self.cuts.append((first, last, indent, sorted((uses & self.imported) - self.relevant), lines))

    def build(self) -> Pruned:
        out: list[str] = []
        line_map = [0]
        runs: dict[int, tuple[str, str]] = {}
        cuts = sorted(self.cuts)
        at = 1  # next original line to copy
        for number, (first, last, indent, uses, markers) in enumerate(cuts):
            for i in range(at, first):
                out.append(self.lines[i - 1])
                line_map.append(i)
            original = "".join(self.lines[first - 1:last])
            if markers:  # comment lines for a person, above the statements flags matched
                above: dict[int, list[str]] = {}
                for line, text in markers:
                    above.setdefault(line, []).append(text)
                original = "".join("".join(above.get(i, ())) + self.lines[i - 1] for i in range(first, last + 1))
            ending = _ending(self.lines[last - 1])
            call = f"({', '.join(uses)})" if uses else ""
            out.append(f"{indent}{PLACEHOLDER}{number}__{call}{ending}")
            line_map.append(first)
            runs[number] = (indent, original)
            at = last + 1
        for i in range(at, len(self.lines) + 1):
            out.append(self.lines[i - 1])
            line_map.append(i)
        return Pruned("".join(out), runs, line_map, self.cut, self.flagged, self.reads, self.planner_has_work())


def _holds_any(value: str, strings) -> bool:
    """Whether a string constant may hold a literal a rule matches: CPython joins ``"a" "b"``
    into one constant, libcst keeps both parts, and the planner matches each part."""
    return any(literal in value for literal in strings)


def _ending(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    return line[-1] if line.endswith(("\n", "\r")) else ""


def _header_end(stmt: ast.stmt) -> int:
    """The last line of a statement's own text: before its body for a compound statement."""
    body = getattr(stmt, "body", None)
    if body and isinstance(body, list) and isinstance(body[0], ast.stmt):
        return max(stmt.lineno, body[0].lineno - 1)
    return stmt.end_lineno


def _bound_by(stmt: ast.stmt) -> set[str]:
    """Names a statement binds in its own text (targets, ``as`` names, walrus), not in nested bodies."""
    targets: list[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in stmt.items if item.optional_vars is not None]
    names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    names |= {h.name for h in getattr(stmt, "handlers", ()) or () if getattr(h, "name", None)}
    own = [v for k, v in ast.iter_fields(stmt) if k not in ("body", "orelse", "finalbody", "handlers", "cases")]
    for part in own:
        for item in part if isinstance(part, list) else [part]:
            if isinstance(item, ast.AST):
                names |= {n.target.id for n in ast.walk(item) if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name)}
    return names


def _maybe_type_hint(string: ast.Constant, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether libcst's scope analysis may parse ``string`` as a type hint: in an annotation,
    a subscript (``List["tf.Tensor"]``) or a ``cast``/``TypeVar``/``NewType`` call."""
    child, parent = string, parents.get(string)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.Subscript) or getattr(parent, "annotation", None) is child:
            return True
        if isinstance(parent, ast.Call):
            func = parent.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) in TYPE_HINT_CALLS:
                return True
        child, parent = parent, parents.get(parent)
    return parent is not None and (getattr(parent, "annotation", None) is child or getattr(parent, "returns", None) is child)


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
