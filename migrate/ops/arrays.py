"""NumPy arrays handed to MindSpore's ops, given as tensors.

TF's ops convert what they are given: ``tf.nn.softmax(predictions)`` takes a NumPy array
(``predictions = model(x).numpy()``, ``x_train`` from ``load_data()``) and makes a tensor of
it, of the array's dtype. MindSpore's functional ops take tensors only and raise
``TypeError: Failed calling Softmax with ... input=<class 'numpy.ndarray'>``. So, once the
rules have rewritten a file, an argument of a call of MindSpore's ops (the rule's
``tensors`` modules) that is a NumPy array is given as ``ms.Tensor(array)``, which keeps
the array's dtype as TF's conversion does::

    (x_train, y_train), _ = mk.datasets.mnist.load_data()
    images = ops.cast(x_train[..., None] / 255.0, ms.float32)   →   ops.cast(ms.Tensor(x_train[..., None] / 255.0), ms.float32)

An argument is a NumPy array only where that is known: a call the rule lists as making
one (``np.zeros(...)``), one array of a call's tuples of them (``load_data()``), what
``.numpy()`` gives, an array's method the rule lists (``a.astype(...)``), indexing,
arithmetic of arrays and numbers, and a name whose every binding in its scope (read
without regard to order, so a loop that binds it again counts) is one of those. Python
numbers and lists are not wrapped (``ms.Tensor([1, 2])`` is int64 where TF makes int32),
nor is anything that may already be a tensor.

The search reads CPython's tree of the converted text, names resolved by Python's scoping
rules (:class:`migrate.ops.scoping.Scopes`, as the TF-value search does); only a file
with something to wrap is walked by libcst, which rewrites the arguments found.
"""

from __future__ import annotations

import ast
import fnmatch
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from migrate.ops.base import Operation, Param, template_expression
from migrate.ops.scoping import Scopes


class WrapArrays(Operation):
    """See the module docstring; applied after the rules' rewrite (and the native tier's)."""

    name = "wrap_arrays"
    target = "lowering"
    params = {
        "lowers": Param(list, required=True, doc="words one of which converted code must hold for the pass to look at it"),
        "tensors": Param(list, required=True, doc="MindSpore modules whose functions take tensors (qualified names)"),
        "sequences": Param(list, doc="functions of those modules taking a list or tuple of tensors (their elements are wrapped)"),
        "arrays": Param(list, required=True, doc="calls that give a NumPy array (qualified names, `*` for any part)"),
        "array_tuples": Param(dict, doc="calls that give tuples of NumPy arrays -> how deep the arrays sit (`load_data`: 2)"),
        "methods": Param(list, doc="an array's methods that give an array"),
        "generators": Param(list, doc="calls that make a NumPy random generator (qualified names)"),
        "generator_methods": Param(list, doc="a generator's methods that give an array (or a NumPy scalar)"),
        "conversions": Param(list, doc="methods that give a NumPy array of any receiver (`x.numpy()`)"),
        "wrap": Param(str, required=True, doc="the tensor made of an array, {value} placeholder"),
        "tensor_makers": Param(list, doc="calls that give a MindSpore tensor (qualified names, `*` for any part)"),
        "wrap_like": Param(str, doc="the tensor made of an array beside a tensor in an operator: {value}, and {like}, "
                                    "a name of a tensor of the dtype it takes"),
        "list_inputs": Param(list, doc="functions of the tensor modules whose input (first argument) TF converts from "
                                       "a list display"),
        "takes_numbers": Param(list, doc="of `list_inputs`, the functions MindSpore's version of which takes a "
                                         "Python number as its input (`cast`)"),
        "pair_inputs": Param(list, doc="functions of the tensor modules whose first two arguments TF converts from "
                                       "list displays (`add`, `matmul`)"),
        "wrap_ints": Param(str, doc="the tensor made of a list display of int literals ({value}), TF's int32"),
        "wrap_floats": Param(str, doc="the tensor made of a list display of number literals, one a float ({value})"),
        "wrap_bools": Param(str, doc="the tensor made of a list display of bool literals ({value})"),
        "wrap_stack": Param(str, doc="the tensor made of a list display of tensors ({value})"),
    }

    def check(self, params: dict[str, Any]) -> None:
        if "{value}" not in params["wrap"]:
            raise ValueError("wrap must hold the {value} placeholder")
        like = params.get("wrap_like")
        if like is not None and ("{value}" not in like or "{like}" not in like):
            raise ValueError("wrap_like must hold the {value} and {like} placeholders")
        for key in ("wrap_ints", "wrap_floats", "wrap_bools", "wrap_stack"):
            if key in params and "{value}" not in params[key]:
                raise ValueError(f"{key} must hold the {{value}} placeholder")


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_ARRAY = object()  # what one place of a call's tuples of arrays binds


