"""libcst costs paid once per class instead of once per visitor, or not at all, while a conversion runs.

When the speed-ups apply
------------------------
Importing this module changes nothing in libcst. :func:`speedups` is a context manager the
engine enters around each file's conversion, on the thread that converts it
(:mod:`migrate.engine.convert`). While a thread is inside it, a few functions of libcst (listed
below) are replaced by stand-ins; when the last one leaves, libcst's own functions are put
back (the same objects). A run of many files holds them in from its first conversion to its
end (:func:`held`, taken by :mod:`migrate.engine.runner` and by each worker process of a run),
so that they are swapped once per run, not at every file. Each stand-in does exactly what
libcst's function does unless the thread calling it is inside :func:`speedups`; the walks
and the remembered scans below are, besides, only for visitor classes of libcst and of this
package. So a visitor defined anywhere else, and any code on another thread, runs libcst's
own code, during a conversion as before and after it.

The speed-ups are on only when libcst's version is one of :data:`TESTED_LIBCST` (the ends of
the range ``pyproject.toml`` allows, which CI runs the engine's tests under) and the
environment variable ``MIGRATE_LIBCST_SPEEDUPS`` is not ``0`` (nor ``off``, ``false``, ``no``).
Otherwise :func:`speedups` does nothing and plain libcst runs, with the same output. What the
stand-ins need of libcst's internals is looked up the first time :func:`speedups` is entered,
guarded: if a libcst release moved any of it, nothing is replaced. :func:`positions`,
:func:`code` and :func:`parse_module` give libcst's own answers outside :func:`speedups`
(PositionProvider, ``module.code``, ``cst.parse_module``), and :func:`methods_of` reads only
public classes.

What they do
------------
Every matcher-decoratable visitor (AddImportsVisitor, RemoveImportsVisitor and the
gatherers they build) scans ``dir(self)`` three times when it is constructed, looking
for methods carrying ``@m.visit``/``@m.leave``/``@m.call_if_inside`` matchers. libcst's
own import helpers carry none, and the scan is the same for every instance of a class,
yet it costs 3–4 ms per visitor: on a small file that is most of a conversion.

For classes of libcst and of this package whose scan found nothing, the answer is
remembered (a fresh empty dict each time: libcst fills these dicts as it visits).
Classes with decorated methods, and any class from elsewhere, are scanned as before.
The metadata providers that share one walk (scope, expression context, qualified
names) are batchable visitors; each walk asks every one of them for its ``visit_*`` and
``leave_*`` methods with ``inspect.getmembers`` (another ``dir()`` scan). The method
names of a class do not change, so they are found once per class and bound per instance.

A read-only visit (a :class:`~libcst.CSTVisitor`, such as the planner's passes and the
scope analysis) walks the tree without rebuilding it. libcst visits children through
each node's ``_visit_and_replace_children``, which constructs (and validates) a new node
at every level even when nothing can change, and then throws it away: about half the
cost of a walk. Here the fields each node class visits, in the order it visits them, are
read once from that method's own source, and the walk calls the same ``on_visit``,
``on_leave`` and attribute callbacks on the same nodes in the same order, building
nothing. A class whose method does not read as a plain list of field visits is visited
as libcst does it; transformers always are.

Resolving a provider that is not batchable (positions) also made libcst walk the whole
tree with an empty batch of visitors; an empty batch is now no walk, and neither is a
batch whose only callback is ``visit_Module`` (the scope analysis, which walks the tree
itself from there: libcst then walked it a second time for nothing), nor a visitor whose
only callbacks are the module's (AddImportsVisitor's gatherer of the imports at the top
reads them all in its ``leave_Module``, after a walk of every node). And positions
come from :class:`Positions`: libcst's PositionProvider works out a line and column after
every token and makes position objects for every node; here codegen notes each node's
first and last token, and only the nodes asked about get a position. Codegen enters a
plain context manager around each parenthesizable expression instead of libcst's
generator-based one, and the final code copies the tokens of statements left as they
were (:func:`code`).

The parser builds only valid nodes, yet each checks itself as it is made (libcst's
``CSTNode.__post_init__``): :func:`parse_module` skips those checks for the nodes made by
its own parse. The flag that says so is the parsing thread's own, so a node made on any
other thread meanwhile is checked as always.

``libcst.matchers`` is imported here, before anything else of this package imports it, with
dataclasses' class docstrings left as the class's name: the module makes about 175
dataclasses, and Python renders each one's signature (its fields' long ``Union`` types)
into a docstring nobody reads here, a tenth of a one-file run's time. (Not when the
speed-ups are switched off; the ``dataclasses`` module is itself again once the import is done.)

:class:`Positions` relies on libcst's codegen protocol (``before_codegen``,
``after_codegen``, ``record_syntactic_position``); the tests compare its positions, the
walk's callbacks and the scope analysis with libcst's own on every fixture, so a libcst
that changes any of them fails there first.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import linecache
import os
import re
import textwrap
import threading
import weakref
from bisect import bisect_right
from collections.abc import Mapping
from itertools import accumulate
from types import FunctionType

import libcst as cst
from libcst import CSTNode, CSTVisitor, MaybeSentinel
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

# The libcst releases the speed-ups were tested with: the lowest and highest that
# pyproject.toml allows (CI runs the engine's tests under both, with the speed-ups on and off).
TESTED_LIBCST = ("1.8.1", "1.9.0")
SWITCH = "MIGRATE_LIBCST_SPEEDUPS"
_OFF = ("0", "off", "false", "no")


def switched_on() -> bool:
    """Whether ``MIGRATE_LIBCST_SPEEDUPS`` leaves the speed-ups on (it does unless it is ``0``)."""
    return os.environ.get(SWITCH, "").strip().lower() not in _OFF


class _Unsigned:
    """The ``inspect`` module as ``dataclasses`` sees it while libcst.matchers is imported:
    no class has a signature, so a dataclass without a docstring is documented by its name."""

    def __getattr__(self, name: str):
        return getattr(inspect, name)

    @staticmethod
    def signature(*args, **kwargs):
        raise ValueError("not rendered while libcst.matchers is imported")


def _import_matchers():
    seen = getattr(dataclasses, "inspect", None)
    quick = seen is inspect and switched_on()
    if quick:
        dataclasses.inspect = _Unsigned()
    try:
        import libcst.matchers as matchers
    finally:
        if quick:
            dataclasses.inspect = inspect
    return matchers


_matchers = _import_matchers()

_GATHERERS = ("_gather_matchers", "_gather_constructed_visit_funcs", "_gather_constructed_leave_funcs")
_OURS = ("libcst.", "migrate.")


# -- switching the speed-ups on and off ------------------------------------------------------


class _ThreadState(threading.local):
    depth = 0  # how many speedups() this thread is inside
    trusting = False  # this thread is inside parse_module: the nodes it makes skip their checks


_here = _ThreadState()
_lock = threading.Lock()
_holders = 0  # threads inside speedups(), and runs inside held()
_version: list[str | None] = []  # libcst's, once looked up
_stand_ins: list[tuple] | None = None  # (owner, name, libcst's, ours) once looked up; [] when unusable
_installed: list[tuple] = []  # (owner, name, what the owner itself held or _ABSENT, ours)
_ABSENT = object()
# Filled when the stand-ins are made (they need libcst's private CodegenState and batch visitor).
_BATCHED: type | None = None
_SpanState: type | None = None
_ReusingState: type | None = None


def libcst_version() -> str | None:
    if not _version:
        found = getattr(cst, "LIBCST_VERSION", None)
        if not found or found == "unknown":
            try:
                from importlib.metadata import version

                found = version("libcst")
            except Exception:  # noqa: BLE001 - a vendored libcst: not a tested one
                found = None
        _version.append(found)
    return _version[0]


def _wanted() -> bool:
    return switched_on() and libcst_version() in TESTED_LIBCST


def available() -> bool:
    """Whether :func:`speedups` would switch anything on: a tested libcst, not switched off,
    whose internals are where the stand-ins expect them."""
    return _wanted() and bool(_usable_stand_ins())


def active() -> bool:
    """Whether the calling thread is inside :func:`speedups` with the speed-ups on."""
    return _here.depth > 0


class _SpeedUps:
    __slots__ = ("counted",)

    def __enter__(self) -> _SpeedUps:
        self.counted = False
        if _here.depth:
            _here.depth += 1
            self.counted = True
        elif _wanted() and _hold():
            _here.depth = 1
            self.counted = True
        return self

    def __exit__(self, *exc) -> bool:
        if self.counted:
            self.counted = False
            _here.depth -= 1
            if not _here.depth:
                _release()
        return False


def speedups() -> _SpeedUps:
    """A context manager: the speed-ups on for the calling thread while inside (re-entrant;
    entering in a thread already inside costs a counter). The first to enter puts the
    stand-ins in, the last to leave puts libcst's own back (see :func:`held`)."""
    return _SpeedUps()


