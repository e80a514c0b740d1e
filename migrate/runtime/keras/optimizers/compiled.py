"""An optimizer's update of all its variables as one compiled MindSpore graph.

Run eagerly, a Keras update dispatches a few operations per variable, each a separate
PyNative launch: on the training benchmark's MLP (6 variables) SGD's update took 12-17 ms of
a 40-60 ms step, where ``nn.Momentum`` (whose ``construct`` MindSpore compiles) takes about
2 ms for the same kernels. An :class:`Update` is a Cell that holds the variables and their
slots and runs the optimizer's per-variable update for every variable in ``construct``,
compiled once (``jit(backend="ms_backend")``, as ``nn.Optimizer`` is) and launched once per
step. Gradients arrive as a ``mutable`` tuple, so new gradient values do not recompile.

What keeps the numbers: ``construct`` calls the same kernels on the same float32 operands
in the same order as the eager update (``tests/runtime/keras/test_compiled_updates.py``
compares the two bit for bit, and the Keras equivalence tests compare with TF). The
per-step scalars the eager update computes on the host (a schedule's rate, Adam's bias
correction) are computed the same way and passed in as tensors.

What a compiled graph does not see: it keeps the device memory each Parameter had when it
was compiled. ``ops.assign`` writes into that memory, but ``Parameter.set_data`` (restoring
a checkpoint, ``set_weights``, setting a new learning rate) gives the Parameter new memory.
So a cell is keyed by its Parameters' identities *and* their ``data_ptr()``: after a
``set_data`` the next step builds a new cell (one compilation) and nothing stale is updated.

Only the shim's own optimizer classes take this path (a subclass with its own
``update_step`` is run eagerly), with float32 variables; ``MIGRATE_SHIM_COMPILE=0`` turns it
off as it turns off the compiled forward pass.
"""

from __future__ import annotations

import functools
import os

MAX_CELLS = 8  # cached update cells per optimizer (a GAN's two models are two)


@functools.lru_cache(maxsize=None)
def _cell_base():
    """The Update class, made on first use (MindSpore is imported only when a step runs)."""
    import mindspore as ms
    from mindspore import nn, ops
    from mindspore.graph.api import jit

    class Update(nn.Cell):
        """Every variable's update of one step; subclasses define `step(index, grad, lr, extra)`.

        `slots_per_variable` slot Parameters follow each variable in `slots`, in the order the
        optimizer lists its slot kinds. `rate` is the optimizer's fixed learning-rate
        Parameter (a schedule's rate is passed to each call instead).
        """

        slots_per_variable = 0

        def __init__(self, variables, slots, rate=None):
            super().__init__(auto_prefix=False)
            self.variables = ms.ParameterTuple(variables)
            self.slots = ms.ParameterTuple(slots) if slots else ()
            self.count = len(variables)
            self.has_rate = rate is not None
            if rate is not None:
                self.rate = rate

        @jit(backend="ms_backend")
        def construct(self, grads, lr=None, extra=None):
            if self.has_rate:
                lr = self.rate
            done = True
            for index in range(self.count):
                done = ops.depend(done, self.step(index, grads[index], lr, extra))
            return done

        def slot(self, index, kind):
            return self.slots[index * self.slots_per_variable + kind]

    return Update


def enabled() -> bool:
    return os.environ.get("MIGRATE_SHIM_COMPILE", "1") != "0"


def compiled_update(optimizer, make_cell, grads, variables, slots_per_variable: list, learning_rate,
                    extra=None) -> bool:
    """Run `optimizer`'s update of `variables` by `grads` through a cached compiled cell; False when it cannot.

    `make_cell(variables, slots, rate)` builds the optimizer's Update subclass; `slots_per_variable`
    lists each variable's slot Parameters. `learning_rate` is the optimizer's fixed-rate Parameter
    (held by the cell) or this step's rate tensor (passed in); `extra()` gives a tensor of per-step
    values, asked for only when the cell runs (the eager fallback computes its own).
    """
    import mindspore as ms

    if not enabled() or any(v.dtype != ms.float32 for v in variables):
        return False
    if any(g.dtype != ms.float32 or tuple(g.shape) != tuple(v.shape) for g, v in zip(grads, variables)):
        return False
    fixed = isinstance(learning_rate, ms.Parameter)
    slots = [slot for per_variable in slots_per_variable for slot in per_variable]
    held = list(variables) + slots + ([learning_rate] if fixed else [])
    key = tuple((id(p), p.data_ptr()) for p in held)
    cells = optimizer.__dict__.setdefault("_compiled_cells", {})
    cell = cells.get(key)
    if cell is None:
        if len(cells) >= MAX_CELLS:
            cells.clear()
        cell = cells[key] = make_cell(list(variables), slots, learning_rate if fixed else None)
    cell(ms.mutable(tuple(grads)), None if fixed else learning_rate, None if extra is None else extra())
    return True