class _Arrays:
    """Which expressions of one module are NumPy arrays (see the module docstring)."""

    def __init__(self, tree: ast.Module, params: dict[str, Any]) -> None:
        self.params = params
        self.parents: dict[ast.AST, ast.AST] = {}
        kids: dict[ast.AST, list[ast.AST]] = {}
        self.calls: list[ast.Call] = []
        self.operators: list[ast.BinOp | ast.Compare] = []
        self.imported: dict[str, str] = {}  # name -> the module or object an import binds it to
        # name -> the nodes that bind it: Name nodes stored to, and other bindings (imports, defs, parameters)
        self.stores: dict[str, list[ast.Name]] = {}
        self.others: dict[str, list[ast.AST]] = {}
        self.loads: dict[str, list[ast.Name]] = {}
        self.nonlocal_names: set[str] = set()  # (names a function declares nonlocal: their scope is not read here)
        stack = [tree]
        while stack:  # (one walk: each node's children listed once)
            node = stack.pop()
            children = kids[node] = list(ast.iter_child_nodes(node))
            for child in children:
                self.parents[child] = node
            stack.extend(children)
            kind = type(node)
            if kind is ast.Name:
                if type(node.ctx) is not ast.Load:
                    self.stores.setdefault(node.id, []).append(node)
                else:
                    self.loads.setdefault(node.id, []).append(node)
            elif kind is ast.Call:
                self.calls.append(node)
            elif kind is ast.BinOp or kind is ast.Compare:
                self.operators.append(node)
            elif kind is ast.Nonlocal:
                self.nonlocal_names.update(node.names)
            elif kind in (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.arg,
                          ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping):
                for name in _names_bound_by(node):
                    self.others.setdefault(name, []).append(node)
                if kind is ast.Import:
                    for alias in node.names:
                        self.imported[alias.asname or alias.name.split(".")[0]] = \
                            alias.name if alias.asname else alias.name.split(".")[0]
                elif kind is ast.ImportFrom and node.module and not node.level:
                    for alias in node.names:
                        self.imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        self.scopes = Scopes(tree, kids, self.parents)
        self.patterns = list(params["arrays"])
        self.tuples = dict(params.get("array_tuples", {}))
        self.methods = set(params.get("methods", ()))
        self.conversions = set(params.get("conversions", ()))
        self.generators = list(params.get("generators", ()))
        self.generator_methods = set(params.get("generator_methods", ()))
        self.tensor_makers = list(params.get("tensor_makers", ()))
        self._functions: dict[str, ast.FunctionDef | None] = {}  # (`_module_function`, per name)
        self._returning: dict[int, bool | None] = {}  # (`_returns_tensor`, per function; None while deciding)
        self._tensor_params: dict[tuple[int, str], bool | None] = {}
        self._decided: dict[tuple[int, str], bool | None] = {}
        self._handed: dict[tuple[int, str], list[ast.expr]] = {}  # (`handed_arrays`, per function and parameter)
        self._assumed = False  # (whether the result being worked out rests on a binding still being decided)

    def qualified(self, func: ast.expr, depth: int = 0) -> str | None:
        """``np.random.rand`` -> ``numpy.random.rand``, by the module's imports, and through a
        module name bound once to a part of one (``mnist = mk.datasets.mnist``)."""
        parts = []
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name):
            return None
        root = self.imported.get(func.id) if self._module_import(func.id) else None
        if root is None and depth < 3 and func.id not in self.others and len(self.stores.get(func.id, ())) == 1:
            (store,) = self.stores[func.id]
            up = self.parents.get(store)
            if isinstance(up, ast.Assign) and up.targets == [store] and isinstance(up.value, (ast.Attribute, ast.Name)) \
                    and self.scopes.binding_scope(store) is self.scopes.module:
                root = self.qualified(up.value, depth + 1)
        if root is None:
            return None
        return ".".join([root, *reversed(parts)])

    def _module_import(self, name: str) -> bool:
        """``name`` is bound by module-level imports alone (not a parameter, not a function's own import)."""
        bound = self.others.get(name, ())
        return bool(bound) and name not in self.stores and all(
            isinstance(b, (ast.Import, ast.ImportFrom)) and self.scopes.scope_of(b) is self.scopes.module for b in bound)

    def _matches(self, call: ast.Call, patterns) -> bool:
        name = self.qualified(call.func)
        return name is not None and any(fnmatch.fnmatchcase(name, p) for p in patterns)

    def _depth(self, call: ast.Call) -> int | None:
        name = self.qualified(call.func)
        return next((d for p, d in self.tuples.items() if name is not None and fnmatch.fnmatchcase(name, p)), None)

    def is_array(self, node: ast.expr) -> bool:
        """Whether ``node`` is known to evaluate to a NumPy array (or a NumPy scalar indexed out of one)."""
        if isinstance(node, ast.Name):
            return self._name(node)
        if isinstance(node, ast.Subscript):
            return self.is_array(node.value)
        if isinstance(node, ast.BinOp):
            sides = (node.left, node.right)
            return any(self.is_array(s) for s in sides) and all(self.is_array(s) or _number(s) for s in sides)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return self.is_array(node.operand)
        if isinstance(node, ast.Call):
            if self._matches(node, self.patterns):
                return True
            func = node.func
            if isinstance(func, ast.Attribute):
                if func.attr in self.conversions and not node.args and not node.keywords:
                    return True
                if func.attr in self.generator_methods and self.is_generator(func.value):
                    return True
                return func.attr in self.methods and self.is_array(func.value)
            return False
        if isinstance(node, ast.Attribute) and node.attr == "T":
            return self.is_array(node.value)
        return False

    def handed_arrays(self, read: ast.Name, op) -> list[ast.expr]:
        """Where ``read`` is a parameter of a module-level function without decorators, read there only as an
        argument of MindSpore's ops (calls for which ``op(call)`` is not None) and never bound again,
        and the function is only called by its name: the NumPy arrays its calls give that parameter,
        which TF's ops would convert where the function hands them on (``accuracy(pred, y_test)``)."""
        function = self.scopes.binding_scope(read)
        key = (id(function), read.id)  # (a parameter read by several ops is looked at once)
        if key not in self._handed:
            self._handed[key] = self._handed_arrays(read, function, op)
        return self._handed[key]

    def _handed_arrays(self, read: ast.Name, function: ast.AST, op) -> list[ast.expr]:
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or self.scopes.scope_of(function) is not self.scopes.module \
                or function.decorator_list:  # (a decorator may take the array as it is, or hand on other arguments)
            return []
        args = function.args
        names = [a.arg for a in args.args]
        if read.id not in names or args.posonlyargs or args.vararg or read.id in self.nonlocal_names:
            return []
        first = _rebound_first(function, read.id)
        if first is None and any(self.scopes.binding_scope(s) is function for s in self.stores.get(read.id, ())):
            return []  # (bound again in the function: not only what its calls give)
        for load in self.loads.get(read.id, ()):
            if self.scopes.binding_scope(load) is not function:
                continue
            if first is not None and not _within(load, first, self.parents):
                continue  # (read after `x = ops.reshape(x, ...)`, the function's first statement: the op's tensor)
            up = self.parents.get(load)
            call = self.parents.get(up) if isinstance(up, ast.keyword) else up
            if not (isinstance(call, ast.Call) and load is not call.func and op(call) is not None):
                return []  # (read otherwise: it may need to stay a NumPy array there)
        name = function.name
        if self.stores.get(name) or self.others.get(name) != [function]:
            return []
        given = self.calls_of(function, names.index(read.id), read.id)
        return [value for value in given or () if value is not None and self.is_array(value)]

    def is_generator(self, node: ast.expr) -> bool:
        """Whether ``node`` is a NumPy random generator (``np.random.default_rng(0)``, or a name bound to one)."""
        if isinstance(node, ast.Call):
            return self._matches(node, self.generators)
        return isinstance(node, ast.Name) and self._name(node, "generator")

    def is_tensor(self, node: ast.expr) -> bool:
        """Whether ``node`` is known to evaluate to a MindSpore tensor: what a call the rule lists
        as making one gives (``ms.Parameter(...)``, ``ops.square(...)``), arithmetic with one, an
        index of one, a tensor's method the rule lists, a name every binding of which is one, a
        parameter every call of its function gives one, and a call of a module-level function
        whose every ``return`` gives one."""
        if isinstance(node, ast.Name):
            return self._name(node, "tensor") or self._tensor_param(node)
        if isinstance(node, ast.Subscript):
            return self.is_tensor(node.value)
        if isinstance(node, ast.BinOp):
            return self.is_tensor(node.left) or self.is_tensor(node.right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return self.is_tensor(node.operand)
        if isinstance(node, ast.Call):
            if self._matches(node, self.tensor_makers):
                return True
            func = node.func
            if isinstance(func, ast.Attribute):
                return func.attr in self.methods and self.is_tensor(func.value)
            return isinstance(func, ast.Name) and self._returns_tensor(func)
        return False

    def like(self, node: ast.expr, depth: int = 0) -> ast.Name | None:
        """A name of a tensor of ``node``'s dtype, where ``node`` is a tensor whose dtype is its
        operands' (``W`` of ``W * x + b``), which can be read where ``node`` is: one of ``node``
        itself, or a name bound at module level alone that every ``return`` of a module-level
        function called there gives the dtype of (``W`` for ``linear_regression(X)``)."""
        while True:
            if isinstance(node, ast.Name):
                return node if self.is_tensor(node) else None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and depth < 4:
                function = self._module_function(node.func.id)
                if function is None or not self._returns_tensor(node.func):
                    return None
                likes = [self.like(r.value, depth + 1) for r in _own_nodes(function) if isinstance(r, ast.Return)]
                if not likes or any(n is None for n in likes) or len({n.id for n in likes}) != 1 \
                        or not self.module_name(likes[0].id):
                    return None
                return likes[0]
            if isinstance(node, ast.BinOp):
                node = node.left if self.is_tensor(node.left) else node.right
            elif isinstance(node, ast.UnaryOp):
                node = node.operand
            elif isinstance(node, ast.Subscript):
                node = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr != "astype" \
                    and node.func.attr in self.methods:
                node = node.func.value
            else:
                return None

    def _module_function(self, name: str) -> ast.FunctionDef | None:
        """The module-level function ``name`` is bound to by its def alone (no other binding), if
        it has no decorator (which may change what it takes or gives) and is no generator."""
        if name not in self._functions:
            self._functions[name] = self._find_module_function(name)
        return self._functions[name]

    def _find_module_function(self, name: str) -> ast.FunctionDef | None:
        bound = self.others.get(name, ())
        if len(bound) != 1 or self.stores.get(name) or not isinstance(bound[0], ast.FunctionDef):
            return None
        function = bound[0]
        if self.scopes.scope_of(function) is not self.scopes.module or function.decorator_list:
            return None
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(function)):
            return None
        return function

    def _returns_tensor(self, func: ast.Name) -> bool:
        function = self._module_function(func.id)
        if function is None or self.scopes.binding_scope(func) is not self.scopes.module:
            return False
        key = id(function)
        if key not in self._returning:
            self._returning[key] = None  # (a function that returns its own call: not known, so not a tensor)
            returns = [n for n in _own_nodes(function) if isinstance(n, ast.Return)]
            self._returning[key] = bool(returns) and all(r.value is not None and self.is_tensor(r.value) for r in returns)
        return bool(self._returning[key])

    def calls_of(self, function: ast.FunctionDef, position: int, name: str) -> list[ast.expr | None] | None:
        """What each call of the module-level ``function`` gives its parameter ``name`` (at
        ``position``; None for a call that leaves it to its default), where the function is only
        called by its name, each call saying what it passes (no ``*args``/``**kwargs``); None otherwise."""
        given = []
        for load in self.loads.get(function.name, ()):
            call = self.parents.get(load)
            if not (isinstance(call, ast.Call) and call.func is load) or self.scopes.binding_scope(load) is not self.scopes.module:
                return None  # (handed on, or a name of its own where read)
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return None
            given.append(call.args[position] if position < len(call.args) else next(
                (k.value for k in call.keywords if k.arg == name), None))
        return given

    def _plain_parameter(self, read: ast.Name) -> tuple[ast.FunctionDef, int] | None:
        """The module-level function ``read`` is a plain parameter of (never bound again in it), and its place."""
        function = self.scopes.binding_scope(read)
        if not isinstance(function, ast.FunctionDef) or self._module_function(function.name) is not function:
            return None
        args = function.args
        names = [a.arg for a in args.args]
        if read.id not in names or args.posonlyargs or args.vararg or read.id in self.nonlocal_names:
            return None
        if any(self.scopes.binding_scope(s) is function for s in self.stores.get(read.id, ())):
            return None
        return function, names.index(read.id)

    def _tensor_param(self, read: ast.Name) -> bool:
        found = self._plain_parameter(read)
        if found is None:
            return False
        function, position = found
        key = (id(function), read.id)
        if key not in self._tensor_params:
            self._tensor_params[key] = None
            given = self.calls_of(function, position, read.id)
            self._tensor_params[key] = bool(given) and all(g is not None and self.is_tensor(g) for g in given)
        return bool(self._tensor_params[key])

    def module_name(self, name: str) -> bool:
        """``name`` is bound at module level alone (read anywhere, it is the module's)."""
        return name not in self.nonlocal_names and not any(
            self._scope_binding(b) is not self.scopes.module for b in self.others.get(name, ())) and not any(
            self.scopes.binding_scope(s) is not self.scopes.module for s in self.stores.get(name, ()))

    def _name(self, node: ast.Name, kind: str = "array") -> bool:
        """Every binding of the name in the scope ``node`` reads it from binds an array (a
        generator, for ``kind`` "generator"), and there is one."""
        if node.id in self.nonlocal_names or any(
                isinstance(b, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping)) for b in self.others.get(node.id, ())):
            return False  # (bindings whose scope the scope search does not follow: a nonlocal, an `except ... as`, a capture)
        scope = self.scopes.binding_scope(node)
        if any(self._scope_binding(other) is scope for other in self.others.get(node.id, ())):
            return False  # (an import, a parameter, a def, an `except ... as`, a `case` capture)
        bound = [b for b in self.stores.get(node.id, ()) if self.scopes.binding_scope(b) is scope]
        return bool(bound) and all(self._binds(b, kind) for b in bound)

    def _scope_binding(self, node: ast.AST) -> ast.AST:
        """The scope a binding other than a stored name binds in (a parameter's is its function's)."""
        if isinstance(node, ast.arg):
            while not isinstance(node, _FUNCTIONS):
                node = self.parents[node]
            return node
        return self.scopes.scope_of(node)

    def _binds(self, target: ast.Name, kind: str) -> bool:
        """Whether the binding ``target`` binds an array (a generator). A binding being decided
        that is met again (``x = x / 255.0``) is taken to bind one, as its other bindings decide;
        a result that rested on such an assumption is not kept, for the binding assumed may turn
        out not to (``y = x * 2`` with ``x = t + y`` elsewhere)."""
        key = (id(target), kind)
        known = self._decided.get(key, 0)
        if known is None:
            self._assumed = True
            return True
        if known != 0:
            return known
        self._decided[key] = None
        outer, self._assumed = self._assumed, False
        value = self._bound_value(target)
        if kind == "generator":
            result = value is not None and value is not _ARRAY and self.is_generator(value)
        elif kind == "tensor":
            result = value is not None and value is not _ARRAY and self.is_tensor(value)
        else:
            result = value is _ARRAY or (value is not None and self.is_array(value))
        if self._assumed and result:
            del self._decided[key]  # (decided again when asked again, the assumption settled by then)
        else:
            self._decided[key] = result
        self._assumed = outer or self._assumed
        return result

    def _bound_value(self, target: ast.Name):
        """What ``target`` (a bound name) is given: the value of its assignment, or the part of a
        tuple value its place in a tuple target takes; ``_ARRAY`` for one array of a call's tuples
        (``(x_train, y_train), _ = load_data()``); None where that is not known."""
        path: list[int] = []
        node: ast.AST = target
        while True:
            up = self.parents.get(node)
            if isinstance(up, (ast.Tuple, ast.List)) and not isinstance(up.ctx, ast.Load):
                if any(isinstance(e, ast.Starred) for e in up.elts):
                    return None
                path.append(up.elts.index(node))
                node = up
                continue
            if isinstance(up, ast.Assign) and len(up.targets) == 1 and up.targets[0] is node:
                value = up.value
                break
            if isinstance(up, ast.AnnAssign) and up.target is node and up.value is not None:
                value = up.value
                break
            if isinstance(up, ast.AugAssign) and up.target is node \
                    and isinstance(up.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.FloorDiv)):
                return up.value if self.is_array(up.value) or _number(up.value) or self.is_tensor(up.value) else None
            return None  # (a loop's, a `with`'s, a comprehension's, a walrus's, a chained assignment's target)
        path.reverse()  # (outermost place first)
        while path and isinstance(value, (ast.Tuple, ast.List)):
            at = path.pop(0)
            if at >= len(value.elts) or any(isinstance(e, ast.Starred) for e in value.elts):
                return None
            value = value.elts[at]
        if not path:
            return value
        return _ARRAY if isinstance(value, ast.Call) and self._depth(value) == len(path) else None