class _Held:
    __slots__ = ("counted",)

    def __init__(self) -> None:
        self.counted = False  # (an interrupt inside __enter__ leaves nothing for __exit__ to undo)

    def __enter__(self) -> _Held:
        self.counted = _wanted() and _hold()
        return self

    def __exit__(self, *exc) -> bool:
        if self.counted:
            self.counted = False
            _release()
        return False


def held() -> _Held:
    """A context manager: the stand-ins stay in while inside, for a run of many files (one
    swap of libcst's functions instead of two at every file: each swap costs every node class
    its attribute caches, and from Python 3.13 on a class changed a thousand times is never
    cached again). It switches the speed-ups on for no thread; :func:`speedups` does, around
    each file."""
    return _Held()


def _hold() -> bool:
    global _holders
    with _lock:
        if not _holders and not _install():
            return False
        _holders += 1
        return True


def _release() -> None:
    global _holders
    with _lock:
        if _holders:  # (a hold taken before a fork and left in the child: see _after_fork_in_child)
            _holders -= 1
            if not _holders:
                _uninstall()


def _install() -> bool:
    stand_ins = _usable_stand_ins()
    if not stand_ins:
        return False
    for owner, name, original, ours in stand_ins:
        # What the owner holds now must be what the stand-in was made from: if someone else
        # replaced it since, theirs stays.
        if getattr(owner, name, None) is original:
            _installed.append((owner, name, owner.__dict__.get(name, _ABSENT), ours))
            setattr(owner, name, ours)
    return True


