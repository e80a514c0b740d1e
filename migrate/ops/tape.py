"""``with tf.GradientTape() as tape:`` + ``tape.gradient(target, sources)`` → a closure and ``mindspore.value_and_grad``.

TF records the forward pass on a tape and differentiates it afterwards; MindSpore
differentiates a function. The tape's body becomes a closure without parameters
(gradients are taken with respect to the weights passed to ``value_and_grad``, not to
the closure's inputs); it returns the gradient's target first and then every name it
computes that the code after the tape still reads (``has_aux=True``: MindSpore
differentiates only the first output). The ``tape.gradient`` statement becomes the
call::

    with tf.GradientTape() as tape:                 def forward():
        logits = model(x)                               logits = model(x)
        loss = loss_fn(y, logits)            →          loss = loss_fn(y, logits)
    grads = tape.gradient(loss, weights)                return loss, logits
                                                    (loss, logits), grads = ms.value_and_grad(forward, None, weights, has_aux=True)()

The closure runs where ``tape.gradient`` stood, so only statements that cannot see or
change the forward pass may stand between the two. Anything the transform cannot
prove equivalent is left as it is, with the reason for a person (see ``examine``).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node
from libcst.metadata import ComprehensionScope

from migrate.ops import args as argbind
from migrate.ops.base import Operation, Param, imported_from, target_names, template_expression


@dataclass(frozen=True)
class TapeConversion:
    """What planning decided for one tape, for the rewrite of its two statements."""

    with_statement: cst.With
    gradient_statement: cst.SimpleStatementLine
    tape: str
    closure: str
    target: str
    aux: tuple[str, ...]
    blank_line_before: bool
    grads: str | None  # a new name for the gradients when `tape.gradient(...)` sits inside a larger statement
    carried: tuple[str, ...] = ()  # names the body reads before it assigns them: the closure's parameters
    # `tape = hvd.DistributedGradientTape(tape, ...)` between the two: it becomes the reduction of
    # the gradients right after they are computed (its call, converted, with the gradients for the tape)
    reducer: cst.SimpleStatementLine | None = None
    # `tape.gradient` as a statement of the tape's own body: how many of the body's statements
    # come before it (they become the closure; the gradient and what follows run after it)
    split: int | None = None
    # statements between the `with` and `tape.gradient` that read the forward pass's results: after the gradient
    moved: tuple[cst.SimpleStatementLine, ...] = ()
    # `tape.watch(x)` lines of the body (removed) and the tensors they watch, the closure's first
    # parameters: the gradient is taken with respect to them (`grad_position`), not to weights
    watch_lines: tuple[cst.SimpleStatementLine, ...] = ()
    watched: tuple[str, ...] = ()
    watched_as_list: bool | None = None  # the sources: a list of the watched (True), a tuple (False), one name (None)
    # Several gradients of one forward pass (two tapes in one `with`, a persistent tape asked more
    # than once): the gradient lines before the last (which `gradient_statement` is), each
    # gradient's (tape, target) in order, and the `del tape` lines that go with the tapes.
    earlier: tuple[cst.SimpleStatementLine, ...] = ()
    gradients: tuple[tuple[str, str], ...] = ()
    deletes: tuple[cst.SimpleStatementLine, ...] = ()
    # `weights = model.trainable_weights` lines of the body that the sources read: they run
    # before the forward pass now (a live view of the model's weights, filled once it builds)
    hoisted: tuple[cst.SimpleStatementLine, ...] = ()


class GradientTapeToValueAndGrad(Operation):
    name = "gradient_tape"
    target = "block"
    params = {
        "tape_signature": Param(list, required=True, doc="GradientTape's parameters"),
        "gradient_signature": Param(list, required=True, doc="GradientTape.gradient's parameters"),
        "closure": Param(str, required=True, doc="name of the closure holding the tape's body (a free name is chosen from it)"),
        "gradients": Param(str, required=True, doc="name for the gradients when `tape.gradient(...)` is part of a larger statement"),
        "template": Param(str, required=True, doc="the gradient call; {closure}, {sources} and {has_aux} placeholders"),
        "watch_template": Param(str, required=True, doc="the gradient call with respect to the tensors `tape.watch` "
                                                        "watches (the closure's first parameters); {closure}, "
                                                        "{positions} and {has_aux} placeholders"),
        "several_template": Param(str, doc="the call for several gradients of one forward pass (two tapes in one "
                                           "`with`, a persistent tape asked more than once); {closure}, {sources} "
                                           "(a list: each gradient's sources), {targets} (a list: each gradient's "
                                           "target's position among the closure's outputs) and {has_aux} placeholders"),
        "reducers": Param(list, doc="functions that wrap a tape so that its gradients are reduced across processes "
                                    "(`tape = hvd.DistributedGradientTape(tape)`): such a wrap between the `with` and "
                                    "`tape.gradient` becomes `grads = <its rule's rename of it>` after the gradients, "
                                    "its last name replaced by `reduce_with`"),
        "reduce_with": Param(str, doc="the last name of the function that reduces the gradients (see `reducers`)"),
    }

    def check(self, params: dict[str, Any]) -> None:
        for key in ("tape_signature", "gradient_signature"):
            argbind.check_signature(params[key])
        names = {p[0] for p in argbind.parse_signature(params["gradient_signature"])}
        if not {"target", "sources"} <= names:
            raise ValueError("gradient_signature must name 'target' and 'sources'")
        if not (params["closure"].isidentifier() and params["gradients"].isidentifier()):
            raise ValueError("closure and gradients must be identifiers")
        template_expression(params["template"], closure=cst.Name("f"), sources=cst.Name("w"), has_aux=cst.Name("b"))
        if params.get("several_template"):
            template_expression(params["several_template"], closure=cst.Name("f"), sources=cst.Name("w"),
                                targets=cst.Name("t"), has_aux=cst.Name("b"))

    def refusal(self, params) -> str:
        return "this tape does not fit the transform; convert it by hand"

    # -- planning ----------------------------------------------------------------------

    def examine(self, view, node: cst.CSTNode, params: dict[str, Any], local: bool = True) -> TapeConversion | str:
        """The conversion of the tape ``node`` constructs, or why it is left as it is.

        ``view`` is the planner: ``parent(node)``, ``scopes_around(node)``, ``scopes``,
        ``resolve(node)``, ``module``. The names the tape's body binds are looked up in the
        scope analysis of the function around it (``local``), unless one of them is bound by
        an import: whether it imports what the module does is the module's analysis to say.
        """
        parent = view.parent
        call = parent(node)
        if not (isinstance(call, cst.Call) and call.func is node):
            return "`GradientTape` is not constructed in a `with` statement"
        item = parent(call)
        with_statement = parent(item) if isinstance(item, cst.WithItem) else None
        if not isinstance(with_statement, cst.With):
            return "`GradientTape` is not constructed in a `with` statement"
        if with_statement.asynchronous is not None:
            return "the `with` statement is an `async with`"
        # Every item of the `with` is a tape (a GAN's `with tf.GradientTape() as gen_tape,
        # tf.GradientTape() as disc_tape:`): the conversion is the statement's, whichever tape asks.
        api = view.resolve(node)
        tapes: list[tuple[cst.Name, dict]] = []
        for each in with_statement.items:
            made = each.item
            if not (isinstance(made, cst.Call) and view.resolve(made.func) == api):
                return "the `with` statement holds other context managers too"
            arguments = argbind.bind(made, params["tape_signature"])
            if arguments is None:
                return "the `GradientTape(...)` arguments are not understood"
            watch = arguments.get("watch_accessed_variables")
            if watch is not None and not _literal_true(watch):
                return "`watch_accessed_variables` is not `True`: only watched tensors are differentiated"
            if not (each.asname is not None and isinstance(each.asname.name, cst.Name)):
                return "the tape has no `as <name>`"
            tapes.append((each.asname.name, arguments))
        if len({tape.value for tape, _ in tapes}) != len(tapes):
            return "two tapes of the `with` statement have one name"
        if not isinstance(with_statement.body, cst.IndentedBlock):
            return "the tape's body is on the `with` line"
        block = parent(with_statement)
        if not isinstance(block, (cst.IndentedBlock, cst.Module)):
            return "the `with` statement is not in a block"
        siblings = list(block.body)
        here = siblings.index(with_statement)

        if _contains_tape(view, with_statement.body, node) or _inside_tape(view, with_statement, node):
            return "nested tapes (higher-order gradients) need `mindspore.grad` of a `mindspore.grad` by hand"

        # -- each tape's uses: `<grads> = tape.gradient(target, sources)` (several on a persistent tape) --
        scopes, local = view.scopes_around(with_statement) if local else (view.scopes, False)
        reducer, ours = None, True
        watch_lines, watched = [], []
        gradient_calls: list[tuple[cst.Name, cst.Call]] = []
        deletes: list[cst.SimpleStatementLine] = []
        for tape, arguments in tapes:
            scope = scopes.get(tape)
            if scope is None:
                return "the tape's name cannot be resolved"
            bindings = list(scope.assignments[tape.value])
            if len(bindings) == 1:
                uses = [access.node for access in bindings[0].references]
            else:
                found = _reducer(view, bindings, tape, siblings[here + 1:], params["reducers"]) \
                    if len(bindings) == 2 and len(tapes) == 1 and params.get("reducers") else None
                if isinstance(found, tuple):
                    reducer, uses, ours = found
                else:
                    uses = _own_uses(view, scopes, bindings, tape, with_statement, siblings)
                    if uses is None:
                        return found or f"the name `{tape.value}` is bound more than once"
            kinds = [_method_called(parent, use) or _deleted(parent, use) for use in uses]
            for use in (use for use, kind in zip(uses, kinds) if kind == "watch"):
                found = _watch_line(parent, use, with_statement)
                if isinstance(found, str):
                    return found
                watch_lines.append(found[0])
                watched.extend(name for name in found[1] if name not in watched)
            calls = [parent(parent(use)) for use, kind in zip(uses, kinds) if kind == "gradient"]
            if len(calls) > 1 and not _literal_true(arguments.get("persistent")):
                return (f"`{tape.value}.gradient` is called more than once on a tape that is not persistent "
                        "(TF raises: pass `persistent=True`)")
            if len(uses) != len(calls) + sum(kind in ("watch", "del") for kind in kinds) or not calls:
                other = next((view.code(parent(u)).strip().rstrip(",").rstrip() for u, k in zip(uses, kinds)
                              if k not in ("gradient", "del")), None)
                asked = f"`{tape.value}.gradient(...)` calls" if _literal_true(arguments.get("persistent")) \
                    else f"one `{tape.value}.gradient(...)` call"
                return f"the tape is used other than in {asked}" + (f" (`{other}`)" if other else "")
            deletes.extend(parent(parent(use)) for use, kind in zip(uses, kinds) if kind == "del")
            gradient_calls.extend((tape, each) for each in calls)
        several = len(gradient_calls) > 1
        if several and not params.get("several_template"):
            return "several gradients of one forward pass (two tapes, or a persistent tape asked more than once)"
        if several and watched:
            return ("`tape.watch` with several gradients: take them with `mindspore.grad`'s `grad_position` by hand")

        # -- each gradient call, its line and the line's place --
        gradients: list[tuple[str, cst.Name, cst.BaseExpression, cst.SimpleStatementLine]] = []
        for tape, gradient in gradient_calls:
            grad_args = argbind.bind(gradient, params["gradient_signature"])
            if grad_args is None:
                return "the `tape.gradient(...)` arguments are not understood"
            passed = argbind.explicit(gradient, params["gradient_signature"]) - {"target", "sources"}
            if passed:
                return f"`tape.gradient` passes {', '.join(f'`{p}`' for p in sorted(passed))}, which `value_and_grad` does not take"
            target, sources = grad_args["target"], grad_args["sources"]
            if not isinstance(target, cst.Name):
                return "the gradient's target is not one name computed under the tape (several targets are summed in TF)"
            if isinstance(sources, (cst.Dict, cst.Set)):
                return "the sources are a dict or set: TF gives their gradients in that structure; pass a list of weights"
            line = gradient
            while line is not None and not isinstance(line, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                if isinstance(line, (cst.Lambda, cst.BaseComp)):
                    return "`tape.gradient` is called inside a lambda or comprehension"
                line = parent(line)
            gradients.append((tape.value, target, sources, line))
        tape, target, sources, line = gradients[0]
        gradient = gradient_calls[0][1]
        watched_as_list = None
        if watched:
            names = [sources.value] if isinstance(sources, cst.Name) else [
                e.value.value for e in sources.elements if isinstance(e.value, cst.Name)] \
                if isinstance(sources, (cst.List, cst.Tuple)) else []
            if not names or (not isinstance(sources, cst.Name) and len(names) != len(sources.elements)) \
                    or sorted(set(names)) != sorted(watched) or len(set(names)) != len(names):
                return (f"the gradient's sources are not the tensors `{tape}.watch` watches, each once: "
                        "gradients with respect to both watched tensors and variables need `grad_position` and "
                        "`weights` by hand")
            watched = names
            watched_as_list = None if isinstance(sources, cst.Name) else isinstance(sources, cst.List)
        earlier: tuple[cst.SimpleStatementLine, ...] = ()
        split = None
        if several:
            found = _several_lines(gradients, with_statement, siblings, here, deletes)
            if isinstance(found, str):
                return found
            gradients = found  # (in the order of their lines)
            tape, line = gradients[-1][0], gradients[-1][3]
            earlier = tuple(each[3] for each in gradients[:-1])
        else:
            if line in with_statement.body.body:
                # `tape.gradient` under the tape: what the body does before it is the forward pass;
                # the gradient and the rest of the body run after it (a tape records nothing once asked).
                split = list(with_statement.body.body).index(line)
            elif line not in siblings[here + 1:]:
                return "`tape.gradient` is not in the block that holds the `with` statement, after it"
            if len(line.body) != 1:
                return "`tape.gradient` shares its line with other statements"
            after = siblings[siblings.index(line) + 1:] if line in siblings else siblings[here + 1:]
            if any(each not in after for each in deletes):
                return f"`del {tape}` is not in the block that holds the `with` statement, after `{tape}.gradient`"
        assign = line.body[0]
        assigned = isinstance(assign, cst.Assign) and assign.value is gradient and len(assign.targets) == 1
        if several:
            assigned = True
        if reducer is not None and assigned and not all(
                isinstance(each[3].body[0], cst.Assign) and isinstance(each[3].body[0].targets[0].target, cst.Name)
                for each in gradients):
            return "the gradients of a `DistributedGradientTape` are not assigned to one name"
        if split is not None and not (assigned and reducer is None):
            return "`tape.gradient` under the tape is not assigned on its own line"
        if split == 0:
            return "`tape.gradient` is the first statement under the tape: nothing is recorded"
        first_line = earlier[0] if earlier else line
        between = [s for s in siblings[here + 1:siblings.index(first_line)] if s is not reducer] if split is None else []
        forward = with_statement.body if split is None else with_statement.body.with_changes(
            body=with_statement.body.body[:split])  # (the same statements: only the block is new)
        # `weights = model.trainable_weights` under the tape, after the forward pass built the
        # model, with the gradient taken with respect to `weights`: read before the closure runs.
        sources_read = set().union(*(_names_in(each) for _, _, each, _ in gradients))
        # (only sources that are that name itself, none of them watched: a slice or a list made
        # from the view is no live view)
        bare = {each.value for _, _, each, _ in gradients if isinstance(each, cst.Name)}
        hoisted = [] if watched or bare != sources_read else _hoistable_sources(list(forward.body), bare)
        if hoisted:
            forward = forward.with_changes(body=[s for s in forward.body if s not in hoisted])
        forward_statements = list(forward.body)

        def in_forward(node) -> bool:
            return any(_within(parent, node, statement) for statement in forward_statements)

        # -- what the body computes, and who reads it --
        body_bound = _bound_in(scope, forward)
        # A binding the plan replaces (a strategy that becomes `init()` and a parallel context)
        # binds nothing once converted: its reads go with it, so they do not stop the tape.
        replaced = view.plan.statements
        body_bound = {name: found for name, found in body_bound.items()
                      if not all(view.statement_of(a.node) in replaced for a in found)}
        if local and any(_imported_as(a) is not None for found in body_bound.values() for a in found):
            return self.examine(view, node, params, local=False)
        # A read the plan rewrites away (`dist` of `dist.MirroredStrategy()`) is no read once
        # converted, and an import whose every read goes so is removed with them (see
        # Rewriter.schedule_unused_imports): it binds nothing under the tape.
        rewritten = view.rewritten_reads() if body_bound else set()
        body_bound = {name: found for name, found in body_bound.items()
                      if not _removed_import(scope, name, rewritten, view.reads_aside)}
        # An import under the tape of what the module already imports under that name
        # (`import tensorflow as tf` again) gives the name nothing new: it stays as it is
        # in the closure, and every read outside the closure sees the module's import.
        body_bound = {name: found for name, found in body_bound.items() if not _reimports(scope, name, found)}
        for _, each, _, _ in gradients:
            if not body_bound.get(each.value):
                return f"the gradient's target `{each.value}` is not computed under the tape"
        rebound = sorted(set(watched) & set(body_bound))
        if rebound:
            return f"the watched tensor `{rebound[0]}` is assigned under the tape"
        computed = sorted((sources_read | _roots(hoisted)) & set(body_bound))
        if computed:
            # (MindSpore needs the weights before the forward pass that computes them here)
            return f"the gradient's sources read `{computed[0]}`, which the tape's body computes"
        if isinstance(scope, cst.metadata.ClassScope):
            return "the tape is in a class body"
        why = _unsafe_body(forward)
        if why:
            return why
        changed = _changes_state(forward) if several else None
        if changed:
            return (f"the tape's body changes state (`{view.code(changed).strip()}`), which would happen once per "
                    "gradient: each gradient runs the forward pass again")
        target_nodes = {each for _, each, _, _ in gradients}
        target_names = list(dict.fromkeys(each.value for each in target_nodes))
        declared = _declared_global_or_nonlocal(parent, with_statement)
        top_level = _top_level_bindings(forward, lambda statement: _dissolved(view, statement))
        aux: list[str] = []
        carried: list[str] = []
        for name, assignments in body_bound.items():
            if name in declared:
                return f"`{name}` is declared global or nonlocal and assigned under the tape"
            outside = [a for a in scope.assignments[name] if a not in assignments]
            reads = {access.node for a in scope.assignments[name] for access in a.references} - rewritten
            inside = [r for r in reads if in_forward(r)]
            # (`loss += f(x)` reads `loss` too, where it assigns it)
            inside += [a.node for a in assignments if isinstance(parent(a.node), cst.AugAssign)
                       and parent(a.node).target is a.node]
            # A read after a plain assignment among the body's own statements (always run) reads
            # the body's value, never one from before the tape.
            # (a builtin the body rebinds at module level: libcst's scopes give the read in its own
            # assignment, `max = max(w)`, to the builtin, so any read under the tape counts here)
            if inside and isinstance(scope, cst.metadata.GlobalScope) and hasattr(builtins, name):
                return f"`{name}` is read under the tape before the tape assigns it"
            settled = _first_settled(parent, forward_statements, assignments)
            if settled is not None:
                inside = [r for r in inside if _within(parent, r, settled)
                          or view.line_col(r) < view.line_col(settled)]
            first = min(view.line_col(a.node) for a in assignments)
            if inside and (outside or any(view.line_col(r) <= first for r in inside)):
                # `h = net(h)`: the closure takes the value the body starts from as a parameter.
                carried.append(name)
            read_after = [r for r in reads if r not in target_nodes and not in_forward(r)]
            # (a name the closure takes as its parameter has a value on every path: the one it came in with)
            always = name in top_level or name in carried
            if name in target_names:
                if not always:
                    return f"the gradient's target `{name}` is computed only on some paths under the tape"
                continue
            if read_after:
                if all(_imported_as(a) is not None for a in assignments):
                    # (an import is no output of the closure the tape becomes)
                    return f"`{name}` is imported under the tape and read after it: import it before the `with`"
                if not always:
                    return f"`{name}` is read after the tape but computed only on some paths under it"
                aux.append(name)
        # A statement between that reads what the forward pass computes (a metric's update) runs
        # after the gradient, still after the forward pass as in TF; the others must not see it.
        moved: list[cst.SimpleStatementLine] = []
        lines = [*earlier, line]
        gradient_names = set().union(*map(_names_in, lines))
        gradient_binds = set().union(*map(_bound_by, lines))
        if isinstance(reducer, cst.If):
            # The `if` now runs after the gradients, so its condition must read nothing the forward
            # pass, the statements between or the gradient lines bind (it would see their values).
            bound_later = set(body_bound) | gradient_binds | set().union(
                *(_bound_by(s) if isinstance(s, cst.SimpleStatementLine) else _names_in(s) for s in between))
            crossing = sorted(_names_in(reducer.test) & bound_later)
            if crossing:
                return (f"the condition of `{view.code(_wrap_line(reducer).body[0]).strip()}` reads `{crossing[0]}`, "
                        "which is bound after the `with`: the reduction would see another value")
        for statement in between:
            why = _unsafe_between(statement, set(body_bound), _names_in(forward),
                                  lambda read: _changed_elsewhere(view, read))
            if why is None and not moved:
                continue
            if why is None and not any(_bound_by(statement) & _names_in(other) or _bound_by(other) & _names_in(statement)
                                       for other in moved):
                continue  # (it stays before the moved ones, which neither read nor bind what it does)
            if assigned and _movable(statement, gradient_names, set(body_bound), gradient_binds):
                moved.append(statement)
                continue
            return why or "a statement between the `with` block and `tape.gradient` would run before the forward pass now"
        order = {name: i for i, name in enumerate(top_level)}
        aux.sort(key=lambda n: (order.get(n, len(order)), n))
        if not ours:
            # (a converted file: the wrap is the runtime's, of a tape the first run left TensorFlow, for
            # a reason checked above; the same reason, found again, says the same thing)
            return (f"`{view.code(_wrap_line(reducer).body[0]).strip()}` is `migrate.runtime`'s wrap of a tape left "
                    "TensorFlow: convert the TF original again, or reduce the gradients where they are computed")
        closure = _free_name(view, params["closure"])
        grads = None if assigned else _free_name(view, params["gradients"])
        blank = here > 0 and not any(empty.comment is None for empty in with_statement.leading_lines)
        targets = [each.value for _, each, _, _ in gradients]
        return TapeConversion(with_statement, line, tape, closure, targets[0], tuple(aux), blank, grads,
                              tuple(sorted(carried, key=lambda n: order.get(n, len(order)))), reducer, split,
                              tuple(moved), tuple(watch_lines), tuple(watched), watched_as_list,
                              earlier, tuple(zip((t for t, _, _, _ in gradients), targets)), tuple(deletes),
                              tuple(hoisted))

    def statements(self, conversion: TapeConversion) -> list[cst.CSTNode]:
        """The original statements the rewrite replaces: the `with`, the `tape.gradient` line (and a wrap)."""
        wrap = [conversion.reducer] if conversion.reducer is not None else []
        return [conversion.with_statement, *conversion.hoisted, *conversion.watch_lines, *wrap, *conversion.moved,
                *conversion.earlier, conversion.gradient_statement, *conversion.deletes]

    def absorbs(self, conversion: TapeConversion) -> list[tuple[cst.CSTNode, str]]:
        """References another rule planned that this rewrite makes whole, and what became of each:
        the wrap's function, reported for a person where it stands alone, is converted here."""
        if conversion.reducer is None:
            return []
        return [(_wrap_line(conversion.reducer).body[0].value.func,
                 "the gradients are reduced where the converted tape computes them")]

    # -- rewriting ---------------------------------------------------------------------

    def rewrite(self, ctx, original, updated, params, suffix: str = ""):
        conversion: TapeConversion = ctx.current.detail
        outputs = [*_targets(conversion), *conversion.aux]
        if original in conversion.deletes:  # (no tape once converted; its comments stay)
            return ctx.leaves_block(updated.with_changes(leading_lines=[*updated.leading_lines, *_inner_comments(updated)]))
        if original in conversion.earlier:
            # Computed with the others where the last one stands: its gradients' name and its
            # sources (converted) go there; its comments go with them (the first line's blank lines too).
            tape = conversion.gradients[conversion.earlier.index(original)][0]
            bound = argbind.bind(_gradient_call(updated, tape), params["gradient_signature"])
            _pending(ctx, conversion).setdefault("earlier", []).append((updated.body[0].targets[0].target, bound["sources"]))
            first = original is conversion.earlier[0]
            lead = [*(updated.leading_lines if first else _comments_only(updated)), *_inner_comments(updated)]
            return ctx.leaves_block(updated.with_changes(leading_lines=lead))
        if original in conversion.watch_lines:
            return cst.RemovalSentinel.REMOVE  # the closure takes the watched tensors as its parameters
        if original in conversion.hoisted:
            # It reads the model's live weights: before the forward pass now, after the closure's `def`.
            _pending(ctx, conversion).setdefault("hoisted", []).append(updated)
            return cst.RemovalSentinel.REMOVE
        if original in conversion.moved:
            # It reads the forward pass's results: it runs after the gradient now (kept, converted, for that line).
            _pending(ctx, conversion).setdefault("moved", []).append(updated)
            return cst.RemovalSentinel.REMOVE
        if original is conversion.reducer:
            # It runs after the gradients now: kept (converted) for the gradient line, removed here.
            comments = [line for line in updated.leading_lines if line.comment is not None]
            condition = updated if isinstance(updated, cst.If) else None
            _pending(ctx, conversion)["wrap"] = (_wrap_line(updated).body[0].value, comments, condition)
            return cst.RemovalSentinel.REMOVE
        if original is conversion.with_statement:
            returned = cst.parse_statement(f"return {', '.join(outputs)}\n")
            statements = list(updated.body.body)
            after = []
            if conversion.split is not None:
                # where the rewritten gradient line stands now (rules before it may have added or
                # removed statements: a dissolved scope, a removed set-up call)
                first = _pending(ctx, conversion).pop("gradient")
                at = next(i for i, statement in enumerate(statements) if statement is first)
                statements, after = statements[:at], statements[at:]
            body = updated.body.with_changes(body=[*statements, returned])
            lead = list(updated.leading_lines)
            if conversion.blank_line_before:
                lead.insert(0, cst.EmptyLine(indent=False))
            closure = cst.FunctionDef(
                name=cst.Name(conversion.closure),
                params=cst.Parameters(params=[cst.Param(cst.Name(n)) for n in (*conversion.watched, *conversion.carried)]),
                body=body,
                leading_lines=lead,
                whitespace_before_colon=updated.whitespace_before_colon,
            )
            hoisted = _pending(ctx, conversion).pop("hoisted", [])
            if not after and not hoisted:
                return closure
            # the gradient (already rewritten) and what followed it under the tape, after the closure
            return cst.FlattenSentinel([closure, *hoisted, *after])
        gradient = _gradient_call(updated, conversion.tape)
        bound = argbind.bind(gradient, params["gradient_signature"])
        if conversion.earlier:
            return self._several(ctx, conversion, updated, params, bound["sources"], outputs)
        values = ", ".join(outputs)
        value_target = cst.parse_expression(f"({values})" if conversion.aux else values)
        has_aux = cst.Name("True" if conversion.aux else "False")
        if conversion.watched:
            count = len(conversion.watched)
            positions = "0" if conversion.watched_as_list is None else \
                ("[{}]" if conversion.watched_as_list else "({},)" if count == 1 else "({})").format(
                    ", ".join(map(str, range(count))))
            call = template_expression(params["watch_template"], closure=cst.Name(conversion.closure),
                                       positions=cst.parse_expression(positions), has_aux=has_aux)
        else:
            call = template_expression(params["template"], closure=cst.Name(conversion.closure),
                                       sources=bound["sources"], has_aux=has_aux)
        if not conversion.aux:
            call = _without_keyword(call, "has_aux")
        call = _called_with(call, (*conversion.watched, *conversion.carried))
        pending = _pending(ctx, conversion)
        wrap, moved = pending.pop("wrap", None), pending.pop("moved", [])
        new = self._gradient_statements(conversion, updated, params, call, value_target, wrap)
        if conversion.split is not None:  # (the `with` around it splits its body here)
            pending["gradient"] = new.nodes[0] if isinstance(new, cst.FlattenSentinel) else new
        if not moved:
            return new
        nodes = list(new.nodes) if isinstance(new, cst.FlattenSentinel) else [new]
        # (the first moved statement keeps its blank line and comments above it)
        return cst.FlattenSentinel([*nodes, *moved])

    def _several(self, ctx, conversion, updated, params, sources, outputs):
        """The last gradient line of several: ``(targets, aux), (grads, ...) = mk.value_and_grads(...)()``."""
        pending = _pending(ctx, conversion)
        earlier = pending.pop("earlier", [])
        names = _targets(conversion)
        positions = [names.index(target) for _, target in conversion.gradients]
        grads = [cst.Element(_parenthesized(target))
                 for target in [*(each for each, _ in earlier), updated.body[0].targets[0].target]]
        listed = cst.List([cst.Element(each) for each in [*(s for _, s in earlier), sources]])
        call = template_expression(params["several_template"], closure=cst.Name(conversion.closure), sources=listed,
                                   targets=cst.List([cst.Element(cst.Integer(str(p))) for p in positions]),
                                   has_aux=cst.Name("True" if conversion.aux else "False"))
        if positions == list(range(len(positions))):
            call = _without_keyword(call, "targets")
        if not conversion.aux:
            call = _without_keyword(call, "has_aux")
        call = _called_with(call, conversion.carried)
        value = cst.parse_expression(f"({', '.join(outputs)})" if len(outputs) > 1 else outputs[0])
        pair = cst.Tuple([cst.Element(value), cst.Element(cst.Tuple(grads))], lpar=[], rpar=[])
        new = _assigned(updated, pair, call).with_changes(leading_lines=_comments_only(updated))
        moved = pending.pop("moved", [])
        wrap = pending.pop("wrap", None)
        # (a `DistributedGradientTape` reduces each gradient it is asked for)
        reduced = _reduced(*wrap, [g.value.value for g in grads], params["reduce_with"]) if wrap else []
        return cst.FlattenSentinel([new, *reduced, *moved]) if moved or reduced else new

    def _gradient_statements(self, conversion, updated, params, call, value_target, wrap):
        """The gradient line's replacement: the gradient call, and the reduction a wrap asks for."""
        gradient = _gradient_call(updated, conversion.tape)
        if conversion.grads is None:  # `grads = tape.gradient(...)`: one statement
            grads = _parenthesized(updated.body[0].targets[0].target)
            pair = cst.Tuple([cst.Element(value_target), cst.Element(grads)], lpar=[], rpar=[])
            computed = _assigned(updated, pair, call)
            if wrap is None:
                return computed
            return cst.FlattenSentinel([computed, *_reduced(*wrap, grads.value, params["reduce_with"])])
        # `f(tape.gradient(...))`: the gradients get a name first, then the statement uses it.
        pair = cst.Tuple([cst.Element(value_target), cst.Element(cst.Name(conversion.grads))], lpar=[], rpar=[])
        computed = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(pair)], call)], leading_lines=updated.leading_lines)
        used = updated.visit(_Replace(gradient, cst.Name(conversion.grads))).with_changes(leading_lines=[])
        if wrap is None:
            return cst.FlattenSentinel([computed, used])
        return cst.FlattenSentinel([computed, *_reduced(*wrap, conversion.grads, params["reduce_with"]), used])