def _names_bound_by(node: ast.AST) -> list[str]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.MatchMapping):
        return [node.rest] if node.rest else []
    name = node.name  # (a def's, a class's, an `except ... as`'s, a `case` capture's)
    return [name] if isinstance(name, str) else []


def _rebound_first(function: ast.FunctionDef, name: str) -> ast.Assign | None:
    """The function's first statement (after its docstring), where it is ``name = <a call>``:
    every later read of ``name`` reads what that call gave, not the parameter."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if body and isinstance(body[0], ast.Assign) and len(body[0].targets) == 1 \
            and isinstance(body[0].targets[0], ast.Name) and body[0].targets[0].id == name \
            and isinstance(body[0].value, ast.Call):
        return body[0]
    return None


def _within(node: ast.AST, above: ast.AST, parents: dict) -> bool:
    while node is not None:
        if node is above:
            return True
        node = parents.get(node)
    return False


def _own_nodes(function: ast.AST):
    """The nodes of ``function``'s body, not those of the functions and classes it defines."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _number(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _search(code: str, params: dict[str, Any]) -> _Arrays | None:
    try:
        return _Arrays(ast.parse(code), params)
    except SyntaxError:
        return None


def _arguments(call: ast.Call) -> list[ast.expr]:
    """A call's argument values (not ``*args``/``**kwargs``)."""
    return [v for v in [*call.args, *(k.value for k in call.keywords if k.arg is not None)] if not isinstance(v, ast.Starred)]