def _uninstall() -> None:
    while _installed:
        owner, name, own, ours = _installed.pop()
        if owner.__dict__.get(name) is not ours:
            continue  # replaced again by someone else while ours was in: theirs stays
        if own is _ABSENT:
            delattr(owner, name)
        else:
            setattr(owner, name, own)


def _after_fork_in_child() -> None:
    """A forked child has only the thread that forked: the other threads' holds did not come
    along (nor may the lock, if one of them held it), and a run's hold is the parent's."""
    global _lock, _holders
    _lock = threading.Lock()
    _holders = 1 if _here.depth else 0
    if not _holders:
        _uninstall()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _usable_stand_ins() -> list[tuple]:
    global _stand_ins
    if _stand_ins is None:
        try:
            _stand_ins = _make_stand_ins()
        except Exception:  # noqa: BLE001 - an internal moved or changed: plain libcst, as documented
            _stand_ins = []
    return _stand_ins


def _make_stand_ins() -> list[tuple]:
    """(owner, attribute, libcst's value, its stand-in) for each speed-up. Raises when something
    a stand-in needs is not where it was (a libcst that moved its internals)."""
    global _BATCHED, _SpanState, _ReusingState
    from libcst._batched_visitor import _BatchedCSTVisitor
    from libcst._nodes.expression import _BaseParenthesizedNode
    from libcst._nodes.internal import CodegenState
    from libcst.matchers import _visitors as matcher_visitors
    from libcst.metadata import wrapper

    for node_class in (CSTNode, *_REUSABLE):
        if not callable(getattr(node_class, "_visit_and_replace_children", None)):
            raise AttributeError(f"{node_class.__name__} visits its children some other way")
    span_state, reusing_state = _codegen_states(CodegenState)
    # (own: the class's own attribute; otherwise what the class finds, inherited)
    wanted = [(matcher_visitors, name, _remembering, True) for name in _GATHERERS]
    wanted += [
        (cst.BatchableCSTVisitor, "get_visitors", _visitor_names, True),
        (wrapper, "_gen_batchable", _batch_or_nothing, True),
        (CSTNode, "visit", lambda original: _read_only_visit(original, _BatchedCSTVisitor), True),
        (CSTNode, "__post_init__", _checked_unless_parsing, True),
        (_BaseParenthesizedNode, "_parenthesize",
         lambda original: _plain_parenthesize(original, CodegenState, span_state, reusing_state), True),
    ]
    wanted += [(cls, "_codegen", _reusing, False) for cls in _REUSABLE]  # (each inherits CSTNode's: gets its own)
    found = []
    for owner, name, make, own in wanted:
        original = owner.__dict__.get(name) if own else getattr(owner, name, None)
        if not callable(original):
            raise AttributeError(f"{owner.__name__}.{name} is not a function here")
        ours = make(original)
        if ours is not None:  # (None: libcst's reads otherwise than the stand-in reproduces)
            found.append((owner, name, original, ours))
    _BATCHED, _SpanState, _ReusingState = _BatchedCSTVisitor, span_state, reusing_state
    return found


def _stand_in(function, original):
    """``function``, standing in for libcst's ``original`` (which it calls when not for it to act)."""
    function.__wrapped__ = original
    function.__doc__ = original.__doc__
    return function


def _remembering(original):
    found_nothing: set[type] = set()

    def gather(obj):
        if not _here.depth:
            return original(obj)
        cls = type(obj)
        if cls in found_nothing:
            return {}
        result = original(obj)
        if not result and cls.__module__.startswith(_OURS):
            found_nothing.add(cls)
        return result

    return _stand_in(gather, original)


