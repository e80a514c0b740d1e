"""What every rewrite operation shares: parameter specs and the context it rewrites in."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Protocol

import libcst as cst
from libcst.helpers import parse_template_expression

try:  # what parse_template_expression is made of
    from libcst.helpers._template import TemplateChecker, mangle_template, unmangle_nodes
except ImportError:  # another libcst: its own function, parsing every time
    TemplateChecker = mangle_template = unmangle_nodes = None


# The names a rule's code writes that this file binds to something else, and what they are
# written as instead (``{"ops": "ms_ops"}``; see migrate.engine.aliases). Set around one
# file's conversion; empty everywhere else.
_ALIASES: ContextVar[tuple[tuple[str, str], ...]] = ContextVar("migrate_import_aliases", default=())


@contextmanager
def import_aliases(aliases: Mapping[str, str]) -> Iterator[None]:
    """While inside, the code rules write (templates, renamed names, literal tables, defaults,
    statements) spells each name of ``aliases`` as its alias; nothing a rewrite keeps of the
    file's own code is touched (placeholders are filled after the renaming)."""
    token = _ALIASES.set(tuple(sorted(aliases.items())))
    try:
        yield
    finally:
        _ALIASES.reset(token)


def parse_expression(code: str) -> cst.BaseExpression:
    """``cst.parse_expression``, once per text: rules ask for the same few names and defaults
    thousands of times in a repository (nodes are immutable, so one parse serves every use).
    Names are spelled as the file's :func:`import_aliases` say."""
    aliases = _ALIASES.get()
    return _renamed_expression(code, aliases) if aliases else _parsed_expression(code)


@lru_cache(maxsize=4096)
def _parsed_expression(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


@lru_cache(maxsize=1024)
def _renamed_expression(code: str, aliases: tuple[tuple[str, str], ...]) -> cst.BaseExpression:
    return _parsed_expression(code).visit(RenameNames(dict(aliases)))


def parse_statement(code: str) -> cst.BaseStatement:
    """``cst.parse_statement`` of code a rule writes, names spelled as the file's
    :func:`import_aliases` say. A new tree each time: a statement may stand in several places."""
    statement = cst.parse_statement(code)
    aliases = _ALIASES.get()
    return statement.visit(RenameNames(dict(aliases))) if aliases else statement


class _PutIn(cst.CSTTransformer):
    """Stand-in names replaced by copies of the nodes they stand for."""

    def __init__(self, values: dict[str, cst.CSTNode]) -> None:
        super().__init__()
        self.values = values

    def leave_Name(self, original: cst.Name, updated: cst.CSTNode) -> cst.CSTNode:
        value = self.values.get(original.value)
        return updated if value is None else value.deep_clone()


class RenameNames(cst.CSTTransformer):
    """Names (not attribute names, not keywords) renamed by a table."""

    def __init__(self, aliases: dict[str, str]) -> None:
        super().__init__()
        self.aliases = aliases

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        alias = self.aliases.get(updated.value)
        return updated if alias is None else updated.with_changes(value=alias)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated if updated.attr is original.attr else updated.with_changes(attr=original.attr)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated if updated.keyword is original.keyword else updated.with_changes(keyword=original.keyword)


def template_expression(template: str, **replacements: cst.CSTNode) -> cst.BaseExpression:
    """libcst's ``parse_template_expression``, with the template parsed once per text and
    set of placeholders: a rule's template is the same for every call it rewrites.

    Expressions are put in as they are, without libcst's copy, unless the template uses
    a placeholder twice (one node must not stand in two places of a tree): a rewritten
    call then holds its arguments' own nodes, as every node a rewrite leaves alone is held.
    libcst's check that no placeholder is left over walks the whole result, the arguments
    put in too; :class:`_Fill` replaces every placeholder name of the template by
    construction, so the check is libcst's own replacement's alone.
    """
    if unmangle_nodes is None:
        aliases = _ALIASES.get()
        if not aliases:
            return parse_template_expression(template, **replacements)
        # The template's own names renamed first, the file's code put in after.
        stand_ins = {name: f"__migrate_stand_in_{name}__" for name in replacements}
        filled = parse_template_expression(template, **{name: cst.Name(v) for name, v in stand_ins.items()})
        values = {stand_ins[name]: value for name, value in replacements.items()}
        return filled.visit(RenameNames(dict(aliases))).visit(_PutIn(values))
    names = frozenset(replacements)
    parsed, counts, path = _parsed_template(template, names, _ALIASES.get())
    if all(isinstance(value, cst.BaseExpression) for value in replacements.values()):
        values = {mangled: (replacements[name], counts[mangled] > 1) for mangled, name in _mangled(names).items()}
        expression = parsed.visit(_Fill(values, path))
    else:
        expression = unmangle_nodes(parsed, replacements)
        expression.visit(TemplateChecker(set(names)))
    if not isinstance(expression, cst.BaseExpression):
        raise TypeError(f"Expected a BaseExpression but got a {type(expression).__name__}")
    return expression


# Expressions that bind as tightly as a call's function, an attribute's object or an operand.
TIGHT = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Dict, cst.Set, cst.ListComp, cst.SetComp,
         cst.DictComp, cst.SimpleString, cst.FormattedString, cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis)