def _span(node: ast.expr) -> tuple[int, int, int, int]:
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset


def find(code: str, params: dict[str, Any]) -> list[tuple[tuple[int, int, int, int], str]]:
    """The arguments of MindSpore op calls in ``code`` that are NumPy arrays, and the arrays a
    module-level function's calls give a parameter it hands to such calls alone: each as its span
    (line, column, end line, end column; columns in UTF-8 bytes, as CPython counts them), the
    op's callee as written, and by which function it gets there ("" where it is the op's own
    argument), in source order."""
    arrays = _search(code, params)
    if arrays is None:
        return []
    tensors = tuple(m + "." for m in params["tensors"])
    sequences = set(params.get("sequences", ()))
    found, seen = [], set()

    def op(call: ast.Call) -> str | None:
        called = arrays.qualified(call.func)
        return called if called is not None and called.startswith(tensors) else None

    list_inputs = set(params.get("list_inputs", ()))
    pair_inputs = set(params.get("pair_inputs", ()))
    numbers = list_inputs - set(params.get("takes_numbers", ()))
    lines: list[str] = []  # (the code's lines, split once a callee's text is wanted)
    for node in arrays.calls:
        called = op(node)
        if called is None:
            continue
        function = called.rsplit(".", 1)[-1]
        callee = _Callee(code, node.func, function, lines)
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg in ("input", "x")), None)
        # (a unary op's input: a list display, or a number, which MindSpore's take only in a tensor;
        # a binary op's two inputs: a list display each, where a number is taken as TF takes it)
        inputs = [first] if function in list_inputs else _pair(node) if function in pair_inputs else []
        for given in inputs:
            if (isinstance(given, (ast.List, ast.Tuple)) or function in numbers and _number(given)) \
                    and _span(given) not in seen:
                form = _list_form(arrays, given)
                if form is not None:
                    seen.add(_span(given))
                    found.append((_span(given), callee, "", (form, None)))
        for value in _arguments(node):
            values = value.elts if function in sequences and isinstance(value, (ast.List, ast.Tuple)) else [value]
            for item in values:
                if isinstance(item, ast.Starred) or _span(item) in seen:
                    continue
                if arrays.is_array(item):
                    seen.add(_span(item))
                    found.append((_span(item), callee, ""))
                elif isinstance(item, ast.Name):  # (a parameter: the arrays its function's calls give it, there)
                    for given in arrays.handed_arrays(item, op):
                        if _span(given) not in seen:
                            seen.add(_span(given))
                            found.append((_span(given), callee, f" (given to `{arrays.scopes.binding_scope(item).name}` "
                                                                f"as `{item.id}`, which it hands to `{callee}`)"))
    for node in arrays.operators:
        for side, partner, symbol in _operands(node):
            if _span(side) in seen or not arrays.is_tensor(partner):
                continue
            if arrays.is_array(side):
                like = arrays.like(partner)
                if like is not None:
                    seen.add(_span(side))
                    found.append((_span(side), symbol, "", ("wrap_like", like.id)))
            elif isinstance(side, ast.Name):  # (a parameter: the arrays its function's calls give it, there)
                for given, like in _handed_operands(arrays, side, op):
                    if _span(given) not in seen:
                        seen.add(_span(given))
                        found.append((_span(given), symbol, f" given to `{arrays.scopes.binding_scope(side).name}` as "
                                                            f"`{side.id}`, which it puts", ("wrap_like", like)))
    return sorted((span, str(callee), via, *form) for span, callee, via, *form in found)