def _visitor_names(original):
    names: dict[type, tuple[str, ...]] = {}

    def get_visitors(self):
        cls = type(self)
        if not (_here.depth and cls.__module__.startswith(_OURS)):
            return original(self)
        known = names.get(cls)
        if known is None:
            found = original(self)
            names[cls] = tuple(found)
            return found
        return {name: getattr(self, name) for name in known}

    return _stand_in(get_visitors, original)


# -- read-only walks ---------------------------------------------------------------------------

_VISITS = ("visit_required", "visit_optional", "visit_sentinel", "visit_sequence", "visit_iterable",
           "visit_body_sequence", "visit_body_iterable")
_UNKNOWN = None
_fields: dict[type, tuple[tuple[str, bool], ...] | None] = {}


def _field_visit(call: ast.AST, field: str, locals_: dict[str, str]) -> bool:
    """Whether ``call`` is ``visit_*(self, "<field>", self.<field>, visitor)`` (or a local copy of it)."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in _VISITS
            and len(call.args) == 4 and not call.keywords):
        return False
    me, name, value, visitor = call.args
    if not (isinstance(me, ast.Name) and me.id == "self" and isinstance(visitor, ast.Name) and visitor.id == "visitor"):
        return False
    if not (isinstance(name, ast.Constant) and name.value == field):
        return False
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
        return value.attr == field
    return isinstance(value, ast.Name) and locals_.get(value.id) == field


def _parsed(function) -> ast.Module:
    """``ast.parse`` of ``inspect.getsource(function)``, dedented, without tokenizing the file from
    the function on (most of the cost): its lines run from the code's first line to the last
    one its instructions span. Text that does not parse is read again as inspect reads it."""
    try:
        code = function.__code__
        lines = linecache.getlines(code.co_filename)
        last = max(end for _, end, _, _ in code.co_positions() if end is not None)
        return ast.parse(textwrap.dedent("".join(lines[code.co_firstlineno - 1:last])))
    except (AttributeError, ValueError, SyntaxError):
        return ast.parse(textwrap.dedent(inspect.getsource(function)))


def _read_fields(cls: type) -> tuple[tuple[str, bool], ...] | None:
    """(field, visited only when not None) for each field ``cls`` visits, in order; None if unsure."""
    method = getattr(cls, "_visit_and_replace_children", None)
    try:
        function = _parsed(method).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return _UNKNOWN
    if not isinstance(function, ast.FunctionDef):
        return _UNKNOWN
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Name) and body[0].value.id == "self":
        return ()  # a leaf: nothing to visit
    locals_: dict[str, str] = {}  # `names = self.names`
    built = None
    for statement in body:
        target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
        value = statement.value if isinstance(statement, (ast.Assign, ast.Return)) else None
        if built is None and isinstance(target, ast.Name) and isinstance(value, ast.Attribute) \
                and isinstance(value.value, ast.Name) and value.value.id == "self":
            locals_[target.id] = value.attr
        elif built is None and isinstance(value, ast.Call) and (isinstance(statement, ast.Return) or isinstance(target, ast.Name)):
            built = (statement, value)
        elif built is not None and isinstance(statement, ast.Return) and isinstance(statement.value, ast.Name) \
                and isinstance(built[0], ast.Assign) and built[0].targets[0].id == statement.value.id:
            built = (statement, built[1])
        else:
            return _UNKNOWN
    if built is None or not isinstance(built[0], ast.Return) or built[1].args:
        return _UNKNOWN
    fields = []
    for keyword in built[1].keywords:
        value, field = keyword.value, keyword.arg
        if field is None:
            return _UNKNOWN
        if _field_visit(value, field, locals_):
            fields.append((field, False))
        elif isinstance(value, ast.IfExp):
            visits = [_field_visit(branch, field, locals_) for branch in (value.body, value.orelse)]
            others = [branch for branch, visit in zip((value.body, value.orelse), visits) if not visit]
            if all(visits):
                fields.append((field, False))
            elif any(visits) and all(isinstance(o, ast.Constant) and o.value is None for o in others):
                fields.append((field, True))  # `visit_sequence(...) if x is not None else None`
            else:
                return _UNKNOWN
        elif isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
            continue  # copied as it is, never visited (`value=self.value`)
        else:
            return _UNKNOWN
    return tuple(fields)


def fields_of(cls: type) -> tuple[tuple[str, bool], ...] | None:
    try:
        return _fields[cls]
    except KeyError:
        found = _fields[cls] = _read_fields(cls)
        return found


class _Every:
    """Every (node type, field) pair: a visitor whose attribute callbacks are its own code."""

    def __contains__(self, pair) -> bool:
        return True

    def __bool__(self) -> bool:
        return True


_EVERY = _Every()
_NEWLINES = re.compile(r"\r\n?|\n")  # as libcst's positions count lines
# Statements whose generated text depends only on the statement and the indentation (an
# `If` may be written as `elif`, a block's statements are what changes).
_REUSABLE = frozenset(getattr(cst, name) for name in ("SimpleStatementLine", "FunctionDef", "ClassDef", "For", "While",
                                                      "With", "Try", "TryStar", "Match") if hasattr(cst, name))
_ATTRIBUTE_METHOD = re.compile(r"^(?:visit|leave)_([A-Za-z0-9]+)_(\w+)$")
# libcst's base visitors, which define a do-nothing `visit_<Node>_<field>` (and `visit_<Node>`) for everything.
_STUBS = frozenset((*CSTVisitor.__mro__, *cst.CSTTransformer.__mro__))
# Per visitor class (weakly: a class made inside a function is one per call).
_class_hooks: "weakref.WeakKeyDictionary[type, frozenset[tuple[str, str]] | _Every]" = weakref.WeakKeyDictionary()
_read_only: "weakref.WeakKeyDictionary[type, bool]" = weakref.WeakKeyDictionary()


def _pairs(names) -> frozenset[tuple[str, str]]:
    return frozenset(m.groups() for m in map(_ATTRIBUTE_METHOD.match, names) if m)


def _own_names(cls: type) -> set[str]:
    """Method names ``cls`` and its bases define, less libcst's do-nothing stubs for every node."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass not in _STUBS:
            names.update(klass.__dict__)
    return names


