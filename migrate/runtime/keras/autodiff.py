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


class LiveWeights(list):
    """A layer's weights: a plain list of Parameters (so MindSpore takes it anywhere a
    list of weights goes) that also knows its layer, so it can be read again after the
    layer builds."""

    def __init__(self, owner, read) -> None:
        super().__init__(read(owner))
        self.owner = owner
        self._read = read

    def current(self) -> list:
        return self._read(self.owner)


def _unbuilt(weights) -> bool:
    owner = getattr(weights, "owner", None)
    return owner is not None and not getattr(owner, "built", True)


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
        params = weights.current() if isinstance(weights, LiveWeights) else weights
        if isinstance(params, (list, tuple)) and grad_position is None:
            watched = [i for i, p in enumerate(params) if isinstance(p, ms.Parameter) and p.requires_grad]
            if len(watched) < len(params):
                return _watched_only(fn, params, watched, has_aux, args, as_list=isinstance(weights, list))
        positions = tuple(grad_position) if isinstance(grad_position, list) else grad_position
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
        value, found = ms.value_and_grad(fn, None, [params[i] for i in watched], has_aux=has_aux)(*args)
    else:
        value, found = fn(*args), ()
    grads = [None] * len(params)
    for i, grad in zip(watched, found):
        grads[i] = grad
    return value, grads if as_list else tuple(grads)
