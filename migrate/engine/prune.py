"""Statements no rule can reach are set aside before libcst sees a file, and put back after.

Much of a TensorFlow file that needs conversion is code no rule touches: in
tensorflow/tpu, addons and model-optimization, 26 %, 35 % and 62 % of the lines of
such files sit in statements that mention no relevant name. libcst costs about ten
times CPython's own parser per line, and its scope analysis as much again, so those
statements are swapped for one-line placeholders (one per run of adjacent statements)
and the codemod runs on what is left.

The cut is decided on CPython's syntax tree, which the runner builds anyway to check
the file. A statement is kept when its text mentions a *relevant* word:

- a name bound by an import of a module a rule matches (``tf``, ``keras``…);
- a name bound by a kept statement (``strategy = tf.distribute…``, ``tape`` in
  ``with tf.GradientTape() as tape``), to a fixed point, so every use of a tracked
  object is seen when the planner decides whether it escapes;
- a string literal a rule matches.

Imports, docstrings, ``global``/``nonlocal``, ``elif`` clauses and statements that share
a line with another are always kept. A function holding a ``with`` whose items are
relevant (a scope to unwrap, a tape to turn into a closure) is kept whole, as is the
module when such a ``with`` sits at its top level: those rewrites move statements.

A placeholder lists the imported names its statements use (``__migrate_pruned_3__(np)``)
so removing an import that became unused sees them. After conversion each placeholder
line must appear once, at its original indentation; then the original lines go back in
byte for byte. Anything else and the caller converts the whole file instead: pruning
changes how fast a file converts, never what it converts to (the test suite checks
both ways give the same bytes on every fixture and on generated programs).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field

from migrate.engine.codemod import WORD, normalize

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
    names: set[str] = field(default_factory=set)  # identifiers in the statements set aside
    uses_keras_fit: bool = False
    uses_gradient_tape: bool = False

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


def identifiers(node: ast.AST) -> set[str]:
    """Every identifier in ``node``: what libcst would hold as ``Name`` nodes."""
    found: set[str] = set()
    for each in ast.walk(node):
        for name, value in ast.iter_fields(each):
            if isinstance(value, str) and name in _IDENTIFIER_FIELDS:
                found.update(value.split("."))
            elif name in ("names", "kwd_attrs") and value and isinstance(value[0], str):
                found.update(value)
    return found


def prune(text: str, tree: ast.Module, index, min_lines: int = MIN_LINES) -> Pruned | None:
    """``text`` with the statements no rule can reach replaced by placeholders, or None when nothing is gained.

    ``tree`` is CPython's tree of ``text``; ``index`` the run's :class:`~migrate.engine.codemod.RuleIndex`.
    """
    return analyse(text, tree, index, min_lines)[0]


@dataclass(frozen=True)
class ImportTable:
    """What the planner may know about names without libcst's scope analysis (see ``_Pruner.import_table``)."""

    quals: dict[str, str]  # matched name -> its qualified name
    sole_imports: frozenset[str]  # names bound once in the file, by a top-level import


def analyse(text: str, tree: ast.Module, index, min_lines: int | None = MIN_LINES) -> tuple[Pruned | None, ImportTable | None]:
    """:func:`prune` (not tried when ``min_lines`` is None), and the file's import table
    (None when names need the full scope analysis)."""
    lines = _LINE.findall(text)
    pruner = _Pruner(text, lines, tree, index)
    pruner.grow()
    quals = pruner.import_table()
    table = None if quals is None else ImportTable(quals, pruner.sole_imports)
    if min_lines is None or PLACEHOLDER in text or len(lines) < min_lines or _mixed_newlines(text):
        return None, table
    return pruner.run(), table


def _mixed_newlines(text: str) -> bool:
    crlf = text.count("\r\n")
    return text.count("\r") != crlf or (crlf and text.count("\n") != crlf)


class _Pruner:
    def __init__(self, text: str, lines: list[str], tree: ast.Module, index) -> None:
        self.text, self.lines, self.tree, self.index = text, lines, tree, index
        roots, strings = index.roots, set(index.strings)
        self.words = [set(WORD.findall(line)) for line in lines]
        self.imported: set[str] = set()  # every name an import binds
        self.relevant: set[str] = set()
        # What a name may stand for, as the planner resolves it: imports, aliases, tracked objects.
        self.quals: dict[str, set[str]] = {}
        self.types: dict[str, set[str]] = {}
        self.assigns: list[tuple[list[str], ast.expr]] = []
        self.pinned: set[int] = set()  # lines that hold a string a rule matches
        self.fit = self.tape = False
        self.bindings: Counter[str] = Counter()  # how often each name is bound anywhere in the file
        self.with_names: set[str] = set()  # made relevant only as `with … as` names
        top_level = {id(s) for s in tree.body}
        self.plain_imports = True  # every matched-module import is `import a [as b]` / `from a import b [as c]` at top level
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                module = node.module if isinstance(node, ast.ImportFrom) else None
                for alias in node.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    self.imported.add(bound)
                    self.bindings[bound] += 1
                    source = (module if isinstance(node, ast.ImportFrom) else alias.name) or ""
                    if (not getattr(node, "level", 0)) and source.split(".")[0] in roots:
                        self.relevant.add(bound)
                        full = f"{module}.{alias.name}" if isinstance(node, ast.ImportFrom) else (alias.name if alias.asname else bound)
                        self.quals.setdefault(bound, set()).add(normalize(full))
                        if id(node) not in top_level or alias.name == "*" or (
                                isinstance(node, ast.Import) and not alias.asname and "." in alias.name):
                            self.plain_imports = False
            elif isinstance(node, ast.Name):
                if not isinstance(node.ctx, ast.Load):
                    self.bindings[node.id] += 1
            elif isinstance(node, ast.arg):
                self.bindings[node.arg] += 1
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bindings[node.name] += 1
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                self.bindings.update(node.names)
            elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
                self.bindings[node.name] += 1
            elif isinstance(node, ast.MatchMapping) and node.rest:
                self.bindings[node.rest] += 1
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                if names:
                    self.assigns.append((names, node.value))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in strings:
                self.pinned.update(range(node.lineno, node.end_lineno + 1))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "fit":
                self.fit = True
        self.tape = "GradientTape" in text and "GradientTape" in identifiers(tree)
        self.import_quals = {name: set(quals) for name, quals in self.quals.items()}
        top_imports = {alias.asname or alias.name.split(".")[0] for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))
                       for alias in s.names if alias.name != "*" and (alias.asname or "." not in alias.name)}
        # Imports that are the only binding of their name in the file: `np.x` anywhere reads them.
        self.sole_imports = frozenset(n for n in top_imports if self.bindings[n] == 1)

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
            if self.bindings[name] != 1 or len(quals) != 1:
                return None
            table[name] = next(iter(quals))
        return table

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
        withs = [(node.lineno, _header_end(node), _bound_by(node)) for node in ast.walk(self.tree)
                 if isinstance(node, (ast.With, ast.AsyncWith))]
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
        for node in ast.walk(value):
            if isinstance(node, (ast.Name, ast.Attribute)) and any(self.is_query(q) for q in self.qual_of(node, instances=False)):
                return "query", set()
        return None, set()

    def is_query(self, qual: str) -> bool:
        return any(rule.operation == "flag_setup_query" for rule, _ in self.index.candidates(qual))

    def has_relevant_with(self, body: list[ast.stmt], into_functions: bool = True) -> bool:
        """Whether ``body`` holds a ``with`` whose items are relevant (in nested functions too, if asked)."""
        stack = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.With, ast.AsyncWith)) and self.mentions(node.lineno, _header_end(node)):
                return True
            if not into_functions and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            stack.extend(ast.iter_child_nodes(node))
        return False

    # -- the cut ------------------------------------------------------------------------------

    def run(self) -> Pruned | None:
        if self.has_relevant_with(self.tree.body, into_functions=False):
            return None  # a scope or tape at top level: the module is one scope, kept whole
        self.cuts: list[tuple[int, int, str, list[str]]] = []  # (first line, last line, indent, imports used)
        self.cut_names: set[str] = set()
        self.visit_body(self.tree.body)
        if not self.cuts:
            return None
        return self.build()

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
        if self.mentions(self.first_line(stmt), stmt.end_lineno):
            return False
        if not (self.starts_line(stmt) and self.ends_line(stmt)):
            return False
        before = body[i - 1].end_lineno if i else 0
        after = self.first_line(body[i + 1]) if i + 1 < len(body) else None
        return before < self.first_line(stmt) and (after is None or after > stmt.end_lineno)

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
        for stmt in run:
            self.cut_names |= identifiers(stmt)
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name):
                    uses.add(node.id)
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    uses.update(WORD.findall(node.value))
        self.cuts.append((first, last, indent, sorted((uses & self.imported) - self.relevant)))

    def build(self) -> Pruned:
        out: list[str] = []
        line_map = [0]
        runs: dict[int, tuple[str, str]] = {}
        cuts = sorted(self.cuts)
        at = 1  # next original line to copy
        for number, (first, last, indent, uses) in enumerate(cuts):
            for i in range(at, first):
                out.append(self.lines[i - 1])
                line_map.append(i)
            original = "".join(self.lines[first - 1:last])
            ending = _ending(self.lines[last - 1])
            call = f"({', '.join(uses)})" if uses else ""
            out.append(f"{indent}{PLACEHOLDER}{number}__{call}{ending}")
            line_map.append(first)
            runs[number] = (indent, original)
            at = last + 1
        for i in range(at, len(self.lines) + 1):
            out.append(self.lines[i - 1])
            line_map.append(i)
        return Pruned("".join(out), runs, line_map, self.cut_names, self.fit, self.tape)


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


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