# Attribute callbacks that only call the visitor's own `visit_<Node>_<field>` methods:
# libcst's, and its matcher visitors' (which first check the method's matchers).
_PLAIN_ATTRIBUTE_CALLBACKS = {
    (CSTVisitor.on_visit_attribute, CSTVisitor.on_leave_attribute),
    (_matchers.MatcherDecoratableVisitor.on_visit_attribute, _matchers.MatcherDecoratableVisitor.on_leave_attribute),
}


def _attribute_hooks(visitor: CSTVisitor):
    """The (node type, field) pairs whose attribute callbacks may do something for ``visitor``."""
    cls = type(visitor)
    if cls is _BATCHED:  # its methods are its visitors' (remembered on it)
        hooks = visitor.__dict__.get("_migrate_hooks")
        if hooks is None:
            hooks = visitor.__dict__["_migrate_hooks"] = _pairs(visitor.visitor_methods)
        return hooks
    hooks = _class_hooks.get(cls)
    if hooks is None:
        if (cls.on_visit_attribute, cls.on_leave_attribute) in _PLAIN_ATTRIBUTE_CALLBACKS:
            hooks = _pairs(_own_names(cls))
        else:
            hooks = _EVERY
        _class_hooks[cls] = hooks
    return hooks


def _walk(node: CSTNode, visitor: CSTVisitor, on_visit, on_leave, hooks) -> None:
    if on_visit(node):
        fields = _fields.get(type(node), 0)
        if fields == 0:
            fields = fields_of(type(node))
        if fields is None:  # visited as libcst does it (its children come back here)
            node._visit_and_replace_children(visitor)
        else:
            for field, optional in fields:
                value = getattr(node, field)
                hooked = hooks and (type(node).__name__, field) in hooks
                if hooked:
                    if optional and value is None:
                        continue
                    visitor.on_visit_attribute(node, field)
                kind = type(value)
                if kind is tuple or kind is list:
                    for child in value:
                        _walk(child, visitor, on_visit, on_leave, hooks)
                elif value is not None and kind is not MaybeSentinel:
                    _walk(value, visitor, on_visit, on_leave, hooks)
                if hooked:
                    visitor.on_leave_attribute(node, field)
    on_leave(node)


def _module_only(visitor) -> bool:
    return (visitor.before_visit is None and visitor.after_leave is None
            and all(name in _MODULE_CALLBACKS for name in visitor.visitor_methods))


def _batch_is_ours(visitor) -> bool:
    """Whether every callback of a batch of visitors is a method of libcst's or of this package's
    (the metadata providers of the scope analysis are; a batch anyone else runs may not be)."""
    ours = visitor.__dict__.get("_migrate_ours")
    if ours is None:
        try:
            callbacks = [f for methods in visitor.visitor_methods.values() for f in methods]
            callbacks += [f for f in (visitor.before_visit, visitor.after_leave) if f is not None]
        except AttributeError:  # a batch made otherwise: libcst's own walk
            callbacks = [None]
        ours = visitor.__dict__["_migrate_ours"] = all(
            type(getattr(f, "__self__", None)).__module__.startswith(_OURS) for f in callbacks)
    return ours


_MODULE_CALLBACKS = ("visit_Module", "leave_Module")
_PLAIN_CALLBACKS = {
    (CSTVisitor.on_visit, CSTVisitor.on_leave),
    (_matchers.MatcherDecoratableVisitor.on_visit, _matchers.MatcherDecoratableVisitor.on_leave),
}
_module_class: "weakref.WeakKeyDictionary[type, bool]" = weakref.WeakKeyDictionary()