def _parenthesized(target: cst.BaseExpression) -> cst.BaseExpression:
    """An assignment target as an element of a tuple: ``a, b`` in parentheses."""
    if isinstance(target, (cst.Tuple, cst.List)) and not target.lpar:
        return target.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return target


def _assigned(statement: cst.SimpleStatementLine, target: cst.BaseExpression, value: cst.BaseExpression):
    """``<grads> = tape.gradient(...)`` as ``<target> = <value>``, its layout kept."""
    assign: cst.Assign = statement.body[0]
    return statement.with_changes(body=[assign.with_changes(targets=[assign.targets[0].with_changes(target=target)],
                                                            value=value)])


def _called_with(call: cst.BaseExpression, names: tuple[str, ...]) -> cst.BaseExpression:
    """The template's ``...()`` given the closure's arguments (the watched and carried names)."""
    if names and isinstance(call, cst.Call) and not call.args:
        return call.with_changes(args=[cst.Arg(cst.Name(n)) for n in names])
    return call


def _targets(conversion: TapeConversion) -> list[str]:
    """The closure's first outputs: the gradients' targets, each once, in the order they are asked for."""
    return list(dict.fromkeys(target for _, target in conversion.gradients)) or [conversion.target]


def _comments_only(statement: cst.SimpleStatementLine) -> list[cst.EmptyLine]:
    return [line for line in statement.leading_lines if line.comment is not None]