def binds_tightly(expression: cst.BaseExpression) -> bool:
    """Whether ``expression`` can stand as a call's function, an attribute's object or an
    operand as it is (``lambda: x``, ``f if c else g``, ``a or b`` cannot: ``lambda: x()``)."""
    return isinstance(expression, TIGHT) or bool(expression.lpar)


def parenthesized(expression: cst.BaseExpression) -> cst.BaseExpression:
    return expression.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


class _Fill(cst.CSTTransformer):
    """A template's placeholder names replaced by expressions (libcst's TemplateTransformer, for expressions only)."""

    def __init__(self, values: dict[str, tuple[cst.BaseExpression, bool]], path: frozenset) -> None:
        super().__init__()
        self.values = values  # placeholder name -> (expression, whether each use takes a copy)
        self.path = path  # the placeholders and the nodes above them: only there does anything change

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node in self.path and super().on_visit(node)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        found = self.values.get(original.value)
        if found is None:
            return updated
        value, copy = found
        return value.deep_clone() if copy else value

    # A placeholder where only a tight expression stands as it is (a call's function, an
    # operand): what is put there gets parentheses unless it binds tightly (`lambda: a` as
    # `{f}()` is `(lambda: a)()`, `a + b` as `{x} * 2` is `(a + b) * 2`).
    def _tight(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        if isinstance(original, cst.Name) and original.value in self.values and not binds_tightly(updated):
            return parenthesized(updated)
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        return updated.with_changes(func=self._tight(original.func, updated.func))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(value=self._tight(original.value, updated.value))

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.Subscript:
        return updated.with_changes(value=self._tight(original.value, updated.value))

    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BinaryOperation):
        return updated.with_changes(left=self._tight(original.left, updated.left),
                                    right=self._tight(original.right, updated.right))

    def leave_UnaryOperation(self, original: cst.UnaryOperation, updated: cst.UnaryOperation):
        return updated.with_changes(expression=self._tight(original.expression, updated.expression))

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.IfExp:
        return updated.with_changes(test=self._tight(original.test, updated.test),
                                    body=self._tight(original.body, updated.body),
                                    orelse=self._tight(original.orelse, updated.orelse))


@lru_cache(maxsize=1024)
def _mangled(names: frozenset[str]) -> dict[str, str]:
    return {mangle_template("{%s}" % name, {name}): name for name in names}


@lru_cache(maxsize=1024)
def _parsed_template(template: str, names: frozenset[str], aliases: tuple[tuple[str, str], ...] = ()
                     ) -> tuple[cst.BaseExpression, dict[str, int], frozenset]:
    """The template's tree, how often each placeholder's name stands in it, and the nodes on
    the way from the root to each placeholder (the rest of the tree is the same in every fill).
    ``aliases``: the file's :func:`import_aliases` (what :func:`parse_expression` reads them as)."""
    source = mangle_template(template, set(names))
    parsed = parse_expression(source)
    finder = _Placeholders(set(_mangled(names)))
    parsed.visit(finder)
    return parsed, {mangled: source.count(mangled) for mangled in _mangled(names)}, frozenset(finder.path)


class _Placeholders(cst.CSTVisitor):
    def __init__(self, mangled: set[str]) -> None:
        self.mangled, self.stack, self.path = mangled, [], set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.stack.append(node)
        if isinstance(node, cst.Name) and node.value in self.mangled:
            self.path.update(self.stack)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()


@dataclass(frozen=True)
class Param:
    type: type | tuple[type, ...]
    required: bool = False
    doc: str = ""


class RewriteContext(Protocol):
    """What the engine offers an operation while it rewrites one node."""

    facts: "ScopeFacts"

    def code(self, node: cst.CSTNode) -> str: ...

    def resolve(self, node: cst.CSTNode) -> str | None: ...

    def note(self, node: cst.CSTNode, message: str, status: str = "info") -> None: ...


@dataclass(frozen=True)
class ScopeFacts:
    """What the code around a rewrite does, as far as an operation depends on it (see
    migrate.engine.facts): whether the scope trains with Keras ``fit``, or with a tape."""

    keras_fit: bool = False
    gradient_tape: bool = False