def _reads_only_the_module(visitor: CSTVisitor) -> bool:
    """Whether ``visitor``'s only callbacks are the module's own: libcst's gatherer of the
    imports at the top of a module (AddImportsVisitor's first pass) reads them all in its
    ``leave_Module``. Then no node below the module can call anything."""
    cls = type(visitor)
    plain = _module_class.get(cls)
    if plain is None:
        plain = _module_class[cls] = (
            (cls.on_visit, cls.on_leave) in _PLAIN_CALLBACKS
            and (cls.on_visit_attribute, cls.on_leave_attribute) in _PLAIN_ATTRIBUTE_CALLBACKS
            and all(name in _MODULE_CALLBACKS for name in _own_names(cls) if name.startswith(("visit_", "leave_"))))
    if plain and _instance_callbacks(visitor):
        return False
    if plain and isinstance(visitor, _matchers.MatcherDecoratableVisitor):
        # (Whatever of these a libcst does not have counts as something to call: walked whole.)
        return not any(getattr(visitor, name, True) for name in ("_extra_visit_funcs", "_extra_leave_funcs", "_matchers"))
    return plain


def _instance_callbacks(visitor) -> bool:
    """Whether a callback was set on the instance itself (``self.visit_Name = …``): libcst finds it by name."""
    return any(name.startswith(("visit_", "leave_")) for name in getattr(visitor, "__dict__", ()))


_node_by_name: dict[str, set[type]] = {}


def _node_classes(name: str) -> set[type]:
    """The node classes called ``name``: libcst's slotted class and the class it was made from
    (both are subclasses of the same bases; the parser makes the first)."""
    if not _node_by_name:
        stack = [CSTNode]
        while stack:
            cls = stack.pop()
            _node_by_name.setdefault(cls.__name__, set()).add(cls)
            stack += cls.__subclasses__()
    return _node_by_name.get(name, set())


def _own_methods(cls: type, prefix: str) -> dict[type, str] | None:
    """Node class -> the name of ``cls``'s own ``<prefix><Node>`` method, for every node class
    that has one (libcst's do-nothing stubs left out); None if one is not a plain function.
    Names, looked up when called: a method replaced on the class later is the one called."""
    table = {}
    for name in _own_names(cls):
        node_classes = _node_classes(name[len(prefix):]) if name.startswith(prefix) else ()
        if not node_classes:
            continue
        for klass in cls.__mro__:  # the one getattr finds
            if name in klass.__dict__:
                if klass not in _STUBS:
                    if not isinstance(klass.__dict__[name], FunctionType):
                        return None
                    table.update(dict.fromkeys(node_classes, name))
                break
    return table


_dispatch: "weakref.WeakKeyDictionary[type, tuple[dict, dict]]" = weakref.WeakKeyDictionary()


def methods_of(cls: type) -> tuple[dict[type, str], dict[type, str]] | None:
    """The names of ``cls``'s own ``visit_<Node>`` and ``leave_<Node>`` methods, by node class
    (None when one of them is something other than a plain function). Calling the method a
    table names for a node, and nothing for a node it does not hold, is what libcst's
    ``on_visit``/``on_leave`` do (they call a do-nothing stub there). Read from public classes
    only: the same with the speed-ups on or off."""
    tables = _dispatch.get(cls, 0)
    if tables == 0:
        visits, leaves = _own_methods(cls, "visit_"), _own_methods(cls, "leave_")
        tables = _dispatch[cls] = None if visits is None or leaves is None else (visits, leaves)
    return tables


def _callbacks(visitor: CSTVisitor):
    """``visitor.on_visit`` and ``visitor.on_leave``; for a class that keeps CSTVisitor's own, the
    same calls made from a table of its methods by node class: libcst's look the method up by
    name for every node (an f-string and a getattr) and call a do-nothing stub for most."""
    cls = type(visitor)
    plain_visit, plain_leave = cls.on_visit is CSTVisitor.on_visit, cls.on_leave is CSTVisitor.on_leave
    if not (plain_visit or plain_leave) or _instance_callbacks(visitor):
        return visitor.on_visit, visitor.on_leave
    tables = methods_of(cls)
    if tables is None:
        return visitor.on_visit, visitor.on_leave
    visits, leaves = tables

    def on_visit(node):
        name = visits.get(type(node))
        return name is None or getattr(visitor, name)(node) is not False

    def on_leave(node):
        name = leaves.get(type(node))
        if name is not None:
            getattr(visitor, name)(node)

    return (on_visit if plain_visit else visitor.on_visit), (on_leave if plain_leave else visitor.on_leave)


def _read_only_visit(original, batched: type):
    def visit(self, visitor):
        cls = type(visitor)
        read_only = _read_only.get(cls)
        if read_only is None:  # (an ABC's isinstance is slow for new classes)
            read_only = _read_only[cls] = CSTVisitor in cls.__mro__ and cls.__module__.startswith(_OURS)
        if not (read_only and _here.depth):
            return original(self, visitor)
        if cls is batched:
            if not _batch_is_ours(visitor):
                return original(self, visitor)
            module_only = _module_only(visitor)
        else:
            module_only = _reads_only_the_module(visitor)
        if module_only:
            # Only the module's own callbacks (libcst's scope analysis walks the tree in its
            # visit_Module): no node below can call anything.
            visitor.on_visit(self)
            visitor.on_leave(self)
            return self
        _walk(self, visitor, *_callbacks(visitor), _attribute_hooks(visitor))
        return self

    return _stand_in(visit, original)


# -- metadata --------------------------------------------------------------------------------

def _batch_or_nothing(original):
    def gen_batchable(wrapper, providers):
        if _here.depth:
            providers = list(providers)
            if not providers:  # no batchable provider asked for: nothing to walk for
                return {}
        return original(wrapper, providers)

    return _stand_in(gen_batchable, original)


# -- node checks -----------------------------------------------------------------------------

def _checked_unless_parsing(original):
    def __post_init__(self) -> None:
        if not _here.trusting:
            original(self)

    return _stand_in(__post_init__, original)


def parse_module(code: str) -> cst.Module:
    """``cst.parse_module(code)``; inside :func:`speedups`, without each node checking itself
    as the parser makes it.

    libcst's nodes validate their fields in ``__post_init__`` (a ``Name`` is an identifier,
    an operator has its spaces); the parser builds only valid nodes, and the checks cost
    about a sixth of a parse (libcst's own comment there says as much). Only the nodes this
    thread makes while it parses skip them: nodes made while rewriting, and nodes any other
    thread makes meanwhile, are checked as always.
    """
    if not _here.depth:
        return cst.parse_module(code)
    trusting = _here.trusting
    _here.trusting = True
    try:
        return cst.parse_module(code)
    finally:
        _here.trusting = trusting


# -- codegen ---------------------------------------------------------------------------------

# libcst's `_parenthesize`, as this module reproduces it (not replaced if it reads otherwise).
_PARENTHESIZE_SOURCE = """\
    @contextmanager
    def _parenthesize(self, state: CodegenState) -> Generator[None, None, None]:
        for lpar in self.lpar:
            lpar._codegen(state)
        with state.record_syntactic_position(self):
            yield
        for rpar in self.rpar:
            rpar._codegen(state)
"""


class _Parenthesized:
    """libcst's ``_parenthesize`` context (the parentheses around an expression and its
    syntactic position, written around the expression's own tokens) as a plain context
    manager: codegen enters one per expression, and a generator-based one costs several
    times as much."""

    __slots__ = ("node", "state", "inner")

    def __init__(self, node, state) -> None:
        self.node, self.state = node, state

    def __enter__(self) -> None:
        for lpar in self.node.lpar:
            lpar._codegen(self.state)
        self.inner = self.state.record_syntactic_position(self.node)
        self.inner.__enter__()

    def __exit__(self, kind, value, traceback) -> bool:
        if not self.inner.__exit__(kind, value, traceback) and kind is not None:
            return False  # an error in the expression's codegen goes on (no closing parentheses), as in libcst's
        for rpar in self.node.rpar:
            rpar._codegen(self.state)
        return kind is not None  # (an error the position's context swallowed stays swallowed)


def _plain_parenthesize(original, plain_state: type, span_state: type, reusing_state: type):
    """The stand-in, for libcst's plain codegen and this module's (a codegen state of anyone
    else's, libcst's positions' among them, gets libcst's own); None for another libcst."""
    try:
        same = inspect.getsource(original.__wrapped__) == _PARENTHESIZE_SOURCE
    except (AttributeError, OSError, TypeError):
        same = False
    if not same:
        return None

    def _parenthesize(self, state):
        kind = type(state)
        if kind is span_state or kind is reusing_state or (kind is plain_state and _here.depth):
            return _Parenthesized(self, state)
        return original(self, state)

    return _stand_in(_parenthesize, original)


class _NoPosition:
    """What a plain codegen's ``record_syntactic_position`` yields: nothing to record."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> bool:
        return False


_NO_POSITION = _NoPosition()


class _Recording:
    """What ``record_syntactic_position`` yields, as a plain context manager."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state, node, start_node, end_node) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node
        self.start = len(state.tokens)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> bool:
        spans = self.state.spans
        start = spans[self.start_node][0] if self.start_node is not None else self.start
        end = spans[self.end_node][1] if self.end_node is not None else len(self.state.tokens)
        spans[self.node] = (start, end)
        return False