def _inner_comments(statement: cst.SimpleStatementLine) -> list[cst.EmptyLine]:
    """The comments in a statement's code and at its end (not those above it), as lines of their own."""
    found: list[cst.EmptyLine] = []

    class _Comments(cst.CSTVisitor):
        def visit_Comment(self, node):
            found.append(cst.EmptyLine(comment=node))

    for part in (*statement.body, statement.trailing_whitespace):
        part.visit(_Comments())
    return found


def _pending(ctx, conversion: TapeConversion) -> dict:
    """What one tape's rewrite hands from statement to statement (the rewriter leaves them in
    document order): the converted wrap and moved statements for the gradient line, the
    rewritten gradient line for the `with` whose body it splits."""
    return ctx.__dict__.setdefault("_tape_pending", {}).setdefault(id(conversion.gradient_statement), {})


def _reduced(wrap: cst.Call, comments: list, condition: cst.If | None, grads, reduce_with: str) -> list[cst.BaseStatement]:
    """``tape = hvd.DistributedGradientTape(tape, k=v)`` (converted) → ``grads = hvd.<reduce_with>(grads, k=v)``,
    one line per name in ``grads`` (a name, or the names of several gradients), under the wrap's
    comments; under the wrap's ``if`` (``condition``, converted) when it had one."""
    func = wrap.func
    func = func.with_changes(attr=cst.Name(reduce_with)) if isinstance(func, cst.Attribute) else cst.Name(reduce_with)
    lines = []
    for name in [grads] if isinstance(grads, str) else grads:
        args = [wrap.args[0].with_changes(value=cst.Name(name)), *wrap.args[1:]]
        lines.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))],
                                                         wrap.with_changes(func=func, args=args))]))
    if condition is None:
        return [lines[0].with_changes(leading_lines=comments), *lines[1:]]
    body = condition.body.with_changes(body=[lines[0].with_changes(leading_lines=_wrap_line(condition).leading_lines),
                                             *lines[1:]])
    return [condition.with_changes(body=body, leading_lines=comments)]


def _own_uses(view, scopes, bindings: list, tape: cst.Name, with_statement: cst.With, siblings: list) -> list | None:
    """The reads of this tape's name that are this tape's, when several tapes bind it.

    A notebook computes one gradient per cell, each under ``with tf.GradientTape() as tape:``:
    one name, bound again and again. libcst's scopes do not follow the flow (every read is a
    reference of every binding), but the flow is plain when every binding is such a `with`
    among the statements of this block and every read lies in that block after the first of
    them: a read belongs to the last `with` before the top-level statement that holds it.
    A cell's training loop puts its `with` in the loop's body: then the flow is plain when
    that `with` is the only binding in its top-level statement of the module, its reads
    there lie in its block after it, and every read in another top-level statement follows
    a binding in a later one (:func:`_own_uses_nested`).
    None: the bindings are not so.
    """
    statements = []
    for binding in bindings:
        node = binding.node
        alias = view.parent(node) if isinstance(node, cst.Name) else None
        item = view.parent(alias) if isinstance(alias, cst.AsName) else None
        statement = view.parent(item) if isinstance(item, cst.WithItem) and item.asname is alias else None
        if not isinstance(statement, cst.With):
            return None
        statements.append(statement)
    if not all(statement in siblings for statement in statements):
        return _own_uses_nested(view, scopes, bindings, tape, with_statement, statements)
    positions = [siblings.index(statement) for statement in statements]
    here = siblings.index(with_statement)
    later = [p for p in positions if p > here]
    end = min(later) if later else len(siblings)
    first = min(positions)
    reads = {access.node for b in bindings for access in b.references}
    scope = scopes.get(tape)
    uses = []
    for read in reads:
        if not _read_in_scope(scopes, scope, read):
            if _own_read_elsewhere(scopes, read, tape):
                continue
            return None  # a closure's read: which tape it sees depends on when it runs
        top = read
        while top is not None and top not in siblings:
            top = view.parent(top)
        if top is None:
            return None  # a read outside the block: which tape it sees depends on the flow around it
        index = siblings.index(top)
        if index < first or (index == first and not _within(view.parent, read, siblings[first].body)):
            return None  # read before any tape binds the name
        if here <= index < end:
            uses.append(read)
    return uses


def _read_in_scope(scopes, scope, read) -> bool:
    """Whether ``read`` is in ``scope`` (a comprehension there runs where it stands, so its reads count)."""
    inner = scopes.get(read)
    while isinstance(inner, ComprehensionScope):
        inner = inner.parent
    return inner is scope


def _own_read_elsewhere(scopes, read, tape: cst.Name) -> bool:
    """A read in a function whose own ``tape`` it is (not the module's)."""
    inner = scopes.get(read)
    return inner is not None and any(True for _ in inner.assignments[tape.value]) and \
        all(a.scope is inner for a in inner.assignments[tape.value])


def _own_uses_nested(view, scopes, bindings: list, tape: cst.Name, with_statement: cst.With,
                     statements: list) -> list | None:
    """:func:`_own_uses` where some tapes sit in compound statements (a loop) of the module."""
    body = list(view.module.body)

    def top_of(node):
        while node is not None and node not in body:
            node = view.parent(node)
        return node

    tops = [top_of(statement) for statement in statements]
    ours = top_of(with_statement)
    if ours is None or any(t is None for t in tops) or sum(t is ours for t in tops) != 1:
        return None  # not the module's, or another tape binds the name in the same top-level statement
    binding_rows = sorted(body.index(t) for t in tops)
    row = body.index(ours)
    scope = scopes.get(tape)
    uses = []
    for read in {access.node for b in bindings for access in b.references}:
        if not _read_in_scope(scopes, scope, read):
            if _own_read_elsewhere(scopes, read, tape):
                continue
            return None
        top = top_of(read)
        if top is None:
            return None
        if top is ours:
            if not _after(view, read, with_statement):
                return None  # in the tape's cell but not after it in its block
            uses.append(read)
            continue
        before = [r for r in binding_rows if r <= body.index(top)]
        if before and before[-1] == row and ours is with_statement:
            uses.append(read)  # a later cell's read of this module-level tape
            continue
        if not before or before[-1] == row:
            return None  # read before any tape, or after this one's loop: it sees whichever ran last
        if before[-1] == body.index(top) and not any(
                _after(view, read, s) for s, t in zip(statements, tops) if t is top):
            return None  # in another tape's cell, but not after that tape in its block
    return uses


def _after(view, read, statement) -> bool:
    """Whether ``read`` lies in ``statement`` or in a statement after it in the same block."""
    block = view.parent(statement)
    rows = list(getattr(block, "body", ()))
    inner = read
    while inner is not None and inner not in rows:
        inner = view.parent(inner)
    return inner is not None and rows.index(inner) >= rows.index(statement)


def _reducer(view, bindings: list, tape: cst.Name, after: list, reducers: list):
    """``tape = hvd.DistributedGradientTape(tape, ...)`` after the `with`, in its block: (that statement,
    the tape's other uses, whether it is Horovod's wrap rather than the runtime's); or why the second
    binding of the tape's name is not such a wrap.

    (libcst's scopes do not follow the flow: every read of the name is a reference of both
    bindings. The wrap reads the tape; every other read must come after the wrap.)"""
    ours = [b for b in bindings if b.node is tape]
    other = [b for b in bindings if b.node is not tape]
    why = f"the name `{tape.value}` is bound more than once"
    if len(ours) != 1 or len(other) != 1:
        return why
    node = other[0].node
    statement = view.statement_of(node) if isinstance(node, cst.CSTNode) else None
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and small.targets[0].target is node
            and isinstance(small.value, cst.Call)):
        return why
    call = small.value
    resolved = view.resolve(call.func) in reducers
    # (or the runtime's own, in a converted file: planning does not resolve `migrate.runtime` names)
    full = (get_full_name_for_node(call.func) or "").split(".")
    named = len(full) == 2 and full[0] == imported_from(view.module, "migrate.runtime", "horovod") and \
        full[1] in {r.rsplit(".", 1)[-1] for r in reducers}
    if not (resolved or named):
        return why
    placed = statement
    if statement not in after:
        # `if hvd.size() > 1: tape = hvd.DistributedGradientTape(tape)`: the `if` alone, with no
        # `else`, in the tape's block: the reduction runs under the same condition after the gradients.
        placed = _conditional_wrap(view, statement)
    if placed not in after:
        return (f"`{view.code(small).strip()}` is not in the tape's block after the `with`, alone or alone under an `if`: "
                "reduce the gradients where they are computed instead")
    first = call.args[0] if call.args else None
    if not (first is not None and first.keyword is None and first.star == "" and isinstance(first.value, cst.Name)
            and first.value.value == tape.value and all(a.keyword is not None for a in call.args[1:])):
        return f"`{view.code(call).strip()}` does not wrap the tape alone (its other arguments by keyword)"
    reads = {access.node for b in bindings for access in b.references}
    if first.value not in reads:
        return why
    uses = sorted(reads - {first.value}, key=view.line_col)
    if any(view.line_col(use) <= view.line_col(statement) for use in uses):
        return f"the tape is used before `{view.code(small).strip()}`"
    if placed is not statement and _names_in(placed.test) & {tape.value}:
        return f"the condition of `{view.code(small).strip()}` reads the tape"
    return placed, uses, resolved


# Keras's name alone: a `tf.Module` has `trainable_variables` too, but builds no live view of them.
_LIVE_WEIGHTS = {"trainable_weights"}


def _hoistable_sources(statements: list, sources: set[str]) -> list[cst.SimpleStatementLine]:
    """The body's lines ``name = a.b.trainable_weights`` (Keras's name; a ``tf.Module``'s
    ``trainable_variables`` is a plain tuple) of a name that is the gradient's sources, where no
    earlier line of the body mentions the name and none of the body assigns an attribute on the
    way (``self.model = ...``). The shim's view of a layer's
    trainable weights is live (it holds them once the layer builds, see ``mk.value_and_grad``),
    so read before the forward pass it is what TF read after it. (A name the body binds again
    stays the body's, and the tape stays for a person.)"""
    assigned = set()
    for statement in statements:
        for node in _attribute_targets(statement):
            assigned.add(get_full_name_for_node(node) or "")
    found, mentioned = [], set()
    for statement in statements:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            name, value = small.targets[0].target.value, small.value
            chain = get_full_name_for_node(value) if isinstance(value, cst.Attribute) else None
            if name in sources and name not in mentioned and chain and value.attr.value in _LIVE_WEIGHTS and \
                    not any(chain == a or chain.startswith(a + ".") for a in assigned if a):
                found.append(statement)
        mentioned |= _names_in(statement)
    return found


def _roots(statements) -> set[str]:
    """The first names of the attribute chains ``statements`` (hoisted lines) read."""
    return {(get_full_name_for_node(s.body[0].value) or "").split(".")[0] for s in statements}


def _attribute_targets(statement: cst.CSTNode) -> list[cst.Attribute]:
    """Every attribute the statement assigns (``self.model = ...``, ``a.b += 1``), at any depth."""
    assigns = m.AssignTarget(target=m.Attribute()) | m.AugAssign(target=m.Attribute()) | m.AnnAssign(target=m.Attribute())
    return [node.target for node in m.findall(statement, assigns)]


def _conditional_wrap(view, statement: cst.SimpleStatementLine) -> cst.If | None:
    """The ``if`` whose whole body is ``statement``, with no ``else`` (or None)."""
    block = view.parent(statement)
    around = view.parent(block) if isinstance(block, cst.IndentedBlock) else None
    if isinstance(around, cst.If) and around.orelse is None and list(block.body) == [statement]:
        return around
    return None


def _wrap_line(reducer: cst.BaseStatement) -> cst.SimpleStatementLine:
    """The ``tape = hvd.DistributedGradientTape(tape, ...)`` line of a reducer (itself, or the body of its ``if``)."""
    return reducer.body.body[0] if isinstance(reducer, cst.If) else reducer


def _without_keyword(node: cst.BaseExpression, keyword: str) -> cst.BaseExpression:
    """``f(a, k=v)()`` without ``k``: has_aux is only passed when the closure returns more than its target."""

    class _Drop(cst.CSTTransformer):
        def leave_Call(self, original, updated):
            args = [a for a in updated.args if not (a.keyword and a.keyword.value == keyword)]
            if len(args) == len(updated.args):
                return updated
            if args:
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(args=args)

    return node.visit(_Drop())


def _gradient_call(statement: cst.CSTNode, tape: str) -> cst.Call:
    """The (rewritten) ``<tape>.gradient(...)`` call in ``statement``."""
    found: list[cst.Call] = []

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node):
            func = node.func
            if (isinstance(func, cst.Attribute) and func.attr.value == "gradient"
                    and isinstance(func.value, cst.Name) and func.value.value == tape):
                found.append(node)

    statement.visit(_Find())
    return found[0]


class _Replace(cst.CSTTransformer):
    def __init__(self, old: cst.CSTNode, new: cst.CSTNode) -> None:
        super().__init__()
        self.old, self.new = old, new

    def on_leave(self, original, updated):
        return self.new if original is self.old else updated


def _watch_line(parent, use: cst.CSTNode, with_statement: cst.With):
    """``tape.watch(x)`` (or ``tape.watch([x, y])``) on a line of its own at the top of the tape's
    body: (that line, the names watched); or why it is not so."""
    call = parent(parent(use))
    expression = parent(call)
    line = parent(expression) if isinstance(expression, cst.Expr) else None
    if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and line in with_statement.body.body):
        return "`tape.watch(...)` is not a statement of its own in the tape's body"
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return "`tape.watch(...)` does not watch one tensor or one list of them"
    value = call.args[0].value
    items = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
    if not items or not all(isinstance(item, cst.Name) for item in items):
        return "`tape.watch(...)` watches something other than names: gradients with respect to it need `grad_position` by hand"
    return line, [item.value for item in items]


def _several_lines(gradients: list, with_statement: cst.With, siblings: list, here: int, deletes: list) -> list | str:
    """Several gradients of one forward pass: each ``<grads> = tape.gradient(...)`` on a line of its
    own, the lines one after the other in the block that holds the ``with``, after it (the
    converted call computes them all where they stand), none reading what another binds, and
    each ``del tape`` after them. The gradients in the order of their lines, or why not."""
    for _, _, _, line in gradients:
        if line in with_statement.body.body:
            return "`tape.gradient` is under the tape, with several gradients: ask for them after the `with`"
        if line not in siblings[here + 1:]:
            return "`tape.gradient` is not in the block that holds the `with` statement, after it"
        assign = line.body[0] if len(line.body) == 1 else None
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.value, cst.Call)
                and isinstance(assign.value.func, cst.Attribute) and assign.value.func.attr.value == "gradient"):
            return "`tape.gradient` is not assigned on a line of its own (several gradients are computed in one call)"
    ordered = sorted(gradients, key=lambda each: siblings.index(each[3]))
    rows = [siblings.index(each[3]) for each in ordered]
    if len(set(rows)) != len(rows):
        return "two `tape.gradient` calls share a line"
    if rows != list(range(rows[0], rows[0] + len(rows))):
        return "the `tape.gradient` lines are not one after the other (several gradients are computed in one call)"
    read = set().union(*(_names_in(each[3].body[0].value) for each in ordered))
    crossed = sorted(read & set().union(*(_bound_by(each[3]) for each in ordered)))
    if crossed:
        return f"a `tape.gradient` line reads `{crossed[0]}`, which another one assigns"
    after = siblings[rows[-1] + 1:]
    if any(line not in after for line in deletes):
        return "`del` of a tape is not in the block that holds the `with` statement, after its `gradient` calls"
    return ordered


# (a metric's `update_state` is not among them: the runtime's metrics update once, in the first pass)
_STATEFUL = {"assign", "assign_add", "assign_sub", "scatter_add", "scatter_sub", "scatter_update", "scatter_nd_update",
             "scatter_nd_add"}


def _changes_state(body: cst.IndentedBlock) -> cst.Call | None:
    """A call in the body (not in a function it defines) that changes a variable, a metric or a
    container in place (``step.assign_add(1)``, ``losses.append(l)``), or None."""
    found: list[cst.Call] = []
    changing = _STATEFUL | _MUTATORS

    class _Find(_ScopeAware):
        def visit_Call(self, node):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in changing and not found:
                found.append(node)

    body.visit(_Find())
    return found[0] if found else None


def _first_settled(parent, statements: list, assignments: list) -> cst.CSTNode | None:
    """The first of ``statements`` (the forward pass's own, which always run) that binds the name
    by a plain assignment (``x = ...``, not ``x += ...``, which reads it), or None."""
    plain = set()
    for a in assignments:
        up = parent(a.node) if isinstance(a.node, cst.CSTNode) else None
        while up is not None and not isinstance(up, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.SimpleStatementLine,
                                                     cst.BaseCompoundStatement)):
            up = parent(up)  # (through an AssignTarget, a tuple target)
        if isinstance(up, (cst.Assign, cst.AnnAssign)):
            plain.add(parent(up))
    return next((statement for statement in statements if statement in plain), None)


def _deleted(parent, use: cst.CSTNode) -> str | None:
    """``del tape`` on a line of its own → "del"; any other use → None."""
    deletion = parent(use)
    statement = parent(deletion) if isinstance(deletion, cst.Del) and deletion.target is use else None
    return "del" if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None


def _literal_true(node: cst.CSTNode | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _method_called(parent, use: cst.CSTNode) -> str | None:
    """``tape.gradient(...)`` → "gradient"; any other use → None."""
    attr = parent(use)
    if isinstance(attr, cst.Attribute) and attr.value is use:
        call = parent(attr)
        if isinstance(call, cst.Call) and call.func is attr:
            return attr.attr.value
    return None


def _within(parent, node: cst.CSTNode, container: cst.CSTNode) -> bool:
    cur = node
    while cur is not None:
        if cur is container:
            return True
        cur = parent(cur)
    return False


def _contains_tape(view, body: cst.CSTNode, tape_ref: cst.CSTNode) -> bool:
    api = view.resolve(tape_ref)
    found = []

    class _Find(cst.CSTVisitor):
        def visit_Attribute(self, node):
            if node.attr.value == "GradientTape" and view.resolve(node) == api:
                found.append(node)

        def visit_Name(self, node):
            if node.value == "GradientTape" or view.resolve(node) == api:
                found.append(node)

    body.visit(_Find())
    return bool(found)


def _inside_tape(view, statement: cst.With, tape_ref: cst.CSTNode) -> bool:
    api = view.resolve(tape_ref)
    cur = view.parent(statement)
    while cur is not None:
        if isinstance(cur, cst.With):
            for item in cur.items:
                if isinstance(item.item, cst.Call) and view.resolve(item.item.func) == api:
                    return True
        cur = view.parent(cur)
    return False


def _bound_in(scope, body: cst.IndentedBlock) -> dict[str, list]:
    """Names the body binds in the enclosing scope, with those bindings."""
    out: dict[str, list] = {}
    nodes = set()

    class _All(cst.CSTVisitor):
        def on_visit(self, node):
            nodes.add(node)
            return True

    body.visit(_All())
    for assignment in scope.assignments:
        if getattr(assignment, "node", None) in nodes:
            out.setdefault(assignment.name, []).append(assignment)
    return out


def _imported_as(assignment) -> str | None:
    """What an import binding stands for (``import a.b as c``: "a.b"; ``from a import b``:
    "a.b"; ``import a.b``: "a"), or None for any other binding."""
    node = getattr(assignment, "node", None)
    if isinstance(node, cst.Import):
        for alias in node.names:
            name = alias.evaluated_name
            if (alias.evaluated_alias or name.split(".")[0]) == assignment.name:
                return name if alias.asname else name.split(".")[0]
    elif (isinstance(node, cst.ImportFrom) and not node.relative and node.module is not None
          and not isinstance(node.names, cst.ImportStar)):
        for alias in node.names:
            if (alias.evaluated_alias or alias.evaluated_name) == assignment.name:
                return f"{get_full_name_for_node(node.module)}.{alias.evaluated_name}"
    return None


def _removed_import(scope, name: str, rewritten: set, aside) -> bool:
    """Whether every binding of ``name`` in ``scope`` is an import and every read of it is one
    the plan rewrites away (``rewritten``), none by a statement set aside (``aside``)."""
    assignments = list(scope.assignments[name])  # (the tape's own among them)
    if name in aside or any(_imported_as(a) is None for a in assignments):
        return False
    reads = [access.node for a in assignments for access in a.references]
    return bool(reads) and all(read in rewritten for read in reads)


def _reimports(scope, name: str, assignments: list) -> bool:
    """Whether every binding of ``name`` under the tape imports what the module's own
    import of ``name`` does (and the module has such an import, and no other binding of it)."""
    here = {_imported_as(a) for a in assignments}
    if None in here or len(here) != 1:
        return False
    module = scope.globals
    if module is scope or name not in module.assignments:
        return False
    return {_imported_as(a) for a in module.assignments[name]} == here


def _top_level_bindings(body: cst.IndentedBlock, dissolved=lambda statement: False) -> list[str]:
    """Names bound by simple statements directly in the body (always run), in source order;
    a ``with`` the plan dissolves (``dissolved``) counts as the statements in it, and an
    ``if``/``elif``/``else`` with an ``else`` as the names every branch binds."""
    names: list[str] = []

    def targets(node):
        names.extend(target_names(node))

    def smalls(statements):
        for small in statements:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    targets(target.target)
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                targets(small.target)
            elif isinstance(small, cst.AugAssign):
                targets(small.target)

    def block(suite) -> list[str]:
        """What a branch's own statements always bind (its body run as one walk of its own)."""
        mark = len(names)
        if isinstance(suite, cst.IndentedBlock):
            walk(suite.body)
        else:
            smalls(suite.body)
        bound = names[mark:]
        del names[mark:]
        return bound

    def walk(statements):
        for statement in statements:
            if dissolved(statement):
                if isinstance(statement.body, cst.IndentedBlock):
                    walk(statement.body.body)
                else:
                    smalls(statement.body.body)  # `with s.scope(): x = f()` on one line
            elif isinstance(statement, cst.SimpleStatementLine):
                smalls(statement.body)
            elif isinstance(statement, cst.If):
                # `if ...: x = a` / `else: x = b`: a name every branch binds is bound on every path
                branches, node = [], statement
                while isinstance(node, cst.If):
                    branches.append(block(node.body))
                    node = node.orelse
                if node is not None:
                    branches.append(block(node.body))
                    common = set.intersection(*map(set, branches))
                    names.extend(name for name in branches[0] if name in common)

    walk(body.body)
    return list(dict.fromkeys(names))


def _dissolved(view, statement: cst.CSTNode) -> bool:
    """Whether the plan dissolves ``statement``: a ``with`` whose every item is a
    ``<strategy>.scope()`` the planner has already decided to unwrap (its body then runs
    in the enclosing block, always)."""
    if not isinstance(statement, cst.With):
        return False
    for item in statement.items:
        call = item.item
        use = view.use_actions.get(call.func) if isinstance(call, cst.Call) else None
        if use is None or use[0].operation != "unwrap_scope" or view.suppresses(use[0], call.func):
            return False
    return True


class _ScopeAware(cst.CSTVisitor):
    """Visits the body's own statements, not those of functions, classes or lambdas defined in it."""

    def visit_FunctionDef(self, node):
        return False

    def visit_ClassDef(self, node):
        return False

    def visit_Lambda(self, node):
        return False


def _unsafe_body(body: cst.IndentedBlock) -> str | None:
    """Statements that mean something else once the body is a function of its own."""
    found: list[str] = []

    class _Find(_ScopeAware):
        loops = 0

        def visit_Return(self, node):
            found.append("`return`")

        def visit_Yield(self, node):
            found.append("`yield`")

        def visit_Await(self, node):
            found.append("`await`")

        def visit_Global(self, node):
            found.append("`global`")

        def visit_Nonlocal(self, node):
            found.append("`nonlocal`")

        def visit_For(self, node):
            self.loops += 1

        def leave_For(self, node):
            self.loops -= 1

        def visit_While(self, node):
            self.loops += 1

        def leave_While(self, node):
            self.loops -= 1

        def visit_Break(self, node):
            if not self.loops:
                found.append("`break`")

        def visit_Continue(self, node):
            if not self.loops:
                found.append("`continue`")

    body.visit(_Find())
    return f"the tape's body holds {found[0]}, which cannot move into a function" if found else None


def _declared_global_or_nonlocal(parent, statement: cst.CSTNode) -> set[str]:
    function = statement
    while function is not None and not isinstance(function, cst.FunctionDef):
        function = parent(function)
    if function is None:
        return set()
    names: set[str] = set()

    class _Find(_ScopeAware):
        def visit_Global(self, node):
            names.update(n.name.value for n in node.names)

        def visit_Nonlocal(self, node):
            names.update(n.name.value for n in node.names)

    function.body.visit(_Find())
    return names


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, n):
        self.names.add(n.value)

    def visit_Attribute(self, n):
        n.value.visit(self)
        return False

    def visit_Arg(self, n):
        n.value.visit(self)
        return False


def _names_in(node: cst.CSTNode) -> set[str]:
    """Every name ``node`` mentions, bound or read (attribute names and keywords are not names)."""
    visitor = _Names()
    node.visit(visitor)
    return visitor.names


def _unsafe_between(statement: cst.CSTNode, body_bound: set[str], body_reads: set[str],
                    changed_elsewhere=lambda name: True) -> str | None:
    """A statement between the tape and `tape.gradient` must not see or change the forward pass.

    The forward pass now runs at `tape.gradient`, after it: so it may neither read nor
    bind a name the body binds or reads, nor call anything (a call may change the model)
    but what only gathers variables a program already holds: `list(weights.values())`,
    `tuple(...)`, a dict's `values()`/`keys()`/`items()` (no attribute read: a layer's
    `trainable_variables` before its first call is empty), of names the body does not read
    (an iterator it advances) and that nothing fills or rebinds anywhere
    (``changed_elsewhere``: a dict a forward function fills on its first call).
    """
    reason = "a statement between the `with` block and `tape.gradient` would run before the forward pass now"
    if not isinstance(statement, cst.SimpleStatementLine):
        return reason
    impure: list[cst.CSTNode] = []
    gathered: list[cst.Name] = []

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node):
            if not _gathers(node):
                impure.append(node)
            elif isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name):
                gathered.append(node.func.value)  # `weights` of `weights.values()`
            elif node.args and isinstance(node.args[0].value, cst.Name):
                gathered.append(node.args[0].value)  # `params` of `list(params)`

    statement.visit(_Find())
    if impure or {n.value for n in gathered} & body_reads or any(changed_elsewhere(n) for n in gathered):
        return reason
    for small in statement.body:
        if isinstance(small, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            if not all(isinstance(t, cst.Name) for t in targets):
                return reason  # an attribute or item assignment may change what the forward pass reads
            bound = {t.value for t in targets}
            read = _names_in(small.value) if small.value is not None else set()
        elif isinstance(small, (cst.Pass, cst.Expr)):
            bound, read = set(), _names_in(small)
        else:
            return reason
        if bound & (body_bound | body_reads) or read & body_bound:
            return reason
    return None


_VIEWS = {"values", "keys", "items"}
# Methods that fill or empty a container in place.
_MUTATORS = {"update", "setdefault", "pop", "popitem", "clear", "append", "extend", "insert", "remove",
             "__setitem__", "__delitem__", "add", "discard"}


def _changed_elsewhere(view, read: cst.Name) -> bool:
    """Whether the name ``read`` is bound more than once in the module, or any read of it
    anywhere fills or empties it in place (``d[k] = v``, ``del d[k]``, ``d.update(...)``, ...)
    (the module's scope analysis: a function elsewhere may fill a global dict)."""
    scope = view.scopes.get(read)
    try:
        assignments = list(scope[read.value]) if scope is not None else []
    except Exception:  # noqa: BLE001 - a name the analysis cannot see: assume the worst
        return True
    if len(assignments) != 1:
        return True
    for assignment in assignments:
        for access in assignment.references:
            node, up = access.node, view.parent(access.node)
            if isinstance(up, cst.Subscript) and up.value is node:
                holder = view.parent(up)
                if isinstance(holder, (cst.AssignTarget, cst.Del)) or (
                        isinstance(holder, (cst.AugAssign, cst.AnnAssign)) and holder.target is up):
                    return True
            if isinstance(up, cst.Attribute) and up.value is node and up.attr.value in _MUTATORS:
                return True
    return False


def _gathers(call: cst.Call) -> bool:
    """``list(x)`` / ``tuple(x)`` of one positional argument that reads no attribute (a layer's
    variables, listed before its first call, are none yet), or ``d.values()`` (``keys``,
    ``items``) of a name: calls that only gather what a program holds."""
    if isinstance(call.func, cst.Name):
        if call.func.value not in ("list", "tuple") or len(call.args) != 1 or call.args[0].keyword \
                or call.args[0].star:
            return False
        attributes: list[str] = []

        class _Attributes(cst.CSTVisitor):
            def visit_Attribute(self, node):
                attributes.append(node.attr.value)

        call.args[0].value.visit(_Attributes())
        return set(attributes) <= _VIEWS
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in _VIEWS and not call.args \
        and isinstance(call.func.value, cst.Name)


def _bound_by(statement: cst.SimpleStatementLine) -> set[str]:
    """The names an assignment statement binds (its targets' names, not an attribute's or item's object)."""
    names: list[str] = []
    for small in statement.body:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                names.extend(target_names(target.target))
        elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
            names.extend(target_names(small.target))
    return set(names)


def _movable(statement: cst.CSTNode, gradient_names: set[str], forward_binds: set[str], gradient_binds: set[str]) -> bool:
    """Whether a statement between the tape and `tape.gradient` can run after the gradient instead.

    In TF it runs after the forward pass and before the gradient; converted, the forward pass
    runs at the gradient, so the statement goes after it: still after the forward pass, whose
    results it may read. It must be plain (assignments and expressions: no `return`, `yield`,
    `:=` or compound statement), bind nothing the gradient line reads or binds, and read nothing
    the gradient line binds (it ran before TF bound them).
    """
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    if not all(isinstance(small, (cst.Expr, cst.Assign, cst.AugAssign, cst.AnnAssign)) for small in statement.body):
        return False
    found: list[cst.CSTNode] = []

    class _Find(cst.CSTVisitor):
        def visit_Yield(self, node):
            found.append(node)

        def visit_NamedExpr(self, node):
            found.append(node)

        def visit_Await(self, node):
            found.append(node)

    statement.visit(_Find())
    if found:
        return False
    for small in statement.body:
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
            [small.target] if isinstance(small, (cst.AugAssign, cst.AnnAssign)) else []
        if any(isinstance(t, (cst.Attribute, cst.Subscript)) for t in targets):
            return False  # it may change an object the gradient reads
    bound = _bound_by(statement)
    # It may neither mention what the gradient reads (other than the forward pass's results: a call
    # on it may change it, `params.append(w)`) nor bind or read what the gradient line binds. A
    # metric's update is no such change (`self.compiled_metrics.update_state(y, y_pred)` beside
    # `self.trainable_variables`): it moves the metric's own state, which no gradient reads.
    mentioned = _names_in(statement)
    return not ((mentioned - _metric_receivers(statement)) & (gradient_names - forward_binds)) \
        and not (bound & (gradient_names | gradient_binds)) and not (mentioned - bound) & gradient_binds


# A Keras metric's methods that change only the metric's own state (its non-trainable variables)
_METRIC_UPDATES = frozenset({"update_state", "reset_state", "reset_states"})


def _metric_receiver(call: cst.Call) -> str | None:
    """``self`` of ``self.compiled_metrics.update_state(...)``: the name a metric update is called on."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in _METRIC_UPDATES:
        root = func.value
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name):
            return root.value
    return None


def _metric_receivers(statement: cst.CSTNode) -> set[str]:
    """The names that ``statement`` mentions only as the root of a metric update's receiver
    (``self`` of ``self.compiled_metrics.update_state(y, y_pred)``; not one read anywhere else)."""

    class _Outside(_Names):  # every name mentioned outside those receivers (their arguments count)
        def __init__(self) -> None:
            super().__init__()
            self.roots: set[str] = set()

        def visit_Call(self, node):
            root = _metric_receiver(node)
            if root is None:
                return True
            self.roots.add(root)
            for arg in node.args:
                arg.value.visit(self)
            return False

    visitor = _Outside()
    statement.visit(visitor)
    return visitor.roots - visitor.names


def _free_name(view, wanted: str) -> str:
    """``wanted``, or ``wanted_2``, ``wanted_3`` … : a name the module does not use anywhere.
    (The names are found once per file: every tape asks for two, of the same module.)"""
    memo = getattr(view, "memo", {})
    used = memo.get(_free_name)
    if used is None:
        used = memo[_free_name] = _names_in(view.module) | getattr(view, "names_set_aside", frozenset())
    if wanted not in used:
        return wanted
    n = 2
    while f"{wanted}_{n}" in used:
        n += 1
    return f"{wanted}_{n}"