class _Callee:
    """An op's callee as written (``ops.softmax``), read from the code only when a finding says it."""

    def __init__(self, code: str, func: ast.expr, function: str, lines: list[str]) -> None:
        self.code, self.func, self.function, self.lines = code, func, function, lines

    def __str__(self) -> str:
        func = self.func
        if func.lineno != func.end_lineno:
            return ast.get_source_segment(self.code, func) or self.function
        if not self.lines:
            self.lines.extend(source_lines(self.code))
        line = self.lines[func.lineno - 1].encode("utf-8")
        return line[func.col_offset:func.end_col_offset].decode("utf-8", "replace") or self.function


def _pair(call: ast.Call) -> list[ast.expr]:
    """A binary op's two inputs, given by position or by MindSpore's keywords."""
    given = call.args[:2]
    if any(isinstance(a, ast.Starred) for a in given):
        return []
    return given + [k.value for k in call.keywords if k.arg in ("input", "other", "x", "y")][:2 - len(given)]


def _list_form(arrays: _Arrays, node: ast.expr) -> str | None:
    """How TF's conversion makes a tensor of a list display (or a number) handed to an op as its
    input: the template's key for Python numbers or bools written out (TF's dtype: int32, float32,
    bool), or for known tensors (stacked); None for anything else (a name, a mixed list)."""
    leaves, stack = [], [node]  # (a number is its own one leaf)
    while stack:
        item = stack.pop()
        if isinstance(item, (ast.List, ast.Tuple)):
            if not item.elts:
                return None
            stack.extend(item.elts)
        else:
            leaves.append(item)
    if all(isinstance(leaf, ast.Constant) and type(leaf.value) is bool for leaf in leaves):
        return "wrap_bools"
    if all(_number(leaf) for leaf in leaves):
        floats = any(type((leaf.operand if isinstance(leaf, ast.UnaryOp) else leaf).value) is float for leaf in leaves)
        return "wrap_floats" if floats else "wrap_ints"
    if isinstance(node, (ast.List, ast.Tuple)) \
            and all(isinstance(item, (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.BinOp)) for item in node.elts) \
            and all(arrays.is_tensor(item) for item in node.elts):
        return "wrap_stack"
    return None