def _codegen_states(codegen_state: type) -> tuple[type, type]:
    """The codegen states of :class:`Positions` and :func:`code`, made on libcst's (private) one."""

    class _SpanState(codegen_state):
        """Codegen that notes where each node starts and ends as token indexes.

        libcst's position-recording state computes a line and column after every token and
        makes position objects for every node; here each node costs two list operations, and
        indexes become positions only for the nodes asked about (:class:`Positions`)."""

        def __init__(self, module) -> None:
            super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
            self.spans: dict = {}
            self.texts: dict = {}
            self.stack: list[int] = []

        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            return _Recording(self, node, start_node, end_node)

        def before_codegen(self, node) -> None:
            self.stack.append(len(self.tokens))

        def after_codegen(self, node) -> None:
            start = self.stack.pop()
            if type(node) in _REUSABLE:  # its whole text, and the indentation it was written at
                self.texts[node] = (start, len(self.tokens), list(self.indent_tokens))
            if node not in self.spans:  # a syntactic position recorded inside stays
                self.spans[node] = (start, len(self.tokens))

        def pop_trailing_newline(self) -> None:
            pass  # positions are counted with it, as libcst counts them; the text is not used

    class _ReusingState(codegen_state):
        """Codegen of a module made from another one: a statement of that module, written at the
        same indentation, is written as the tokens it was generated as there (see :func:`code`)."""

        def __init__(self, module, positions: Positions) -> None:
            super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
            self.texts, self.source = positions._texts, positions._tokens

        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            return _NO_POSITION  # (libcst's records nothing either, through a generator)

    return _SpanState, _ReusingState


def _reusing(original):
    def _codegen(self, state, **kwargs) -> None:
        if type(state) is _ReusingState and not kwargs:
            found = state.texts.get(self)
            if found is not None and found[2] == state.indent_tokens:
                state.tokens += state.source[found[0]:found[1]]
                return
        original(self, state, **kwargs)

    return _stand_in(_codegen, original)


def code(module, positions: Mapping | None) -> str:
    """``module.code``. Inside :func:`speedups`, when ``positions`` are :class:`Positions` made
    from a module the rewrite started from, its statements left as they were (the same node
    objects, at the same indentation, with the same defaults) are not generated again: their
    tokens are copied. Statements whose text depends on where they stand (an ``if`` written as
    ``elif``) are always generated."""
    if not (_here.depth and isinstance(positions, Positions)) \
            or (module.default_indent, module.default_newline) != positions._defaults:
        return module.code
    state = _ReusingState(module, positions)
    module._codegen(state)
    return "".join(state.tokens)


# -- positions -------------------------------------------------------------------------------

def positions(module: cst.Module) -> Mapping[CSTNode, CodeRange]:
    """Every node of ``module`` and its position, as libcst's PositionProvider gives it: from
    :class:`Positions` inside :func:`speedups`, from the provider itself outside."""
    if _here.depth:
        return Positions(module)
    return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


class Positions(Mapping):
    """Every node of a module and its :class:`~libcst.metadata.CodeRange`, as libcst's
    :class:`~libcst.metadata.PositionProvider` gives it, made when asked for (only once
    :func:`speedups` was entered: it needs a codegen state made on libcst's internals)."""

    def __init__(self, module) -> None:
        state = _SpanState(module)
        module._codegen(state)
        self._spans = state.spans
        self._texts = state.texts
        self._defaults = (module.default_indent, module.default_newline)
        self._tokens = tokens = state.tokens
        self._offsets = list(accumulate(map(len, tokens), initial=0))
        # Tokens holding newlines: where they end, how many lines they add, and the column after them.
        self._breaks: list[int] = []
        self._lines: list[int] = []
        self._columns: list[int] = []
        lines = 0
        for i, token in enumerate(tokens):
            if "\n" in token or "\r" in token:
                segments = _NEWLINES.split(token)
                lines += len(segments) - 1
                self._breaks.append(i + 1)
                self._lines.append(lines)
                self._columns.append(len(segments[-1]))
        self._made: dict[int, CodePosition] = {}

    def _position(self, index: int) -> CodePosition:
        found = self._made.get(index)
        if found is None:
            k = bisect_right(self._breaks, index) - 1  # the last token with a newline before ``index``
            if k < 0:
                found = CodePosition(1, self._offsets[index])
            else:
                after = self._breaks[k]
                found = CodePosition(1 + self._lines[k], self._columns[k] + self._offsets[index] - self._offsets[after])
            self._made[index] = found
        return found

    def __getitem__(self, node) -> CodeRange:
        start, end = self._spans[node]
        return CodeRange(self._position(start), self._position(end))

    def __iter__(self):
        return iter(self._spans)

    def __len__(self) -> int:
        return len(self._spans)

    def __contains__(self, node) -> bool:
        return node in self._spans
