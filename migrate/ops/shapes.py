"""Static shapes of a converted module's NumPy arrays, and of the batches its pipelines yield.

The native tier needs a model's input shape to write MindSpore's cells, which take their input
widths as arguments where Keras reads them from the first input. A Keras ``Sequential`` may
state it (``input_shape``, ``Input``); a subclassed model never does. This module reads it from
the data the module feeds the model, where the module's own straight-line code makes that data
from arrays of known shapes::

    (x_train, y_train), _ = mk.datasets.mnist.load_data()        # (n, 28, 28) uint8
    x_train = x_train[..., None].astype("float32") / 255.0       # (n, 28, 28, 1) float32
    train_ds = tfdata.Dataset.from_tensor_slices((x_train, y_train)).shuffle(100).batch(32)
    for images, labels in train_ds:                              # images: (batch, 28, 28, 1)
        train_step(images, labels)                               # model(images) in train_step

Values are evaluated statement by statement in the module's order: ``Arr`` (an array's shape,
rows first, and its dtype where known), ``Rows`` (a pipeline of arrays' rows, batched or not),
tuples of them, or None (not known). A name bound anywhere but by a plain module-level
assignment (a loop's target, a function's ``global``, an ``if`` branch) is never known.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import libcst as cst
from libcst.helpers import get_full_name_for_node


@dataclass(frozen=True)
class Arr:
    """A NumPy array: its shape (rows first; None where a size is not known) and dtype (or None)."""

    shape: tuple[int | None, ...]
    dtype: str | None

    @property
    def rows(self) -> tuple[int | None, ...] | None:
        """The shape of one row (what a pipeline's element, or a model's example, is)."""
        return self.shape[1:] if self.shape else None


# an array whose shape and dtype are not known (its rows are None): a pipeline's part this does not follow
_UNKNOWN = Arr((), None)


@dataclass(frozen=True)
class Rows:
    """A ``from_tensor_slices`` pipeline: the arrays it slices (a tuple's parts) and whether it is batched."""

    parts: tuple[Arr, ...]
    single: bool  # (sliced from one array, not a tuple: its element is that array's row)
    batched: bool


def _dotted(node: cst.CSTNode) -> str | None:
    """``a.b.c`` of Names and attributes only (not ``f().b``)."""
    inner = node
    while isinstance(inner, cst.Attribute):
        inner = inner.value
    return get_full_name_for_node(node) if isinstance(inner, cst.Name) else None


_FLOATS = {"float32", "float64", "float16"}
_DTYPES = {"float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "bool"}
# the methods of a pipeline that keep its elements (and their shapes) as they are
_KEEP = frozenset({"shuffle", "repeat", "prefetch", "cache", "take", "skip", "shard", "with_options"})
# names by which a module binds its names other than by writing them
_REFLECTION = ("globals", "vars", "exec", "eval", "locals")
_SAMPLES = {"normal": "float64", "uniform": "float64", "standard_normal": "float64", "random": "float64",
            "integers": "int64", "exponential": "float64", "poisson": "int64", "binomial": "int64"}


def _dtype(node: cst.CSTNode | None) -> str | None:
    """A dtype written as ``"float32"``, ``np.float32`` or ``numpy.float32``."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if value in _DTYPES else None
    name = _dotted(node) if node is not None else None
    if name is not None and name.split(".")[0] in ("np", "numpy") and name.split(".")[-1] in _DTYPES:
        return name.split(".")[-1]
    return None


def _arith(dtype: str | None, other: cst.BaseExpression, divide: bool) -> str | None:
    """NumPy 1.x's dtype of an array and a Python number: a float array keeps its dtype; an
    integer array divided, or combined with a float, is float64."""
    if dtype is None:
        return None
    if dtype in _FLOATS:
        return dtype
    number = other.expression if isinstance(other, cst.UnaryOperation) else other
    return "float64" if divide or isinstance(number, cst.Float) else dtype


class Shapes:
    """The static values of a module's names, statement by statement (see the module docstring).
    ``native``: the native pass (its names, parents and binding facts); ``params``: the model
    rule's ``data_shapes`` (each Keras dataset's arrays) and the dataset rule's names."""

    def __init__(self, native: Any, datasets: dict, sources: frozenset[str], distribute: frozenset[str]) -> None:
        self.p = native
        self.datasets = datasets
        self.sources = sources
        self.distribute = distribute

    @functools.cached_property
    def trackable(self) -> frozenset[str]:
        """Names every binding of which is a plain assignment in the module's own body, and
        whose value is never changed in place (``x.shape = ...``, ``x.resize(...)``); none where
        the module reaches its names by other ways (``globals()``, ``exec``)."""
        if any(word in self.p.names for word in _REFLECTION):
            return frozenset()
        out = set()
        for name, nodes in self.p.names.items():
            ok = True
            for node in nodes:
                if self.p.changes_in_place(node, values=False):
                    ok = False
                    break
                if not self.p.binds(node) or self.p._local(node):
                    continue
                top = self.p.top_index(node)
                statement = self.p.module.body[top]
                if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                        and isinstance(statement.body[0], cst.Assign) and self.p._scope_of(node) is None
                        and self._in_targets(node, statement.body[0])):
                    ok = False
                    break
            if ok:
                out.add(name)
        return frozenset(out)

    def _in_targets(self, node: cst.Name, assign: cst.Assign) -> bool:
        while node in self.p.parent and node is not assign:
            up = self.p.parent[node]
            if isinstance(up, cst.AssignTarget):
                return True
            if not isinstance(up, (cst.Tuple, cst.List, cst.Element)):
                return False
            node = up
        return False

    @functools.cached_property
    def envs(self) -> list[dict[str, Any]]:
        """The known values before each module statement (and one after the last)."""
        env: dict[str, Any] = {}
        out = []
        for statement in self.p.module.body:
            out.append(dict(env))
            if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                    and isinstance(statement.body[0], cst.Assign):
                assign = statement.body[0]
                value = self.value(assign.value, env)
                for target in assign.targets:
                    self._bind(target.target, value, env)
        out.append(dict(env))
        return out

    def _bind(self, target: cst.BaseExpression, value: Any, env: dict) -> None:
        if isinstance(target, cst.Name):
            if target.value in self.trackable:
                env[target.value] = value
            else:
                env.pop(target.value, None)
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            parts = [e.value for e in target.elements]
            known = isinstance(value, tuple) and len(value) == len(parts) and not any(
                isinstance(e, cst.StarredElement) for e in target.elements)
            for i, part in enumerate(parts):
                self._bind(part, value[i] if known else None, env)

    def at(self, node: cst.CSTNode, expr: cst.BaseExpression) -> Any:
        """The value of ``expr`` where the module statement holding ``node`` runs."""
        return self.value(expr, self.envs[self.p.top_index(node)])

    def value(self, expr: cst.BaseExpression, env: dict) -> Any:  # noqa: C901 (one case per form)
        if isinstance(expr, cst.Name):
            return env.get(expr.value) if expr.value in self.trackable else None
        if isinstance(expr, (cst.Tuple, cst.List)):
            if any(not isinstance(e, cst.Element) for e in expr.elements):
                return None
            return tuple(self.value(e.value, env) for e in expr.elements)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            inner = self.value(expr.expression, env)
            return inner if isinstance(inner, Arr) else None
        if isinstance(expr, cst.BinaryOperation):
            return self._binary(expr, env)
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, env)
        if isinstance(expr, cst.Call):
            return self._call(expr, env)
        return None

    def _binary(self, expr: cst.BinaryOperation, env: dict) -> Any:
        if isinstance(expr.operator, cst.MatrixMultiply):
            return self._matmul(self.value(expr.left, env), self.value(expr.right, env))
        if not isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power)):
            return None
        left, right = self.value(expr.left, env), self.value(expr.right, env)
        divide = isinstance(expr.operator, cst.Divide)
        for arr, other, node in ((left, right, expr.right), (right, left, expr.left)):
            if isinstance(arr, Arr) and other is None and _number(node):
                return Arr(arr.shape, _arith(arr.dtype, node, divide))
        if isinstance(left, Arr) and isinstance(right, Arr) and left.shape == right.shape and None not in left.shape[1:]:
            return Arr(left.shape, left.dtype if left.dtype == right.dtype and not divide else None)
        return None

    @staticmethod
    def _matmul(left: Any, right: Any) -> Arr | None:
        """``rows @ matrix``: an array of rows times a known matrix, NumPy's dtype of the two floats
        (the wider one), or None where that is not known."""
        if not (isinstance(left, Arr) and isinstance(right, Arr) and len(left.shape) >= 2 and len(right.shape) == 2
                and None not in right.shape and left.shape[-1] == right.shape[0]):
            return None
        widths = {"float16": 2, "float32": 4, "float64": 8}
        dtype = max(left.dtype, right.dtype, key=widths.get) if {left.dtype, right.dtype} <= set(widths) else None
        return Arr(left.shape[:-1] + right.shape[1:], dtype)

    def _subscript(self, expr: cst.Subscript, env: dict) -> Any:
        base = self.value(expr.value, env)
        if not isinstance(base, Arr):
            return None
        items = [s.slice for s in expr.slice]
        if len(items) == 2 and isinstance(items[0], cst.Index) and isinstance(items[0].value, cst.Ellipsis) \
                and isinstance(items[1], cst.Index) and _none(items[1].value):  # `x[..., None]`
            return Arr(base.shape + (1,), base.dtype)
        if len(items) == 1 and isinstance(items[0], cst.Slice) and items[0].step is None and base.shape:
            return Arr((None,) + base.shape[1:], base.dtype)  # (some rows)
        return None

    def _call(self, call: cst.Call, env: dict) -> Any:  # noqa: C901
        func = call.func
        name = _dotted(func)
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if len(positional) + len(keywords) != len(call.args):
            return None
        if name is not None and name in self.sources and len(positional) == 1 and not keywords:
            parts = self.value(positional[0], env)
            if isinstance(parts, Arr):
                return Rows((parts,), True, False)
            if isinstance(parts, tuple) and any(isinstance(a, Arr) for a in parts):
                # (a part this does not follow, `labels = f(x)`, is one of no known shape or dtype)
                return Rows(tuple(a if isinstance(a, Arr) else _UNKNOWN for a in parts), False, False)
            return None
        if name is not None and name in self.distribute and len(positional) == 1 and not keywords:
            rows = self.value(positional[0], env)
            return rows if isinstance(rows, Rows) and rows.batched else None
        if name is not None and name.split(".")[0] in ("np", "numpy"):
            return self._numpy(name.split(".", 1)[1] if "." in name else "", positional, keywords, env)
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        owner = func.value
        if method == "load_data" and not call.args:
            found = self._dataset(owner)
            if found is None:
                return None
            (x, y), (tx, ty) = found
            return ((Arr((None, *x[:-1]), x[-1]), Arr((None, *y[:-1]), y[-1])),
                    (Arr((None, *tx[:-1]), tx[-1]), Arr((None, *ty[:-1]), ty[-1])))
        base = self.value(owner, env)
        if isinstance(base, Rows):
            if method in _KEEP:
                return base
            if method == "batch":  # (batched again, its elements are batches of batches)
                return Rows(base.parts, base.single, True) if not base.batched else None
            return None
        if isinstance(base, Arr):
            if method == "astype" and positional:
                return Arr(base.shape, _dtype(positional[0]))
            if method == "reshape":
                return self._reshape(base, positional if len(positional) != 1 else positional[0])
            if method == "copy":
                return base
            return None
        sampler = self._generator(owner)
        if sampler and method in _SAMPLES:
            size = keywords.get("size")
            if size is None and method in ("standard_normal", "random") and positional:
                size = positional[0]
            shape = self._literal_shape(size, sizes=True)
            return Arr(shape, _SAMPLES[method]) if shape is not None else None
        return None

    def _numpy(self, name: str, positional: list, keywords: dict, env: dict) -> Any:
        if name in ("array", "asarray", "ascontiguousarray") and positional:
            inner = self.value(positional[0], env)
            if not isinstance(inner, Arr) or set(keywords) - {"dtype", "copy"} or len(positional) > 2:  # (`ndmin=`...)
                return None
            dtype = keywords.get("dtype", positional[1] if len(positional) > 1 else None)
            return Arr(inner.shape, _dtype(dtype) if dtype is not None else inner.dtype)
        if name in ("zeros", "ones", "empty") and positional and not set(keywords) - {"dtype", "order"} and len(positional) <= 2:
            shape = self._literal_shape(positional[0])
            dtype = keywords.get("dtype", positional[1] if len(positional) > 1 else None)
            return Arr(shape, _dtype(dtype) if dtype is not None else "float64") if shape is not None else None
        if name in ("random.rand", "random.randn") and positional and not keywords:
            shape = tuple(self.p.int_value(a) for a in positional)
            return Arr(shape, "float64") if None not in shape else None
        if name in ("random.normal", "random.uniform", "random.standard_normal", "random.random"):
            size = keywords.get("size", positional[0] if name in ("random.standard_normal", "random.random") and positional else None)
            shape = self._literal_shape(size, sizes=True)
            return Arr(shape, "float64") if shape is not None else None
        return None

    def _reshape(self, base: Arr, spec) -> Arr | None:
        dims = self._literal_shape(spec, allow_minus=True) if not isinstance(spec, list) else \
            tuple(self.p.int_value(a) if not _minus_one(a) else -1 for a in spec)
        if dims is None or None in dims or sum(d == -1 for d in dims) > 1:
            return None
        if -1 in dims:
            if dims.index(-1) != 0:
                known = base.shape[1:] if base.shape and base.shape[0] is None else base.shape
                if None in known or base.shape and base.shape[0] is None:
                    return None
                rest = math.prod(d for d in dims if d != -1)
                dims = tuple(math.prod(known) // rest if d == -1 else d for d in dims)
            else:
                dims = (None,) + dims[1:]
        return Arr(dims, base.dtype)

    def _literal_shape(self, node, allow_minus: bool = False, sizes: bool = False) -> tuple[int | None, ...] | None:
        """A shape written as a display of widths (or one width); with ``sizes``, a width that is not
        a literal or a module constant is None (``size=(EXAMPLES, 784)``: (None, 784), its dtype still known)."""
        if node is None:
            return None
        if isinstance(node, (cst.Tuple, cst.List)):
            if any(not isinstance(e, cst.Element) for e in node.elements):
                return None
            dims = tuple(-1 if allow_minus and _minus_one(e.value) else self.p.int_value(e.value) for e in node.elements)
            return None if None in dims and not sizes else dims
        one = self.p.int_value(node)
        return (one,) if one is not None else None

    def _dataset(self, owner: cst.BaseExpression) -> tuple | None:
        """The shapes and dtypes of a Keras dataset's arrays (``mk.datasets.mnist``, or a module
        name bound once to it)."""
        name = _dotted(owner)
        if isinstance(owner, cst.Name):
            bound = self.p._bound_once_to(owner, lambda read: True)
            name = _dotted(bound) if isinstance(bound, (cst.Name, cst.Attribute)) else name
        found = self.datasets.get(name or "")
        if found is None:
            return None
        return tuple(tuple(tuple(part) for part in half) for half in found)

    def _generator(self, owner: cst.BaseExpression) -> bool:
        """``owner`` is a module name bound once to ``np.random.default_rng(...)``."""
        if not isinstance(owner, cst.Name) or self.p._local(owner):
            return False
        bound = self.p._bound_once_to(owner, lambda read: True)
        return isinstance(bound, cst.Call) and _dotted(bound.func) in ("np.random.default_rng", "numpy.random.default_rng")


def _number(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def _none(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _minus_one(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
        and isinstance(node.expression, cst.Integer) and node.expression.evaluated_value == 1