class Operation:
    """One rewrite operation. Subclasses set ``name``, ``target`` and ``params``.

    ``target`` says where the engine applies it:
      * ``reference`` – a name or attribute (``tf.distribute.ReduceOp.SUM``);
      * ``call`` – a call whose callee matches;
      * ``with_item`` – ``with <strategy>.scope():`` items;
      * ``statement`` – the statement holding a matching constructor call;
      * ``decorator`` – the decorator the match stands in (``@tf.function``, ``@tf.function(...)``);
      * ``block`` – statements around the match (a tape and its ``gradient`` call): the
        op's ``examine(planner, node, params)`` returns what to rewrite or why not, and
        ``statements(decision)`` the original statements its ``rewrite`` replaces.
    ``static`` says whether a use of a tracked object (a strategy variable) through
    this operation can be rewritten away; if any use cannot, the object is kept and
    handled at run time instead.

    The engine never asks an operation's name; it asks these:
      * ``marks`` – the match stays as it is and is marked for a person (a ``# migrate:``
        comment and a finding; :meth:`describe` says what they read);
      * ``fallback`` – it marks what no other rule maps: when a rule that matched refused
        the same use, that rule's refusal says better why the use stays;
      * ``removes_statement`` – the statement holding the matched call goes whole, a comment
        (:meth:`removal_reason`) in its place;
      * ``goes_with_readers`` – a binding of the match (``cpu = ...``) whose every reader is a
        statement that goes away goes with them, :meth:`removal_reason` in its place.
    """

    name: str = ""
    target: str = "reference"
    static: bool = True
    params: dict[str, Param] = {}
    marks: bool = False
    fallback: bool = False
    removes_statement: bool = False
    goes_with_readers: bool = False

    def validate_params(self, params: dict[str, Any]) -> None:
        for key in params:
            if key not in self.params:
                raise ValueError(f"operation '{self.name}' has no parameter '{key}' (known: {', '.join(self.params) or 'none'})")
        for key, spec in self.params.items():
            if key not in params:
                if spec.required:
                    raise ValueError(f"operation '{self.name}' needs parameter '{key}'")
                continue
            if not isinstance(params[key], spec.type):
                names = spec.type.__name__ if isinstance(spec.type, type) else " or ".join(t.__name__ for t in spec.type)
                raise ValueError(f"parameter '{key}' must be {names}")
        self.check(params)

    def check(self, params: dict[str, Any]) -> None:
        """Further validation of parameter values; raise ValueError."""

    def describe(self, params: dict[str, Any], api: str) -> str | None:
        """What the finding (and a flag's comment) says about one match of ``api``; None: the rule's summary."""
        return None

    def mark(self, params: dict[str, Any], api: str) -> str:
        """The text after ``# migrate: ID`` above a use this operation marks (``marks``)."""
        return self.describe(params, api) or params["message"]

    def accepts(self, node: cst.CSTNode, parent: Callable[[cst.CSTNode], cst.CSTNode | None], params: dict[str, Any]) -> bool:
        """Can this operation rewrite ``node`` (the matched reference) where it stands?"""
        return True

    def everywhere(self, params: dict[str, Any]) -> bool:
        """Whether the rule decides every use of its names, wherever it stands; False for one that
        takes only uses in certain places (:meth:`accepts_in`), whose other uses are the next rule's.
        What a file's calls stay TensorFlow for (:mod:`migrate.engine.tfvalues`) is read off the
        first rule of a name that decides everywhere."""
        return True

    def accepts_in(self, view, node: cst.CSTNode, params: dict[str, Any]) -> bool:
        """:meth:`accepts`, for an operation that must also resolve names around ``node``:
        ``view`` is the planner (``parent(node)``, ``resolve(node)``)."""
        return self.accepts(node, view.parent, params)

    def waits_for(self, view, node: cst.CSTNode, params: dict[str, Any]) -> list[cst.CSTNode]:
        """When :meth:`accepts_in` said no only for reads that sit in arguments of calls: those
        reads. The use is decided once the walk is over: accepted if every one of them is in an
        argument a planned rewrite leaves out (:meth:`dropped`), refused otherwise. Empty: no."""
        return []

    def keeps_tf(self, params: dict[str, Any]) -> bool:
        """Whether a use this operation marks stays TensorFlow as written (its arguments too);
        one it renames (a flag's ``to``) does not."""
        return False

    # Whether what a call that stays TensorFlow through this operation returns is a TensorFlow
    # value (a tensor, a variable, a model) that must not reach MindSpore; a device query's
    # answer (PhysicalDevice records, names) is plain data.
    makes_tf_values: bool = True
    # Whether the conversion may take TensorFlow values as arguments: a strategy's constructor
    # reads its arguments as configuration (devices, a device assignment), no kernel runs on them.
    accepts_tf_values: bool = False

    def removal_reason(self, params: dict[str, Any]) -> str:
        """The comment's reason where a statement goes (``removes_statement``, ``goes_with_readers``)."""
        return params["reason"]

    def refusal(self, params: dict[str, Any]) -> str:
        """Why a match was left as it is, when :meth:`accepts` said no (shown to a person)."""
        return "this use does not fit the rule; convert it by hand"

    def dropped(self, call: cst.Call, params: dict[str, Any]) -> list[cst.Arg]:
        """Arguments of ``call`` the rewrite leaves out: nothing inside them is planned or reported."""
        return []


def imported_from(module: cst.Module, package: str, name: str) -> str | None:
    """The name a module-level ``from <package> import <name> [as x]`` binds in ``module``, if it has one."""
    from libcst.helpers import get_full_name_for_node

    for statement in module.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        if (isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None
                and get_full_name_for_node(small.module) == package and not isinstance(small.names, cst.ImportStar)):
            for alias in small.names:
                if alias.evaluated_name == name:
                    return alias.evaluated_alias or name
    return None


def target_names(target: cst.CSTNode) -> list[str]:
    """The names an assignment target binds (``a``, ``a, (b, *c)``; not ``x.a`` or ``x[i]``)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []
