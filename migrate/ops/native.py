"""The native tier: the shim's Keras objects lowered to MindSpore's own where that is proven equal.

The rules rewrite TF into the shim (``mk``, ``spmd``), which keeps TF's semantics for every
use. Where a whole object is statically known and every use of it is one MindSpore's own
API serves with the same numbers, this pass lowers the converted module to that API, as a
MindSpore engineer writes it::

    model = mk.Sequential([mk.Input(shape=(4,)),           model = nn.SequentialCell([
        mk.layers.Dense(8, activation="tanh")])     →           nn.Dense(4, 8, weight_init="xavier_uniform", bias_init="zeros", activation="tanh")])
    optimizer = mk.optimizers.SGD(learning_rate=0.05)       optimizer = nn.SGD(model.trainable_params(), learning_rate=0.05)
                                                            grad_reducer = nn.DistributedGradReducer(optimizer.parameters, mean=False) if get_group_size() > 1 else nn.Identity()
    optimizer.apply_gradients(zip(grads, model.trainable_variables))   →   optimizer(grad_reducer(grads))

and a step that was a ``tf.function`` and is native throughout becomes ``@ms.jit``. Each
lowering is a rule of ``rules/native/`` (an operation ``lower_native`` of one ``kind``): its
parameters hold the API knowledge (names, argument maps, Keras's defaults), its examples
are its tests. Proof is by uses: an object is lowered only if it is bound once, at module
level, and *every* read of its name is a use the native object serves (a model is called
and asked for its weights; an optimizer applies gradients of a native model); anything else
keeps the shim, and the report says why. ``--tier shim`` (ignoring the ``TFL`` rules) turns
the pass off.
"""

from __future__ import annotations

import ast
import functools
import itertools
import math
import textwrap
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node

from migrate.ops import args as argbind
from migrate.ops import shapes as shapes_of
from migrate.ops.base import Operation, Param, imported_from, parse_expression, parse_statement, template_expression

KINDS = ("sequential", "optimizer", "loss", "metric", "gradients", "average_loss", "jit", "fit", "dataset", "random", "variable")


class LowerNative(Operation):
    """One lowering of the native tier (see the module docstring); applied after the rules' rewrite."""

    name = "lower_native"
    target = "lowering"
    params = {
        "kind": Param(str, required=True, doc="what is lowered: " + ", ".join(KINDS)),
        "lowers": Param(list, required=True, doc="the shim's names it lowers, as converted code spells them"),
        "to": Param((str, dict), doc="MindSpore's constructor or function (loss: or one per shim constructor)"),
        "signature": Param(list, doc="the shim call's parameters (Keras's); a call passing others keeps the shim"),
        "arguments": Param(dict, doc="Keras parameter -> MindSpore parameter"),
        "defaults": Param(dict, doc="MindSpore parameter -> Keras's default as code, stated where MindSpore's differs"),
        "layers": Param(dict, doc="sequential: shim layer -> MindSpore cell"),
        "inputs": Param(list, doc="sequential: the shim's Input spellings"),
        "functional": Param(list, doc="sequential: the shim's functional Model spellings (a chain of layer calls)"),
        "subclasses": Param(list, doc="sequential: the shim's Model spellings a subclassed model derives from"),
        "batchnorm_class": Param(str, doc="sequential: a BatchNorm cell whose moving variance is Keras's (biased), "
                                 "{name} and {base} placeholders"),
        "helper_classes": Param(dict, doc="sequential: a cell name the rule's cells call -> its class, written into "
                                "the module before the first model that needs it, {name} placeholder"),
        "data_shapes": Param(dict, doc="sequential: a Keras dataset module -> its `load_data()` arrays, "
                             "((x_train, y_train), (x_test, y_test)), each a row's shape then its dtype"),
        "activations": Param(dict, doc="sequential: Keras activation name -> MindSpore's (null: none)"),
        "activation_cells": Param(dict, doc="sequential: Keras activation name -> MindSpore's activation cell"),
        "initializers": Param(dict, doc="sequential: Keras initializer name -> MindSpore's"),
        "variance_scaling": Param(dict, doc="sequential: Keras initializer name -> [scale, mode, distribution] "
                                            "of Keras's VarianceScaling, written with MindSpore's initializers"),
        "initializer_classes": Param(dict, doc="sequential: the shim's initializer classes -> Keras's names"),
        "scaled_inits": Param(dict, doc="sequential: truncated_normal / uniform -> MindSpore's initializer class"),
        "constant": Param(list, doc="sequential: the shim's constant-initializer spellings"),
        "array_input": Param(str, doc="sequential: a NumPy array given to the model, as the tensor Keras makes of it, {value} placeholder"),
        "refuse_when": Param(list, doc="words whose presence in the module changes what the shim objects do"),
        "refuse_when_modal": Param(list, doc="words whose presence in the module changes what a model with layers that compute differently in training does (a forward pass repeated with the first one's draws)"),
        "template": Param(str, doc="average_loss: the native expression; loss: the call, {loss}, {y_true}, {y_pred}"),
        "scaled_when": Param(list, doc="loss: words marking a strategy program, where Keras scales a reduced loss "
                                       "called directly by 1 / replicas (such a call keeps the shim)"),
        "array_template": Param(str, doc="loss: the call where the predictions are a native model's output made a NumPy "
                                         "array (`model(x).numpy()`), which Keras's loss takes"),
        "signatures": Param(dict, doc="random: the shim's function -> its parameters (TF's)"),
        "dtypes": Param(dict, doc="random: `float` / `integer` -> the dtypes (as converted code spells them) it lowers"),
        "require": Param(dict, doc="loss: Keras parameter -> the literal it must be (as code)"),
        "reductions": Param(dict, doc="loss: Keras reduction -> MindSpore's"),
        "reduction_names": Param(dict, doc="loss: the shim's reduction constants -> Keras's reduction"),
        "numbers": Param(list, doc="optimizer: calls that give a number fixed for the run, which a hyper-parameter may be "
                                   "computed from (with literals and module names bound once to such)"),
        "reducer": Param(str, doc="optimizer: the gradient reducer statement, {name} and {optimizer} placeholders"),
        "all_reduce": Param(str, doc="jit: the cross-process sum statement, {name} placeholder"),
        "decorator": Param(str, doc="jit: the decorator"),
        "decorators": Param(list, doc="jit: the TF decorators whose functions may be compiled"),
        "modules": Param(list, doc="jit: module names a compiled function may read"),
        "mutable": Param(str, doc="jit: the wrapper of a batch passed to a compiled function"),
        "cell": Param(str, doc="the base class of a cell it writes (a model with convolutions, a compiled step)"),
        "graph_mode": Param(str, doc="jit: the statement that makes the program GRAPH_MODE, where its steps become cells"),
        "graph_mode_before": Param(list, doc="jit: calls the mode is set before (else it is set after the imports)"),
        "graph_safe": Param(list, doc="jit: modules (besides the standard library) a GRAPH_MODE program may read"),
        "graph_gradients": Param(list, doc="jit: gradient calls that must sit inside compiled steps in GRAPH_MODE"),
        "shim_imports": Param(list, doc="imports of the shim that may become unused"),
        "compile": Param(list, doc="fit: Keras's `compile` parameters a lowered call may pass"),
        "methods": Param(dict, doc="fit: method -> Keras's parameters a lowered call may pass; "
                                   "metric: Keras's method -> MindSpore's"),
        "updates": Param(dict, doc="metric: the shim's constructor -> {signature: its update's parameters (Keras's), "
                                   "template: MindSpore's update, {metric} and the parameters as placeholders, "
                                   "values: `scalar` (a native loss's reduced value, or a whole-tensor reduction of "
                                   "`reductions`) or `classes` (a native model's logits and the labels a native loss is given)}"),
        "positional": Param(dict, doc="fit: method -> how many leading arguments may be positional"),
        "optimizer_names": Param(dict, doc="fit: optimizer string -> the shim's constructor it stands for"),
        "metric_names": Param(list, doc="fit: the metric strings the loop resolves as Keras does"),
        "loss_names": Param(dict, doc="fit: loss string -> the shim's constructor it stands for"),
        "softmax_losses": Param(dict, doc="fit: loss string taking probabilities -> the logits loss the loop computes before the model's softmax"),
        "callbacks": Param(dict, doc="fit: the shim's callback spellings the native loop serves -> {signature, "
                                     "require: {parameter: the literal it must be}}"),
        "statements": Param(list, doc="fit: methods lowered only as statements (Keras returns what the native loop does not)"),
        "loop_only": Param(bool, doc="loss: lowered only inside the native loop (which aligns ranks as Keras does)"),
        "distribute": Param(list, doc="dataset: the shim's `experimental_distribute_dataset` spellings"),
        "source": Param(str, doc="dataset: the random-access source class it writes once per module, {name} placeholder"),
        "dropped": Param(list, doc="dataset: pipeline methods that change nothing for arrays in memory (`prefetch`, `cache`)"),
        "pipeline": Param(dict, doc="dataset: pipeline method -> the signature a lowered pipeline may pass it "
                                    "(`name` is dropped); `batch` and `shard` alone keep the random-access source"),
        "stream": Param(str, doc="dataset: the iterable source class, with a method per pipeline method and "
                                 "`split()`, written once per module instead of `source` where a pipeline "
                                 "needs it, {name} placeholder"),
        "rows": Param(str, doc="dataset: the `rows` method both source classes have, their {rows} placeholder"),
        "values": Param(list, doc="variable: the calls that make a float32 tensor, which an initial value may be "
                                  "(without a `dtype` argument)"),
        "initializer_makers": Param(list, doc="variable: the constructors of Keras initializers (prefixes), whose objects "
                                        "called with a shape make a float32 array an initial value may be"),
        "reads": Param(dict, doc="variable: how a variable may be read, a Parameter serving it as TF's does: "
                                 "`attributes` (its own), `functions` (calls it may be an argument of, by prefix), "
                                 "`weights` (shim calls that take a list of it: function -> the argument's position)"),
    }

    def check(self, params: dict[str, Any]) -> None:
        if params["kind"] not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}")
        for key in ("signature",):
            if key in params:
                argbind.check_signature(params[key])
        for signature in params.get("signatures", {}).values():
            argbind.check_signature(signature)
        needed = {"sequential": ("to", "layers", "inputs", "activations", "initializers", "constant"),
                  "optimizer": ("to", "signature", "arguments", "reducer"),
                  "average_loss": ("signature", "template"),
                  "loss": ("to", "signature", "template", "reductions"),
                  "metric": ("to", "signature", "methods", "updates"),
                  "jit": ("decorator", "decorators", "all_reduce", "modules", "mutable"),
                  "gradients": ("to",),
                  "fit": ("to", "compile", "methods", "positional"),
                  "dataset": ("to", "distribute", "source", "stream", "rows", "dropped", "pipeline"),
                  "random": ("to", "signatures", "dtypes"),
                  "variable": ("to", "signature", "values", "reads")}[params["kind"]]
        for key in needed:
            if key not in params:
                raise ValueError(f"kind {params['kind']!r} needs parameter {key!r}")


# -- the module as the pass sees it -------------------------------------------------------------


class _Walk(cst.CSTVisitor):
    """Parents of every node, and every Name node by its value (attribute names and keywords excluded)."""

    def __init__(self) -> None:
        self.parent: dict[cst.CSTNode, cst.CSTNode] = {}
        self.names: dict[str, list[cst.Name]] = {}
        self._stack: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._stack:
            self.parent[node] = self._stack[-1]
        self._stack.append(node)
        if isinstance(node, cst.Name):
            up = self.parent.get(node)
            if not ((isinstance(up, cst.Attribute) and up.attr is node) or (isinstance(up, cst.Arg) and up.keyword is node)):
                self.names.setdefault(node.value, []).append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._stack.pop()


_NUMPY_GENERATORS = ("np.random.RandomState", "numpy.random.RandomState", "np.random.default_rng", "numpy.random.default_rng")


def dotted(node: cst.CSTNode) -> str | None:
    return get_full_name_for_node(node) if isinstance(node, (cst.Name, cst.Attribute)) else None


def given(bound: dict, key: str) -> cst.BaseExpression | None:
    """A bound argument, None where the call leaves it out or passes ``None``."""
    value = bound.get(key)
    return None if value is None or (isinstance(value, cst.Name) and value.value == "None") else value


def _same_arg(a: cst.Arg, b: cst.Arg) -> bool:
    """The same keyword (or none) and the same value, whatever the spacing."""
    return (a.keyword.value if a.keyword else None) == (b.keyword.value if b.keyword else None) and \
        a.star == b.star and a.value.deep_equals(b.value)


def _number(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def _literal(node: cst.CSTNode) -> bool:
    return _number(node) or (isinstance(node, cst.Name) and node.value in ("True", "False"))


# MindSpore's functions that compute a Keras activation of the same name with Keras's defaults
# (`softmax` over the last axis, `elu`'s alpha 1): `tf.nn.relu` handed to a layer becomes `ops.relu`.
_ACTIVATION_FUNCTIONS = frozenset({"relu", "tanh", "sigmoid", "softmax", "silu", "elu"})


def _imports_mindspore_ops(module: cst.Module) -> bool:
    """Whether the module imports `mindspore.ops` as `ops` at its top (`from mindspore import ops`)."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None \
                    and dotted(small.module) == "mindspore" and not isinstance(small.names, cst.ImportStar):
                if any(alias.evaluated_name == "ops" and alias.asname is None for alias in small.names):
                    return True
    return False


def _string(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _run_statements(body) -> list:
    """The statements the module's own code runs, in order: its body, and the bodies of its
    ``with``/``if``/``try`` statements (``except`` clauses aside), as the engine's lines for
    notes (:func:`migrate.engine.lowering._where`) walk them."""
    out, todo = [], list(body)
    while todo:
        node = todo.pop(0)
        out.append(node)
        inner = []
        if isinstance(node, (cst.With, cst.If, cst.Try)):
            inner += list(node.body.body)
        orelse = node.orelse if isinstance(node, (cst.If, cst.Try)) else None
        while orelse is not None:  # (an `elif` is an If in the orelse)
            inner += list(orelse.body.body)
            orelse = getattr(orelse, "orelse", None) if isinstance(orelse, cst.If) else None
        final = getattr(node, "finalbody", None)
        if isinstance(node, cst.Try) and final is not None:
            inner += list(final.body.body)
        todo[:0] = inner
    return out


def _module_assign_any(statement: cst.CSTNode) -> str | None:
    """The name of ``name = <anything>`` alone on its line."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value
    return None


def _module_assign(statement: cst.CSTNode) -> tuple[str, cst.Call] | None:
    """``name = call(...)`` alone on its line at module level."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    if (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
            and isinstance(small.value, cst.Call)):
        return small.targets[0].target.value, small.value
    return None


@dataclass
class Lowered:
    """What the pass decided: per module statement, its replacement; per node, its replacement."""

    statements: dict[cst.CSTNode, list[cst.BaseStatement]] = field(default_factory=dict)
    nodes: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    removed: set[cst.CSTNode] = field(default_factory=set)  # statements (in any block) that go
    before: dict[cst.CSTNode, list[cst.BaseStatement]] = field(default_factory=dict)  # statements put before a module statement
    decorate: dict[cst.FunctionDef, cst.Decorator] = field(default_factory=dict)
    notes: list[tuple[str, "Any", str, str]] = field(default_factory=list)  # (where, rule, status, message)


class NativePass:
    """Decides and applies the native lowerings of one converted module (see the module docstring)."""

    def __init__(self, module: cst.Module, rules, jitted: frozenset[str], arrays: dict | None = None,
                 unnested: frozenset[str] = frozenset(), outer_reasons: dict[int, str] | None = None) -> None:
        self.module = module
        self.arrays = arrays  # the parameters of the rule that finds NumPy arrays (TFT140), if it runs
        self.unnested = unnested  # models whose reads in another model's list are not taken (see `lower`)
        # module statement index -> why the model there kept the shim while holding a native model (`lower`)
        self.outer_reasons = dict(outer_reasons or {})
        self.rules = {}
        for rule in rules:
            self.rules.setdefault(rule.params["kind"], []).append(rule)
        self.jitted = jitted
        walk = _Walk()
        module.visit(walk)
        self.parent = walk.parent
        self.names = walk.names
        self.out = Lowered()
        self.index = {statement: i for i, statement in enumerate(module.body)}
        self.spans: dict[cst.Name, tuple[int, int]] = {}  # binding of a name bound again -> its value's span
        self.models: dict[str, cst.CSTNode] = {}  # native model name (bound once) -> its statement
        self.variables: dict[str, cst.CSTNode] = {}  # native variable (`ms.Parameter`, bound once) -> its statement
        self.variable_dicts: dict[str, cst.CSTNode] = {}  # a dict of native variables (bound once) -> its statement
        self.model_out: dict[str, tuple[tuple | None, bool, bool]] = {}  # native model -> (its output shape, has Dropout/BN, set to train)
        self.nested: dict[str, list[cst.CSTNode]] = {}  # native model -> the statements of the models whose lists hold it
        self.lowered: set[cst.CSTNode] = set()  # the statements of the models lowered
        self.optimizers: dict[str, tuple[str, str]] = {}  # native optimizer -> (model, reducer name)
        self.losses: set[str] = set()  # native loss objects
        self.single_targets: dict[cst.CSTNode, list[cst.Name]] = {}  # a one-array pipeline's statement -> its loops' targets
        self.inlined: dict[cst.CSTNode, tuple[str, cst.CSTNode]] = {}  # compile statement -> (optimizer, its statement), `_compiled_optimizer`
        self.loss_reductions: dict[str, str] = {}  # native loss -> its reduction (MindSpore's name)
        self.metrics: set[str] = set()  # native metric objects
        # a module function (None: module level) -> its native metrics' updates, (statement, rewrite, values)
        self.metric_updates: dict[cst.FunctionDef | None, list] = {}
        self.used: set[str] = set()  # ids of the rules that lowered something
        self.taken = set(self.names)
        self.reducer_statements: list[cst.CSTNode] = []
        self.gone: set[cst.CSTNode] = set()  # nodes the lowering drops (a lowered call's shim callee, `zip`)
        self.compiled: list[tuple] = []  # (rule, function name, names of the functions it runs, its note's index)
        self.loop_rules: dict[str, set[str]] = {}  # model -> the rules its Keras loop's lowering uses (TFL160)
        self.compiles: dict[str, list] = {}  # model -> its lowered `compile` statements
        self.softmax_split: dict[str, str] = {}  # model -> its softmax head ("dense": a Dense's activation) the loop's loss reads before
        self.weight_aliases: dict[cst.CSTNode, tuple[str, cst.FunctionDef]] = {}  # (`weights_owner`)
        self.fed_casts: dict[str, set[cst.Call]] = {}  # model -> its calls fed batches Keras casts to float32 (`_fed_rows`)
        self.weights_dropped: set[cst.CSTNode] = set()  # weights arguments (or calls) the lowerings replace
        self.width_names: dict[int, cst.Name] = {}  # width -> the constant the layer before was given (`_cells`)
        self.building = None  # the cells of the model being lowered (a SequentialCell's), for its uses' checks
        # a cell the module's own class makes (a Keras-variance BatchNorm, `helper_classes`) -> the class's
        # name in the module, the class, the statement it is put before (`_module_classes`)
        self.module_classes: dict[str, tuple[str, cst.ClassDef, cst.CSTNode]] = {}
        self.absorbed: set[cst.Name] = set()  # reads of a model's name in the `add` statements its list holds
        self.loops: list[tuple] = []  # (rule, model) whose Keras loop runs natively
        self.ms_ops = _imports_mindspore_ops(module)  # whether the top-level name `ops` is `mindspore.ops`

    # -- helpers ------------------------------------------------------------------------------

    def activation_name(self, node: cst.CSTNode) -> str | None:
        """A layer's `activation=`: Keras's name for it, given as a string (`"relu"`) or as MindSpore's
        function of that activation (`ops.relu`, what `tf.nn.relu` handed on converts to)."""
        name = _string(node)
        if name is None and self.ms_ops and isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                and node.value.value == "ops" and node.attr.value in _ACTIVATION_FUNCTIONS:
            name = node.attr.value
        return name

    def fresh(self, base: str) -> str:
        name, n = base, 2
        while name in self.taken:
            name, n = f"{base}_{n}", n + 1
        self.taken.add(name)
        return name

    def reads(self, name: str, binding: cst.Name) -> list[cst.Name]:
        """The Name nodes reading ``binding``'s value: every other node of the name, or, for a name
        the module's straight-line code binds again (see ``rebound``), those up to the next binding."""
        span = self.spans.get(binding)
        if span is None:
            return [n for n in self.names.get(name, ()) if n is not binding]
        start, end = span
        out = []
        for node in self.names.get(name, ()):
            if self._local(node):
                continue
            at = self._read_at(node)
            if at is not None and (start < at < end or (at == end and not isinstance(self.parent.get(node), cst.AssignTarget))):
                out.append(node)
        return out

    def place(self, name: str, statement: cst.CSTNode, method: str = "") -> str:
        """Where a note on ``name`` (or on its ``name.method(...)`` statement) goes: the name,
        or, for a name bound again, which of its module-level statements ``statement`` is."""
        key = f"{name}.{method}" if method else name
        if not method and not any(binding in self.spans for binding in self.names.get(name, ())):
            return key

        def same(s):
            if method:
                return (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Expr)
                        and isinstance(s.body[0].value, cst.Call) and dotted(s.body[0].value.func) == key)
            return _module_assign_any(s) == name
        run = self.run_order
        if statement not in run:
            return key
        return f"{key}@{sum(1 for s in run[:run.index(statement) + 1] if same(s))}"

    @functools.cached_property
    def run_order(self) -> list:
        """The statements the module's own code runs, in order (``_run_statements``)."""
        return _run_statements(self.module.body)

    def top_index(self, node: cst.CSTNode) -> int:
        """The index of the module statement that holds ``node`` (or is it)."""
        while node not in self.index:
            node = self.parent[node]
        return self.index[node]

    def rebound(self, name: str, statement: cst.CSTNode, functions: bool = False) -> tuple[int, int] | None:
        """Where a name bound more than once is still one object: when every binding is a
        ``name = ...`` statement of the module's own body and every read is module-level code
        (no function, class or lambda reads it later, at another binding's time), the value
        ``statement`` binds is read from the statement after it up to the next binding's value.
        With ``functions``, a module-level function may read it too when the module's straight-line
        code alone calls it, every call within one binding's span (:meth:`call_times`): it reads
        that binding. None otherwise."""
        bindings, timed = [], []
        for node in self.names.get(name, ()):
            if self._local(node):  # (a function's own variable of that name: another variable)
                continue
            scope = self._scope_of(node)
            if scope is not None:
                times = self.call_times(scope) if functions and not self.binds(node) else None
                if times is None:
                    return None
                timed.append(times)
                continue
            if not self.binds(node):
                continue
            top = self.module.body[self.top_index(node)]
            if not (isinstance(self.parent[node], cst.AssignTarget) and _module_assign_any(top) == name
                    and top.body[0].targets[0] is self.parent[node]):
                return None
            bindings.append(self.index[top])
        for times in timed:  # (a call in a binding's own statement runs before it binds: the span before)
            spans = {max((b for b in bindings if b < at), default=None) for at in times}
            if len(spans) > 1 or None in spans:  # (none: a function never called reads nothing)
                return None
        start = self.index[statement]
        return start, min((i for i in bindings if i > start), default=len(self.module.body))

    def _scope_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The innermost function, class or lambda ``node`` is in; None at module level."""
        while node in self.parent:
            node = self.parent[node]
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return node
        return None

    def call_times(self, function: cst.CSTNode) -> list[int] | None:
        """The indices of the module statements that call ``function``, a ``def`` without
        decorators in the module's straight-line code (not in a function or class) whose every
        other mention is, in that code, a call of it or the first argument of a call whose result
        is called at once (``mk.value_and_grad(forward, ...)()``, which a converted tape makes);
        a ``def`` under a module statement (a loop's) is mentioned in that statement alone. Empty:
        never called. None otherwise."""
        if not isinstance(function, cst.FunctionDef) or function.decorators or self._scope_of(function) is not None:
            return None
        # (a name a notebook defines again is one function from its `def` to its next binding)
        here = self.top_index(function)
        bound = []
        for node in self.names.get(function.name.value, ()):
            if self.binds(node) and node is not function.name:
                if self._local(node):
                    continue
                if self.top_index(node) == here:
                    return None
                bound.append(self.top_index(node))
        nested = function not in self.index
        end = here + 1 if nested else min((b for b in bound if b > here), default=len(self.module.body))
        times = []
        for read in self.names.get(function.name.value, ()):
            if read is function.name or self._local(read) or not here <= self.top_index(read) < end:
                continue
            up = self.parent.get(read)
            called = isinstance(up, cst.Call) and up.func is read
            if not called and isinstance(up, cst.Arg) and up.keyword is None and not up.star:
                call = self.parent.get(up)
                outer = self.parent.get(call)
                called = (isinstance(call, cst.Call) and call.args[0] is up and isinstance(outer, cst.Call)
                          and outer.func is call)
            if self.binds(read) or not called or self._scope_of(read) is not None:
                return None
            times.append(self.top_index(read))
        return times

    def _read_at(self, node: cst.Name) -> int | None:
        """When the module's code reads ``node``: its statement's index, or, in a function
        (:meth:`call_times`), the first statement that calls the function."""
        scope = self._scope_of(node)
        if scope is not None:
            times = self.call_times(scope)
            return min(times) if times else None
        return self.top_index(node)

    def under(self, name: str, node: cst.CSTNode) -> list[cst.Name]:
        """The Name nodes of ``name`` below ``node``."""
        return [found for found in self.names.get(name, ()) if self._below(found, node)]

    def bound_once(self, name: str, binding: cst.Name) -> bool:
        """Every other Name node of ``name`` is a plain read (no parameter, target, def or global)."""
        return not any(self.binds(node) for node in self.names.get(name, ()) if node is not binding)

    def binds(self, node: cst.Name) -> bool:
        """The Name node binds its name (a target, parameter, def, import, global...)."""
        up = self.parent.get(node)
        if isinstance(up, (cst.For, cst.CompFor)):  # (its target binds; its iterable is read)
            return up.target is node
        if isinstance(up, (cst.AssignTarget, cst.Param, cst.FunctionDef, cst.ClassDef, cst.AsName, cst.Global,
                           cst.ImportAlias, cst.MatchAs, cst.MatchStar,
                           cst.Nonlocal, cst.NamedExpr, cst.AugAssign, cst.AnnAssign, cst.Del)):
            return True
        if isinstance(up, _UNPACKING):  # (a tuple target, `a, model = ...`, binds too)
            holder, top = self.unpacked(node)
            return isinstance(holder, (cst.AssignTarget, cst.For, cst.CompFor)) and holder.target is top
        return False

    def unpacked(self, node: cst.CSTNode) -> tuple[cst.CSTNode | None, cst.CSTNode]:
        """What holds ``node`` above the tuples and lists around it (``a, (b, node) = ...``: the
        assignment's target), and the outermost of them (``node`` itself where there is none)."""
        top = node
        while isinstance(self.parent.get(top), _UNPACKING):
            top = self.parent[top]
        return self.parent.get(top), top

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        while not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            node = self.parent[node]
        return node

    def mentions(self, words: list[str]) -> str | None:
        code = self.module.code
        return next((w for w in words if w in code), None)

    def note(self, where: str, rule, status: str, message: str) -> None:
        self.out.notes.append((where, rule, status, message))
        if status == "converted":
            self.used.add(rule.id)

    def lower_variables(self) -> None:
        self._lower_objects("variable", self._variable, shim="tfvariable")
        for rule in self.rules.get("variable", ()):
            lowers = set(rule.params["lowers"])
            for statement in self.module.body:
                found = _module_assign_any(statement)
                value = statement.body[0].value if found is not None else None
                if not (isinstance(value, cst.Dict) and value.elements and all(
                        isinstance(e, cst.DictElement) and isinstance(e.value, cst.Call) and dotted(e.value.func) in lowers
                        for e in value.elements)):
                    continue
                why = self._variable_dict(rule, statement, found, value)
                if why is not None:
                    self.note(self.place(found, statement), rule, "info", f"`{found}` keeps the shim (`tfvariable`): {why}")

    def _variable(self, rule, statement, name: str, call: cst.Call) -> str | None:
        """``w = tfvariable.Variable(value, name="w")`` of a float tensor, every read of it one a
        ``ms.Parameter`` serves as TF's variable does: ``ms.Parameter(value, name="w")``."""
        lowered = self._native_variable(rule, statement, call)
        if isinstance(lowered, str):
            return lowered
        binding = statement.body[0].targets[0].target
        for read in self.reads(name, binding):
            why = self._variable_read(rule.params["reads"], read)
            if why is not None:
                return f"`{name}` is read {why}"
        lowered()
        self.variables[name] = statement
        self.note(self.place(name, statement), rule, "converted",
                  f"`{name}` is a native `{rule.params['to']}` (every read of it is one a Parameter serves as TF's variable does)")
        return None

    def _variable_dict(self, rule, statement, name: str, value: cst.Dict) -> str | None:
        """``weights = {"h1": tfvariable.Variable(...), ...}`` (TensorFlow-Examples' raw networks): each
        variable a native ``ms.Parameter`` where every read of the dict is ``weights["h1"]`` read as a
        variable may be, or ``list(weights.values())`` (a sum of such lists) as the weights of a tape
        or of ``apply_gradients``, or a function's own name bound once to that sum and read only so."""
        binding = statement.body[0].targets[0].target
        if not self.bound_once(name, binding):
            return f"`{name}` is bound more than once"
        keys = [_string(e.key) for e in value.elements]
        if None in keys or len(set(keys)) != len(keys):
            return "its keys are not distinct string literals"
        lowered = []
        for element in value.elements:
            made = self._native_variable(rule, statement, element.value)
            if isinstance(made, str):
                return f"`{name}[{element.key.value}]`: {made}"
            lowered.append(made)
        reads = rule.params["reads"]
        for read in self.reads(name, binding):
            up = self.parent.get(read)
            if isinstance(up, cst.Subscript) and up.value is read:
                key = _string(up.slice[0].slice.value) if len(up.slice) == 1 and isinstance(up.slice[0].slice, cst.Index) else None
                if key not in keys:
                    return f"`{name}` is indexed by other than one of its keys"
                why = self._variable_read(reads, up)
                if why is not None:
                    return f"`{name}[...]` is read {why}"
                continue
            group = self._group_of(read)
            if group is None or not (self._weights_argument(group) or self._weights_alias(group)):
                return (f"`{name}` is read other than by its keys and as `list({name}.values())` among the weights "
                        "of a tape or of `apply_gradients`")
        for made in lowered:
            made()
        self.variable_dicts[name] = statement
        self.note(self.place(name, statement), rule, "converted",
                  f"`{name}`'s variables are native `{rule.params['to']}`s (every read of them is one a Parameter serves "
                  "as TF's variable does)")
        return None

    def _native_variable(self, rule, statement, call: cst.Call):
        """Why the variable ``call`` makes is not a native Parameter by itself (its arguments, its value),
        or what rewrites it to one (called once its reads are known to be a Parameter's)."""
        bound = argbind.bind(call, rule.params["signature"])
        if bound is None:
            return "it is given arguments other than the initial value, `name` and `trainable=True`"
        if given(bound, "trainable") is not None and not m.matches(bound["trainable"], m.Name("True")):
            return "it is not trainable (TF's counters and flags keep TF's variable methods)"
        label = given(bound, "name")
        if label is not None:
            text = _string(label)
            if text is None or ":" in text:
                return "its `name` is not a literal without `:`"
            named = [c for c in m.findall(self.module, m.Call(func=m.Attribute(value=m.Name("tfvariable"), attr=m.Name("Variable"))))
                     if c is not call and any(a.keyword is not None and a.keyword.value == "name" and _string(a.value) == text
                                              for a in c.args)]
            if named:
                return f"another variable is named '{text}' too (TF makes the names unique, MindSpore asks for unique ones)"
        value = bound["initial_value"]
        if not self._float_value(rule, statement, value):
            return "its initial value is not a float literal, a float array or a float32 tensor the module makes"
        at = next(i for i, a in enumerate(call.args) if a.value is value)  # (the value as converted: a draw lowered too)
        name_arg = [cst.Arg(label, keyword=cst.Name("name"), equal=_EQUAL)] if label is not None else []
        func = parse_expression(rule.params["to"])

        def lower():
            self.out.nodes[call] = lambda new: new.with_changes(func=func, args=_last_bare(_commas(
                [cst.Arg(new.args[at].value), *name_arg])))
        return lower

    def _float_value(self, rule, statement, value: cst.BaseExpression) -> bool:
        """``value`` makes a float tensor or array whose dtype a Parameter keeps as TF's variable does:
        a float literal, a call of ``values`` without a dtype (float32), a NumPy array of a float dtype
        the module makes statically, or a call of a module name bound once to a Keras initializer
        (its float32 array of the shape asked for)."""
        if isinstance(value, cst.Float) or isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Float):
            return True
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)):
            # (a float tensor or array and a Python number: its dtype stays the tensor's)
            return any(self._float_value(rule, statement, one) and _number(other)
                       for one, other in ((value.left, value.right), (value.right, value.left)))
        if isinstance(value, cst.Call) and not any(a.keyword is not None and a.keyword.value == "dtype" for a in value.args):
            if dotted(value.func) in rule.params["values"]:
                return True
            if isinstance(value.func, cst.Name) and not self._local(value.func) and len(value.args) == 1:
                made = self._bound_once_to(value.func, lambda read: True)
                if isinstance(made, cst.Call) and (dotted(made.func) or "").startswith(tuple(rule.params["initializer_makers"])):
                    return True
        if isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in ("randn", "rand", "random", "random_sample", "standard_normal"):
            owner = value.func.value  # (`np.random.randn()`, `rng.randn()` for `rng = np.random`: a Python float, float32 to TF)
            if isinstance(owner, cst.Name) and not self._local(owner):
                owner = self._bound_once_to(owner, lambda read: True)
            if isinstance(owner, cst.Call):  # (`rng = np.random.RandomState(3)`: its draws are Python floats too)
                owner = owner.func if dotted(owner.func) in _NUMPY_GENERATORS else None
            if owner is not None and not isinstance(owner, str) and dotted(owner) in ("np.random", "numpy.random", *_NUMPY_GENERATORS):
                return True
        got = self.shapes.at(statement, value) if self._scope_of(value) is None else None
        return isinstance(got, shapes_of.Arr) and got.dtype in ("float16", "float32", "float64")

    def _parameter_reads(self, call: cst.Call, arg: cst.Arg) -> list[cst.Name] | None:
        """For ``arg`` given to ``call`` of a module-level function of the module's own (called only by
        its name, no decorators, ``*args`` or ``**kwargs``): the reads of the parameter it binds in the
        function, which binds it nowhere else; None otherwise."""
        if not (isinstance(call.func, cst.Name) and not self._local(call.func)) or arg.star:
            return None
        function = next((s for s in self.module.body if isinstance(s, cst.FunctionDef) and s.name.value == call.func.value), None)
        if function is None or function.decorators or function.asynchronous or not self.bound_once(call.func.value, function.name):
            return None
        params = function.params
        if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None or params.posonly_params:
            return None
        if arg.keyword is None:
            at = [a for a in call.args if a.keyword is None].index(arg)
            param = params.params[at] if at < len(params.params) else None
        else:
            param = next((p for p in (*params.params, *params.kwonly_params) if p.name.value == arg.keyword.value), None)
        if param is None:
            return None
        nodes = self.under(param.name.value, function)
        if [n for n in nodes if self.binds(n)] != [param.name]:
            return None
        return [n for n in nodes if n is not param.name]

    def _group_of(self, read: cst.Name) -> cst.BaseExpression | None:
        """For ``read`` in ``list(read.values())``: that list, or the sum of such lists it is a term of."""
        attr = self.parent.get(read)
        call = self.parent.get(attr) if isinstance(attr, cst.Attribute) and attr.attr.value == "values" else None
        arg = self.parent.get(call) if isinstance(call, cst.Call) and not call.args else None
        outer = self.parent.get(arg) if isinstance(arg, cst.Arg) else None
        if not (isinstance(outer, cst.Call) and m.matches(outer.func, m.Name("list")) and len(outer.args) == 1):
            return None
        group = outer
        while isinstance(self.parent.get(group), cst.BinaryOperation) and isinstance(self.parent[group].operator, cst.Add):
            group = self.parent[group]
        return group

    def _weights_argument(self, node: cst.CSTNode) -> bool:
        """``node`` is the weights of the tape (``mk.value_and_grad(fn, None, node)``) or of
        ``apply_gradients(zip(grads, node))``."""
        arg = self.parent.get(node)
        call = self.parent.get(arg) if isinstance(arg, cst.Arg) and arg.value is node else None
        if not isinstance(call, cst.Call):
            return False
        func = dotted(call.func)
        if func == "zip" and call.args.index(arg) == 1:
            outer = self.parent.get(self.parent.get(call))
            return isinstance(outer, cst.Call) and isinstance(outer.func, cst.Attribute) and outer.func.attr.value == "apply_gradients"
        reads = next(iter(self.rules.get("variable", ())), None)
        position = reads.params["reads"]["weights"].get(func or "") if reads is not None else None
        return position is not None and (arg.keyword is None and call.args.index(arg) == position
                                         or arg.keyword is not None and arg.keyword.value == "weights")

    def _weights_alias(self, group: cst.BaseExpression) -> bool:
        """``group`` is the value of a function's own name bound once to it, every read of which is the
        weights of a tape or of ``apply_gradients`` (``trainable_variables = list(w.values()) + ...``)."""
        assign = self.parent.get(group)
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
            return False
        name = assign.targets[0].target
        function = self._scope_of(name)
        if not isinstance(function, cst.FunctionDef) or not self._local(name):
            return False
        nodes = self.under(name.value, function)
        return len([n for n in nodes if self.binds(n)]) == 1 and all(self._weights_argument(n) for n in nodes if not self.binds(n))

    def _variable_read(self, reads: dict, read: cst.CSTNode, depth: int = 0) -> str | None:
        """None where ``read`` is a variable's read a Parameter serves as TF's variable (a tensor in
        arithmetic, an argument of MindSpore's ops or of a module function whose parameter is read
        so, its own attributes, an element of the weights list of the shim's tape or optimizer);
        else where it is read, said for the note."""
        up = self.parent.get(read)
        if isinstance(up, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.ComparisonTarget)):
            return None
        if isinstance(up, cst.Attribute) and up.value is read:
            return None if up.attr.value in reads["attributes"] else f"for `.{up.attr.value}` (TF's variable's own)"
        if isinstance(up, cst.Arg) and up.value is read:
            call = self.parent.get(up)
            func = dotted(call.func) if isinstance(call, cst.Call) else None
            if func is not None and any(func.startswith(prefix) for prefix in reads["functions"]):
                return None
            inner = self._parameter_reads(call, up) if depth < 3 else None
            if inner is not None:
                for node in inner:
                    why = self._variable_read(reads, node, depth + 1)
                    if why is not None:
                        return f"through `{func}`: {why}"
                return None
            return f"as an argument of `{func or 'a call'}`"
        if isinstance(up, cst.Element) and up.value is read:
            display = self.parent.get(up)
            if isinstance(display, (cst.List, cst.Tuple)) and self._weights_argument(display):
                return None
            return "in a list other than the weights of a tape or of `apply_gradients`"
        return "other than as a tensor (in arithmetic, by MindSpore's ops) or in the weights of a tape or optimizer"

    def _lower_objects(self, kind: str, lower, shim: str = "mk") -> None:
        """Each module-level ``name = <a shim constructor the rules of kind lower>(...)``, bound
        once, lowered by ``lower(rule, statement, name, call)``, which returns why not (noted) or None."""
        for rule in self.rules.get(kind, ()):
            lowers = set(rule.params["lowers"])
            for statement in self.module.body:
                found = _module_assign(statement)
                if found is None or dotted(found[1].func) not in lowers or statement in self.out.removed:
                    continue  # (removed: an optimizer a native loop makes, `_compiled_optimizer`)
                name, call = found
                binding = statement.body[0].targets[0].target
                # (only a model is judged binding by binding: other objects' lowerings, and the
                # functions they rewrite, read an optimizer or a loss by name at call time)
                once = self.bound_once(name, binding)
                span = None if once or kind != "sequential" else self.rebound(name, statement, functions=True)
                if span is not None:
                    self.spans[binding] = span
                if span is None and not once and kind != "sequential" and self.rebound(name, statement) is not None:
                    why = f"`{name}` is bound more than once" + (  # (straight-line bindings: only a model is judged by them)
                        " (an optimizer bound again is the native loop's where a `compile` is each binding's one read, TFL160)"
                        if kind == "optimizer" else "")
                elif span is None and not once:
                    why = f"`{name}` is bound more than once, and not only by statements of the module's straight-line code"
                else:
                    why = lower(rule, statement, name, call)
                if why is not None:
                    self.note(self.place(name, statement), rule, "info", f"`{name}` keeps the shim (`{shim}`): {why}")

    # -- models -------------------------------------------------------------------------------

    def lower_models(self) -> None:
        self._lower_objects("sequential", self._model)
        self.lower_subclasses()

    # -- subclassed models ---------------------------------------------------------------------

    def lower_subclasses(self) -> None:
        """Each module-level ``class C(mk.Model)`` whose ``__init__`` makes its layers and whose
        ``call`` applies them one after another, instantiated once (``model = C()``), becomes a
        ``nn.Cell`` of MindSpore's cells with ``construct``, where the input shape is known from
        the data the module feeds the model and every use of the model is one a cell serves."""
        for rule in self.rules.get("sequential", ()):
            bases = set(rule.params.get("subclasses", ()))
            for statement in self.module.body:
                if not (isinstance(statement, cst.ClassDef) and len(statement.bases) == 1
                        and dotted(statement.bases[0].value) in bases and not statement.keywords):
                    continue
                why = self._subclass(rule, statement)
                if why is not None:
                    self.note(statement.name.value, rule, "info", f"`{statement.name.value}` keeps the shim (`mk`): {why}")

    def _subclass(self, rule, cls: cst.ClassDef) -> str | None:  # noqa: C901 (one check per Keras form)
        methods, others = {}, 0
        for member in cls.body.body:
            if isinstance(member, cst.FunctionDef) and not member.decorators and not member.asynchronous:
                methods[member.name.value] = member
            elif not m.matches(member, m.SimpleStatementLine([m.Expr(m.SimpleString())])):
                others += 1
        if others or set(methods) != {"__init__", "call"} or cls.decorators:
            return "the class has members other than `__init__` and `call`"
        init, call = methods["__init__"], methods["call"]
        if len(init.params.params) != 1 or init.params.star_arg is not cst.MaybeSentinel.DEFAULT \
                or init.params.star_kwarg is not None or init.params.kwonly_params or init.params.posonly_params:
            return "its `__init__` takes arguments (the widths of its layers must be known statically)"
        me = init.params.params[0].name.value
        layers: dict[str, cst.Call] = {}
        statements = [s for s in init.body.body if not m.matches(s, m.SimpleStatementLine([m.Expr(m.SimpleString())]))]
        for i, small in enumerate(statements):
            line = small.body[0] if isinstance(small, cst.SimpleStatementLine) and len(small.body) == 1 else None
            if i == 0 and m.matches(line, m.Expr(m.Call(func=m.Attribute(value=m.Call(func=m.Name("super")), attr=m.Name("__init__")),
                                                        args=[]))):
                continue
            if not (isinstance(line, cst.Assign) and len(line.targets) == 1 and isinstance(line.value, cst.Call)
                    and m.matches(line.targets[0].target, m.Attribute(value=m.Name(me)))):
                return "its `__init__` does more than call `super().__init__()` and make layers (`self.name = Layer(...)`)"
            attr = line.targets[0].target.attr.value
            if attr in layers:
                return f"its `__init__` binds `self.{attr}` twice"
            layers[attr] = line.value
        if not layers:
            return "its `__init__` makes no layers"
        chain = self._call_chain(call, set(layers))
        if isinstance(chain, str):
            return chain
        applied, training_param = chain.applied, chain.training
        if sorted(a for a, _ in applied) != sorted(layers):
            return "its `call` does not apply each of its layers once"
        reads = [n for n in self.names.get(cls.name.value, ()) if n is not cls.name and not self._below(n, cls)]
        if len(reads) != 1:
            return "the class is read other than by one instantiation"
        made_call = self.parent.get(reads[0])
        statement = self.module.body[self.top_index(reads[0])]
        found = _module_assign(statement)
        if found is None or found[1] is not made_call or made_call.args:
            return "the class is not instantiated once, without arguments, by a module statement `name = C()`"
        name = found[0]
        binding = statement.body[0].targets[0].target
        if not self.bound_once(name, binding):
            return f"`{name}` is bound more than once"
        word = self.mentions(rule.params.get("refuse_when", []))
        if word is not None:
            return f"the module uses `{word}`, under which Keras layers compute what MindSpore's cells do not (a dtype policy)"
        elements = [layers[a] for a, _ in applied]
        shape = self._fed_rows(name, binding)  # (reshaped first, its input's dtype still counts: Keras casts it)
        if isinstance(shape, str):
            return shape
        shape = chain.reshape or shape
        made = self._cells(rule, statement, elements, shape)
        if isinstance(made, str):
            return made
        cells, training, _, out_shape, per_layer = made
        defaults = {p.name.value: p.default for p in call.params.params[2:]}
        for attr, flag in chain.flagged.items():
            spec = rule.params["layers"].get(dotted(layers[attr].func))
            if spec.get("kind") != "dropout":
                return f"`self.{attr}`, handed the flag `{flag}` as `training`, is not a `Dropout`"
            if not m.matches(defaults[flag], m.Name("True") | m.Name("False")):
                return f"its `call`'s flag `{flag}`, handed to a `Dropout` as `training`, does not default to True or False"
        # (a Dropout handed the call's flag drops by that flag, `ops.dropout(..., training=flag)`: not by the Cell's mode)
        training = any((spec := rule.params["layers"][dotted(layers[a].func)]).get("kind") == "batchnorm" or (
            spec.get("kind") == "dropout" and a not in chain.flagged and not _zero(argbind.bind(layers[a], spec["signature"])["rate"]))
            for a, _ in applied)
        if training and training_param is None:
            return (f"its `call` takes no `training`, so Keras runs its {_MODAL} in inference mode even in `fit`, "
                    "where MindSpore's cell would train them")
        word = self.mentions(rule.params.get("refuse_when_modal", [])) if training else None
        if word is not None:
            return (f"the module uses `{word}`, which repeats a forward pass for another gradient with the first "
                    f"one's draws, and the model's {_MODAL} draw anew in MindSpore's cells")
        spatial = [i for i, made in enumerate(per_layer) if any(isinstance(c, _Spatial) for c in made)]
        if spatial:
            first, last = spatial[0], spatial[-1]
            if any(isinstance(c, _Flat) for made in per_layer[:first] for c in made) or any(
                    isinstance(c, _Flat) for made in per_layer[first:last] for c in made) or any(
                    isinstance(c, _Flat) for c in per_layer[last][:-1]):
                return "a layer that needs a flat input comes before or between its convolutions"
            # (between the convolutions the value is channels-first: an activation over the last axis would take the width's)
            if any(first < k <= last and name in _LAST_AXIS for k, name in chain.activations) \
                    or self._last_axis(rule, per_layer[first:last + 1]):
                return "its `call` applies a softmax between its convolutions (over the channels, which MindSpore's kernels keep first)"
        self.building = None
        uses = self._model_uses(name, binding, training, None, flags=chain.flags, bools=frozenset(chain.flagged.values()))
        loop_rules, compiles = self.loop_rules.pop(name, set()), self.compiles.pop(name, [])
        split = self.softmax_split.pop(name, None)
        if isinstance(uses, str):
            return uses
        if split is not None:
            return f"the loop's loss reads `{name}`'s output before its last layer's softmax"
        uses, train, read_after = uses
        self._module_classes(rule, per_layer, cls, read_after)
        code = cst.Module([]).code_for_node
        steps: dict[cst.CSTNode, list] = {}  # node -> its rewrites, innermost first
        for i, ((attr, node), made) in enumerate(zip(applied, per_layer)):
            cell = made[0].cells[0] if len(made) == 1 and len(made[0].cells) == 1 else parse_expression(
                f"{rule.params['to']}([" + ", ".join(code(c) for one in made for c in one.cells) + "])")
            if attr in chain.flagged:  # (`ops.dropout(x, p=rate, training=flag)`, and no cell of its own)
                rate = argbind.bind(layers[attr], rule.params["layers"][dotted(layers[attr].func)]["signature"])["rate"]
                self._remove(self.statement_of(layers[attr]))
                steps.setdefault(node, []).append(lambda new, rate=rate, flag=chain.flagged[attr]: template_expression(
                    "ops.dropout({x}, p={p}, training={f})", x=new.args[0].value, p=rate, f=cst.Name(flag)))
                continue
            self.out.nodes[layers[attr]] = lambda new, cell=cell: cell
            if len(node.args) > 1:  # (`training=training`: a Cell takes its mode from `set_train`)
                steps.setdefault(node, []).append(lambda new: new.with_changes(
                    args=[new.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)]))
            if spatial and i == spatial[0]:  # (Keras's channels-last input, MindSpore's channels-first kernels)
                steps.setdefault(node.args[0].value, []).append(
                    lambda new: template_expression("{x}.transpose(0, 3, 1, 2)", x=new))
            if spatial and i == spatial[-1] and isinstance(made[-1], _Spatial):
                steps.setdefault(node, []).append(lambda new: template_expression("{c}.transpose(0, 2, 3, 1)", c=new))
        for node, rewrites in steps.items():
            self.out.nodes[node] = functools.partial(_in_turn, rewrites)
        params = call.params
        if training_param is not None:
            params = params.with_changes(params=[p for p in params.params if p.name.value != training_param])
            last = params.params[-1]
            params = params.with_changes(params=[*params.params[:-1], last.with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        self.out.nodes[call] = lambda new, params=params: new.with_changes(name=cst.Name("construct"), params=params)
        self.out.nodes[cls.bases[0]] = lambda new: new.with_changes(value=parse_expression(rule.params["cell"]))
        self._model_lowered(rule, name, statement, uses, (out_shape, training, train), loop_rules, compiles, cls.name.value,
                            f"`{cls.name.value}` is a native `{rule.params['cell']}` (its input {tuple(shape)} as the module "
                            f"feeds `{name}`; all the model's uses are ones MindSpore's cells serve)")
        return None

    def _call_chain(self, call: cst.FunctionDef, layers: set[str]):  # noqa: C901 (one case per form)
        """``call(self, x, ...)`` whose statements apply the layers to one value in turn
        (``x = self.a(x)``, ``return self.b(self.c(x))``), with MindSpore's elementwise
        activations between them (``x = ops.relu(x)``), a first ``x = ops.reshape(x, (-1, ...))``,
        and ``if flag:`` / ``if not flag:`` blocks of activations on a parameter of the call's
        own with a literal default (the cell's ``construct`` keeps it; the model's calls pass it):
        a ``_Chain``, or why not."""
        params = call.params
        plain = list(params.params)
        if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None or params.kwonly_params \
                or params.posonly_params or len(plain) < 2 or plain[1].default is not None:
            return "its `call` takes other arguments than the inputs, `training` and flags"
        me, current = plain[0].name.value, plain[1].name.value
        training, flags = None, []
        for extra in plain[2:]:
            if extra.default is None or not (_literal(extra.default) or m.matches(extra.default, m.Name("None"))):
                return f"its `call`'s parameter `{extra.name.value}` has no literal default"
            if extra.name.value == "training":
                if not m.matches(extra.default, m.Name("None") | m.Name("False")):
                    return ("its `call`'s `training` defaults to something else than None or False (a call "
                            "that does not pass it would train, and the cell's mode is set where it is passed)")
                training = "training"
            else:
                flags.append(extra.name.value)
        chain: list[tuple[str, cst.Call]] = []
        flagged: dict[str, str] = {}
        acts: list[tuple[int, str]] = []  # (how many layers come before, activation)
        reshape = None

        def activation(expr) -> bool:
            return (self.ms_ops and isinstance(expr, cst.Call) and m.matches(expr.func, m.Attribute(value=m.Name("ops")))
                    and expr.func.attr.value in _ELEMENTWISE and len(expr.args) == 1 and expr.args[0].keyword is None
                    and not expr.args[0].star)

        def applied(expr) -> bool:
            if isinstance(expr, cst.Name) and expr.value == current:
                return True
            if activation(expr):
                if not applied(expr.args[0].value):
                    return False
                acts.append((len(chain), expr.func.attr.value))
                return True
            if not (isinstance(expr, cst.Call) and m.matches(expr.func, m.Attribute(value=m.Name(me)))
                    and expr.func.attr.value in layers and expr.args and expr.args[0].keyword is None and not expr.args[0].star):
                return False
            extra = expr.args[1:]
            handed = [a for a in extra if a.keyword is not None and a.keyword.value == "training" and isinstance(a.value, cst.Name)
                      and a.value.value in flags]  # (`self.dropout(x, training=is_training)`: the call's own flag)
            if any(not (a.keyword is not None and a.keyword.value == "training" and training is not None
                        and m.matches(a.value, m.Name(training))) for a in extra if a not in handed) or len(extra) > 1:
                return False
            if not applied(expr.args[0].value):
                return False
            chain.append((expr.func.attr.value, expr))
            if handed:
                flagged[expr.func.attr.value] = handed[0].value.value
            return True

        def flag_block(statement) -> bool:
            test = statement.test
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test = test.expression
            if not (isinstance(test, cst.Name) and test.value in flags) or statement.orelse is not None:
                return False
            for inner in statement.body.body:
                small = inner.body[0] if isinstance(inner, cst.SimpleStatementLine) and len(inner.body) == 1 else None
                if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                        and m.matches(small.targets[0].target, m.Name(current)) and activation(small.value)
                        and m.matches(small.value.args[0].value, m.Name(current))):
                    return False
                acts.append((len(chain), small.value.func.attr.value))
            return True

        body = [s for s in call.body.body if not m.matches(s, m.SimpleStatementLine([m.Expr(m.SimpleString())]))]
        for i, statement in enumerate(body):
            small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
            if isinstance(statement, cst.If) and i < len(body) - 1 and flag_block(statement):
                continue
            if i == 0 and isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
                    and isinstance(small.value, cst.Call) and dotted(small.value.func) == "ops.reshape" and self.ms_ops \
                    and len(small.value.args) == 2 and m.matches(small.value.args[0].value, m.Name(current)) \
                    and all(a.keyword is None and not a.star for a in small.value.args):
                dims = small.value.args[1].value
                sizes = [self.int_value(e.value) if not m.matches(e.value, m.UnaryOperation(operator=m.Minus())) else _int(e.value)
                         for e in dims.elements] if isinstance(dims, (cst.Tuple, cst.List)) else []
                if len(sizes) < 2 or sizes[0] != -1 or any(d is None or d < 1 for d in sizes[1:]):
                    return "its `call` reshapes its input to a shape that is not literal widths after -1"
                reshape = tuple(sizes[1:])
                current = small.targets[0].target.value
                continue
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
                    and i < len(body) - 1 and applied(small.value):
                current = small.targets[0].target.value
                continue
            if isinstance(small, cst.Return) and small.value is not None and i == len(body) - 1 and applied(small.value):
                break
            return "its `call` is not its layers applied one after another to its input"
        else:
            return "its `call` is not its layers applied one after another to its input"
        if training is not None and any(not self._below(n, call.params) and not (
                isinstance(self.parent.get(n), cst.Arg) and self.parent[n].keyword is not None) for n in self.under(training, call)):
            return "its `call` reads `training` other than to hand it to a layer"
        return _Chain(chain, training, tuple(flags), reshape, flagged, acts)


    def _model(self, rule, statement, name: str, call: cst.Call) -> str | None:
        why = self._lower_model(rule, statement, name, call)
        if why is not None and any(statement in outers for outers in self.nested.values()):  # (said again when the pass runs once more)
            self.outer_reasons[self.index[statement]] = why
        return why

    def _lower_model(self, rule, statement, name: str, call: cst.Call) -> str | None:
        word = self.mentions(rule.params.get("refuse_when", []))
        if word is not None:
            return (f"the module uses `{word}`, under which Keras layers compute what MindSpore's cells do not "
                    "(a dtype policy; a forward pass repeated for another gradient, with the first one's draws)")
        binding = statement.body[0].targets[0].target
        chain = None
        if dotted(call.func) in rule.params.get("functional", ()):
            chain = self._functional(rule, statement, call)
            if isinstance(chain, str):
                return chain
            elements, layers = [c for _, c in chain], None
        elif not call.args:
            chain = self._added(statement, name)
            if isinstance(chain, str):
                return chain
            elements, layers = [c.args[0].value for _, c in chain], None
        else:
            if len(call.args) != 1 or call.args[0].keyword not in (None,) and call.args[0].keyword.value != "layers":
                return "the layers are not one list"
            layers = call.args[0].value
            if not isinstance(layers, (cst.List, cst.Tuple)) or any(not isinstance(e, cst.Element) for e in layers.elements):
                return "the layers are not a list display"
            elements = [e.value for e in layers.elements]
            added = self._added(statement, name)  # (`model.add(...)` statements right after: the list goes on)
            if not isinstance(added, str):
                chain = added  # (a display of lines keeps them, and their comments; the added layers follow)
                if "\n" not in cst.Module([]).code_for_node(layers):
                    layers = None  # (one line: the list is written anew, a layer a line)
                elements += [c.args[0].value for _, c in added]
        shape = None  # the layer's input shape, batch left out, where it is known statically
        if elements and isinstance(elements[0], cst.Call) and dotted(elements[0].func) in rule.params["inputs"]:
            shape = _input_shape(elements.pop(0), self.int_constant)
            if shape is None:
                return "the `Input` shape is not a literal tuple of widths"
        fed = self._fed_rows(name, binding)  # (and which calls are fed batches Keras casts to float32)
        if shape is None and not self._states_input(rule, elements):  # (no `input_shape`: the data the module feeds it)
            if not isinstance(fed, str):
                shape = fed
        made = self._cells(rule, statement, elements, shape)
        if isinstance(made, str):
            return f"{made} ({fed})" if isinstance(fed, str) and "not known statically" in made else made
        cells, training, inner, shape, per_layer = made
        if inner is not None:
            inner_train = self.model_out[inner][2]
        if not cells:
            return "the model has no layers"
        word = self.mentions(rule.params.get("refuse_when_modal", [])) if training else None
        if word is not None:
            return (f"the module uses `{word}`, which repeats a forward pass for another gradient with the first "
                    f"one's draws, and the model's {_MODAL} draw anew in MindSpore's cells")
        spatial = any(isinstance(made, _Spatial) for made in cells)
        if inner is not None and spatial:
            return f"`{inner}`, a native model, is in the list of a model with convolutions"
        dense = None if spatial or inner is not None or len(cells) != len(elements) else [
            rule.params["layers"][dotted(layer.func)].get("kind", "dense") == "dense" for layer in elements]
        self.building = None if spatial else cells
        uses = self._model_uses(name, binding, training, dense)
        loop_rules, compiles = self.loop_rules.pop(name, set()), self.compiles.pop(name, [])
        split = self.softmax_split.pop(name, None)
        if isinstance(uses, str):
            return uses
        uses, train, read_after = uses
        self._module_classes(rule, [[made] for made in cells], statement, read_after)
        if inner is not None and self.model_out[inner][1] and train != self.model_out[inner][2]:
            return (f"`{inner}`, a native model whose {_MODAL} it holds, is set to {'train' if inner_train else 'infer'} "
                    f"and `{name}` to {'train' if train else 'infer'} (a Cell's mode is its children's)")
        # (the comments of a functional chain's statements stay, above the model's)
        comments = [line for s in dict.fromkeys(s for s, _ in chain) for line in _comments(s)] if chain is not None else []
        if spatial:
            made = self._channels_first(rule, name, cells)
            if isinstance(made, str):
                return made
            cell_class, native = made
            self.out.before.setdefault(statement, []).append(cell_class.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()]))
            self.out.nodes[statement] = lambda new: new.with_changes(
                leading_lines=[cst.EmptyLine(), cst.EmptyLine(), *(line for line in new.leading_lines if line.comment), *comments])
            what = f"a native `nn.Cell`, `{native.func.value}`"
        else:
            cells = [made.cells[0] for made in cells]  # (one cell per layer: only a convolution adds its activation's)
            if split == "dense":  # (the loop takes the logits before the softmax: a cell of its own)
                kept = [a for a in cells[-1].args if not (a.keyword and a.keyword.value == "activation")]
                cells[-1] = cells[-1].with_changes(args=[*kept[:-1], kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
            # each layer's cells (a Dense and the activation cell `nn.Dense` does not take by name after
            # it; the last one and the softmax the loop's loss reads before)
            groups = [[made.cells[0] for made in layer] for layer in per_layer]
            groups[-1][-1] = cells[-1]
            if split == "dense":
                groups[-1].append(parse_expression("nn.Softmax()"))
            if layers is None:  # a functional chain, `add` statements alone: the list is written anew
                new_list = parse_expression("[\n" + "".join(f"    {line},\n" for line in _list_lines(groups)) + "]")
            else:
                new_list = _continued_list(layers, groups, len(chain) if chain is not None else 0)
            first = call.args[0] if call.args else cst.Arg(new_list)
            native = call.with_changes(func=parse_expression(rule.params["to"]), args=[
                first.with_changes(value=new_list, keyword=None, equal=cst.MaybeSentinel.DEFAULT,
                                   comma=cst.MaybeSentinel.DEFAULT)])
            if comments:
                self.out.nodes[statement] = lambda new: new.with_changes(leading_lines=[*new.leading_lines, *comments])
            what = f"a native `{rule.params['to']}`"
        if chain is not None:
            self.out.removed.update(s for s, _ in chain)
        self.out.nodes[call] = lambda new: native
        self._model_lowered(rule, name, statement, uses, (shape, training, train), loop_rules, compiles,
                            self.place(name, statement), f"`{name}` is {what} (all its uses are ones MindSpore's cells serve)",
                            shared=binding not in self.spans)  # (a name bound again is not one model to the other objects' lowerings)
        return None

    def _model_lowered(self, rule, name: str, statement, uses: dict, out: tuple, loop_rules: set, compiles: list,
                       where: str, message: str, shared: bool = True) -> None:
        """What every lowered model does: its uses' replacements, ``model.set_train()`` where its
        calls all train, its note, and its Keras loop's notes (TFL160). ``out``: (its output
        shape, whether a layer computes differently in training, whether it is set to train);
        ``shared``: the other objects' lowerings may read it as this model."""
        self.out.nodes.update(uses)
        for compiled in compiles:  # (an optimizer given to `compile` by name, its one read: made by the loop)
            if compiled in self.inlined:
                optimizer, made = self.inlined[compiled]
                self._remove(made)
                lowering = next(r for r in self.rules["optimizer"] if r.id in loop_rules)
                self.note(self.place(optimizer, made), lowering, "converted",
                          f"`{optimizer}` is given to `{name}.compile` alone: the native loop makes it, "
                          f"as `{lowering.params['to']}` over `{name}`'s parameters")
        if out[2]:  # (the model's calls all train: its Dropout drops and its BatchNormalization uses the batch's statistics)
            self.out.statements[statement] = [statement, parse_statement(f"{name}.set_train()")]
        if shared:
            self.models[name] = statement
            self.model_out[name] = out
        self.lowered.add(statement)
        self.note(where, rule, "converted", message)
        if loop_rules:
            self.used.update(loop_rules)
            loop = next(r for r in self.rules["fit"] if r.id in loop_rules)
            for compiled in compiles:
                at = self.place(name, compiled, "compile")
                self.loops.append((loop, at))
                self.note(at, loop, "converted", f"`{name}`'s Keras loop is `{loop.params['to']}`'s over "
                          "MindSpore's optimizer and loss: each step one compiled cell")
            if not compiles:  # (`predict` alone: no compile to report at)
                self.note(self.place(name, statement), loop, "converted", f"`{name}`'s `predict` is "
                          f"`{loop.params['to']}`'s, a compiled forward pass")

    def _cells(self, rule, statement, elements: list, shape: tuple | None):
        """MindSpore's cells of Keras's layers ``elements`` (calls, or a native model's name first)
        applied in order to an input of ``shape`` (batch left out; None where not known): (the
        cells, whether any computes differently in training, the native model first in the list
        or None, the output shape, each layer's cells), or why the layers keep the shim."""
        cells, training, inner, per_layer = [], False, None, []
        self.width_names = {}
        for i, layer in enumerate(elements):
            if isinstance(layer, cst.Name) and layer.value in self.unnested and i == 0 and self.index[statement] in self.outer_reasons:
                return self.outer_reasons[self.index[statement]]  # (why it kept the shim holding a native model)
            if isinstance(layer, cst.Name) and layer.value in self.model_out and i == 0 and shape is None:
                inner = layer.value  # (a native model first in the list: its cell, shared as Keras shares its layers)
                shape, modal, _ = self.model_out[inner]
                training = training or modal
                cells.append(_Flat(cst.Name(inner)))
                per_layer.append([cells[-1]])
                continue
            if not isinstance(layer, cst.Call):
                return "a layer is not constructed in the list"
            spec = rule.params["layers"].get(dotted(layer.func))
            if spec is None:
                return f"`{dotted(layer.func)}` has no native lowering yet"
            bound = argbind.bind(layer, spec["signature"])
            if bound is None:
                return f"`{dotted(layer.func)}` is called with arguments the native layer does not take"
            given_shape = given(bound, "input_shape")
            if given_shape is not None:
                if i != 0 or shape is not None:
                    return ("`input_shape` is given to a layer that is not the first" if i else
                            "`input_shape` is given to a layer of a model whose input shape comes from elsewhere")
                shape = _shape(given_shape, self.int_constant)
                if shape is None:
                    shape = self._runtime_width(rule, given_shape, elements)
            kind = spec.get("kind", "dense")
            made = getattr(self, "_" + kind)(rule, spec, bound, shape)
            if isinstance(made, str):
                return made
            made, shape = made
            # (the next layer's input width, written as this one's width was: `n_hidden` for `Dense(n_hidden)`)
            width = given(bound, {"dense": "units", "conv2d": "filters"}.get(kind, ""))
            if kind in ("dense", "conv2d"):
                self.width_names = {shape[-1]: width} if isinstance(width, cst.Name) else {}
            elif kind not in ("dropout", "activation", "leaky_relu", "batchnorm", "pool2d"):
                self.width_names = {}
            training = training or kind == "batchnorm" or (kind == "dropout" and not _zero(bound["rate"]))
            per_layer.append(made if isinstance(made, list) else [made])
            cells.extend(per_layer[-1])
        return cells, training, inner, shape, per_layer

    def _module_classes(self, rule, per_layer: list[list], statement, read_after: bool) -> None:
        """The classes of the module's own the cells in ``per_layer`` (each layer's ``_Made``) need,
        written once, before the first model that needs them in the module's order, and the cells
        made of them under the name each class takes there: ``helper_classes`` (a SELU, a LeakyReLU
        with TF's gradients), and, where the module reads the model's moving statistics after
        training, the subclass of MindSpore's BatchNorm cells that updates the moving variance with
        the batch's biased variance, as Keras does (MindSpore's kernel takes the unbiased one)."""
        wanted = [(made_by, made_by, template.format) for made_by, template in rule.params.get("helper_classes", {}).items()]
        if read_after:
            spec = next(v for v in rule.params["layers"].values() if v.get("kind") == "batchnorm")
            wanted += [(dotted(parse_expression(base)), "Keras" + base.rsplit(".", 1)[-1],
                        functools.partial(rule.params["batchnorm_class"].format, base=base))
                       for base in (spec["to"], spec["to_flat"])]
        for made_by, base_name, code in wanted:
            if not _makes(per_layer, made_by):
                continue
            name, made, at = self.module_classes.get(made_by) or (None, None, None)
            if name is None:
                name = self.fresh(base_name)
                made = parse_statement(code(name=name)).with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
            if at is None or self.index[statement] < self.index[at]:  # (before the first model, in the module's order)
                if at is not None:
                    self.out.before[at].remove(made)
                self.out.before.setdefault(statement, []).insert(0, made)
                self.module_classes[made_by] = (name, made, statement)
            for layer in per_layer:
                for one in layer:
                    one.cells = [c.with_changes(func=cst.Name(name)) if _call_of(c, made_by) else c for c in one.cells]

    @staticmethod
    def _last_axis(rule, per_layer: list[list]) -> bool:
        """Whether any of the cells (each layer's ``_Made``) is a softmax, which reads the last axis."""
        return _makes(per_layer, dotted(parse_expression(rule.params["activation_cells"]["softmax"])))

    def _width(self, width: int) -> cst.BaseExpression:
        """An input width as code: the module constant the layer before was given, else the number."""
        return self.width_names.get(width) or cst.Integer(str(width))

    def _states_input(self, rule, elements: list) -> bool:
        """The first layer states its input (``input_shape``), or is a native model."""
        first = elements[0] if elements else None
        if isinstance(first, cst.Name):
            return True
        spec = rule.params["layers"].get(dotted(first.func)) if isinstance(first, cst.Call) else None
        bound = argbind.bind(first, spec["signature"]) if spec is not None else None
        return bound is not None and given(bound, "input_shape") is not None

    # -- input shapes from the data the module feeds a model --------------------------------

    def int_value(self, node: cst.CSTNode) -> int | None:
        """An integer literal, or a module name bound once to one (:meth:`int_constant`)."""
        if isinstance(node, cst.Integer):
            return node.evaluated_value
        return self.int_constant(node) if isinstance(node, cst.Name) and not self._local(node) else None

    @functools.cached_property
    def shapes(self) -> shapes_of.Shapes:
        rule = next(iter(self.rules.get("sequential", ())), None)
        data = next(iter(self.rules.get("dataset", ())), None)
        return shapes_of.Shapes(self, rule.params.get("data_shapes", {}) if rule is not None else {},
                                frozenset(data.params["lowers"]) if data is not None else frozenset(),
                                frozenset(data.params["distribute"]) if data is not None else frozenset())

    def _fed_rows(self, name: str, binding: cst.Name) -> tuple | str:
        """The shape of one example of everything the module feeds the model ``name``: what it
        is called on, and what its ``fit``/``evaluate``/``predict`` are given, each an array of a
        shape the module's code makes statically (:mod:`migrate.ops.shapes`), or a batch that a
        ``for`` loop over a pipeline of such arrays hands to the function calling it; or why not.
        A call fed batches of another dtype than float32 goes in :attr:`fed_casts` (Keras casts them)."""
        found, unknown, built = set(), None, False
        for read in self.reads(name, binding):
            up = self.parent.get(read)
            if isinstance(up, cst.Call) and up.func is read:
                given_arg = next((a for a in up.args if a.keyword is None), None)
            elif isinstance(up, cst.Attribute) and up.value is read and up.attr.value == "build":
                rows = self._build_rows(self.parent.get(up))
                if rows is None:
                    return f"`{name}.build` is not given a literal input shape"
                found.add(rows)
                built = True
                continue
            elif isinstance(up, cst.Attribute) and up.value is read and up.attr.value in ("fit", "evaluate", "predict") \
                    and isinstance(self.parent.get(up), cst.Call):
                call = self.parent[up]
                given_arg = next((a for a in call.args if a.keyword is None or a.keyword.value == "x"), None)
            else:
                continue
            if given_arg is None or given_arg.star:
                return f"`{name}` is called without one input"
            fed = self._rows_of(given_arg.value, up)
            if isinstance(fed, str):
                unknown = unknown or fed
                continue
            rows, dtype = fed
            if dtype is None:
                unknown = unknown or (f"the dtype of the batches `{name}` is fed is not known statically (Keras casts "
                                      "its input to float32; a MindSpore cell computes in the dtype it is given)")
                continue
            if dtype != "float32" and isinstance(up, cst.Call):
                self.fed_casts.setdefault(name, set()).add(up)
            found.add(rows)
        if unknown and not built:  # (a model `build` made takes only inputs of that shape: Keras checks the others)
            return unknown
        if not found:
            return f"`{name}` is given no data whose shape the module makes statically"
        if len(found) > 1:
            return f"`{name}` is given inputs of different shapes ({', '.join(sorted(map(str, found)))})"
        return found.pop()

    def _fed_float32(self, value: cst.BaseExpression, use: cst.CSTNode) -> bool:
        """Whether ``value``, a model's input at ``use``, is statically known to be float32 (see :meth:`_rows_of`)."""
        fed = self._rows_of(value, use)
        return not isinstance(fed, str) and fed[1] == "float32"

    def _build_rows(self, call) -> tuple | None:
        """``model.build((None, 28, 28, 1))`` (or ``input_shape=``): one example's shape, (28, 28, 1)."""
        if not (isinstance(call, cst.Call) and len(call.args) == 1 and not call.args[0].star
                and (call.args[0].keyword is None or call.args[0].keyword.value == "input_shape")):
            return None
        shape = call.args[0].value
        if not (isinstance(shape, (cst.Tuple, cst.List)) and len(shape.elements) >= 2
                and all(isinstance(e, cst.Element) for e in shape.elements) and m.matches(shape.elements[0].value, m.Name("None"))):
            return None
        rows = tuple(self.int_value(e.value) for e in shape.elements[1:])
        return None if None in rows else rows

    def _rows_of(self, value: cst.BaseExpression, use: cst.CSTNode, part: int | None = None, depth: int = 0) -> tuple | str:
        """The shape of one example of ``value`` and the dtype the model receives it in (None: not
        known) (its ``part``-th element, where given), a model's
        input read at ``use`` (see :meth:`_fed_rows`): an array the module makes, a batch of a
        module-level ``for`` loop over a pipeline, or a function's parameter (or a part of one,
        ``features, labels = batch``) that every call of the function gives one of these; or why not."""
        unknown = f"the shape of `{cst.Module([]).code_for_node(value)}`, an input of the model, is not known statically"
        if depth > 4:
            return unknown
        if not isinstance(value, cst.Name) or not self._local(value):
            if isinstance(value, cst.Name) and self._scope_of(use) is None:
                rows = self._loop_rows(value, part)
                if rows is not None:
                    return rows
            if self._scope_of(use) is not None or part is not None:
                return unknown
            got = self.shapes.at(use, value)
            if not isinstance(got, shapes_of.Arr) or got.rows is None or None in got.rows:
                return unknown
            if depth:  # (handed on through a function's parameter, it reaches the cell a NumPy array)
                return (f"`{cst.Module([]).code_for_node(value)}`, a NumPy array, reaches the model through a "
                        "function's parameter (a MindSpore cell takes tensors; Keras converts arrays)")
            return got.rows, "float32"  # (a module array: given to the cell as a float32 tensor, `_array_input`)
        function = self._scope_of(value)  # (the function whose parameter, or variable, it is)
        while isinstance(function, cst.FunctionDef) and value.value not in _locals(function):
            function = self._scope_of(function)
        if not isinstance(function, cst.FunctionDef) or self._scope_of(function) is not None or function.decorators:
            return unknown
        bindings = [n for n in self.under(value.value, function) if self.binds(n)]
        if len(bindings) != 1:
            return unknown
        params = function.params
        if isinstance(self.parent.get(bindings[0]), cst.Param):
            if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params or params.posonly_params:
                return unknown
            position = next(i for i, p in enumerate(params.params) if p.name is bindings[0])
            calls = [read for read in self.names.get(function.name.value, ()) if read is not function.name]
            if not calls or any(not (isinstance(self.parent.get(read), cst.Call) and self.parent[read].func is read)
                                or self._local(read) for read in calls):
                return f"`{function.name.value}`, which calls the model, is not only called by its name"
            found = set()
            for read in calls:
                call = self.parent[read]
                args = [a for a in call.args if a.keyword is None]
                if any(a.star for a in call.args):
                    return unknown
                arg = args[position] if position < len(args) else \
                    next((a for a in call.args if a.keyword is not None and a.keyword.value == value.value), None)
                if arg is None:
                    return unknown
                rows = self._rows_of(arg.value, call, part, depth + 1)
                if isinstance(rows, str):
                    return rows
                found.add(rows)
            return found.pop() if len(found) == 1 else unknown
        # `features, targets = inputs` in the function's own body: a part of another of its names
        target = self.parent.get(self.parent.get(bindings[0]))
        tuple_ = self.parent.get(target) if isinstance(target, cst.Tuple) else None
        assign = self.parent.get(tuple_) if isinstance(tuple_, cst.AssignTarget) else None
        if part is not None or not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.value, cst.Name)
                                    and all(isinstance(e, cst.Element) for e in target.elements)):
            return unknown
        at = next(i for i, e in enumerate(target.elements) if e.value is bindings[0])
        return self._rows_of(assign.value, assign, at, depth + 1)

    def _loop_rows(self, name: cst.Name, part: int | None = None) -> tuple | str | None:
        """For the target of a module-level ``for`` loop over a batched pipeline of arrays whose
        shapes are known (``for images, labels in train_ds``, or over ``enumerate(...)`` of one):
        the shape of one example of its part (or of the ``part``-th part of a whole batch) and its
        dtype (None: not known); None where ``name`` is no such target."""
        node, loop = name, None
        while node in self.parent:
            node = self.parent[node]
            if isinstance(node, cst.For):
                loop = node
                break
            if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                loop = node.for_in  # (the element is read under the comprehension's `for`s: its last one's target)
                while loop.inner_for_in is not None:
                    loop = loop.inner_for_in
                break
        if loop is None or self._scope_of(loop) is not None:
            return None
        target, source = loop.target, loop.iter
        if isinstance(source, cst.Call) and isinstance(source.func, cst.Name) and source.func.value == "enumerate" \
                and source.args and source.args[0].keyword is None and not source.args[0].star:
            if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
                return None
            target, source = target.elements[1].value, source.args[0].value
        rows = self.shapes.at(loop, source)
        if not isinstance(rows, shapes_of.Rows):
            return None
        if not rows.batched:
            return "the model is fed a pipeline's rows one by one (not batched)"
        if isinstance(target, cst.Name) and target.value == name.value:
            if rows.single and part is not None:  # (a batch of one array unpacked: its rows, not parts)
                return None
            at = 0 if rows.single else part
        elif isinstance(target, (cst.Tuple, cst.List)) and part is None and len(target.elements) == len(rows.parts):
            at = next((i for i, e in enumerate(target.elements) if m.matches(e.value, m.Name(name.value))), None)
        else:
            at = None
        if at is None or at >= len(rows.parts) or (rows.single and at != 0):
            return None
        got = rows.parts[at]
        if got.rows is None or None in got.rows:
            return None
        if isinstance(loop, cst.For) and any(self.binds(n) and n is not name and self._below(n, loop.body)
                                             for n in self.names.get(name.value, ())):
            return None
        return got.rows, got.dtype

    def _functional(self, rule, statement, call: cst.Call) -> list[tuple[cst.CSTNode, cst.Call]] | str:
        """A functional model that is a chain, ``i = Input(...)``, ``x = Layer(...)(i)``, ...,
        ``model = Model(i, x)``, each a module statement before the model's, its names read
        nowhere else: the chain's statements and the calls that make its layers (Input first)."""
        bound = argbind.bind(call, ["inputs", "outputs", "name=None", "trainable=True"])
        if bound is None or not isinstance(bound["inputs"], cst.Name) or not isinstance(bound["outputs"], cst.Name):
            return "its inputs and outputs are not one name each"
        if not bound["trainable"].deep_equals(cst.Name("True")):
            return "it is not trainable"
        body = list(self.module.body)
        at = body.index(statement)
        want, chain, names = bound["outputs"].value, [], set()
        while True:
            found = None
            for i in range(at - 1, -1, -1):
                assigned = _module_assign(body[i]) if isinstance(body[i], cst.SimpleStatementLine) else None
                if assigned is not None and assigned[0] == want:
                    found = i
                    break
                if want in _bound_by(body[i]):
                    return f"`{want}` is not bound by a layer call"
            if found is None:
                return f"`{want}` is not made at module level before the model"
            made = body[found].body[0].value
            names.add(want)
            at = found
            if want == bound["inputs"].value:
                if dotted(made.func) not in rule.params["inputs"]:
                    return f"`{want}` is not an `Input`"
                chain.append((body[found], made))
                break
            if not (isinstance(made.func, cst.Call) and len(made.args) == 1 and isinstance(made.args[0].value, cst.Name)
                    and made.args[0].keyword is None and not made.args[0].star):
                return f"`{want}` is not one layer applied to one name"
            chain.append((body[found], made.func))
            want = made.args[0].value.value
        chain.reverse()
        inside = {statement, *(s for s, _ in chain)}
        for chained in names:
            for node in self.names.get(chained, ()):
                if self.statement_of(node) not in inside and not self._local(node):
                    return f"`{chained}`, a tensor of the model's graph, is read elsewhere"
        return chain

    def _added(self, statement, name: str) -> list[tuple[cst.CSTNode, cst.Call]] | str:
        """``model = Sequential()`` (or ``Sequential([...])``) and then ``model.add(Layer(...))``
        statements, one after another, or loops ``for _ in range(n):`` of them (Keras makes each
        iteration's layers anew): the statements and their calls, a loop's once per iteration
        (they go: their layers are the cell's list, after the list's)."""
        chain = []
        for following in self.module.body[self.index[statement] + 1:]:
            if isinstance(following, cst.For):
                repeated = self._add_loop(following, name)
                if isinstance(repeated, str):
                    return repeated
                if repeated is None:
                    break
                chain += repeated
                continue
            add = _add_call(following, name)
            if add is None:
                break
            chain.append((following, add))
        if not chain:
            return "it is built empty and not by `add` statements right after it"
        self.absorbed.update(add.func.value for _, add in chain)
        return chain

    def _add_loop(self, loop: cst.For, name: str) -> list[tuple[cst.CSTNode, cst.Call]] | str | None:
        """A loop ``for i in range(n):`` of ``name.add(...)`` statements alone, ``i`` not read in them
        and ``n`` a literal or a module constant: each iteration's calls; None where the loop
        does not add to ``name``; why not, where it does but is not such a loop."""
        lines = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ()
        adds = [_add_call(line, name) for line in lines]
        if not any(adds):
            return None
        if None in adds or loop.orelse is not None or loop.asynchronous is not None:
            return f"`{name}.add` is in a loop that does more than add layers"
        iterable = loop.iter
        count = (self.int_value(iterable.args[0].value) if isinstance(iterable, cst.Call) and dotted(iterable.func) == "range"
                 and len(iterable.args) == 1 and iterable.args[0].keyword is None and not iterable.args[0].star else None)
        if count is None or count < 0 or any(self.binds(node) for node in self.names.get("range", ())):
            return f"`{name}.add` is in a loop that is not `for _ in range(n)` with a literal `n`"
        if not isinstance(loop.target, cst.Name) or any(
                self.under(loop.target.value, add) for add in adds):
            return f"`{name}.add` is given layers made from its loop's variable"
        # (the loop goes: a read of its variable elsewhere might read the value it leaves)
        if any(self._reads_left(loop, node) for node in self.names.get(loop.target.value, ())):
            return f"`{name}.add` is in a loop whose variable `{loop.target.value}` is read elsewhere"
        return [(loop, add) for _ in range(count) for add in adds]

    def _reads_left(self, loop: cst.For, node: cst.Name) -> bool:
        """Whether ``node``, a mention of module-level ``loop``'s variable, may read the value the
        loop leaves: not a binding, a function's own variable, a read before the loop in the
        module's order, one under a loop or comprehension of its own over that name, or one
        after a module statement that binds the name again."""
        if node is loop.target or self._local(node) or self.binds(node):
            return False
        if self._scope_of(node) is not None:
            return not self._rebound_around(node)
        at, start = self.top_index(node), self.index[loop]
        if at < start or self._rebound_around(node):
            return False
        return not any(start < self.top_index(other) <= at and self.binds(other)
                       for other in self.names.get(node.value, ()) if not self._local(other))

    def _rebound_around(self, node: cst.Name) -> bool:
        """``node`` is under a ``for`` or comprehension whose target binds its name."""
        up = self.parent.get(node)
        while up is not None:
            fors = [up] if isinstance(up, cst.For) else _comp_fors(up) if isinstance(up, cst.BaseComp) else []
            if any(node.value in _target_names(f.target) for f in fors):
                return True
            up = self.parent.get(up)
        return False

    def _local(self, name: cst.Name, value: str | None = None) -> bool:
        """The name is a function's own (a parameter or assigned in it), not the module's; with
        ``value``, whether a name ``value`` read where the node ``name`` stands would be."""
        value = name.value if value is None else value
        node = name
        while node in self.parent:
            node = self.parent[node]
            if isinstance(node, (cst.FunctionDef, cst.Lambda)):
                if isinstance(node, cst.Lambda):
                    if value in {p.name.value for p in node.params.params}:
                        return True
                    continue
                if value in _locals(node) and not _declared_global(node, value):
                    return True
        return False

    def _channels_first(self, rule, name: str, cells: list) -> tuple[cst.ClassDef, cst.Call] | str:
        """A model with convolutions: a Cell whose ``construct`` takes Keras's channels-last
        input, runs the convolution part channels-first (MindSpore's CPU and Ascend layout) and
        gives the rest its input channels-last again, so that ``Flatten`` orders the features
        as Keras does and the Dense weights mean what they meant."""
        spatial = [i for i, made in enumerate(cells) if isinstance(made, _Spatial)]
        first, last = spatial[0], spatial[-1]
        if any(isinstance(made, _Flat) for made in cells[:first]):
            return "a layer that needs a flat input comes before its convolutions"
        if any(isinstance(made, _Flat) for made in cells[first:last]):
            return "a `Flatten` or `Dense` sits between its convolutions"
        split = next((i for i in range(last + 1, len(cells)) if isinstance(cells[i], _Flat)), len(cells))
        if self._last_axis(rule, [cells[first:split]]):
            return "a softmax runs within its convolution part (over the channels, which MindSpore's kernels keep first)"
        code = cst.Module([]).code_for_node

        def block(items: list) -> str:
            return "".join(f"            {code(c)},\n" for made in items for c in made.cells)

        class_name = self.fresh(_class_name(name) or "Model")
        lines = [f"class {class_name}({rule.params['cell']}):",
                 f'    """`{name}`: Keras\'s layers as MindSpore\'s cells. The convolutions run channels-first, as',
                 "    MindSpore's kernels do, between the channels-last input and the channels-last features",
                 '    that Keras flattens."""',
                 "",
                 "    def __init__(self):",
                 "        super().__init__()",
                 f"        self.features = {rule.params['to']}([\n{block(cells[:split])}        ])"]
        if split < len(cells):
            lines.append(f"        self.head = {rule.params['to']}([\n{block(cells[split:])}        ])")
        lines += ["", "    def construct(self, x):", "        x = self.features(x.transpose(0, 3, 1, 2))"]
        lines.append("        return self.head(x.transpose(0, 2, 3, 1))" if split < len(cells) else "        return x.transpose(0, 2, 3, 1)")
        cell_class = parse_statement("\n".join(lines) + "\n")
        return cell_class, cst.Call(func=cst.Name(class_name))

    def _dense(self, rule, spec: dict, bound: dict, shape: tuple | None):
        units = given(bound, "units")
        count = self.int_value(units) if units is not None else None  # (a literal, or a module constant)
        if count is None:
            return "a layer's width is not a literal"
        if shape == ():
            return "a `Dense` is given one number per example (Keras's kernel needs a last axis)"
        width: int | cst.BaseExpression | None = shape[-1] if shape is not None else None
        if width is None:
            # a constant kernel `(in, units)` gives the width at run time: Keras builds the
            # kernel from the input and the constant must fit it, so `len(value)` is the input's
            width = self._constant_rows(rule, given(bound, "kernel_initializer"))
            if width is None:
                return "the input width of a layer is not known statically"
        kwargs = {"weight_init": _quoted(rule.params["initializers"]["glorot_uniform"]),
                  "bias_init": _quoted(rule.params["initializers"]["zeros"])}
        why = self._weights(rule, bound, kwargs, transpose=True,
                            fans=(width, count) if isinstance(width, int) else None)
        if why is not None:
            return why
        activation = given(bound, "activation")
        after = None  # an activation nn.Dense does not take by name: its cell, after the layer
        if activation is not None:
            act = self.activation_name(activation)
            if act is None or (act not in rule.params["activations"] and act not in rule.params["activation_cells"]):
                return "the activation is not one of " + ", ".join(
                    f"'{a}'" for a in {**rule.params["activations"], **rule.params["activation_cells"]})
            if act not in rule.params["activations"]:
                after = _Any(_activation_cell(rule, act))
            elif rule.params["activations"][act] is not None:
                kwargs["activation"] = _quoted(rule.params["activations"][act])
        args = [cst.Arg(self._width(width) if isinstance(width, int) else width), cst.Arg(units)]
        args += [cst.Arg(v, keyword=cst.Name(k), equal=_EQUAL) for k, v in kwargs.items()]
        dense = _Flat(cst.Call(func=parse_expression(spec["to"]), args=args))
        return ([dense, after] if after is not None else dense), (shape or (None,))[:-1] + (count,)

    def _runtime_width(self, rule, given_shape: cst.BaseExpression, elements: list) -> tuple | None:
        """``Dense(30, input_shape=X_train.shape[1:])`` first, then only layers that act on the last
        axis (Dense, Dropout, activations): the input width is the last entry of the shape the
        module computes, read where Keras reads it (``X_train.shape[-1]``), a shape of one unknown
        width. None where the shape computes something (a call) or a layer needs the whole shape."""
        specs = [rule.params["layers"].get(dotted(layer.func)) if isinstance(layer, cst.Call) else None for layer in elements]
        kinds = [spec.get("kind", "dense") if spec is not None else None for spec in specs]
        if kinds[0] != "dense" or any(kind not in ("dense", "dropout", "activation", "leaky_relu") for kind in kinds):
            return None
        if m.findall(given_shape, m.Call() | m.Await() | m.Yield() | m.NamedExpr() | m.Lambda()):
            return None
        if isinstance(given_shape, (cst.Tuple, cst.List)) and given_shape.elements and all(
                isinstance(e, cst.Element) for e in given_shape.elements):  # (`(FEATURES,)`: its last entry)
            return (given_shape.elements[-1].value.with_changes(lpar=[], rpar=[]),)
        simple = isinstance(given_shape, (cst.Name, cst.Attribute, cst.Subscript))
        if simple:
            given_shape = given_shape.with_changes(lpar=[], rpar=[])
        if m.matches(given_shape, m.Subscript(value=m.Attribute(attr=m.Name("shape")), slice=[m.SubscriptElement(
                slice=m.Slice(lower=m.Integer("1"), upper=None, step=None))])):
            return (given_shape.with_changes(slice=[cst.SubscriptElement(cst.Index(parse_expression("-1")))]),)
        return (template_expression("{s}[-1]" if simple else "({s})[-1]", s=given_shape),)

    def _constant_rows(self, rule, value: cst.BaseExpression | None) -> cst.BaseExpression | None:
        """``len(value)`` for a constant initializer of a module-level name (an array of the kernel's
        full shape, as the lowered weight reads it), None for anything else."""
        if not (isinstance(value, cst.Call) and dotted(value.func) in rule.params["constant"] and len(value.args) == 1
                and value.args[0].keyword is None and not value.args[0].star):
            return None
        inner = value.args[0].value
        if not isinstance(inner, cst.Name) or self._local(inner):
            return None
        return template_expression("len({v})", v=inner)

    def _weights(self, rule, bound: dict, kwargs: dict, transpose, fans: tuple[int, int]) -> str | None:
        """The initializers and ``use_bias`` of a Dense or convolution into MindSpore's keywords
        (``kwargs`` holds Keras's defaults, stated); why not, where one is not known statically.
        ``transpose``: how a constant kernel goes into MindSpore's layout; ``fans``: the kernel's
        fan-in and fan-out, which Keras's variance-scaling initializers scale by."""
        for keras, ms_name in (("kernel_initializer", "weight_init"), ("bias_initializer", "bias_init")):
            value = given(bound, keras)
            if value is not None:
                kernel = keras == "kernel_initializer"
                init = self._initializer(rule, value, transpose=transpose if kernel else None,
                                         fans=fans if kernel else None)
                if isinstance(init, str):
                    return init
                kwargs[ms_name] = init
        use_bias = given(bound, "use_bias")
        if use_bias is not None:
            if not (isinstance(use_bias, cst.Name) and use_bias.value in ("True", "False")):
                return "`use_bias` is not a literal"
            if use_bias.value == "False":
                kwargs["has_bias"] = use_bias
                del kwargs["bias_init"]
        return None

    def _conv2d(self, rule, spec: dict, bound: dict, shape: tuple | None):
        filters = given(bound, "filters")
        count = self.int_value(filters) if filters is not None else None
        if count is None:
            return "a convolution's `filters` is not a literal"
        if shape is None or len(shape) != 3:
            return "a convolution's input shape (height, width, channels) is not known statically"
        if not _channels_last(bound):
            return "a convolution is given a `data_format` other than 'channels_last'"
        if _pair(bound["dilation_rate"]) != (1, 1) or not bound["groups"].deep_equals(cst.Integer("1")):
            return "a convolution is dilated or grouped"
        kernel, strides = _pair(bound["kernel_size"]), _pair(bound["strides"])
        padding = _string(bound["padding"])
        if kernel is None or strides is None or padding not in ("valid", "same"):
            return "a convolution's kernel size, strides or padding is not a literal"
        kwargs = {"stride": _pair_code(strides)} if strides != (1, 1) else {}
        kwargs |= {"pad_mode": _quoted(padding), "has_bias": cst.Name("True"),
                  "weight_init": _quoted(rule.params["initializers"]["glorot_uniform"]),
                  "bias_init": _quoted(rule.params["initializers"]["zeros"])}
        area = kernel[0] * kernel[1]
        why = self._weights(rule, bound, kwargs, transpose=spec["transpose"],
                            fans=(area * shape[2], area * count))
        if why is not None:
            return why
        cells = [cst.Call(func=parse_expression(spec["to"]), args=[
            cst.Arg(self._width(shape[2])), cst.Arg(filters), cst.Arg(_pair_code(kernel)),
            *[cst.Arg(v, keyword=cst.Name(k), equal=_EQUAL) for k, v in kwargs.items()]])]
        activation = given(bound, "activation")
        if activation is not None:
            act = self.activation_name(activation)
            if act is None or (act not in rule.params["activation_cells"] and act != "linear"):
                return "the activation is not one of " + ", ".join(f"'{a}'" for a in rule.params["activation_cells"])
            if act != "linear":
                cells.append(_activation_cell(rule, act))
        out = tuple(_out_size(n, k, s, padding) for n, k, s in zip(shape[:2], kernel, strides))
        return _Spatial(*cells), out + (count,)

    def _pool2d(self, rule, spec: dict, bound: dict, shape: tuple | None):
        if shape is None or len(shape) != 3:
            return "a pooling layer's input shape (height, width, channels) is not known statically"
        if not _channels_last(bound):
            return "a pooling layer is given a `data_format` other than 'channels_last'"
        size = _pair(bound["pool_size"])
        strides = size if given(bound, "strides") is None else _pair(bound["strides"])
        padding = _string(bound["padding"])
        if size is None or strides is None or padding not in spec["paddings"]:
            return "a pooling layer's size, strides or padding is not a literal it lowers (" + \
                ", ".join(f"'{p}'" for p in spec["paddings"]) + ")"
        cell = cst.Call(func=parse_expression(spec["to"]), args=[
            cst.Arg(_pair_code(size), keyword=cst.Name("kernel_size"), equal=_EQUAL),
            cst.Arg(_pair_code(strides), keyword=cst.Name("stride"), equal=_EQUAL),
            cst.Arg(_quoted(padding), keyword=cst.Name("pad_mode"), equal=_EQUAL)])
        out = tuple(_out_size(n, k, s, padding) for n, k, s in zip(shape[:2], size, strides))
        return _Spatial(cell), out + (shape[2],)

    def _global_pool2d(self, rule, spec: dict, bound: dict, shape: tuple | None):
        """A global pooling: MindSpore's adaptive pooling to 1x1, channels-first, then ``Flatten``
        of the channels (Keras's ``(batch, channels)``)."""
        if shape is None or len(shape) != 3:
            return "a global pooling's input shape (height, width, channels) is not known statically"
        if not _channels_last(bound):
            return "a global pooling is given a `data_format` other than 'channels_last'"
        if not bound["keepdims"].deep_equals(cst.Name("False")):
            return "a global pooling keeps its dimensions"
        pool = cst.Call(func=parse_expression(spec["to"]), args=[cst.Arg(cst.Integer("1"))])
        return [_Spatial(pool), _Flat(cst.Call(func=parse_expression(spec["flatten"])))], (shape[2],)

    def _batchnorm(self, rule, spec: dict, bound: dict, shape: tuple | None):
        if shape is None or len(shape) not in (1, 3):
            return "a `BatchNormalization`'s input shape is not known statically (one axis, or height, width, channels)"
        axis = bound["axis"]
        if _int(axis) not in (-1, len(shape)):
            return "a `BatchNormalization` normalizes an axis other than the channels (the last)"
        for key in ("momentum", "epsilon"):
            if not _number(bound[key]):
                return f"a `BatchNormalization`'s `{key}` is not a literal"
        for key in ("center", "scale"):
            if not bound[key].deep_equals(cst.Name("True")):
                return f"a `BatchNormalization`'s `{key}` is not True"
        cls = spec["to"] if len(shape) == 3 else spec["to_flat"]
        cell = cst.Call(func=parse_expression(cls), args=[
            cst.Arg(self._width(shape[-1])),
            cst.Arg(bound["epsilon"], keyword=cst.Name("eps"), equal=_EQUAL),
            cst.Arg(bound["momentum"], keyword=cst.Name("momentum"), equal=_EQUAL)])
        return (_Spatial(cell) if len(shape) == 3 else _Flat(cell)), shape

    def _flatten(self, rule, spec: dict, bound: dict, shape: tuple | None):
        if not _channels_last(bound):
            return "`Flatten` is given a `data_format` other than 'channels_last'"
        flat = None if shape is None else (math.prod(shape),)
        return _Flat(cst.Call(func=parse_expression(spec["to"]))), flat

    def _dropout(self, rule, spec: dict, bound: dict, shape: tuple | None):
        rate = bound["rate"]
        if not (_number(rate) and not isinstance(rate, cst.UnaryOperation) and 0 <= float(rate.value) < 1):
            return "the `Dropout` rate is not a literal in [0, 1)"
        if given(bound, "noise_shape") is not None or given(bound, "seed") is not None:
            return "`Dropout` is given a `noise_shape` or a `seed`"
        return _Any(cst.Call(func=parse_expression(spec["to"]), args=[cst.Arg(rate, keyword=cst.Name("p"), equal=_EQUAL)])), shape

    def _activation(self, rule, spec: dict, bound: dict, shape: tuple | None):
        name = _string(bound["activation"]) if "activation" in bound else spec["activation"]
        to = rule.params["activation_cells"].get(name) if name is not None else None
        if to is None:
            return "the activation layer's function is not one of " + ", ".join(
                f"'{a}'" for a in rule.params["activation_cells"])
        return _Any(_activation_cell(rule, name)), shape

    def _leaky_relu(self, rule, spec: dict, bound: dict, shape: tuple | None):
        """``LeakyReLU(negative_slope)`` (Keras 2's ``alpha=``): the activation's cell with that slope."""
        slope = given(bound, "alpha") or bound["negative_slope"]
        if not _number(slope):
            return "a `LeakyReLU`'s slope is not a literal"
        cell = _activation_cell(rule, "leaky_relu")
        return _Any(cell.with_changes(args=[cst.Arg(slope)])), shape

    def _initializer(self, rule, value: cst.CSTNode, transpose: bool, fans: tuple[int, int] | None = None):
        name = _string(value)
        if name is None and isinstance(value, cst.Call) and not value.args:  # `HeNormal()`: its name
            name = rule.params["initializer_classes"].get(dotted(value.func) or "")
        if name is not None:
            scaling = rule.params["variance_scaling"].get(name)
            if scaling is not None:
                if fans is None:
                    return (f"the initializer '{name}' scales by the layer's fans, and its input width is known "
                            "only at run time")
                return _variance_scaling(rule, scaling, fans)
            if name not in rule.params["initializers"]:
                return f"the initializer '{name}' has no native lowering yet"
            return _quoted(rule.params["initializers"][name])
        if isinstance(value, cst.Call) and dotted(value.func) in rule.params["constant"] and len(value.args) == 1 \
                and value.args[0].keyword in (None,) and not value.args[0].star:
            inner = value.args[0].value
            if _number(inner):
                return inner
            if isinstance(inner, cst.Name) and self._changed_in_place(inner):
                return (f"`{inner.value}`, a constant initializer's value, is changed in place in the module (Keras "
                        "reads it when the layer is first called, MindSpore's cell when it is made)")
            code = "ms.Tensor({v}, ms.float32)" + ("" if not transpose else ".T" if transpose is True else f".transpose({transpose})")
            return template_expression(code, v=inner)
        return "an initializer is not a name or a constant initializer"

    def _changed_in_place(self, read: cst.Name) -> bool:
        """Whether another read of ``read``'s name, in the same scope, may change its value where it is."""
        return any(node is not read and self._local(node) == self._local(read) and self.changes_in_place(node)
                   for node in self.names.get(read.value, ()))

    def changes_in_place(self, node: cst.Name, values: bool = True) -> bool:
        """Whether the read ``node`` changes an array where it is: its shape (an attribute assigned,
        ``x.shape = (-1, 784)``, also in a tuple target or deleted; ``x.resize(...)``), or, with
        ``values``, what it holds too (an item assigned, ``w[0] = 1``; ``w += 1``; a method other
        than NumPy's that give a new array, ``w.fill(0)``; handed to a call as ``out=``)."""
        up = self.parent.get(node)
        if values and (isinstance(up, cst.AugAssign) or (
                isinstance(up, cst.Arg) and up.keyword is not None and up.keyword.value == "out")):
            return True
        if not (isinstance(up, cst.Attribute) or values and isinstance(up, cst.Subscript)) or up.value is not node:
            return False
        holder = self.parent.get(up)
        if isinstance(holder, cst.Call):
            return holder.func is up and isinstance(up, cst.Attribute) and (
                up.attr.value == "resize" or values and up.attr.value not in _PURE_METHODS)
        holder, top = self.unpacked(up)
        return isinstance(holder, (cst.AssignTarget, cst.Del)) or (
            isinstance(holder, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)) and holder.target is top)

    def _model_uses(self, name: str, binding: cst.Name, modal: bool, dense: list[bool] | None,
                    flags: tuple[str, ...] = (), bools: frozenset[str] = frozenset()) -> tuple[dict, bool, bool] | str:
        """The replacements of the model's uses, whether its calls train (set once, as a Cell's
        mode, where a layer computes differently in training: all its calls must agree), and
        whether the module reads a BatchNorm's moving statistics after training (it trains, and
        infers, saves weights or hands them to callbacks).
        ``dense``: per Keras layer, whether it is a Dense, where the cell's list holds one cell per
        layer (``model.layers[i].kernel`` is then ``model[i].weight.T``). ``flags``: keywords of a
        subclassed model's ``call`` that its cell's ``construct`` keeps (given literals, they stay);
        ``bools``: those of them that must be given True or False (a Dropout's ``training``)."""
        nodes, modes, loops = {}, set(), set()  # (loops: whether each Keras loop trains)
        stored = False  # (weights saved, or handed to callbacks: the moving statistics are read)
        for read in self.reads(name, binding):
            if read in self.absorbed:  # (an `add` statement the cell's list holds)
                continue
            up = self.parent.get(read)
            if isinstance(up, cst.Call) and up.func is read:
                positional = [a for a in up.args if a.keyword is None]
                kept = [a for a in up.args if a.keyword is not None and a.keyword.value in flags]
                if any(not _literal(a.value) for a in kept):
                    return f"`{name}` is given a `{kept[0].keyword.value}` that is not a literal"
                wrong = next((a for a in kept if a.keyword.value in bools and not m.matches(a.value, m.Name("True") | m.Name("False"))), None)
                if wrong is not None:
                    return f"`{name}` is given a `{wrong.keyword.value}` other than True or False (a `Dropout`'s `training`)"
                others = [a for a in up.args if a.keyword is not None and a.keyword.value not in flags]
                if len(positional) != 1 or positional[0].star or any(a.keyword.value != "training" for a in others):
                    return f"`{name}` is called with arguments other than the inputs and `training`"
                array = self._maybe_array(positional[0].value)
                wrap = None
                if up in self.fed_casts.get(name, ()) or array is None and not self._fed_float32(positional[0].value, up):
                    # (batches of another dtype, or a tensor of one not known statically, `ms.Tensor(load())` of
                    # float64 rows: Keras computes its layers in float32, casting its input; a cell would fail)
                    wrap = lambda value: template_expression("{x}.astype(ms.float32)", x=value)  # noqa: E731
                elif array is not None:
                    wrap = self._array_input(positional[0].value)
                    if wrap is None:
                        return f"`{name}` is called on `{array}`, a module value that may be a NumPy array (a MindSpore cell takes tensors; Keras converts arrays)"
                mode = others[0].value if others else cst.Name("False")
                if not (isinstance(mode, cst.Name) and mode.value in ("True", "False", "None")):
                    if modal:
                        return f"`{name}` is called with a `training` that is not a literal, and its {_MODAL} depend on it"
                else:
                    modes.add(mode.value == "True")
                if others or wrap is not None:
                    keep = [i for i, a in enumerate(up.args) if a.keyword is not None and a.keyword.value in flags]
                    nodes[up] = lambda new, wrap=wrap, keep=keep: new.with_changes(args=_last_bare(_commas([new.args[0].with_changes(
                        value=wrap(new.args[0].value) if wrap else new.args[0].value), *(new.args[i] for i in keep)])))
                continue
            if isinstance(up, cst.Attribute) and up.value is read and up.attr.value == "build":
                use = self.parent.get(up)
                if self._build_rows(use) is not None and isinstance(self.parent.get(use), cst.Expr):
                    nodes[self.statement_of(use)] = _GONE  # (a Cell's weights are made with it)
                    continue
                return f"`{name}.build` is not given a literal input shape as a statement"
            if isinstance(up, cst.Attribute) and up.value is read and up.attr.value in ("trainable_variables", "trainable_weights"):
                nodes[up] = lambda new, name=name: template_expression("{m}.trainable_params()", m=cst.Name(name))
                continue
            if isinstance(up, cst.Attribute) and up.value is read and up.attr.value in self.loop_methods:
                use = self.parent.get(up)
                made = self._loop_use(name, up.attr.value, use) if isinstance(use, cst.Call) and use.func is up else None
                if isinstance(made, str):
                    return made
                if made is not None:
                    nodes[use] = made
                    if up.attr.value in ("fit", "evaluate", "predict"):
                        loops.add(up.attr.value == "fit")
                        if any(a.keyword is not None and a.keyword.value.startswith("validation_") for a in use.args):
                            loops.add(False)
                    stored = stored or up.attr.value == "save_weights" or any(
                        a.keyword is not None and a.keyword.value == "callbacks" for a in use.args)
                    continue
            outer = self._holding_model(read)
            # (`Sequential([model, Softmax()])`: its first cell; only for a model bound once, which
            # the other model's lowering can find as one)
            if outer is not None and name not in self.unnested and binding not in self.spans:
                self.nested.setdefault(name, []).append(outer)
                continue
            if self._broadcast_argument(up, read) is not None:  # (every parameter, as Keras's `variables`)
                nodes[up] = lambda new, name=name: template_expression("{m}.get_parameters()", m=cst.Name(name))
                continue
            weight = self._layer_weight(up, read, dense)
            if weight is not None:
                nodes[weight[0]] = weight[1]
                continue
            what = f"`.{up.attr.value}`" if isinstance(up, cst.Attribute) and up.value is read else "a use the native cell does not serve"
            return f"`{name}` has {what}"
        if modal and len(modes) > 1:
            return f"`{name}` is called both training and not, and its {_MODAL} depend on it (a Cell's mode is set once)"
        # (MindSpore updates BatchNorm's moving variance with the batch's unbiased variance, Keras with the
        # biased one: a model that trains and then reads them takes the cell that updates them as Keras does)
        read_after = True in (modes | loops) and (False in (modes | loops) or stored)
        return nodes, modal and modes == {True}, read_after

    @functools.cached_property
    def loop_methods(self) -> frozenset[str]:
        """The model's methods the native loop's rule lowers (``compile`` and its ``methods``)."""
        rule = next(iter(self.rules.get("fit", ())), None)
        return frozenset(("compile", *rule.params["methods"])) if rule is not None else frozenset()

    def _loop_use(self, name: str, method: str, use: cst.Call):
        """``model.compile/fit/evaluate/predict(...)`` as ``training.<method>(model, ...)`` (TFL160):
        the replacement, or why the model keeps the shim (None: no rule lowers Keras's loop)."""
        rule = next(iter(self.rules.get("fit", ())), None)
        if rule is None:
            return None
        module = rule.params["to"]
        # (a function's own `training`, such as a layer's `call(self, x, training=None)`, is another
        # variable, unless the loop's call sits in that function)
        if any(not self._local(node) for node in self.names.get(module, ())) or self._local(use, module):
            return f"`{module}`, the name of the native loop's module, is bound in the module or around the loop's call"
        if method == "compile":
            return self._compile_use(rule, name, use)
        signature = rule.params["methods"][method]
        bound = argbind.bind(use, signature)
        if bound is None:
            passed = [a.keyword.value for a in use.args if a.keyword is not None]
            other = next((k for k in passed if k not in {p.split("=")[0] for p in signature}), None)
            return (f"`{name}.{method}` is given `{other}`, which the native loop does not take" if other
                    else f"`{name}.{method}` is given arguments the native loop does not take")
        if sum(a.keyword is None for a in use.args) > rule.params["positional"][method]:
            return f"`{name}.{method}` is given more positional arguments than the native loop reads in Keras's order"
        if method in rule.params.get("statements", ()) and not isinstance(self.parent.get(use), cst.Expr):
            return f"the result of `{name}.{method}` is used (Keras returns an object the native loop does not)"
        callbacks = given(bound, "callbacks")
        if callbacks is not None:
            why = self._callbacks(rule, callbacks)
            if why is not None:
                return f"`{name}.{method}` is given callbacks the native loop does not serve: {why}"
        self.loop_rules.setdefault(name, set()).add(rule.id)
        return lambda new: new.with_changes(func=parse_expression(f"{module}.{method}"),
                                            args=[_first_arg(cst.Name(name), new, new.args), *new.args])

    def _callbacks(self, rule, value: cst.BaseExpression) -> str | None:
        """Why callbacks passed to the native loop keep the shim, or None. They must be a list
        display (or a module-level name bound once to one, read only as a loop's argument) of
        Keras's built-in callbacks the rule names, constructed in it or by a name bound once to
        one: those ask of a model only what the loop's view of a MindSpore cell answers."""
        known = rule.params.get("callbacks", {})
        if isinstance(value, cst.Name):
            value = self._bound_once_to(value, lambda read: self._loop_argument(read))
            if isinstance(value, str):
                return value
        if not isinstance(value, (cst.List, cst.Tuple)) or any(not isinstance(e, cst.Element) for e in value.elements):
            return "they are not a list display"
        for element in value.elements:
            call = element.value
            if isinstance(call, cst.Name):
                call = self._bound_once_to(call, lambda read: self._callback_read(read))
                if isinstance(call, str):
                    return call
            if not isinstance(call, cst.Call):
                return "a callback is not constructed in the list or by a name bound once"
            spec = known.get(dotted(call.func))
            if spec is None:
                return f"`{dotted(call.func)}` is not one of the built-in callbacks it serves"
            bound = argbind.bind(call, spec["signature"])
            if bound is None:
                return f"`{dotted(call.func)}` is given arguments the native loop does not take"
            for key, literal in spec.get("require", {}).items():
                if not bound[key].deep_equals(parse_expression(literal)):
                    return f"`{dotted(call.func)}` is not given `{key}={literal}`"
        return None

    def _bound_once_to(self, name: cst.Name, read_ok) -> cst.BaseExpression | str:
        """The value of a module-level ``name = value`` that binds ``name`` once, where every
        other read of it passes ``read_ok``; else why not."""
        binding = next((node for node in self.names.get(name.value, ()) if self.binds(node)), None)
        if binding is None or self._local(name) or not self.bound_once(name.value, binding):
            return f"`{name.value}` is not bound once at module level"
        statement = self.parent.get(self.parent.get(binding))
        top = self.module.body[self.top_index(binding)] if binding in self.parent else None
        value = statement.value if isinstance(statement, cst.Assign) and _module_assign_any(top) == name.value \
            and top.body[0] is statement else self._unpacked_value(binding, top)
        if value is None:
            return f"`{name.value}` is not bound once at module level"
        if any(not read_ok(read) for read in self.names[name.value] if read is not binding):
            return f"`{name.value}` has other uses"
        return value

    def _unpacked_value(self, binding: cst.Name, top) -> cst.BaseExpression | None:
        """For ``binding`` in a module statement ``a, b = 6, 3`` (one target, a display of as many
        values, nothing starred): its value; else None."""
        element = self.parent.get(binding)
        target = self.parent.get(element) if isinstance(element, cst.Element) else None
        assign_target = self.parent.get(target) if isinstance(target, cst.Tuple) else None
        assign = self.parent.get(assign_target) if isinstance(assign_target, cst.AssignTarget) else None
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(top, cst.SimpleStatementLine)
                and top.body[0] is assign and isinstance(assign.value, (cst.Tuple, cst.List))
                and len(assign.value.elements) == len(target.elements)
                and all(isinstance(e, cst.Element) for e in (*target.elements, *assign.value.elements))):
            return None
        return assign.value.elements[target.elements.index(element)].value

    def _loop_argument(self, read: cst.Name) -> bool:
        """``read`` is an argument of a model's ``fit``/``evaluate`` call."""
        arg = self.parent.get(read)
        call = self.parent.get(arg)
        return (isinstance(arg, cst.Arg) and arg.value is read and isinstance(call, cst.Call)
                and isinstance(call.func, cst.Attribute) and call.func.attr.value in ("fit", "evaluate"))

    def _callback_read(self, read: cst.Name) -> bool:
        """``read`` is a list's element or an attribute read other than the callback's model."""
        up = self.parent.get(read)
        if isinstance(up, cst.Element):
            return True
        return isinstance(up, cst.Attribute) and up.value is read and up.attr.value not in ("model", "set_model")

    def _compile_use(self, rule, name: str, use: cst.Call):
        bound = argbind.bind(use, rule.params["compile"])
        if bound is None:
            return f"`{name}.compile` is given arguments the native loop does not take"
        if sum(a.keyword is None for a in use.args) > 2:
            return f"`{name}.compile` is given more than two positional arguments (Keras 2 and 3 order the rest differently)"
        if dotted(bound["loss_weights"]) != "None":
            return f"`{name}.compile` is given `loss_weights`"
        optimizer, loss, metrics = bound["optimizer"], bound["loss"], bound["metrics"]
        found = self._compiled_object(name, optimizer, rule.params.get("optimizer_names", {}), "optimizer")
        if isinstance(found, str):
            return found
        lowering, optimizer = found
        native_optimizer = self._native_optimizer(lowering, optimizer, name)
        if isinstance(native_optimizer, str):
            return f"its optimizer keeps the shim: {native_optimizer}"
        on_logits = False
        if _string(loss) in rule.params.get("softmax_losses", {}):
            head = self._softmax_head()
            if head is None:
                return (f"its loss `{_string(loss)}` takes probabilities, and the model does not end in a softmax "
                        "whose logits the native loop can read (as Keras's crossentropy reads them)")
            self.softmax_split[name] = head
            loss, on_logits = parse_expression(rule.params["softmax_losses"][_string(loss)]), True
        found = self._compiled_object(name, loss, rule.params.get("loss_names", {}), "loss")
        if isinstance(found, str):
            return found
        loss_rule, loss = found
        native_loss = self._native_loss(loss_rule, loss)
        if isinstance(native_loss, str):
            return f"its loss keeps the shim: {native_loss}"
        if native_loss[1] != "mean":
            return "its loss's reduction is not Keras's default, the mean over the batch"
        if dotted(metrics) != "None":
            names = metrics.elements if isinstance(metrics, (cst.List, cst.Tuple)) else None
            if names is None or any(_string(e.value) not in rule.params.get("metric_names", ()) for e in names):
                return "its metrics are not a list of metric names the native loop resolves"
        self.loop_rules.setdefault(name, set()).update({rule.id, lowering.id, loss_rule.id})
        self.compiles.setdefault(name, []).append(self.statement_of(use))
        passed = argbind.passed_args(use, rule.params["compile"])
        values = {"optimizer": native_optimizer, "loss": native_loss[0]}

        def native(new: cst.Call) -> cst.Call:
            args = []
            for original, arg in zip(use.args, new.args):
                key = next(k for k, a in passed.items() if a is original)
                if key == "loss_weights":  # (None: Keras's default)
                    continue
                value = values.get(key, arg.value)
                args.append(arg.with_changes(value=value, keyword=cst.Name(key), equal=arg.equal if arg.keyword else _EQUAL))
                if key == "loss" and on_logits:  # (Keras's crossentropy reads the softmax's logits)
                    args.append(cst.Arg(cst.Name("True"), keyword=cst.Name("loss_on_logits"), equal=_EQUAL, comma=args[-1].comma))
                    args[-2] = args[-2].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            args[-1] = args[-1].with_changes(comma=new.args[-1].comma)
            return new.with_changes(func=parse_expression(f"{rule.params['to']}.compile"),
                                    args=[_first_arg(cst.Name(name), new, args), *args])
        return native

    def _compiled_object(self, name: str, value, names: dict, kind: str):
        """The rule of ``kind`` that lowers what ``compile`` is given (a Keras constructor, or a
        name Keras resolves, as ``"sgd"``), and that constructor call; or why not."""
        if _string(value) is not None:
            known = names.get(_string(value).lower())
            if known is None:
                return f"the {kind} `{_string(value)}` has no native lowering yet"
            value = cst.Call(func=parse_expression(known))
        elif kind == "optimizer" and isinstance(value, cst.Name):
            made = self._compiled_optimizer(value)
            if isinstance(made, str):
                return f"`{name}.compile` is given `{value.value}`, which {made}"
            self.inlined[self.statement_of(value)] = (value.value, made[0])
            value = made[1]
        elif kind == "loss" and isinstance(value, cst.Name):
            # (`loss_fn = SparseCategoricalCrossentropy(...)` given by name: the loop makes its own
            # of the same arguments; a Keras loss holds no state, so what else reads `loss_fn` is
            # the same either way)
            made = self._bound_once_to(value, lambda read: True)
            if isinstance(made, cst.Call):
                value = made
        found = next((r for r in self.rules.get(kind, ()) if isinstance(value, cst.Call)
                      and dotted(value.func) in r.params["lowers"]), None)
        if found is None:
            return f"`{name}.compile` is not given a Keras {kind} the native tier lowers"
        return found, value

    def _compiled_optimizer(self, read: cst.Name) -> tuple[cst.CSTNode, cst.Call] | str:
        """For ``compile(optimizer=name)``: the module statement ``name = <optimizer>(...)`` whose
        value that read is, where it is the value's one read (the loop makes its own of the same
        arguments, and nothing else sees the shim's: its state, its step count), and that call;
        else why not (said after "which"). A name bound again is judged binding by binding."""
        if self._local(read):
            return "is a function's own"
        node = read
        while node in self.parent and node not in self.index:
            node = self.parent[node]
            if isinstance(node, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.BaseComp)):
                return "is given to a `compile` that may run more than once (the optimizer's state lives on across them)"
        statements = [self.module.body[self.top_index(n)] for n in self.names.get(read.value, ()) if self.binds(n)]
        if not statements or any(_module_assign(s) is None or _module_assign(s)[0] != read.value for s in statements):
            return "is not bound by module statements `name = Optimizer(...)`"
        at = self.top_index(read)
        before = [s for s in statements if self.index[s] < at]
        if not before:
            return "is bound after it"
        statement = max(before, key=lambda s: self.index[s])
        binding = statement.body[0].targets[0].target
        if len(statements) > 1:
            span = self.rebound(read.value, statement)
            if span is None:
                return "is bound more than once, and not only by statements of the module's straight-line code"
            self.spans.setdefault(binding, span)
        if self.reads(read.value, binding) != [read]:
            return "has other reads (the optimizer's state would be two objects')"
        return statement, _module_assign(statement)[1]

    def _softmax_head(self) -> str | None:
        """How the model being lowered ends in a softmax: "cell" (an ``nn.Softmax()``), "dense" (a
        Dense's ``activation="softmax"``), or None (another end, or not a SequentialCell)."""
        if not self.building:
            return None
        last = self.building[-1].cells
        if len(last) != 1:
            return None
        last = last[0]
        if not isinstance(last, cst.Call):  # (a native model first and last in the list)
            return None
        if dotted(last.func) == "nn.Softmax" and not last.args:
            return "cell"
        if dotted(last.func) == "nn.Dense" and any(a.keyword and a.keyword.value == "activation" and _string(a.value) == "softmax"
                                                   for a in last.args):
            return "dense"
        return None

    def _maybe_array(self, value: cst.BaseExpression) -> str | None:
        """The module-level name a model's input is read from (``model(x_test)``, ``model(x[:8])``),
        where that is not a loop's element: data made at module level is NumPy as often as not.
        Inputs that reach the model through a function's parameters or a loop come from the
        converted pipeline (MindSpore tensors), as the steps of a custom loop take them."""
        while isinstance(value, (cst.Subscript, cst.UnaryOperation)):
            value = value.value if isinstance(value, cst.Subscript) else value.expression
        if isinstance(value, cst.BinaryOperation):  # (`x_test[:5] / 255.0`: an array if a side is)
            return self._maybe_array(value.left) or self._maybe_array(value.right)
        if isinstance(value, cst.Call) and dotted(value.func) is not None and dotted(value.func).split(".")[0] in ("np", "numpy"):
            return dotted(value.func)
        if not isinstance(value, cst.Name) or self._local(value) or self._loop_target(value):
            return None
        if isinstance(self._loop_rows(value), tuple):  # (a batch of a pipeline of arrays: a tensor)
            return None
        node = value
        while node in self.parent:
            node = self.parent[node]
            if isinstance(node, (cst.CompFor, cst.Lambda)):
                return None
        return None if self._tensor_name(value.value) else value.value

    def _array_input(self, value: cst.BaseExpression):
        """For an input known to be a NumPy array (TFT140's search, where that rule runs), what makes
        the tensor Keras makes of it (the model's float32 input), as a function of the converted
        argument; None otherwise."""
        rule = next(iter(self.rules.get("sequential", ())), None)
        template = rule.params.get("array_input") if rule is not None else None
        if template is None or value not in self.array_inputs:
            return None
        return lambda new: template_expression(template, value=new)

    @functools.cached_property
    def array_inputs(self) -> set[cst.CSTNode]:
        """The call arguments of the module known to be NumPy arrays (see :mod:`migrate.ops.arrays`)."""
        if self.arrays is None:
            return set()
        from migrate.ops import arrays

        code = self.module.code
        return set(arrays.nodes_at(self.module, code, arrays.array_arguments(code, self.arrays)).values())

    def _holding_model(self, read: cst.Name) -> cst.CSTNode | None:
        """The module statement ``other = Sequential([read, ...])`` whose list holds ``read`` first
        (a model the native tier may lower, after this one), or None."""
        element = self.parent.get(read)
        box = self.parent.get(element)
        arg = self.parent.get(box)
        call = self.parent.get(arg)
        if not (isinstance(element, cst.Element) and isinstance(box, (cst.List, cst.Tuple)) and box.elements
                and box.elements[0] is element and isinstance(arg, cst.Arg) and isinstance(call, cst.Call)
                and call.args and call.args[0] is arg):
            return None
        statement = self.statement_of(call)
        found = _module_assign(statement) if statement in self.index else None
        lowers = {name for rule in self.rules.get("sequential", ()) for name in rule.params["lowers"]}
        if found is None or found[1] is not call or dotted(call.func) not in lowers:
            return None
        return statement

    def broken_nesting(self) -> set[str]:
        """Native models whose read in another model's list was taken, where that model kept the shim."""
        return {inner for inner, outers in self.nested.items() if inner in self.models
                and any(outer not in self.lowered for outer in outers)}

    def int_constant(self, name: cst.Name) -> int | None:
        """The value of a module name bound once, by a module statement ``NAME = <integer literal>``
        (``FEATURES = 28``), and nowhere else; None otherwise."""
        value = self._bound_once_to(name, lambda read: True)
        return value.evaluated_value if isinstance(value, cst.Integer) else None

    def _tensor_name(self, name: str) -> bool:
        """Every binding of the module's ``name`` is ``name = ms.Tensor(...)`` (a converted
        ``tf.constant``) or a MindSpore op's result (``ops.cast(...)``): a tensor, not an array."""
        bindings = [node for node in self.names.get(name, ()) if self.binds(node) and not self._local(node)]
        if not bindings:
            return False
        for node in bindings:
            target, assign = self.parent.get(node), self.parent.get(self.parent.get(node))
            if not (isinstance(target, cst.AssignTarget) and isinstance(assign, cst.Assign) and len(assign.targets) == 1
                    and isinstance(assign.value, cst.Call)):
                return False
            made = (dotted(assign.value.func) or "").split(".")
            if not ((made == ["ms", "Tensor"] and self.ms_imported) or (len(made) == 2 and made[0] == "ops" and self.ms_ops)):
                return False
        return True

    @functools.cached_property
    def ms_imported(self) -> bool:
        """Whether the module's top imports ``mindspore as ms`` (as the conversion writes it)."""
        return any(isinstance(s, cst.SimpleStatementLine) and m.matches(s.body[0], m.Import(names=[m.ImportAlias(
            name=m.Name("mindspore"), asname=m.AsName(name=m.Name("ms")))])) for s in self.module.body)

    def _layer_weight(self, up, read: cst.Name, dense: list[bool] | None):
        """``model.layers[i].kernel`` / ``.bias`` read as a value (a Dense layer's): the node and its
        replacement, ``model[i].weight.T`` (MindSpore keeps the kernel ``(out, in)``) / ``model[i].bias``."""
        if dense is None or not (isinstance(up, cst.Attribute) and up.value is read and up.attr.value == "layers"):
            return None
        index = self.parent.get(up)
        if not (isinstance(index, cst.Subscript) and index.value is up and len(index.slice) == 1
                and isinstance(index.slice[0].slice, cst.Index)):
            return None
        number = index.slice[0].slice.value
        i = _int(number)
        if i is None or not -len(dense) <= i < len(dense) or not dense[i]:
            return None
        attribute = self.parent.get(index)
        if not (isinstance(attribute, cst.Attribute) and attribute.value is index and attribute.attr.value in ("kernel", "bias")):
            return None
        if isinstance(self.parent.get(attribute), cst.Attribute):  # (`.assign(...)`, `.numpy()`: a Keras variable's methods)
            return None
        code = "{m}[{i}].weight.T" if attribute.attr.value == "kernel" else "{m}[{i}].bias"
        i %= len(dense)  # (counted from the front: a softmax the native loop needs may end the cell's list)
        return attribute, lambda new: template_expression(code, m=cst.Name(read.value), i=parse_expression(str(i)))

    # -- optimizers ---------------------------------------------------------------------------

    def lower_optimizers(self) -> None:
        self._lower_objects("optimizer", self._optimizer)

    def _native_optimizer(self, rule, call: cst.Call, model: str) -> cst.Call | str:
        """MindSpore's optimizer over ``model``'s parameters for a Keras optimizer call, or why not."""
        bound = argbind.bind(call, rule.params["signature"])
        if bound is None:
            return "it is given arguments the native optimizer does not take with Keras's formula"
        for key, value in bound.items():
            if not (_literal(value) or self._fixed_number(value, rule.params.get("numbers", ()))):
                return f"`{key}` is not a literal (a schedule or a variable changes MindSpore's update)"
        for key, code in rule.params.get("require", {}).items():
            if not bound[key].deep_equals(parse_expression(code)):
                return f"`{key}` is not `{code}`"
        args = [cst.Arg(self._params_of(model))]
        explicit = argbind.explicit(call, rule.params["signature"])
        defaults = dict(rule.params.get("defaults", {}))
        for keras, ms_name in rule.params["arguments"].items():
            if keras in explicit and given(bound, keras) is not None:
                args.append(cst.Arg(bound[keras], keyword=cst.Name(ms_name), equal=_EQUAL))
            elif ms_name in defaults:
                args.append(cst.Arg(parse_expression(str(defaults.pop(ms_name))), keyword=cst.Name(ms_name), equal=_EQUAL))
        return call.with_changes(func=parse_expression(rule.params["to"]), args=args)

    def _dict_group(self, node) -> str | None:
        """For ``list(weights.values()) + list(biases.values())`` of native variables' dicts, each once:
        its code (the weights, in the dicts' order); None for anything else."""
        terms, parts = [], [node]
        while parts:
            part = parts.pop()
            if isinstance(part, cst.BinaryOperation) and isinstance(part.operator, cst.Add) and not part.lpar:
                parts += [part.right, part.left]
                continue
            if not (m.matches(part, m.Call(func=m.Name("list"), args=[m.Arg(m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("values")),
                                                                                   args=[]), keyword=None)]))
                    and part.args[0].value.func.value.value in self.variable_dicts):
                return None
            terms.append(part.args[0].value.func.value.value)
        if len(set(terms)) != len(terms):
            return None
        return " + ".join(f"list({t}.values())" for t in terms)

    def _params_of(self, owner: str) -> cst.BaseExpression:
        """What MindSpore's optimizer or tape takes for the weights of ``owner`` (see :meth:`weights_owner`):
        a native model's ``trainable_params()``, or the list of native variables itself."""
        if _variable_group(owner):
            return parse_expression(owner)
        return template_expression("{m}.trainable_params()", m=cst.Name(owner))

    def _made_at(self, owner: str) -> int:
        """The module statement after which the weights of ``owner`` all exist (its index)."""
        if owner.startswith("["):
            return max(self.module.body.index(self.variables[n]) for n in owner[1:-1].split(", "))
        if owner.startswith("list("):
            return max(self.module.body.index(self.variable_dicts[term[5:-len(".values())")]]) for term in owner.split(" + "))
        return self.module.body.index(self.models[owner])

    def _fixed_number(self, value: cst.BaseExpression, calls, depth: int = 0) -> bool:
        """``value`` is a number fixed for the run: arithmetic of numeric literals, of the calls
        ``calls`` names (``get_group_size()``: a learning rate scaled by the number of processes,
        as Horovod programs scale it) and of module-level names bound once to such a value."""
        if depth > 8:
            return False
        if _number(value):
            return True
        if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, (cst.Minus, cst.Plus)):
            return self._fixed_number(value.expression, calls, depth + 1)
        if isinstance(value, cst.BinaryOperation) and isinstance(
                value.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power)):
            return self._fixed_number(value.left, calls, depth + 1) and self._fixed_number(value.right, calls, depth + 1)
        if isinstance(value, cst.Call):
            return not value.args and dotted(value.func) in calls
        if isinstance(value, cst.Name):
            bound = self._bound_once_to(value, lambda read: True)
            return not isinstance(bound, str) and self._fixed_number(bound, calls, depth + 1)
        return False

    def _optimizer(self, rule, statement, name: str, call: cst.Call) -> str | None:
        binding = statement.body[0].targets[0].target
        native = self._native_optimizer(rule, call, "model")  # (checks the arguments; the model is known below)
        if isinstance(native, str):
            return native
        model, applies, builds, broadcasts = None, [], [], []
        for read in self.reads(name, binding):
            up = self.parent.get(read)
            broadcast = self._broadcast_argument(up, read)
            if broadcast is not None:
                broadcasts.append((up, broadcast))
                continue
            method = up.attr.value if isinstance(up, cst.Attribute) and up.value is read else None
            use = self.parent.get(up) if method else None
            if not (isinstance(use, cst.Call) and use.func is up and isinstance(self.parent.get(use), cst.Expr)):
                return f"`{name}` has a use other than `apply_gradients(...)` as a statement"
            if method == "apply_gradients":
                found = _zip_with_weights(use, self.weights_owner)
                if found is None:
                    return "`apply_gradients` is not given `zip(grads, model.trainable_variables)`"
                grads, owner = found
                applies.append((use, grads))
            elif method == "build" and len(use.args) == 1:
                owner = self.weights_owner(use.args[0].value)
                builds.append(use)
            else:
                return f"`{name}.{method}` has no native counterpart" if method else f"`{name}` is used directly"
            if owner is None or (model is not None and owner != model):
                return "its variables are not one model's `trainable_variables`"
            model = owner
        if model is None:
            return f"`{name}` never applies gradients"
        group = _variable_group(model)
        if not group and model not in self.models:
            return f"the model `{model}` keeps the shim"
        if self._made_at(model) > self.module.body.index(statement):
            return f"it is made before the variables `{model}`" if group else f"it is made before the model `{model}`"
        if group and broadcasts:
            return f"`{name}.variables` is broadcast (a list of variables has no broadcast of its own beside it)"
        for _, broadcast in broadcasts:
            if not self._model_broadcast_beside(broadcast, model):
                return (f"`{name}.variables` is broadcast where `{model}.variables` is not, from the same root, "
                        "in the same block (MindSpore's optimizer also holds the model's parameters)")
        horovod = imported_from(self.module, "migrate.runtime", "horovod")
        averaged = []
        if horovod is not None:
            # A Horovod program reduces gradients only where it says so: `grads = hvd.allreduce_gradients(grads)`
            # right before each apply (a converted `DistributedGradientTape`) becomes the reducer's average.
            for use, grads in applies:
                found = self._averaged_before(use, grads, horovod)
                if found is None:
                    return ("a Horovod program reduces gradients only where it says so: "
                            "`apply_gradients` does not follow `grads = hvd.allreduce_gradients(grads)`")
                averaged.append(found)
        reducer = self.fresh("grad_reducer")
        native = self._native_optimizer(rule, call, model)
        self.out.nodes[call] = lambda new: native
        template = rule.params["reducer"]
        if horovod is not None:
            template = template.replace("mean=False", "mean=True")
        reducer_statement = parse_statement(template.format(name=reducer, optimizer=name))
        self.out.statements[statement] = [statement, reducer_statement]
        self.reducer_statements.append(reducer_statement)
        conditions = [condition for _, condition in averaged] if averaged else [None] * len(applies)
        for (use, _), condition in zip(applies, conditions):
            # (reduced only where the program's `if` says so, when it has one)
            template, extra = ("{o}({r}({g}))", {}) if condition is None else ("{o}({r}({g}) if {c} else {g})",
                                                                              {"c": condition})
            self.out.nodes[use] = lambda new, template=template, extra=extra: template_expression(
                template, o=cst.Name(name), r=cst.Name(reducer), g=new.args[0].value.args[0].value, **extra)
            self.gone.add(use.args[0].value.func)  # `zip`
            self.weights_dropped.add(use.args[0].value.args[1].value)
        for use in builds:
            self.out.removed.add(self.statement_of(use))
            self.weights_dropped.add(use)
        for up, _ in broadcasts:
            self.out.nodes[up] = lambda new: template_expression("{o}.get_parameters()", o=cst.Name(name))
        self.out.removed.update(statement for statement, _ in averaged)
        self.optimizers[name] = (model, reducer)
        how = "averaged (Horovod's `allreduce_gradients`)" if horovod is not None else "summed"
        over = f"the variables `{model}`" if group else f"`{model}`'s weights"
        self.note(self.place(name, statement), rule, "converted", f"`{name}` is a native `{rule.params['to']}` over {over}; "
                  f"gradients are {how} across processes by `{reducer}` before it applies them")
        return None

    def _broadcast_argument(self, up: cst.CSTNode, read: cst.Name) -> cst.Call | None:
        """The ``hvd.broadcast_variables(...)`` call whose variables ``read.variables`` (or
        ``.weights``) is, or None. Horovod assigns the root's values to every variable given, in any
        order: a native model's or optimizer's ``get_parameters()`` serve it."""
        horovod = imported_from(self.module, "migrate.runtime", "horovod")
        if horovod is None or not (isinstance(up, cst.Attribute) and up.value is read
                                   and up.attr.value in ("variables", "weights")):
            return None
        arg, call = self.parent.get(up), self.parent.get(self.parent.get(up))
        if not (isinstance(arg, cst.Arg) and arg.value is up and isinstance(call, cst.Call)
                and dotted(call.func) == f"{horovod}.broadcast_variables"):
            return None
        bound = argbind.passed_args(call, ["variables", "root_rank", "process_set=None", "inplace=False"])
        return call if bound.get("variables") is arg and isinstance(self.parent.get(call), cst.Expr) else None

    def _model_broadcast_beside(self, broadcast: cst.Call, model: str) -> bool:
        """A statement of ``broadcast``'s block broadcasts ``model.variables`` with the same other arguments."""
        statement = self.statement_of(broadcast)
        for sibling in getattr(self.parent.get(statement), "body", ()):
            small = sibling.body[0] if isinstance(sibling, cst.SimpleStatementLine) and len(sibling.body) == 1 else None
            call = small.value if isinstance(small, cst.Expr) else None
            if not (isinstance(call, cst.Call) and call is not broadcast and call.args
                    and call.func.deep_equals(broadcast.func) and len(call.args) == len(broadcast.args)):
                continue
            first = call.args[0].value
            if (isinstance(first, cst.Attribute) and dotted(first) in (f"{model}.variables", f"{model}.weights")
                    and all(_same_arg(a, b) for a, b in zip(call.args[1:], broadcast.args[1:]))):
                return True
        return False

    def _averaged_before(self, use: cst.Call, grads: cst.BaseExpression, horovod: str):
        """The statement ``grads = hvd.allreduce_gradients(grads)`` (Horovod's average, no other
        arguments) right before the statement of ``use`` in its block, alone or alone under an
        ``if`` with no ``else``: (that statement, the ``if``'s condition, None where it is the
        reducer's own ``get_group_size() > 1`` or there is no ``if``), or None."""
        statement = self.statement_of(use)
        block = self.parent.get(statement)
        body = list(getattr(block, "body", ()))
        if not isinstance(grads, cst.Name) or statement not in body or body.index(statement) == 0:
            return None
        before = outer = body[body.index(statement) - 1]
        condition = None
        if isinstance(before, cst.If) and before.orelse is None and isinstance(before.body, cst.IndentedBlock) \
                and len(before.body.body) == 1:
            condition, before = before.test, before.body.body[0]
            if cst.Module([]).code_for_node(condition) == "get_group_size() > 1":
                condition = None  # (the reducer is the identity on one process)
        small = before.body[0] if isinstance(before, cst.SimpleStatementLine) and len(before.body) == 1 else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == grads.value):
            return None
        value = small.value
        if not (isinstance(value, cst.Call) and dotted(value.func) == f"{horovod}.allreduce_gradients"
                and len(value.args) == 1 and value.args[0].keyword is None and isinstance(value.args[0].value, cst.Name)
                and value.args[0].value.value == grads.value):
            return None
        return outer, condition

    # -- loss objects -------------------------------------------------------------------------

    def lower_losses(self) -> None:
        self._lower_objects("loss", self._loss)

    def _bound_as_required(self, rule, call: cst.Call, what: str) -> dict | str:
        """The constructor call's arguments bound to the rule's signature, each of the rule's
        ``require`` the literal it names; else why not."""
        bound = argbind.bind(call, rule.params["signature"])
        if bound is None:
            return f"it is given arguments the native {what} does not take"
        for key, code in rule.params.get("require", {}).items():
            if not bound[key].deep_equals(parse_expression(code)):
                return f"`{key}` is not `{code}`"
        return bound

    def _native_loss(self, rule, call: cst.Call) -> tuple[cst.Call, str] | str:
        """MindSpore's loss for a Keras loss constructor, and its reduction (MindSpore's name), or why not."""
        bound = self._bound_as_required(rule, call, "loss")
        if isinstance(bound, str):
            return bound
        reduction = _string(bound["reduction"]) or rule.params.get("reduction_names", {}).get(dotted(bound["reduction"]))
        if reduction not in rule.params["reductions"]:
            return "the reduction is not a literal " + " / ".join(f"'{r}'" for r in rule.params["reductions"])
        reduction = rule.params["reductions"][reduction]
        to = rule.params["to"]
        to = to[dotted(call.func)] if isinstance(to, dict) else to
        return call.with_changes(func=parse_expression(to), whitespace_before_args=cst.SimpleWhitespace(""), args=[
            cst.Arg(_quoted(reduction), keyword=cst.Name("reduction"), equal=_EQUAL)]), reduction

    def _loss(self, rule, statement, name: str, call: cst.Call) -> str | None:
        if rule.params.get("loop_only"):
            return ("it is called directly, where Keras brings labels and predictions to one rank and MindSpore "
                    "broadcasts them (only the native loop, TFL160, aligns them)")
        binding = statement.body[0].targets[0].target
        native = self._native_loss(rule, call)
        if isinstance(native, str):
            return native
        native, reduction = native
        scaled = self.mentions(rule.params.get("scaled_when", [])) if reduction != "none" else None
        calls = {}
        for read in self.reads(name, binding):
            use = self.parent.get(read)
            if self._native_compile_argument(read):
                continue  # (the native loop makes its own loss of the same arguments: TFL160)
            if not (isinstance(use, cst.Call) and use.func is read and len(use.args) == 2
                    and all(a.keyword is None and not a.star for a in use.args)):
                return f"`{name}` has a use other than `{name}(y_true, y_pred)`"
            if scaled is not None:
                return (f"it is called in a strategy program (`{scaled}`), where Keras scales a reduced loss by 1 / replicas "
                        "in the strategy's scope and replica context, and MindSpore's loss does not")
            template = rule.params["template"]
            if not self._native_output(use.args[1].value):
                if "array_template" not in rule.params or not self._native_array_output(use.args[1].value):
                    return "its predictions are not a native model's output (their rank decides MindSpore's class axis)"
                template = rule.params["array_template"]  # (`model(x).numpy()`: NumPy, as Keras's loss takes)
            calls[use] = template
        if not calls:
            return f"`{name}` is never called"
        for use, template in calls.items():
            self.out.nodes[use] = lambda new, template=template: template_expression(
                template, loss=new.func, y_true=new.args[0].value, y_pred=new.args[1].value)
        self.out.nodes[call] = lambda new: native
        self.losses.add(name)
        self.loss_reductions[name] = reduction
        self.note(self.place(name, statement), rule, "converted", f"`{name}` is a native `{dotted(native.func)}`")
        return None

    def _native_compile_argument(self, read: cst.Name) -> bool:
        """``read`` is an argument of a native model's lowered ``compile`` (which the loop replaces)."""
        arg = self.parent.get(read)
        call = self.parent.get(arg) if isinstance(arg, cst.Arg) and arg.value is read else None
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "compile" \
            and isinstance(call.func.value, cst.Name) and call.func.value.value in self.models and call in self.out.nodes

    def _native_array_output(self, node: cst.CSTNode) -> bool:
        """A module name bound once to ``model(x).numpy()`` of a native model: its output as a NumPy
        array (or rows of it, ``predictions[:1]``: the same rank)."""
        if isinstance(node, cst.Subscript) and all(isinstance(e.slice, cst.Slice) for e in node.slice):
            return self._native_array_output(node.value)
        if not isinstance(node, cst.Name) or self._local(node):
            return False
        value = self._bound_once_to(node, lambda read: True)
        return isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value == "numpy" and self._native_output(value.func.value)

    def _native_output(self, node: cst.CSTNode) -> bool:
        """``model(x)`` of a native model, or a name bound once in its function to one, where the
        model's output is not known to have other than one axis besides the batch's (MindSpore's
        losses and `Accuracy` read the classes on axis 1, Keras on the last)."""
        model, shape = self._output_shape(node)
        return model is not None and (shape is None or len(shape) == 1)

    def _output_shape(self, node: cst.CSTNode) -> tuple[str | None, tuple | None]:
        """The native model whose output ``node`` is, and that output's shape (batch left out), where known."""
        model = self._output_of(node)
        return model, self.model_out.get(model, (None,))[0] if model is not None else None

    def _output_of(self, node: cst.CSTNode) -> str | None:
        """The native model whose output ``node`` is (``model(x)``, or a name bound once in its function to it)."""
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in self.models:
            return node.func.value
        if not isinstance(node, cst.Name):
            return None
        function = node
        while function is not None and not isinstance(function, cst.FunctionDef):
            function = self.parent.get(function)
        if function is None:
            return None
        values = [s.value for s in _assignments(function) if len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name)
                  and s.targets[0].target.value == node.value]
        return self._output_of(values[0]) if len(values) == 1 else None

    # -- metric objects -----------------------------------------------------------------------

    def lower_metrics(self) -> None:
        """Each module-level Keras metric (TFL155) whose every use is an update, a read of its
        result or a reset becomes MindSpore's ``mindspore.train`` metric; a compiled step's last
        statements updating such metrics move to each of its calls, the step returning what they read,
        so that the step compiles and the metrics (host objects) update after it."""
        self._lower_objects("metric", self._metric)
        for function, updates in self.metric_updates.items():
            updates.sort(key=lambda update: self._position(update[0]))
            if function is None or not self._hoist_updates(function, updates):
                for statement, rewrite, _ in updates:
                    self._rewrite(statement, rewrite)

    def _metric(self, rule, statement, name: str, call: cst.Call) -> str | None:
        word = self.mentions(rule.params.get("refuse_when", []))
        if word is not None:
            return (f"the module distributes with a strategy (`{word}`), under which a Keras metric's result sums "
                    "every replica's updates (MindSpore's metric counts this process's)")
        constructor = dotted(call.func)
        bound = self._bound_as_required(rule, call, "metric")
        if isinstance(bound, str):
            return bound
        update = rule.params["updates"][constructor]
        methods = rule.params["methods"]
        binding = statement.body[0].targets[0].target
        rewrites, updates = {}, []
        for read in self.reads(name, binding):
            up = self.parent.get(read)
            method = up.attr.value if isinstance(up, cst.Attribute) and up.value is read else None
            use = self.parent.get(up) if method is not None else up
            if not (isinstance(use, cst.Call) and use.func is (up if method is not None else read)):
                if method is not None:
                    return f"`{name}` has `.{method}`"
                return f"`{name}` has a use other than calling it or its `update_state`, `result` or `reset_state`"
            if method is None or method == "update_state":
                line = self._update_line(use)
                if line is None:
                    return f"`{name}` is updated other than in a statement of its own"
                values = argbind.bind(use, update["signature"])
                if values is None or given(values, "sample_weight") is not None:
                    return f"`{name}` is updated with arguments other than {update['values']} values (a `sample_weight`)"
                why = self._metric_values(update["values"], values, use, update.get("reductions", ()))
                if why is not None:
                    return why
                template = update["template"]
                updates.append((line, lambda new, template=template, signature=update["signature"]: new.with_changes(
                    body=[cst.Expr(template_expression(template, metric=_metric_object(new), **{
                        k: v for k, v in argbind.bind(new.body[0].value, signature).items() if "{%s}" % k in template}))]), values))
                continue
            if method not in methods or use.args:
                return f"`{name}` has `.{method}`" + (" with arguments" if method in methods else "")
            outer = self.parent.get(use)
            if method == "result" and isinstance(outer, cst.Attribute) and outer.value is use:
                after = self.parent.get(outer)
                if not (outer.attr.value == "numpy" and isinstance(after, cst.Call) and after.func is outer and not after.args):
                    return f"`{name}.result()` is read for `.{outer.attr.value}` (MindSpore's result is a number)"
                use = after  # (`.result().numpy()`: MindSpore's `eval()` is a number already)
            elif method != "result" and self._update_line(use) is None:
                return f"`{name}.{method}()` is not a statement of its own"
            rewrites[use] = parse_expression(f"{name}.{methods[method]}()")
        if not updates:
            return f"`{name}` is never updated"
        for use, native in rewrites.items():
            self.out.nodes[use] = lambda new, native=native: native
        for line, rewrite, values in updates:
            self.metric_updates.setdefault(self._step_of(line), []).append((line, rewrite, values))
        to = rule.params["to"][constructor]
        self.out.nodes[call] = lambda new, to=to: parse_expression(f"{to}()")
        self.metrics.add(name)
        self.note(self.place(name, statement), rule, "converted", f"`{name}` is a native `{to}`")
        return None

    def _rewrite(self, node: cst.CSTNode, rewrite) -> None:
        """``rewrite`` applied to ``node`` after what another lowering does to it."""
        before = self.out.nodes.get(node, lambda new: new)
        self.out.nodes[node] = lambda new, before=before: rewrite(before(new))

    def _position(self, line: cst.CSTNode) -> tuple[int, int]:
        """Where ``line`` is: its module statement's index, then its index in its own block."""
        block = self.parent.get(line)
        return self.top_index(line), list(block.body).index(line) if hasattr(block, "body") else 0

    def _update_line(self, call: cst.Call) -> cst.SimpleStatementLine | None:
        """The line ``call`` is, alone, an expression statement of (``metric(x)``), or None."""
        expr = self.parent.get(call)
        line = self.parent.get(expr)
        if isinstance(expr, cst.Expr) and isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
            return line
        return None

    def _step_of(self, line: cst.CSTNode) -> cst.FunctionDef | None:
        """The module-level function whose own body holds ``line``; None at module level (or elsewhere)."""
        up = self.parent.get(line)
        function = self.parent.get(up) if isinstance(up, cst.IndentedBlock) else None
        return function if isinstance(function, cst.FunctionDef) and function in self.index else None

    def _scalar(self, node: cst.CSTNode, reductions: set[str], depth: int = 0) -> bool:
        """``node`` is a scalar tensor: a native loss's reduced value, a whole-tensor reduction
        (``ops.mean(x)``), arithmetic of those and numbers, or a function's own name holding one."""
        if depth > 6:
            return False
        if isinstance(node, cst.Name):
            held = self._held(node)
            return held is not None and self._scalar(held, reductions, depth + 1)
        if isinstance(node, cst.UnaryOperation):
            return self._scalar(node.expression, reductions, depth + 1)
        if isinstance(node, cst.BinaryOperation):
            sides = [node.left, node.right]
            return any(not _number(side) for side in sides) and all(
                _number(side) or self._scalar(side, reductions, depth + 1) for side in sides)
        if not isinstance(node, cst.Call):
            return False
        if isinstance(node.func, cst.Name) and self.loss_reductions.get(node.func.value, "none") != "none":
            return True
        return self.ms_ops and dotted(node.func) in reductions and len(node.args) == 1 \
            and node.args[0].keyword is None and not node.args[0].star

    def _metric_values(self, kind: str, values: dict, call: cst.Call, reductions=()) -> str | None:
        """Why an update's values may not be what MindSpore's metric reads as Keras's does, or None:
        ``scalar``, a native loss's reduced value (MindSpore's `Loss` averages a vector before it
        counts it once); ``classes``, a native model's logits and labels a native loss is given
        in the same function (of shape `(batch,)`: MindSpore reads `(batch, 1)` labels as one-hot)."""
        if kind == "scalar":
            if not self._scalar(values["values"], set(reductions)):
                return "the value it is updated with is not a native loss's reduced value or another scalar it can prove"
            return None
        y_true, y_pred = values["y_true"], values["y_pred"]
        _, shape = self._output_shape(self._held(y_pred) or y_pred)
        if shape is None or len(shape) != 1:
            return ("the predictions it is updated with are not a native model's output of shape (batch, classes) "
                    "(MindSpore's `Accuracy` reads the classes on axis 1, Keras on the last)")
        function = self._scope_of(call)
        given_to_loss = isinstance(y_true, cst.Name) and function is not None and any(
            isinstance(c, cst.Call) and isinstance(c.func, cst.Name) and c.func.value in self.losses
            and c.args and isinstance(c.args[0].value, cst.Name) and c.args[0].value.value == y_true.value
            for c in _nodes_below(function, cst.Call))
        if not given_to_loss:
            return "the labels it is updated with are not given to a native loss in the same function (whose labels are class indices)"
        return None

    def _held(self, node: cst.CSTNode, depth: int = 0) -> cst.BaseExpression | None:
        """The value a function's own name holds where it is read: its one binding in the function
        (``name = value``); or, bound by ``(a, b), grads = mk.value_and_grad(fn, ..., has_aux=True)()``,
        that element of the tuple ``fn`` returns (its value in ``fn``). None where it is not known so."""
        if not isinstance(node, cst.Name) or depth > 3:
            return None
        function = self._scope_of(node)
        if not isinstance(function, cst.FunctionDef):
            return None
        bindings = [n for n in self.under(node.value, function) if self.binds(n) and self._scope_of(n) is function]
        if len(bindings) != 1:
            return None
        target = self.parent.get(bindings[0])
        if isinstance(target, cst.AssignTarget) and isinstance(self.parent.get(target), cst.Assign) \
                and len(self.parent[target].targets) == 1:
            return self.parent[target].value
        holder, top = self.unpacked(bindings[0])
        assign = self.parent.get(holder)
        if not (isinstance(holder, cst.AssignTarget) and isinstance(assign, cst.Assign) and len(assign.targets) == 1):
            return None
        path = _element_path(top, bindings[0])
        value = assign.value
        if not (path is not None and len(path) == 2 and path[0] == 0 and isinstance(value, cst.Call) and not value.args
                and isinstance(value.func, cst.Call) and (dotted(value.func.func) or "").endswith("value_and_grad")):
            return None
        grad = argbind.bind(value.func, ["fn", "grad_position=None", "weights=None", "has_aux=False"])
        if grad is None or not m.matches(grad["has_aux"], m.Name("True")) or not isinstance(grad["fn"], cst.Name):
            return None
        forward = [s for s in _walk_statements(function.body) if isinstance(s, cst.FunctionDef) and s.name.value == grad["fn"].value]
        returns = [small for line in (forward[0].body.body if len(forward) == 1 else ()) if isinstance(line, cst.SimpleStatementLine)
                   for small in line.body if isinstance(small, cst.Return)]
        if len(returns) != 1 or not isinstance(returns[0].value, cst.Tuple) or len(returns[0].value.elements) <= path[1]:
            return None
        element = returns[0].value.elements[path[1]].value
        return self._held(element, depth + 1) if isinstance(element, cst.Name) else element

    def _hoist_updates(self, function: cst.FunctionDef, updates: list) -> bool:
        """A compiled step whose last statements are the metrics' updates (and which returns nothing,
        and is only called as a statement): the step returns the locals they read, and each call is
        ``a, b = step(...)`` followed by the updates, the step's parameters in them its arguments."""
        if function.name.value not in self.jitted or function.decorators:
            return False
        body = list(function.body.body)
        lines = [line for line, _, _ in updates]
        if set(body[len(body) - len(lines):]) != set(lines):
            return False  # (an update before another statement: its values are the ones of that point)
        if any(isinstance(s, cst.SimpleStatementLine) and any(isinstance(small, cst.Return) for small in s.body)
               or not isinstance(s, (cst.SimpleStatementLine, cst.FunctionDef)) for s in body):
            return False
        params = [p.name.value for p in function.params.params]
        if function.params.star_arg is not cst.MaybeSentinel.DEFAULT or function.params.star_kwarg \
                or function.params.kwonly_params or function.params.posonly_params:
            return False
        # (a parameter the step binds again is its own name there, returned as the others)
        kept = {p for p in params if all(isinstance(self.parent.get(n), cst.Param) or not self.binds(n)
                                         for n in self.under(p, function.body))}
        read, passed_on = [], set()  # the step's own names the updates read, in order; its parameters they read
        for _, _, values in updates:
            for key in values:
                value = given(values, key)
                if value is None:
                    continue
                if not isinstance(value, cst.Name) or not self._local(value):
                    return False
                if value.value in kept:
                    passed_on.add(value.value)
                elif value.value not in read:
                    read.append(value.value)
        calls = []
        for node in self.names.get(function.name.value, ()):
            if node is function.name:
                continue
            call = self.parent.get(node)
            if not (isinstance(call, cst.Call) and call.func is node and self._update_line(call) is not None):
                return False
            passed = argbind.bind(call, params)
            if passed is None or any(not isinstance(passed[p], cst.Name) for p in passed_on):
                return False
            calls.append((call, passed))
        if not calls:
            return False
        # the names the call binds: the step's own, unless the caller's code has them (then fresh ones)
        targets = {}
        for name in read:
            clash = any(not self._local(n) or self._scope_of(n) in {self._scope_of(c) for c, _ in calls}
                        for n in self.names.get(name, ()) if not self._below(n, function))
            targets[name] = self.fresh(name) if clash else name
        returned = [cst.Name(name) for name in read]
        if returned:
            value = returned[0] if len(returned) == 1 else cst.Tuple([cst.Element(n) for n in returned], lpar=[], rpar=[])
            # (the return takes the first update's place, not its comments: they go with the update)
            self._rewrite(lines[0], lambda new, value=value: new.with_changes(
                body=[cst.Return(value)], leading_lines=[line for line in new.leading_lines if line.comment is None],
                trailing_whitespace=cst.TrailingWhitespace()))
        for line in lines[1 if returned else 0:]:
            self._remove(line)
        for line in lines:
            self.gone.add(line)
        for call, passed in calls:
            line = self._update_line(call)
            substitute = {**{p: passed[p] for p in passed_on}, **{name: cst.Name(targets[name]) for name in read}}
            after = []
            for statement, rewrite, values in updates:
                swapped = statement.visit(_Renamed(substitute))
                after.append(rewrite(swapped))
            if returned:
                bound = [cst.Name(targets[name]) for name in read]
                target = bound[0] if len(bound) == 1 else cst.Tuple([cst.Element(n) for n in bound], lpar=[], rpar=[])
                self._rewrite(line, lambda new, target=target: new.with_changes(
                    body=[cst.Assign([cst.AssignTarget(target)], new.body[0].value)]))
            self.out.statements[line] = [line, *(s.with_changes(leading_lines=[c for c in s.leading_lines if c.comment])
                                                 for s in after)]
        return True

    # -- gradients and losses -----------------------------------------------------------------

    def lower_gradients(self) -> None:
        for rule in self.rules.get("gradients", ()):
            lowers = set(rule.params["lowers"])
            for name_nodes in list(self.names.values()):
                for node in name_nodes:
                    up = self.parent.get(node)
                    call = self.parent.get(up) if isinstance(up, cst.Attribute) and up.value is node else None
                    if not (isinstance(call, cst.Call) and call.func is up and dotted(up) in lowers):
                        continue
                    bound = argbind.bind(call, ["fn", "grad_position=None", "weights=None", "has_aux=False"])
                    owner = self.weights_owner(bound.get("weights")) if bound else None
                    if owner is None or owner not in self.models and not _variable_group(owner):
                        continue
                    weights = self._params_of(owner)
                    for opt, (model, _) in self.optimizers.items():
                        if model == owner:
                            weights = template_expression("{o}.parameters", o=cst.Name(opt))
                            break
                    where = next(i for i, a in enumerate(call.args) if a.value is bound["weights"])
                    self.weights_dropped.add(bound["weights"])
                    to = parse_expression(rule.params["to"])
                    self.out.nodes[call] = lambda new, where=where, weights=weights, to=to: new.with_changes(
                        func=to, args=[a.with_changes(value=weights) if i == where else a for i, a in enumerate(new.args)])
                    self.gone.add(call.func)
                    self.used.add(rule.id)
                self.used.add(rule.id)

    def lower_average_losses(self) -> None:
        for rule in self.rules.get("average_loss", ()):
            lowers = set(rule.params["lowers"])
            for call in self._calls_of(lowers):
                bound = argbind.bind(call, rule.params["signature"])
                if bound is None or given(bound, "sample_weight") is not None or given(bound, "global_batch_size") is None:
                    continue
                self.out.nodes[call] = lambda new, template=rule.params["template"], signature=rule.params["signature"]: \
                    template_expression(template, **{k: v for k, v in argbind.bind(new, signature).items() if "{%s}" % k in template})
                self.gone.add(call.func)
                self.used.add(rule.id)

    def lower_random(self) -> None:
        """``tfrandom.normal`` / ``uniform`` calls MindSpore's own ops draw alike (TFL180)."""
        for rule in self.rules.get("random", ()):
            if self.mentions(rule.params.get("refuse_when", [])) is not None:
                continue
            positions = None
            calls = self._calls_of(set(rule.params["lowers"]))
            for call in calls:
                native = _random(rule, call, self.int_value)
                if native is None or m.findall(call, m.Comment()):  # (a comment in the call: the shim's keeps it)
                    continue
                # (arithmetic in an operand's place goes in parentheses: `(ops.standard_normal(s) * 2.0) ** 2`)
                bare = isinstance(native, cst.Call) or isinstance(self.parent.get(call), _WHOLE_VALUE)
                self.out.nodes[call] = lambda new, rule=rule, bare=bare: _parenthesized(_random(rule, new), not bare)
                self.gone.add(call.func)
                if positions is None:  # (the note is at the call's place in the converted text)
                    positions = cst.metadata.MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(
                        cst.metadata.PositionProvider)
                start, func = positions[call].start, dotted(call.func)
                # (and which of the line's calls of that function it is: the TF uses on the line come in that order)
                nth = sum(1 for other in calls if dotted(other.func) == func and positions[other].start.line == start.line
                          and positions[other].start.column < start.column)
                self.note((start.line, start.column + 1, func.rsplit(".", 1)[-1], nth), rule, "converted",
                          f"`{func}` is `{_draw_of(native)}`, MindSpore's own op (the draws the shim makes)")

    def _calls_of(self, lowers: set[str]) -> list[cst.Call]:
        found = []
        for node, up in self.parent.items():
            if isinstance(up, cst.Call) and up.func is node and dotted(node) in lowers:
                found.append(up)
        return found

    # -- compiled steps -----------------------------------------------------------------------

    def lower_jit(self) -> None:
        for rule in self.rules.get("jit", ()):
            if self.mentions([n.rsplit(".", 1)[-1] for n in rule.params["lowers"]]) is None:
                continue  # (nothing a step compiles for: no reduce, gradients or native optimizer)
            functions = {s.name.value: s for s in self.module.body if isinstance(s, cst.FunctionDef)}
            constants = _module_constants(self.module)
            reduces = {}
            all_reduce = None
            for name in sorted(self.jitted):
                function = functions.get(name)
                if function is None:
                    continue
                closure: set = set()
                why = self._jit_checks(rule, function, functions, constants, reduces, closure)
                if why is not None:
                    self.note(name, rule, "info", f"`{name}` runs eagerly (PyNative): {why}")
                    continue
                if reduces.get(function) and all_reduce is None:
                    if not self.reducer_statements:
                        self.note(name, rule, "info", f"`{name}` runs eagerly (PyNative): its `reduce` needs a native optimizer's set-up")
                        continue
                    all_reduce = self.fresh("all_reduce")
                    statement = parse_statement(rule.params["all_reduce"].format(name=all_reduce))
                    for replacement in self.out.statements.values():
                        if self.reducer_statements[-1] in replacement:
                            replacement.append(statement)
                for call in reduces.get(function, ()):
                    self.out.nodes[call] = lambda new, r=all_reduce: template_expression("{r}({v})", r=cst.Name(r), v=new.args[1].value)
                self.out.decorate[function] = cst.Decorator(parse_expression(rule.params["decorator"]))
                self._mutable_batches(rule, name)
                self.note(name, rule, "converted", f"`{name}` is compiled by `{rule.params['decorator']}`: every name it "
                          "reads is native")
                self.compiled.append((rule, name, {f.name.value for f in closure}, len(self.out.notes) - 1))

    def _jit_checks(self, rule, function: cst.FunctionDef, functions, constants, reduces, seen) -> str | None:
        if function in seen:
            return None
        seen.add(function)
        if function.decorators and function not in self.out.decorate:
            return "it has decorators"
        params = function.params
        if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg or params.kwonly_params or params.posonly_params:
            return "it takes `*args`/`**kwargs`"
        local = _locals(function)
        native_objects = set(self.models) | set(self.variables) | set(self.optimizers) | self.losses | {
            r for _, r in self.optimizers.values()}
        modules = set(rule.params["modules"])
        for statement in _walk_statements(function.body):
            if not isinstance(statement, (cst.SimpleStatementLine, cst.FunctionDef)):
                return f"it has a `{type(statement).__name__}` statement (control flow stays eager in this version)"
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if not isinstance(small, (cst.Assign, cst.Return, cst.Expr)):
                        return f"it has a `{type(small).__name__}` statement"
        for node in _names_in(function):
            value = node.value
            if value in local:
                continue
            up = self.parent.get(node)
            if self._goes(node) or value in native_objects or value in constants or value in modules or value in ("True", "False", "None"):
                continue
            if value in functions:
                why = self._jit_checks(rule, functions[value], functions, constants, reduces, seen)
                if why is not None:
                    return why if why.startswith("`") else f"`{value}`, which it calls: {why}"
                continue
            if value == "spmd" and isinstance(up, cst.Attribute) and up.attr.value == "reduce":
                call = self.parent.get(up)
                reduced = self._sum_reduce(call, function, functions)
                if reduced is None:
                    return "its `reduce` is not a SUM over replicas (`axis=None`) of a tensor"
                reduces.setdefault(function, []).append(call)
                continue
            if value in self.metrics:
                return (f"it updates `{value}`, a MindSpore metric, which runs on the host (a step's updates move after "
                        "its calls only where they are its last statements, it returns nothing and it is called as a statement)")
            return f"it reads `{value}`, which is not native"
        return None

    def _goes(self, node: cst.CSTNode) -> bool:
        while node is not None:
            if node in self.gone:
                return True
            node = self.parent.get(node)
        return False

    def _sum_reduce(self, call, function, functions) -> cst.CSTNode | None:
        if not isinstance(call, cst.Call):
            return None
        bound = argbind.bind(call, ["reduce_op", "value", "axis"])
        if bound is None or dotted(bound["reduce_op"]) not in ("ops.ReduceOp.SUM",):
            return None
        if not (isinstance(bound["axis"], cst.Name) and bound["axis"].value == "None"):
            return None
        value = bound["value"]
        if not isinstance(value, cst.Name):
            return None
        # the value is one tensor: the result of a function of this module that returns one name
        for statement in _walk_statements(function.body):
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
                            and small.targets[0].target.value == value.value and isinstance(small.value, cst.Call)
                            and isinstance(small.value.func, cst.Name) and small.value.func.value in functions
                            and _returns_one_tensor(functions[small.value.func.value])):
                        return value
        return None

    def _mutable_batches(self, rule, name: str) -> None:
        """``step(batch)`` where ``batch`` is a loop's element: ``step(ms.mutable(batch))``, so that
        MindSpore compiles the step once for the tensors' shapes, not once per batch's values."""
        for node in self.names.get(name, ()):
            call = self.parent.get(node)
            if not (isinstance(call, cst.Call) and call.func is node):
                continue
            args = []
            for arg in call.args:
                value = arg.value
                if isinstance(value, cst.Name) and arg.keyword is None and not arg.star and self._loop_target(value):
                    arg = arg.with_changes(value=template_expression(rule.params["mutable"], v=value))
                args.append(arg)
            if args != list(call.args):
                self.out.nodes[call] = lambda new, args=args: new.with_changes(
                    args=[n if a is b else a for a, b, n in zip(args, call.args, new.args)])

    def weights_owner(self, node) -> str | None:
        """The model whose ``trainable_variables`` ``node`` is: read there, or a function's own name
        bound once, in that function, to them (``trainable_variables = model.trainable_variables``);
        or, for a list display of native variables (``[w, b]``), that list's code: its weights."""
        if isinstance(node, (cst.List, cst.Tuple)) and node.elements and all(
                isinstance(e, cst.Element) and isinstance(e.value, cst.Name) and e.value.value in self.variables
                and not self._local(e.value) for e in node.elements):
            names = [e.value.value for e in node.elements]
            return f"[{', '.join(names)}]" if len(set(names)) == len(names) else None
        group = self._dict_group(node)
        if group is not None:
            return group
        owner = _weights_owner(node)
        if owner is not None or not isinstance(node, cst.Name) or not self._local(node):
            return owner
        function = self._scope_of(node)
        while isinstance(function, cst.FunctionDef) and node.value not in _locals(function):
            function = self._scope_of(function)
        if not isinstance(function, cst.FunctionDef):
            return None
        bindings = [n for n in self.under(node.value, function) if self.binds(n)]
        target = self.parent.get(bindings[0]) if len(bindings) == 1 else None
        assign = self.parent.get(target) if isinstance(target, cst.AssignTarget) else None
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
            return None
        owner = _weights_owner(assign.value) or self._dict_group(assign.value)
        # (every read handed to a method or to `zip`, as the tape and the optimizer take it: a list
        # changed where it is, `del weights[4:]` or `weights.pop()`, no longer holds all the model's)
        if owner is None or any(not self._handed_on(n) for n in self.under(node.value, function) if not self.binds(n)):
            return None
        self.weight_aliases[self.statement_of(assign)] = (node.value, function)
        return owner

    def _handed_on(self, read: cst.Name) -> bool:
        """``read`` is an argument of a method's call or of ``zip`` (not changed, indexed or its own method called)."""
        arg = self.parent.get(read)
        call = self.parent.get(arg) if isinstance(arg, cst.Arg) and arg.value is read and not arg.star else None
        return isinstance(call, cst.Call) and (isinstance(call.func, cst.Attribute) or m.matches(call.func, m.Name("zip")))

    def drop_dead_aliases(self) -> None:
        """A function's ``trainable_variables = model.trainable_variables`` whose every read a
        lowering replaced (the gradients' weights, the optimizer's `zip`) goes: nothing reads it,
        and a compiled step may not call ``trainable_params()``."""
        for statement, (name, function) in self.weight_aliases.items():
            reads = [n for n in self.under(name, function) if not self.binds(n)]
            if len(statement.body) == 1 and all(self._replaced(n) for n in reads):  # (not a line of `a = b; c = d`)
                self._remove(statement)

    def _remove(self, statement: cst.CSTNode) -> None:
        """``statement`` goes; its comment lines stay, above the statement after it in its block."""
        self.out.removed.add(statement)
        block = list(self.parent[statement].body)
        at = block.index(statement)
        after = block[at + 1] if at + 1 < len(block) else None
        lines = [line for line in statement.leading_lines if line.comment]
        trailing = statement.trailing_whitespace.comment if isinstance(statement, cst.SimpleStatementLine) else None
        if trailing is not None:  # (`x = f()  # why`: the comment stays, on a line of its own)
            lines.append(cst.EmptyLine(comment=trailing))
        if after is None or not lines or after in self.out.removed:
            return
        self._rewrite(after, lambda done: done.with_changes(leading_lines=[*lines, *done.leading_lines])
                      if hasattr(done, "leading_lines") else done)

    def _replaced(self, node: cst.CSTNode) -> bool:
        """``node`` is (in) weights a lowering dropped (:attr:`weights_dropped`)."""
        while node not in self.weights_dropped and node in self.parent:
            node = self.parent[node]
        return node in self.weights_dropped

    def _loop_target(self, read: cst.Name) -> bool:
        node = read
        while node in self.parent:
            node = self.parent[node]
            if isinstance(node, cst.For) and isinstance(node.target, cst.Name) and node.target.value == read.value:
                return True
            if isinstance(node, (cst.FunctionDef, cst.Module)):
                return False
        return False

    # -- input pipelines ----------------------------------------------------------------------

    def lower_datasets(self) -> None:
        """Each module-level pipeline of ``tfdata.Dataset.from_tensor_slices((a, b, ...))``, written
        in one statement or continued by module statements that each read the one before once
        (``ds = ds.shuffle(n).batch(b)``, ``dist = spmd.distribute_dataset(ds)``), batched, and at
        its end only iterated by ``for`` loops, becomes a ``mindspore.dataset.GeneratorDataset``
        over a source of the arrays' batches in TF's order (see TFL170)."""
        for rule in self.rules.get("dataset", ()):
            chains = []
            for statement in self.module.body:
                found = _module_assign(statement)
                parts = None if found is None else self._parts(rule, found[1])
                if parts is None or not isinstance(parts[2], cst.Call):
                    continue
                links, why = self._chain(rule, statement, parts)
                plan = why if why is not None else self._plan(rule, links)
                if isinstance(plan, str):
                    name = links[-1][1]
                    self.note(self.place(name, links[-1][0]), rule, "info", f"`{name}` keeps the shim (`tfdata`): {plan}")
                    continue
                chains.append((links, plan))
            stream = any(not simple for _, (*_, simple, _) in chains)  # (one source class per module)
            source = None
            for links, (columns, data, steps, take, simple, split) in chains:
                if source is None:
                    source = self.fresh("ArrayStream" if stream else "ArrayBatches")
                    blank = [cst.EmptyLine(), cst.EmptyLine()]  # (PEP 8's two blank lines around a class)
                    made = parse_statement(source_class(rule, "stream" if stream else "source", source))
                    first = links[0][0]
                    self.out.before[first] = [made.with_changes(leading_lines=blank)]
                    self.out.nodes[first] = lambda new, blank=blank: new.with_changes(
                        leading_lines=blank + [line for line in new.leading_lines if line.comment is not None])
                if stream:
                    self._stream(rule, source, links, columns, data, steps, take)
                else:
                    self._batches(rule, source, links[0], columns, data, steps)
                for target in self.single_targets.get(links[-1][0], ()):  # (`for (batch,) in dataset`: its one column)
                    self.out.nodes[target] = lambda new: cst.Tuple([cst.Element(new, comma=cst.Comma())])
                name = links[-1][1]
                how = "this process's contiguous part of each global batch, as TF splits it" if split else "its batches in TF's order"
                if any(method == "shuffle" for method, _ in steps):
                    how += " (TF's buffer shuffle, on NumPy's generator: every process draws one order)"
                self.note(self.place(name, links[-1][0]), rule, "converted",
                          f"`{name}` is a native `{rule.params['to']}` of `{source}`: {how}")
                for statement, part, *_ in links[:-1]:
                    read_by = "its next binding" if part == name else f"`{name}`"
                    self.note(self.place(part, statement), rule, "converted",
                              f"`{part}` holds `{source}`'s rows here, which {read_by} makes a native dataset")

    def _parts(self, rule, call: cst.Call):
        """(whether it is distributed, its methods in order as (name, call), what they start from:
        the ``from_tensor_slices`` call or a name read), or None when ``call`` is no pipeline."""
        split = False
        if dotted(call.func) in rule.params["distribute"]:
            if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
                return None
            call, split = call.args[0].value, True
        methods = []
        while isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
                and dotted(call.func) not in rule.params["lowers"]:
            methods.insert(0, (call.func.attr.value, call))
            call = call.func.value
        if isinstance(call, cst.Name) and (methods or split):
            return split, methods, call
        if isinstance(call, cst.Call) and dotted(call.func) in rule.params["lowers"]:
            return split, methods, call
        return None

    def _chain(self, rule, statement, parts) -> tuple[list, str | None]:
        """The module statements of the pipeline ``statement`` (whose ``_parts`` are ``parts``)
        starts, each (statement, name, call, methods, distributed, what its methods start from):
        the next one is the statement that holds the one read of the name this one binds, when it
        continues the pipeline from that name; and why the pipeline's names cannot be followed, or None."""
        links = []
        while True:
            name, call = _module_assign(statement)
            split, methods, base = parts
            links.append((statement, name, call, methods, split, base))
            binding = statement.body[0].targets[0].target
            if not self.bound_once(name, binding):
                span = self.rebound(name, statement)
                if span is None:
                    return links, f"`{name}` is bound more than once"
                self.spans[binding] = span
            reads = self.reads(name, binding)
            after = self.module.body[self.top_index(reads[0])] if len(reads) == 1 else None
            found = _module_assign(after) if after is not None and self.index[after] > self.index[statement] else None
            parts = None if found is None else self._parts(rule, found[1])
            if parts is None or parts[2] is not reads[0]:
                return links, None
            if split:
                return links, f"`{name}` is distributed before its pipeline ends"
            statement = after

    def _plan(self, rule, links):
        """For a pipeline this lowering reads: (the column names, the arrays' tuple, its steps as
        (method, call), the loops' ``name.take(n)`` reads, of one count, whose count the pipeline
        takes instead (or None), whether `ArrayBatches` serves it, whether each process keeps its
        part of each batch); or why not."""
        statement, name, call, methods, split, _ = links[-1]
        data_call = links[0][5]
        if len(data_call.args) != 1 or data_call.args[0].keyword is not None or data_call.args[0].star:
            return "`from_tensor_slices` is not given one tuple of arrays"
        data = data_call.args[0].value
        single = isinstance(data, cst.Name)  # (one array: TF yields its batches, MindSpore a list of one column)
        if single:
            if not self._one_array(data, links[0][0]):
                return (f"`{data.value}` is not known to be one array (a name bound to a tuple of arrays, "
                        "as `load_data()` gives, makes TF yield tuples)")
            data = cst.Tuple([cst.Element(data, comma=cst.Comma())])
        if not (isinstance(data, cst.Tuple) and (single or len(data.elements) >= 2)
                and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in data.elements)):
            return ("`from_tensor_slices` is not given an array's name or a tuple of two or more names "
                    "(a MindSpore dataset yields its columns as a list)")
        for element in data.elements:
            why = self._array_name(element.value)
            if why is not None:
                return why
        steps = []
        for *_, methods, _, _ in links:
            for method, use in methods:
                if method in rule.params["dropped"]:
                    continue
                if method not in rule.params["pipeline"]:
                    return f"`.{method}(...)` has no native lowering yet"
                if argbind.bind(use, rule.params["pipeline"][method]) is None:
                    return f"`{method}` is given arguments the native source does not take"
                steps.append((method, use))
        batches = [method for method, _ in steps if method == "batch"]
        if not batches:
            return "the pipeline is not batched"
        if len(batches) > 1:
            return "the pipeline is batched twice"
        reads = self.reads(name, statement.body[0].targets[0].target)
        if not reads:
            return f"`{name}` is never iterated"
        # (each read `name.take(n)` of one count: the pipeline takes n, and each loop reads it anew,
        # as each of TF's loops starts the pipeline again)
        takes = [self._read_take(read, statement) for read in reads]
        if not all(takes) or any(not t.args[0].value.deep_equals(takes[0].args[0].value) for t in takes):
            takes = [None] * len(reads)
        why = next(filter(None, (self._iterated_only(read, t, single) for read, t in zip(reads, takes))), None)
        if why is not None:
            return why
        if single:  # (each loop unpacks the one column: `for (batch,) in dataset`)
            self.single_targets[statement] = [self._loop_of(read, t).target for read, t in zip(reads, takes)]
        take = [t for t in takes if t is not None] or None
        names = [e.value.value for e in data.elements]
        columns = names if len(set(names)) == len(names) else [f"column_{i}" for i in range(len(names))]
        simple = len(links) == 1 and take is None and [m for m, _ in steps] in (["batch"], ["shard", "batch"])
        return columns, data, steps, take, simple, split

    def _one_array(self, name: cst.Name, statement) -> bool:
        """``name``, where ``statement`` reads it, is one array, not a tuple of them: an array the
        module's shapes know, or the value of its last module assignment before ``statement``
        (``name = value``, not unpacked) is arithmetic no tuple has (``(x - 127.5) / 127.5``,
        ``x * 2.0``), an array's method (``.astype``, ``.reshape``) or NumPy's."""
        known = self.shapes.at(statement, name)
        if isinstance(known, shapes_of.Arr) or isinstance(known, tuple) or self._local(name):
            return isinstance(known, shapes_of.Arr)
        before = [n for n in self.names.get(name.value, ()) if self.binds(n) and self.top_index(n) < self.index[statement]]
        if not before:
            return False
        last = max(before, key=self.top_index)
        target = self.parent.get(last)
        assign = self.parent.get(target)
        if len([n for n in before if self.top_index(n) == self.top_index(last)]) > 1 or not (
                isinstance(target, cst.AssignTarget) and target.target is last and isinstance(assign, cst.Assign)):
            return False
        return _array_valued(assign.value)

    def _read_take(self, read: cst.Name, statement) -> cst.Call | None:
        """``read`` as ``name.take(n)`` whose count the pipeline's last statement can take instead:
        a number, or a module name bound once before it. (MindSpore's own `take` reads its input
        to the end of the epoch before it stops: forever, for a repeated pipeline.)"""
        up = self.parent.get(read)
        take = self.parent.get(up) if isinstance(up, cst.Attribute) and up.value is read and up.attr.value == "take" else None
        if not (isinstance(take, cst.Call) and take.func is up and len(take.args) == 1
                and take.args[0].keyword is None and not take.args[0].star):
            return None
        return take if self._fixed_count(take.args[0].value, statement) else None

    def _fixed_count(self, count: cst.BaseExpression, statement) -> bool:
        """``count`` is fixed before ``statement``: a number, a module name bound once before it, or
        arithmetic of those (``training_steps + 1``)."""
        if _number(count):
            return True
        if isinstance(count, cst.BinaryOperation) and isinstance(count.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)):
            return self._fixed_count(count.left, statement) and self._fixed_count(count.right, statement)
        if not isinstance(count, cst.Name) or self._local(count):
            return False
        bindings = [n for n in self.names.get(count.value, ()) if self.binds(n)]
        if len(bindings) != 1 or _module_assign_any(self.module.body[self.top_index(bindings[0])]) != count.value:
            return False
        return self.top_index(bindings[0]) < self.index[statement]

    def _batches(self, rule, source: str, link, columns: list[str], data, steps) -> None:
        """One statement's pipeline of `shard` and `batch` as `GeneratorDataset(ArrayBatches(...))`."""
        statement, name, call, methods, split, _ = link
        bound = {method: argbind.bind(use, rule.params["pipeline"][method]) for method, use in steps}
        batch, shard = bound["batch"], bound.get("shard")
        keywords = []
        drop = given(batch, "drop_remainder")
        if drop is not None and not (isinstance(drop, cst.Name) and drop.value == "False"):
            keywords.append(("drop_remainder", drop))
        if shard is not None:
            keywords += [("num_shards", shard["num_shards"]), ("shard", shard["index"])]
        if split:
            keywords.append(("split", cst.Name("True")))
        arguments = [cst.Arg(data), cst.Arg(batch["batch_size"])]
        arguments += [cst.Arg(value, keyword=cst.Name(key), equal=_EQUAL) for key, value in keywords]
        self._dataset(rule, call, cst.Call(cst.Name(source), _commas(arguments)), columns)

    def _stream(self, rule, source: str, links, columns: list[str], data, steps, read_takes) -> None:
        """Each statement of the pipeline with `ArrayStream`'s methods for TF's, in TF's order: the
        first starts from the arrays, the last is read by `GeneratorDataset`."""
        kept = {id(use) for _, use in steps}
        for read_take in read_takes or ():  # (`for batch in name.take(n)`: the pipeline takes n, the loop reads the name)
            self.out.nodes[read_take] = lambda new, read=read_take.func.value: read
        for i, (statement, name, call, methods, split, base) in enumerate(links):
            value = cst.Call(cst.Name(source), [cst.Arg(data)]) if i == 0 else base
            for method, use in methods:
                if id(use) not in kept:
                    continue  # (`prefetch`, `cache`, `with_options`)
                signature = rule.params["pipeline"][method]
                passed = argbind.passed_args(use, signature)
                arguments = [arg.with_changes(comma=cst.MaybeSentinel.DEFAULT) for key, arg in passed.items() if key != "name"]
                value = cst.Call(cst.Attribute(value, cst.Name(method)), _commas(arguments))
            if i == len(links) - 1 and read_takes:
                value = cst.Call(cst.Attribute(value, cst.Name("take")), [cst.Arg(read_takes[0].args[0].value)])
            if split:
                value = cst.Call(cst.Attribute(value, cst.Name("split")), [])
            if i == len(links) - 1:
                self._dataset(rule, call, value, columns)
            else:
                self.out.nodes[call] = lambda new, value=value: value

    def _dataset(self, rule, call: cst.Call, source: cst.Call, columns: list[str]) -> None:
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        listed = cst.List([cst.Element(_quoted(c), comma=comma) for c in columns[:-1]] + [cst.Element(_quoted(columns[-1]))])
        native = template_expression("{to}({source}, {columns}, shuffle=False)", to=parse_expression(rule.params["to"]),
                                     source=source, columns=listed)
        self.out.nodes[call] = lambda new, native=native: native

    def _array_name(self, name: cst.Name) -> str | None:
        """Why the module-level ``name`` may not be an array MindSpore's dataset reads as TF does
        (a Python list: TF makes its floats float32, NumPy float64), or None."""
        if self._local(name):
            return f"`{name.value}` is a function's own"
        for node in self.names.get(name.value, ()):
            up = self.parent.get(node)
            if isinstance(up, cst.AssignTarget) and isinstance(self.parent.get(up), cst.Assign):
                value = self.parent[up].value
                while isinstance(value, cst.BinaryOperation):  # (`[0.0] * n`, `a + [b]`)
                    value = value.left if isinstance(value.left, (cst.List, cst.Tuple)) else value.right
                if isinstance(value, (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp)) or (
                        isinstance(value, cst.Call) and dotted(value.func) in ("list", "tuple", "range")):
                    return f"`{name.value}` is bound to a Python sequence (TF makes its floats float32, NumPy float64)"
                if isinstance(value, (cst.Dict, cst.DictComp)) or (isinstance(value, cst.Call) and dotted(value.func) == "dict"):
                    return f"`{name.value}` is bound to a dict (a structure of features, not an array)"
        return None

    def _loop_of(self, read: cst.Name, take: cst.Call | None = None):
        """The ``for`` loop whose iterable ``read`` is (or ``enumerate(read)``, or ``read.take(n)``,
        ``take``), as an object whose ``target`` is the element's (``enumerate``'s second); or why not."""
        if take is not None:
            read = take
        loop = self.parent.get(read)
        call = self.parent.get(loop) if isinstance(loop, cst.Arg) and loop.keyword is None and not loop.star else None
        enumerated = isinstance(call, cst.Call) and dotted(call.func) == "enumerate" and call.args[0] is loop \
            and len(call.args) <= 2 and not any(a.star for a in call.args)
        if enumerated:  # `for i, batch in enumerate(dataset)`
            read, loop = call, self.parent.get(call)
        if not (isinstance(loop, cst.For) and loop.iter is read):
            return f"`{dotted(read) or 'it'}` is read other than as a `for` loop's iterable (or `enumerate`'s)"
        target = loop.target
        if enumerated:
            target = target.elements[1].value if isinstance(target, cst.Tuple) and len(target.elements) == 2 else None
        return _Element(loop, target)

    def _iterated_only(self, read: cst.Name, take: cst.Call | None = None, single: bool = False) -> str | None:
        """Why a read of a lowered dataset is not a ``for`` loop's iterable whose element is used
        as a sequence (MindSpore yields a list where TF yields a tuple), or None; ``take``: the
        read is ``name.take(n)``, which the pipeline takes instead (``_read_take``). ``single``:
        the pipeline is of one array, whose batches a loop names (the converted loop unpacks them)."""
        found = self._loop_of(read, take)
        if isinstance(found, str):
            return found
        loop, target = found.loop, found.target
        if single:
            return None if isinstance(target, cst.Name) else "a loop's element is not named (the pipeline is of one array)"
        if isinstance(target, (cst.Tuple, cst.List)):
            return None
        if not isinstance(target, cst.Name):
            return "a loop's element is not unpacked or named"
        element = target.value
        for node in self.under(element, loop.body):
            if not self._sequence_use(node, 3):
                return f"a loop's element `{element}` is used other than by unpacking it or passing it to a step that does"
        for node in self.names.get(element, ()):  # (after the loop the name still holds the last batch)
            if node is target or self._below(node, loop.body) or self._another_loops(node, loop) \
                    or (self._local(node) and not self._local(target)):
                continue
            return f"a loop's element `{element}` is read after the loop"
        return None

    def _below(self, node: cst.CSTNode, above: cst.CSTNode) -> bool:
        while node in self.parent:
            node = self.parent[node]
            if node is above:
                return True
        return False

    def _another_loops(self, node: cst.Name, loop: cst.For) -> bool:
        """``node`` is the target of, or stands in the body of, another ``for`` loop binding the same name."""
        child = node
        while child in self.parent:
            up = self.parent[child]
            if isinstance(up, cst.For) and up is not loop and isinstance(up.target, cst.Name) \
                    and up.target.value == node.value and (up.target is child or up.body is child):
                return True
            child = up
        return False

    def _sequence_use(self, node: cst.Name, depth: int) -> bool:
        """``node`` reads a batch and uses it as a tuple and a list alike: unpacked (``a, b = batch``),
        indexed by a literal, or passed to a module function whose parameter is."""
        up = self.parent.get(node)
        if isinstance(up, cst.Assign) and up.value is node:
            return all(isinstance(t.target, (cst.Tuple, cst.List)) for t in up.targets)
        if isinstance(up, cst.Subscript) and up.value is node:
            return len(up.slice) == 1 and isinstance(up.slice[0].slice, cst.Index) \
                and isinstance(up.slice[0].slice.value, cst.Integer)
        if depth == 0 or not isinstance(up, cst.Arg) or up.keyword is not None or up.star:
            return False
        call = self.parent.get(up)
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
            return False
        defined = [s for s in self.module.body if isinstance(s, cst.FunctionDef) and s.name.value == call.func.value]
        if len(defined) != 1 or not self.bound_once(call.func.value, defined[0].name):
            return False
        params, position = defined[0].params, list(call.args).index(up)
        positional = [*params.posonly_params, *params.params]
        if params.star_arg is not cst.MaybeSentinel.DEFAULT or position >= len(positional):
            return False
        param = positional[position].name.value
        return all(self._sequence_use(n, depth - 1) for n in self.under(param, defined[0].body))

    # -- the whole pass -----------------------------------------------------------------------

    def run(self) -> cst.Module:
        self.lower_datasets()
        self.lower_variables()
        self.lower_models()
        self.lower_optimizers()
        self.lower_losses()
        self.lower_metrics()
        self.lower_gradients()
        self.lower_average_losses()
        self.lower_random()
        self.drop_dead_aliases()
        self.lower_jit()
        if not (self.out.nodes or self.out.statements or self.out.removed or self.out.decorate or self.out.before):
            return self.module
        module = self.module.visit(_Apply(self.out))
        if self.compiled:
            return self.graph_cells(module)
        return self.graph_loops(module) if self.loops else module

    # -- compiled steps as cells of a GRAPH_MODE program --------------------------------------

    def graph_cells(self, module: cst.Module) -> cst.Module:
        """The compiled steps as cells of a GRAPH_MODE program, where nothing else the lowered
        module runs needs PyNative: MindSpore compiles a Cell called in GRAPH_MODE with its
        data-parallel passes (the gradient all-reduce fused in the graph), an ``ms.jit``
        function under PyNative without them."""
        rule = self.compiled[0][0]
        if "graph_mode" not in rule.params:
            return module
        steps = {name for _, name, _, _ in self.compiled}
        closure = set().union(*(c for _, _, c, _ in self.compiled)) | steps
        why = _graph_unsafe(module, rule.params, closure)
        if why is not None:
            for _, name, _, index in self.compiled:
                where, r, status, message = self.out.notes[index]
                self.out.notes[index] = (where, r, status, message + f"; it stays an `ms.jit` function under PyNative: {why}")
            return module
        classes = {name: self.fresh(_class_name(name) or "Step")
                   for name in sorted(steps)}
        for _, name, _, index in self.compiled:
            where, r, status, message = self.out.notes[index]
            self.out.notes[index] = (where, r, status, f"`{name}` is a `{rule.params['cell']}`, `{classes[name]}`, that "
                                     "MindSpore compiles in GRAPH_MODE (with its data-parallel passes): every name it reads is native")
        body = []
        for statement in module.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value in classes:
                body += _cell_of(statement, classes[statement.name.value], rule.params["cell"], rule.params["decorator"])
            else:
                body.append(statement)
        return module.with_changes(body=_with_graph_mode(body, rule.params))

    def graph_loops(self, module: cst.Module) -> cst.Module:
        """A program whose Keras loops run natively (and with no compiled step of its own) runs in
        GRAPH_MODE where nothing else it reads needs PyNative: the loop's step cells compile
        with the data-parallel passes."""
        rule = self.loops[0][0]
        why = _graph_unsafe(module, rule.params, set())
        if why is not None:
            for _, where in self.loops:
                name = where.split(".")[0]
                self.note(where, rule, "info", f"`{name}`'s loop steps are `ms.jit` cells under PyNative: {why}")
            return module
        return module.with_changes(body=_with_graph_mode(list(module.body), rule.params))


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _in_turn(rewrites: list, node: cst.CSTNode) -> cst.CSTNode:
    for rewrite in rewrites:
        node = rewrite(node)
    return node


def _first_arg(value: cst.BaseExpression, call: cst.Call, args) -> cst.Arg:
    """``value`` as a call's new first argument: on a line of its own where the arguments start on
    a new line (each then has its own), else followed by ``, ``."""
    own_line = isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace) and isinstance(args[0].comma, cst.Comma) \
        if args else False
    comma = args[0].comma if own_line else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return cst.Arg(value, comma=comma if args else cst.MaybeSentinel.DEFAULT)


def source_class(rule, kind: str, name: str) -> str:
    """The text of TFL170's ``source`` or ``stream`` class named ``name``, with the ``rows`` method
    they share put in at the class body's indentation."""
    return rule.params[kind].format(name=name, rows=textwrap.indent(rule.params["rows"], "    ").strip())


def _commas(arguments: list[cst.Arg]) -> list[cst.Arg]:
    """Arguments separated by ``, ``."""
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return [a.with_changes(comma=comma) for a in arguments[:-1]] + arguments[-1:]


def _last_bare(arguments: list[cst.Arg]) -> list[cst.Arg]:
    """The arguments, the last without a trailing comma."""
    return arguments[:-1] + [arguments[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]


def _quoted(text: str) -> cst.SimpleString:
    return cst.SimpleString('"%s"' % text)


def _input_shape(call: cst.Call, constant=lambda name: None) -> tuple[int, ...] | None:
    bound = argbind.bind(call, ["shape=None", "batch_size=None", "dtype=None"])
    if bound is None or given(bound, "dtype") is not None or given(bound, "batch_size") is not None:
        return None
    return _shape(given(bound, "shape"), constant)


def _shape(shape, constant=lambda name: None) -> tuple[int, ...] | None:
    """A literal shape ``(28, 28)`` / ``(4,)``, batch left out; ``constant``: a name's integer
    value where it is one (``(FEATURES,)``), else None."""
    if not (isinstance(shape, (cst.Tuple, cst.List)) and shape.elements
            and all(isinstance(e, cst.Element) for e in shape.elements)):
        return None
    widths = [int(e.value.value) if isinstance(e.value, cst.Integer) else
              constant(e.value) if isinstance(e.value, cst.Name) else None for e in shape.elements]
    return None if None in widths else tuple(widths)


# MindSpore's functions of one tensor that keep its shape, which a subclassed model's `call` may
# apply between its layers (what `tf.nn.relu(x)` and the like convert to)
_ELEMENTWISE = frozenset({"relu", "sigmoid", "tanh", "softmax", "silu", "elu", "softsign", "log_softmax"})
# NumPy arrays' methods that give a new value and leave the array as it is
_PURE_METHODS = frozenset({"astype", "copy", "reshape", "transpose", "flatten", "ravel", "tolist", "sum", "mean",
                           "std", "min", "max", "argmax", "argmin", "squeeze", "item", "any", "all", "round", "dot"})
_UNPACKING = (cst.Tuple, cst.List, cst.Element, cst.StarredElement)  # (what a target's names sit in)
_LAST_AXIS = frozenset({"softmax", "log_softmax"})  # (of those, the ones that read along the last axis)


@dataclass
class _Chain:
    """A subclassed model's ``call``: the layers it applies in order, each (attribute, call node);
    its ``training`` parameter (or None); its own flags (parameters the cell keeps); the shape
    its first statement reshapes the input to (batch left out), or None; the layers handed a flag."""

    applied: list
    training: str | None
    flags: tuple[str, ...]
    reshape: tuple[int, ...] | None
    flagged: dict[str, str]  # layer -> the flag handed to it as `training` (a Dropout then drops where it is on)
    activations: list[tuple[int, str]]  # (how many layers are applied before it, MindSpore's function)


_MODAL = "layers that compute differently in training (`Dropout`, `BatchNormalization`)"


class _Made:
    """The cells one Keras layer becomes, and the layout they take."""

    def __init__(self, *cells: cst.Call) -> None:
        self.cells = list(cells)


class _Spatial(_Made):
    """Cells that take channels-first images (convolution, pooling, 2-D batch norm)."""


class _Flat(_Made):
    """Cells that take Keras's layout as it is (Dense, Flatten, 1-D batch norm)."""


class _Any(_Made):
    """Element-wise cells (activations, Dropout): any layout."""


def _call_of(node: cst.CSTNode, constructor: str | None) -> bool:
    return isinstance(node, cst.Call) and dotted(node.func) == constructor


def _makes(per_layer: list[list], constructor: str | None) -> bool:
    """Whether a cell of ``per_layer`` (each layer's ``_Made``) is a call of ``constructor``."""
    return any(_call_of(c, constructor) for made in per_layer for one in made for c in one.cells)


def _declared_global(function: cst.FunctionDef, name: str) -> bool:
    return any(isinstance(small, cst.Global) and any(n.name.value == name for n in small.names)
               for line in function.body.body if isinstance(line, cst.SimpleStatementLine) for small in line.body)


def _bound_by(statement) -> set[str]:
    """Names a module statement binds, where it is not one ``name = call(...)`` (imports, defs, targets)."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return {statement.name.value}
    found = set()
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    found.update(_target_names(target.target))
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)) and isinstance(small.target, cst.Name):
                found.add(small.target.value)
    return found


def _channels_last(bound: dict) -> bool:
    """A layer's ``data_format`` is Keras's default, channels last."""
    data_format = given(bound, "data_format")
    return data_format is None or _string(data_format) == "channels_last"


def _int(node) -> int | None:
    """A literal ``3`` or ``-1``."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value)
    return int(node.value) if isinstance(node, cst.Integer) else None


def _list_lines(groups: list[list[cst.CSTNode]]) -> list[str]:
    """The elements of a cell list, one line each, of each layer's cells (``groups``); a run of
    three or more layers whose cells are written alike (a Keras loop's ``add``) is one line,
    ``*[nn.Dense(100, 100, ...) for _ in range(98)]``, which makes each of them anew."""
    code = cst.Module([]).code_for_node
    lines = []
    for written, run in itertools.groupby(tuple(code(c) for c in group) for group in groups):
        count = len(list(run))
        if count < 3:
            lines += [c for _ in range(count) for c in written]
        elif len(written) == 1:
            lines.append(f"*[{written[0]} for _ in range({count})]")
        else:
            lines.append(f"*[cell for _ in range({count}) for cell in ({', '.join(written)})]")
    return lines


def _variable_group(owner: str) -> bool:
    """Whether ``owner`` (:meth:`NativePass.weights_owner`) is a list of native variables, `[w, b]`
    or `list(weights.values()) + ...`, not a model's name."""
    return owner.startswith(("[", "list("))


def _continued_list(layers: cst.List | cst.Tuple, groups: list[list[cst.CSTNode]], added: int) -> cst.BaseExpression:
    """The list display ``layers`` with each layer's cells (``groups``, one per layer, the last
    ``added`` of them the layers that ``add`` statements append): a layer's element holds its last
    cell, with its comma and the comments after it, and the cells before it are elements of their
    own; the added layers' cells follow as elements of their own (:func:`_list_lines`), the last
    one taking the display's last comma (a trailing comma, the line break before the bracket)."""
    shown = len(groups) - added
    offset = len(layers.elements) - shown  # (an `Input` first is no layer)
    elements = []
    for i, (element, group) in enumerate(zip(layers.elements[offset:], groups[:shown])):
        separator = _separator(layers.elements, offset + i)
        elements += [cst.Element(cell, comma=separator) for cell in group[:-1]]
        elements.append(element.with_changes(value=group[-1]))  # (its comma, and a comment after it)
    if not added:
        return layers.with_changes(elements=elements)
    separator, end = _separator(layers.elements, len(layers.elements) - 1), elements[-1].comma
    closing = layers.rbracket if isinstance(layers, cst.List) else layers.rpar[-1]
    after = separator  # (the comment after the display's last layer stays on its line, not after the added ones)
    if isinstance(closing.whitespace_before, cst.ParenthesizedWhitespace) and isinstance(separator.whitespace_after, cst.ParenthesizedWhitespace):
        after = separator.with_changes(whitespace_after=separator.whitespace_after.with_changes(
            first_line=closing.whitespace_before.first_line))
        closing = closing.with_changes(whitespace_before=closing.whitespace_before.with_changes(first_line=cst.TrailingWhitespace()))
    more = parse_expression("[" + ", ".join(_list_lines(groups[shown:])) + "]").elements
    elements[-1] = elements[-1].with_changes(comma=after)
    elements += [e.with_changes(comma=separator) for e in more[:-1]]
    elements.append(more[-1].with_changes(comma=end))
    if isinstance(layers, cst.List):
        return layers.with_changes(elements=elements, rbracket=closing)
    return layers.with_changes(elements=elements, rpar=[*layers.rpar[:-1], closing])


def _comments(statement: cst.CSTNode) -> list[cst.EmptyLine]:
    """The comment lines of a statement: above it and at its end; a loop's, above its lines too."""
    lines = [*statement.leading_lines]
    if isinstance(statement, cst.SimpleStatementLine):
        lines.append(cst.EmptyLine(comment=statement.trailing_whitespace.comment))
    elif isinstance(statement, cst.For) and isinstance(statement.body, cst.IndentedBlock):
        lines.append(cst.EmptyLine(comment=statement.body.header.comment))
        lines += [line for inner in statement.body.body for line in _comments(inner)]
        lines += statement.body.footer
    return [line for line in lines if line.comment]


# where an expression stands as a whole value, needing no parentheses
_WHOLE_VALUE = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Arg, cst.Element, cst.Expr, cst.DictElement)


def _random(rule, call: cst.Call, int_value=None) -> cst.BaseExpression | None:
    """MindSpore's draw of a ``tfrandom.normal`` / ``uniform`` call, TF's arithmetic written out
    (TFL180); None where the shim must keep it (a shape, bound or dtype not known to be plain).
    ``int_value``: the pass's reading of an integer (a literal or a module constant), which each
    width of a shape display must be, or arithmetic of such (a tensor there: MindSpore's ops take
    Python integers); None to build without that check (the call was checked as first written)."""
    func = dotted(call.func)
    bound = argbind.bind(call, rule.params["signatures"][func])
    if bound is None:
        return None
    shape = bound["shape"]
    if isinstance(shape, (cst.List, cst.Tuple)) and all(isinstance(e, cst.Element) for e in shape.elements):
        if int_value is not None and not all(_integers(e.value, int_value) for e in shape.elements):
            return None
        shape = cst.Tuple([cst.Element(e.value) for e in shape.elements])
    elif not (isinstance(shape, cst.Attribute) and shape.attr.value == "shape"):
        return None
    seed = given(bound, "seed")
    if seed is not None and _int(seed) is None and not isinstance(seed, cst.Name):
        return None
    extra = [cst.Arg(seed, keyword=cst.Name("seed"), equal=_EQUAL)] if seed is not None else []
    dtype = given(bound, "dtype")
    dtypes = rule.params["dtypes"]
    kind = "float" if dtype is None or dotted(dtype) in dtypes["float"] else \
        "integer" if dotted(dtype) in dtypes["integer"] else None
    to = rule.params["to"]
    if func.endswith(".normal"):
        mean, stddev = bound["mean"], bound["stddev"]
        if kind != "float" or not (_number(mean) and _number(stddev)):
            return None
        draw: cst.BaseExpression = cst.Call(parse_expression(to[func]), args=[cst.Arg(shape), *extra])
        if _number_value(stddev) != 1.0:
            draw = cst.BinaryOperation(draw, cst.Multiply(), stddev)
        if _number_value(mean) != 0.0:
            draw = cst.BinaryOperation(mean, cst.Add(), draw)
        return draw
    low, high = bound["minval"], given(bound, "maxval")
    if kind == "integer":
        if _int(low) is None or high is None or _int(high) is None or _int(low) >= _int(high):
            return None
        return cst.Call(parse_expression(to["integer"]), args=[
            cst.Arg(low), cst.Arg(high), cst.Arg(shape), *extra, cst.Arg(dtype, keyword=cst.Name("dtype"), equal=_EQUAL)])
    if kind != "float" or not _number(low) or (high is not None and not _number(high)):
        return None
    bounds = [template_expression("ms.Tensor({v}, ms.float32)", v=v) for v in (low, high or cst.Float("1.0"))]
    return cst.Call(parse_expression(to[func]), args=[cst.Arg(shape), *map(cst.Arg, bounds), *extra])


def _comp_fors(comp: cst.BaseComp) -> list[cst.CompFor]:
    """A comprehension's ``for`` clauses, outermost first."""
    fors, at = [], comp.for_in
    while at is not None:
        fors.append(at)
        at = at.inner_for_in
    return fors


def _number_value(node: cst.BaseExpression) -> float:
    """A number literal's value (``-1``, ``0x2``, ``1_0``, ``1e-3``)."""
    return float(ast.literal_eval(cst.Module([]).code_for_node(node)))


def _integers(node: cst.BaseExpression, int_value) -> bool:
    """An integer the module states: a literal or a module constant (``int_value``), or
    arithmetic of such (``GLOBAL_BATCH * 4``)."""
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)) and \
            _integers(node.left, int_value) and _integers(node.right, int_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _integers(node.expression, int_value)
    return int_value(node) is not None


def _draw_of(expression: cst.BaseExpression) -> str:
    """The op a lowered draw calls: the expression's outermost call (``ops.uniform(...)``, or in
    ``mean + ops.standard_normal(...) * s`` the draw)."""
    return dotted(m.findall(expression, m.Call())[0].func)


def _parenthesized(expression: cst.BaseExpression, wrap: bool) -> cst.BaseExpression:
    return expression.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if wrap else expression


def _add_call(line: cst.CSTNode, name: str) -> cst.Call | None:
    """The call of a statement line ``name.add(layer)`` alone, one plain argument; None otherwise."""
    small = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
    add = small.value if isinstance(small, cst.Expr) else None
    if isinstance(add, cst.Call) and dotted(add.func) == f"{name}.add" and len(add.args) == 1 \
            and add.args[0].keyword is None and not add.args[0].star:
        return add
    return None


def _separator(elements: list[cst.Element], i: int) -> cst.Comma:
    """The comma to put between a new element and ``elements[i]`` before it: the comma after an
    element the list goes on from, nearest ``i`` (a new line and the elements' indentation, not a
    line's comment); ``", "`` in a list of one element."""
    followed = [e.comma for e in elements[:-1] if isinstance(e.comma, cst.Comma)]
    if not followed:
        return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    comma = followed[min(i, len(followed) - 1)]
    if isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):  # (nor the comment lines after it)
        comma = comma.with_changes(whitespace_after=comma.whitespace_after.with_changes(
            first_line=cst.TrailingWhitespace(), empty_lines=[]))
    return comma


def _activation_cell(rule, name: str) -> cst.Call:
    """The cell of Keras's activation ``name``: the rule's class, called with no argument, or its
    call as written (``nn.GELU(approximate=False)``)."""
    to = parse_expression(rule.params["activation_cells"][name])
    return to if isinstance(to, cst.Call) else cst.Call(func=to)


def _class_name(name: str) -> str:
    """``distributed_step`` → ``DistributedStep``."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _pair(node) -> tuple[int, int] | None:
    """A literal ``3`` or ``(3, 3)``."""
    if isinstance(node, cst.Integer):
        return (int(node.value),) * 2
    if isinstance(node, (cst.Tuple, cst.List)) and len(node.elements) == 2 and all(
            isinstance(e.value, cst.Integer) for e in node.elements):
        return tuple(int(e.value.value) for e in node.elements)
    return None


def _pair_code(pair: tuple[int, int]) -> cst.BaseExpression:
    return cst.Integer(str(pair[0])) if pair[0] == pair[1] else parse_expression(f"({pair[0]}, {pair[1]})")


def _out_size(size: int, kernel: int, stride: int, padding: str) -> int:
    return -(-size // stride) if padding == "same" else (size - kernel) // stride + 1


def _zero(node) -> bool:
    return isinstance(node, (cst.Integer, cst.Float)) and float(node.value) == 0


def _weights_owner(node) -> str | None:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.attr.value in ("trainable_variables", "trainable_weights"):
        return node.value.value
    return None


def _zip_with_weights(apply: cst.Call, owner_of=_weights_owner) -> tuple[cst.BaseExpression, str] | None:
    if len(apply.args) != 1 or apply.args[0].keyword is not None or apply.args[0].star:
        return None
    pairs = apply.args[0].value
    if not (isinstance(pairs, cst.Call) and isinstance(pairs.func, cst.Name) and pairs.func.value == "zip" and len(pairs.args) == 2
            and all(a.keyword is None and not a.star for a in pairs.args)):
        return None
    owner = owner_of(pairs.args[1].value)
    return (pairs.args[0].value, owner) if owner else None


def _module_constants(module: cst.Module) -> set[str]:
    """Names bound once at module level to a number literal (``GLOBAL_BATCH = 8``, or a part of
    ``features, classes = 6, 3``)."""
    counts: dict[str, int] = {}
    numbers = set()
    for statement in module.body:
        found = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        if not (isinstance(found, cst.Assign) and len(found.targets) == 1):
            continue
        target, value = found.targets[0].target, found.value
        pairs = [(target, value)]
        if isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple) and len(target.elements) == len(value.elements) \
                and all(isinstance(e, cst.Element) for e in (*target.elements, *value.elements)):
            pairs = [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
        for name, part in pairs:
            if isinstance(name, cst.Name):
                counts[name.value] = counts.get(name.value, 0) + 1
                if _number(part):
                    numbers.add(name.value)
    return {n for n in numbers if counts[n] == 1}


def _walk_statements(block) -> list[cst.CSTNode]:
    out = []
    for statement in block.body:
        out.append(statement)
        if isinstance(statement, cst.FunctionDef):
            out.extend(_walk_statements(statement.body))
    return out


def _locals(function: cst.FunctionDef) -> set[str]:
    """Parameters and names assigned anywhere in ``function`` (nested functions included)."""
    found = set()

    class Collect(cst.CSTVisitor):
        def visit_Param(self, node: cst.Param) -> None:
            found.add(node.name.value)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            found.add(node.name.value)

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            for name in _target_names(node.target):
                found.add(name)

    function.visit(Collect())
    found.discard(function.name.value)
    return found


def _target_names(target) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    return []


def _names_in(function: cst.FunctionDef) -> list[cst.Name]:
    found = []

    class Collect(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return False

        def visit_Arg(self, node: cst.Arg) -> bool:
            node.value.visit(self)
            return False

        def visit_Param(self, node: cst.Param) -> bool:
            return False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            node.body.visit(self)
            return False

        def visit_Name(self, node: cst.Name) -> None:
            found.append(node)

    function.body.visit(Collect())
    return found


def _nodes_below(node: cst.CSTNode, kind: type) -> list:
    """The nodes of type ``kind`` in ``node`` (itself included), in order."""
    found = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, visited: cst.CSTNode) -> bool:
            if isinstance(visited, kind):
                found.append(visited)
            return True

    node.visit(Collect())
    return found


def _assignments(function: cst.FunctionDef) -> list[cst.Assign]:
    return _nodes_below(function, cst.Assign)


def _returns_one_tensor(function: cst.FunctionDef) -> bool:
    returns = [s for line in function.body.body if isinstance(line, cst.SimpleStatementLine)
               for s in line.body if isinstance(s, cst.Return)]
    return bool(returns) and all(isinstance(r.value, (cst.Name, cst.Call, cst.BinaryOperation)) for r in returns)


def _GONE(node):
    """A replacement that removes the statement (a lowering's use that has no native counterpart to run)."""
    return node


class _Apply(cst.CSTTransformer):
    def __init__(self, out: Lowered) -> None:
        super().__init__()
        self.out = out

    def on_leave(self, original, updated):
        updated = super().on_leave(original, updated)  # (leave_Module, leave_IndentedBlock, leave_FunctionDef)
        replace = self.out.nodes.get(original)
        return updated if replace is None else _keep_parens(original, replace(updated))

    def leave_FunctionDef(self, original, updated):
        decorator = self.out.decorate.get(original)
        return updated if decorator is None else updated.with_changes(decorators=[decorator, *updated.decorators])

    def leave_IndentedBlock(self, original, updated):
        return updated.with_changes(body=self._body(original.body, updated.body) or [cst.SimpleStatementLine([cst.Pass()])])

    def leave_Module(self, original, updated):
        return updated.with_changes(body=self._body(original.body, updated.body, module=True))

    def _body(self, originals, updateds, module: bool = False):
        body = []
        for old, new in zip(originals, updateds):
            if old in self.out.removed or self.out.nodes.get(old) is _GONE:
                continue
            extra = self.out.statements.get(old)
            before = self.out.before.get(old, ())
            body.extend(before)
            blank = next((i for i, line in enumerate(new.leading_lines) if line.comment is not None), len(new.leading_lines))
            if module and before and isinstance(before[-1], (cst.ClassDef, cst.FunctionDef)) and blank < 2:
                new = new.with_changes(leading_lines=[*[cst.EmptyLine()] * (2 - blank), *new.leading_lines])  # (PEP 8)
            body.append(new)
            if extra:
                body.extend(extra[1:])
        return body


_NO_TUPLE_OPERATORS = (cst.Subtract, cst.Divide, cst.FloorDivide, cst.Power, cst.MatrixMultiply)
_ARRAY_METHODS = frozenset({"astype", "reshape", "transpose", "squeeze", "copy", "clip", "flatten", "swapaxes"})


def _array_valued(value: cst.BaseExpression) -> bool:
    """``value`` is an array, never a tuple: arithmetic a tuple has not (``-``, ``/``, ``**``, or
    ``*``/``+`` with a float), an array's method, or a NumPy call."""
    if isinstance(value, cst.BinaryOperation):
        return isinstance(value.operator, _NO_TUPLE_OPERATORS) or any(
            isinstance(side, cst.Float) for side in (value.left, value.right))
    if isinstance(value, cst.Call):
        func = dotted(value.func)
        return (isinstance(value.func, cst.Attribute) and value.func.attr.value in _ARRAY_METHODS) or (
            func is not None and func.split(".")[0] in ("np", "numpy"))
    return False


def _metric_object(line: cst.SimpleStatementLine) -> cst.BaseExpression:
    """The metric an update statement (``metric(x)``, ``metric.update_state(x)``) updates."""
    func = line.body[0].value.func
    return func.value if isinstance(func, cst.Attribute) else func


def _element_path(top: cst.CSTNode, node: cst.CSTNode) -> list[int] | None:
    """The indices that lead from the tuple (or list) target ``top`` to ``node`` in it."""
    if top is node:
        return []
    if isinstance(top, (cst.Tuple, cst.List)):
        for i, element in enumerate(top.elements):
            inner = _element_path(element.value, node)
            if inner is not None:
                return [i, *inner]
    return None


@dataclass
class _Element:
    """A ``for`` loop over a pipeline and the target that names its element."""

    loop: cst.For
    target: cst.BaseExpression | None


class _Renamed(cst.CSTTransformer):
    """Each read name of ``names`` in the statement replaced by its expression."""

    def __init__(self, names: dict[str, cst.BaseExpression]) -> None:
        super().__init__()
        self.names = names

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.names.get(original.value, updated)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)  # (`y_true=labels`: the parameter's name stays)


def _keep_parens(original, replacement):
    if isinstance(original, cst.BaseExpression) and isinstance(replacement, cst.BaseExpression) and original.lpar and not replacement.lpar:
        return replacement.with_changes(lpar=original.lpar, rpar=original.rpar)
    return replacement


def _cell_of(function: cst.FunctionDef, name: str, base: str, decorator: str) -> list[cst.BaseStatement]:
    """``@ms.jit def step(args): body`` → ``class Step(nn.Cell): def construct(self, args): body`` and
    ``step = Step()``: the name the module calls is the cell."""
    decorators = [d for d in function.decorators if dotted(d.decorator) != decorator]
    construct = function.with_changes(
        name=cst.Name("construct"), decorators=decorators, leading_lines=(),
        params=function.params.with_changes(params=[cst.Param(cst.Name("self")), *function.params.params]))
    cell = cst.ClassDef(name=cst.Name(name), bases=[cst.Arg(parse_expression(base))], body=cst.IndentedBlock([construct]),
                        leading_lines=function.leading_lines)
    instance = parse_statement(f"{function.name.value} = {name}()").with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    return [cell, instance]


def _graph_mode_place(body: list, before: set[str]) -> int:
    """Where the mode is set: before the module's first call of one of ``before`` (``init()``,
    as MindSpore's programs set the mode and then start the collectives), else after its imports."""
    for at, statement in enumerate(body):
        if isinstance(statement, cst.SimpleStatementLine) and any(
                isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and dotted(small.value.func) in before
                for small in statement.body):
            return at
    return _after_imports(body)


def _with_graph_mode(body: list, params: dict) -> list:
    """The module's statements with ``ms.set_context(mode=ms.GRAPH_MODE)`` in its place."""
    at = _graph_mode_place(body, set(params.get("graph_mode_before", ())))
    body.insert(at, parse_statement(params["graph_mode"]).with_changes(
        leading_lines=body[at].leading_lines if at < len(body) else ()))
    if at + 1 < len(body):
        body[at + 1] = body[at + 1].with_changes(leading_lines=())
    return body


def _after_imports(body: list) -> int:
    """The index of the first statement after the module's docstring and its first imports."""
    at = 1 if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
        and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)) else 0
    while at < len(body) and isinstance(body[at], cst.SimpleStatementLine) \
            and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in body[at].body):
        at += 1
    return at


def _graph_unsafe(module: cst.Module, params: dict, compiled: set[str]) -> str | None:
    """Why the lowered module cannot run in GRAPH_MODE, or None: every module it reads is one
    whose objects GRAPH_MODE serves (the shim's Keras layers run only eagerly), and every
    gradient it takes is inside a compiled step."""
    import sys

    safe = tuple(params["graph_safe"])
    walk = _Walk()
    module.visit(walk)
    origins: dict[str, str] = {}  # name an import binds -> what it stands for
    for node in walk.parent:
        if isinstance(node, cst.Import):
            for alias in node.names:
                origins[alias.evaluated_alias or alias.evaluated_name.split(".")[0]] = alias.evaluated_name
        elif isinstance(node, cst.ImportFrom):
            base = "." * len(node.relative) + (get_full_name_for_node(node.module) if node.module else "")
            if isinstance(node.names, cst.ImportStar):
                return f"it imports `*` from `{base}`"
            for alias in node.names:
                origins[alias.evaluated_alias or alias.evaluated_name] = f"{base}.{alias.evaluated_name}"
    def within(path: str) -> bool:
        return any(path == m or path.startswith(m + ".") for m in safe)

    def reached(read: cst.Name, origin: str) -> str:
        """What a read names through the attributes after it: ``mk.callbacks.EarlyStopping``'s
        ``mk`` reaches ``migrate.runtime.keras.callbacks.EarlyStopping``."""
        path, node = origin, read
        while isinstance(walk.parent.get(node), cst.Attribute) and walk.parent[node].value is node:
            node = walk.parent[node]
            path += "." + node.attr.value
        return path

    for name, origin in sorted(origins.items()):
        if origin.split(".")[0] in sys.stdlib_module_names or within(origin):
            continue
        reads = [n for n in walk.names.get(name, ()) if not isinstance(walk.parent.get(n), (cst.ImportAlias, cst.AsName))]
        if any(not within(reached(read, origin)) for read in reads):
            return f"the module reads `{name}` (`{origin}`), whose objects may need PyNative"
    gradients = set(params.get("graph_gradients", ()))
    for node, up in walk.parent.items():
        if isinstance(up, cst.Call) and up.func is node and dotted(node) in gradients:
            owner = up
            while owner in walk.parent and not (isinstance(owner, cst.FunctionDef) and walk.parent.get(owner) is module):
                owner = walk.parent[owner]
            if not (isinstance(owner, cst.FunctionDef) and owner.name.value in compiled):
                return f"`{dotted(node)}` is also called outside the compiled steps"
    return None


def lower(module: cst.Module, rules, jitted: frozenset[str], arrays: dict | None = None) -> tuple[cst.Module, list, set[str]]:
    """The module with its native lowerings applied, the notes (name, rule, status, message),
    and the ids of the rules that lowered something. ``arrays``: the parameters of the rule that
    finds NumPy arrays (a model's NumPy input is then given as a tensor).

    A native model read first in another model's list (``Sequential([model, Softmax()])``) is
    taken as that model's first cell; should that model keep the shim, the pass runs again with
    the read refused (a shim model cannot hold a MindSpore cell)."""
    unnested: frozenset[str] = frozenset()
    reasons: dict[int, str] = {}
    while True:
        native = NativePass(module, rules, jitted, arrays, unnested, reasons)
        new = native.run()
        broken = native.broken_nesting()
        if not broken:
            return new, native.out.notes, native.used
        unnested |= broken
        reasons = native.outer_reasons



# Keras's VarianceScaling: the truncated normal's standard deviation is divided by the standard
# deviation of a unit normal truncated to [-2, 2], so that the draws have the variance asked for.
_TRUNCATED_STDDEV = 0.87962566103423978


def _variance_scaling(rule, scaling: list, fans: tuple[int, int]) -> cst.BaseExpression:
    """Keras's variance-scaling initializer of a kernel with these fans, as MindSpore's initializer of
    the same distribution: `TruncatedNormal` with Keras's deviation and bounds (at two deviations),
    or `Uniform` with Keras's limit. The numbers are computed as Keras computes them."""
    import math

    scale, mode, distribution = float(scaling[0]), scaling[1], scaling[2]
    fan_in, fan_out = fans
    fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[mode]
    scale /= max(1.0, fan)
    if distribution == "truncated_normal":
        stddev = math.sqrt(scale) / _TRUNCATED_STDDEV
        code = f"{rule.params['scaled_inits']['truncated_normal']}(sigma={stddev!r}, a={-2 * stddev!r}, b={2 * stddev!r})"
    else:
        code = f"{rule.params['scaled_inits']['uniform']}(scale={math.sqrt(3.0 * scale)!r})"
    return parse_expression(code)
