"""``mk.value_and_grad``: MindSpore's ``value_and_grad`` for weights Keras creates late.

TF creates a Keras model's variables on its first call, inside the tape, and
``tape.gradient(loss, model.trainable_variables)`` reads them afterwards. MindSpore
takes the weights *before* the forward pass. ``model.trainable_variables`` here is a
list that remembers its layer (:class:`LiveWeights`), so it can be handed over before
the model exists;
on the first call, if the layers behind it are not built yet, the forward function
runs once to build them (with moving statistics frozen, so BatchNormalization is not
updated twice), and then the step is differentiated as usual.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools

_BUILDING = contextvars.ContextVar("mk_building", default=False)


@contextlib.contextmanager
def building():
    """Inside: a forward pass that only builds layers; stateful layers must not update."""
    token = _BUILDING.set(True)
    try:
        yield
    finally:
        _BUILDING.reset(token)


def is_building() -> bool:
    return _BUILDING.get()


@functools.lru_cache(maxsize=None)
def _pynative_executor():
    """MindSpore's PyNative executor (looked up once: every differentiated step asks for it)."""
    try:
        from mindspore.graph.api import _pynative_executor as executor
    except ImportError:  # (older MindSpore)
        from mindspore.common.api import _pynative_executor as executor
    return executor


@contextlib.contextmanager
def reset_on_error():
    """Differentiation that an exception leaves: PyNative's executor put back as it was.

    MindSpore's ``value_and_grad`` of a function does not clean up when the function raises
    (a ``StopIteration`` at the end of the data, a program's own check): the executor stays
    in its recording state, every later operation is recorded for a gradient nobody takes,
    and a compiled graph recorded later is keyed and built as if under differentiation (its
    backward pass failing, or its values one float32 step off). MindSpore's own jit calls
    ``clear_res`` on such an error; so does this, for the outermost differentiation only (an
    inner one's error may be caught by the outer function, whose recording must go on).
    """
    executor = _pynative_executor()
    outer = executor.requires_grad()
    try:
        yield
    except BaseException:
        if not outer:
            executor.clear_res()
        raise


class LiveWeights(list):
    """A layer's weights: a plain list of Parameters (so MindSpore takes it anywhere a
    list of weights goes) that also knows its layer, so it can be read again after the
    layer builds.

    Concatenated (``encoder.trainable_variables + decoder.trainable_variables``, also with
    a plain list) it stays live: the sum knows every layer it reads, so sources gathered
    before the models' first call are still their weights once that call builds them.
    """

    def __init__(self, owner, read, parts: tuple = ()) -> None:
        self._parts = parts or ((owner, read),)  # (layer, how to read its weights), or (a list, None)
        super().__init__(self.current())
        self.owner = owner

    def current(self) -> list:
        found = []
        for owner, read in self._parts:
            found.extend(owner if read is None else read(owner))
        return found

    def owners(self) -> list:
        return [owner for owner, read in self._parts if read is not None]

    def __add__(self, other):
        if isinstance(other, LiveWeights):
            return LiveWeights(self.owner, None, self._parts + other._parts)
        if isinstance(other, (list, tuple)):
            return LiveWeights(self.owner, None, self._parts + ((list(other), None),))
        return NotImplemented

    def __radd__(self, other):
        if isinstance(other, (list, tuple)):
            return LiveWeights(None, None, ((list(other), None),) + self._parts)
        return NotImplemented

    # In place (`variables += decoder.trainable_variables`, `.extend`, `.append`): still live.
    def __iadd__(self, other):
        self.extend(other)
        return self

    def extend(self, other) -> None:
        parts = other._parts if isinstance(other, LiveWeights) else ((list(other), None),)
        self._parts = self._parts + parts
        super().extend(other)

    def append(self, item) -> None:
        self._parts = self._parts + (([item], None),)
        super().append(item)


def _unbuilt(weights) -> bool:
    owners = weights.owners() if isinstance(weights, LiveWeights) else ()
    return any(not getattr(owner, "built", True) for owner in owners)


def _refresh(weights) -> None:
    """A :class:`LiveWeights` read before its layers built holds their weights once they have:
    the program's own name for it (``vars = model.trainable_variables`` before the first step,
    then ``apply_gradients(zip(grads, vars))``) sees what TF's list holds after the first call."""
    if isinstance(weights, LiveWeights):
        weights[:] = weights.current()


def value_and_grad(fn, grad_position=None, weights=None, has_aux=False):
    """``mindspore.value_and_grad(fn, grad_position, weights, has_aux)`` that accepts a
    :class:`LiveWeights` view of layers not built yet (see the module docstring).

    Weights given as a list (``tape.gradient(loss, [self.w, self.b])``) give their
    gradients as a list, as TF's ``tape.gradient`` does. A source that is not a trainable
    variable (a constant, a ``Variable(trainable=False)``) is one TF's tape does not watch:
    its gradient is ``None``, as TF gives it.
    """
    import mindspore as ms

    def run(*args):
        if weights is not None and _unbuilt(weights):
            with building():
                fn(*args)
            _refresh(weights)
        params = weights.current() if isinstance(weights, LiveWeights) else weights
        if isinstance(params, (list, tuple)) and grad_position is None:
            watched = [i for i, p in enumerate(params) if isinstance(p, ms.Parameter) and p.requires_grad]
            if len(watched) < len(params):
                return _watched_only(fn, params, watched, has_aux, args, as_list=isinstance(weights, list))
        positions = tuple(grad_position) if isinstance(grad_position, list) else grad_position
        with reset_on_error():
            value, grads = ms.value_and_grad(fn, positions, params, has_aux=has_aux)(*args)
        if isinstance(grad_position, list) and isinstance(grads, tuple):
            grads = list(grads)  # `tape.gradient(loss, [x, y])` of watched tensors: a list, as TF's
        if isinstance(weights, list) and isinstance(grads, tuple):
            grads = list(grads)
        return value, grads

    return run


def _watched_only(fn, params, watched: list, has_aux: bool, args, as_list: bool):
    """The value and gradients when only ``params[i]`` for ``i`` in ``watched`` are variables TF's
    tape watches: the others' gradients are None."""
    import mindspore as ms

    if watched:
        with reset_on_error():
            value, found = ms.value_and_grad(fn, None, [params[i] for i in watched], has_aux=has_aux)(*args)
    else:
        value, found = fn(*args), ()
    grads = [None] * len(params)
    for i, grad in zip(watched, found):
        grads[i] = grad
    return value, grads if as_list else tuple(grads)


def value_and_grads(fn, sources, targets=None, has_aux=False):
    """Several gradients of one forward pass: TF's two tapes in one ``with`` (a GAN's
    generator and discriminator), or a persistent tape asked several times.

    ``fn`` returns its targets first (then, with ``has_aux``, what the code after the tape
    reads); ``sources[i]`` is the ``i``-th ``tape.gradient``'s sources and ``targets[i]``
    the position of its target among ``fn``'s outputs (by default ``i``). The call returns
    ``fn``'s outputs (its one target alone when that is all it returns) and one gradient per
    source, each as ``value_and_grad`` gives it (a list for a list of weights, ``None`` for
    a source TF's tape does not watch).

    MindSpore differentiates a function, once per target: gradients of one target are taken
    in one pass (its sources together); each further target runs ``fn`` again, with every
    random draw the first pass made handed back to it and stateful layers still (moving
    statistics, metrics), so it computes what the first pass did (``migrate.runtime.draws``).
    Python side effects of ``fn`` itself happen once per target.
    """
    from .. import draws

    order = list(range(len(sources))) if targets is None else [int(t) for t in targets]
    if len(order) != len(sources) or not order:
        raise ValueError(f"value_and_grads: {len(sources)} sources for {len(order)} targets")
    groups: dict[int, list[int]] = {}
    for i, target in enumerate(order):
        groups.setdefault(target, []).append(i)
    outputs = max(order) + 1

    def run(*args):
        if any(_unbuilt(w) for w in sources):
            with building():
                fn(*args)
            for each in sources:
                _refresh(each)
        value, grads = None, [None] * len(sources)
        with (draws.recorded() if len(groups) > 1 else contextlib.nullcontext()) as made:
            for n, (target, positions) in enumerate(groups.items()):
                def pick(*a, target=target):
                    out = fn(*a)
                    out = out if isinstance(out, tuple) else (out,)
                    return out[target], out

                params, shapes = [], []
                for i in positions:
                    current = sources[i].current() if isinstance(sources[i], LiveWeights) else sources[i]
                    single = not isinstance(current, (list, tuple))
                    items = [current] if single else list(current)
                    shapes.append((i, len(items), single, isinstance(sources[i], list)))
                    params.extend(items)
                with made.replayed() if n else contextlib.nullcontext(), building() if n else contextlib.nullcontext():
                    (_, out), found = value_and_grad(pick, None, params, has_aux=True)(*args)
                if n == 0:
                    value = out
                at = 0
                for i, count, single, as_list in shapes:
                    piece = found[at:at + count]
                    at += count
                    grads[i] = piece[0] if single else list(piece) if as_list else tuple(piece)
        if len(value) < outputs:
            raise ValueError(f"value_and_grads: the function returns {len(value)} outputs, not the {outputs} targets")
        return (value if has_aux or outputs > 1 else value[0]), tuple(grads)

    return run