_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
            ast.MatMult: "@", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


def _operands(node: ast.BinOp | ast.Compare) -> list[tuple[ast.expr, ast.expr, str]]:
    """Each operand of an arithmetic operator or an ordering (one comparison, not a chain),
    beside the other operand and the operator's symbol."""
    if isinstance(node, ast.BinOp):
        left, right, op = node.left, node.right, node.op
    elif len(node.ops) == 1:
        left, right, op = node.left, node.comparators[0], node.ops[0]
    else:
        return []
    symbol = _SYMBOLS.get(type(op))
    return [] if symbol is None else [(left, right, symbol), (right, left, symbol)]


def _handed_operands(arrays: _Arrays, read: ast.Name, op) -> list[tuple[ast.expr, str]]:
    """Where ``read`` is a plain parameter of a module-level function, read there only beside a
    tensor in operators (``W * x``, ``y_pred - y_true``), and each call of the function gives it
    a NumPy array: each array given, and the name of a tensor of the dtype TF converts it to
    there (the tensor beside it: a module-level name, or what the same call gives the parameter
    beside it)."""
    found = arrays._plain_parameter(read)
    if found is None:
        return []
    function, position = found
    partners = []
    for load in arrays.loads.get(read.id, ()):
        if arrays.scopes.binding_scope(load) is not function:
            continue
        up = arrays.parents.get(load)
        partner = next((p for s, p, _ in _operands(up) if s is load), None) if isinstance(up, (ast.BinOp, ast.Compare)) else None
        like = arrays.like(partner) if partner is not None and arrays.is_tensor(partner) else None
        if like is None:
            return []  # (read otherwise, or beside a tensor whose dtype is not known where the function is called)
        if like.id in arrays.nonlocal_names:
            return []
        if arrays.scopes.binding_scope(like) is function:
            place = arrays._plain_parameter(like)
            if place is None:
                return []  # (a local of the function: not there where it is called)
            partners.append((like.id, place[1]))
        elif arrays.module_name(like.id):
            partners.append((like.id, None))
        else:
            return []
    given = arrays.calls_of(function, position, read.id)
    partner = set(partners)
    if len(partner) != 1 or not given:
        return []
    (name, place), = partner
    if place is None:  # (a module-level tensor: read as it is where the function is called)
        return [(value, name) for value in given if value is not None and arrays.is_array(value)]
    beside = arrays.calls_of(function, place, name)
    if beside is None:
        return []
    out = []
    for value, other in zip(given, beside):
        # (a call leaving the parameter beside it to its default has no name of its dtype there)
        if value is not None and other is not None and arrays.is_array(value) and arrays.is_tensor(other):
            like = arrays.like(other)
            if like is not None:
                out.append((value, like.id))
    return out


def array_arguments(code: str, params: dict[str, Any]) -> set[tuple[int, int, int, int]]:
    """The spans (as :func:`find` gives them) of every call argument in ``code`` known to be a
    NumPy array, whatever the call (the native tier asks this of a model's inputs)."""
    arrays = _search(code, params)
    if arrays is None:
        return set()
    return {_span(v) for call in arrays.calls for v in _arguments(call) if arrays.is_array(v)}


def source_lines(code: str) -> list[str]:
    """``code``'s lines as CPython and libcst count them: ended by ``\\n``, ``\\r\\n`` or ``\\r`` only
    (``str.splitlines`` also ends one at a form feed or ``\\x85``)."""
    return code.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _characters(lines: list[str], line: int, col: int) -> int:
    """CPython's column (UTF-8 bytes) on a line as libcst's (characters)."""
    return len(lines[line - 1].encode("utf-8")[:col].decode("utf-8", "replace")) if line <= len(lines) else col


def nodes_at(module: cst.Module, code: str, spans) -> dict[tuple[int, int, int, int], cst.BaseExpression]:
    """The expression of ``module`` (whose code is ``code``) at each of CPython's ``spans`` (columns
    in UTF-8 bytes; libcst's are in characters, and both leave an expression's parentheses out)."""
    lines = source_lines(code)
    wanted = {(a, _characters(lines, a, b), c, _characters(lines, c, d)): (a, b, c, d) for a, b, c, d in spans}
    if not wanted:
        return {}
    found = {}
    for node, where in MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider).items():
        if isinstance(node, cst.BaseExpression):
            span = wanted.get((where.start.line, where.start.column, where.end.line, where.end.column))
            if span is not None and span not in found:
                found[span] = node
    return found


class _Wrap(cst.CSTTransformer):
    def __init__(self, wrapped: dict[cst.CSTNode, tuple[str, str | None]]) -> None:
        super().__init__()
        self.wrapped = wrapped  # node -> (the template, the name of a tensor of its dtype, or None)

    def on_leave(self, original, updated):
        if original not in self.wrapped:
            return updated
        if len(getattr(updated, "lpar", ())) == 1:  # (parentheses that only grouped the argument go)
            updated = updated.with_changes(lpar=(), rpar=())
        template, like = self.wrapped[original]
        if like is not None:
            return template_expression(template, value=updated, like=cst.Name(like))
        return template_expression(template, value=updated)


def wrap(module: cst.Module, rule, code: str, found=None) -> tuple[cst.Module, list[tuple[int, int, str, str]]]:
    """``module`` (whose code is ``code``) with the NumPy arrays its MindSpore op calls are given
    wrapped as ``rule.params``'s ``wrap`` says, and a note per wrapped argument, in source order:
    (line, column, the argument's code, message), in ``module``'s lines. ``found``: what
    :func:`find` gave for ``code``, if it was asked already."""
    params = rule.params
    found = find(code, params) if found is None else found
    if not found:
        return module, []
    at = nodes_at(module, code, [span for span, *_ in found])
    lines = source_lines(code)
    wrapped, notes = {}, []
    show = module.code_for_node
    for span, callee, via, *form in found:
        node = at.get(span)
        if node is None:
            continue
        key, like = form[0] if form else ("wrap", None)
        template = params.get(key)
        if template is None:
            continue
        wrapped[node] = (template, like)
        text = show(node)
        short = text if len(text) <= 40 and "\n" not in text else text.split("\n")[0][:37] + "..."
        if key == "wrap":
            message = (f"`{short}` is a NumPy array{via}, which `{callee}` does not take (TF's op converts it): it is "
                       f"given as `{template.format(value=short)}`, of the array's dtype, as TF converts it")
        elif key != "wrap_like":
            made = "the tensors stacked" if key == "wrap_stack" else "a tensor of TF's dtype for the values written"
            what = "list" if isinstance(node, (cst.List, cst.Tuple)) else "number"
            message = (f"`{short}` is a Python {what}, which `{callee}` does not take (TF's op converts it): it is "
                       f"given as `{template.format(value=short)}`, {made}, as TF converts it")
        else:
            refusal = "; MindSpore's operator does not take it" if via else ", which MindSpore's operator does not take"
            message = (f"`{short}` is a NumPy array{via} beside a MindSpore tensor in `{callee}`{refusal} (TF's converts "
                       f"it to the tensor's dtype): it is given as `{template.format(value=short, like=like)}`")
        notes.append((span[0], _characters(lines, span[0], span[1]) + 1, text, message))
    if not wrapped:
        return module, []
    return module.visit(_Wrap(wrapped)), sorted(notes)
