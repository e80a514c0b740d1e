"""SGD with Keras 3's update (momentum kept as `m = momentum * m - lr * g`; var += m)."""

from __future__ import annotations

import functools

import numpy as np

from .base import Optimizer, _ops
from .compiled import _cell_base, compiled_update


class SGD(Optimizer):
    """`tf.keras.optimizers.SGD`: defaults learning_rate=0.01, momentum=0.0, nesterov=False.

    With momentum: m = m * momentum - g * lr; var += m (nesterov: var += m * momentum - g * lr).
    MindSpore's nn.SGD keeps v = momentum * v + g and subtracts lr * v instead, which differs
    when the learning rate changes during training.

    A step updates each variable with MindSpore's fused ``ApplyMomentum`` kernel, fed so that it
    computes Keras's formula operation for operation (see `_update_variables`).
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None, gradient_accumulation_steps=None, name=None,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor, gradient_accumulation_steps=gradient_accumulation_steps,
                         name=name, **kwargs)
        if not isinstance(momentum, (float, int)) or momentum < 0 or momentum > 1:
            raise ValueError("`momentum` must be a float between [0, 1].")
        self.momentum = float(momentum)
        self.nesterov = nesterov
        self.momentums: list = []

    def _build_slots(self, variables):
        if self.momentum != 0:
            self.momentums.extend(self.add_optimizer_variables(variables, "momentum"))

    def _update_variables(self, grads, variables, learning_rate) -> None:
        """Every variable's update in one compiled graph (see `compiled`); else eagerly, with momentum
        (not Nesterov) in one fused kernel per variable.

        ``ApplyMomentum(var, accum, lr, grad, momentum)`` computes ``accum = accum * momentum + grad;
        var -= lr * accum``. With ``grad = -(g * lr)`` and ``lr = -1`` that is ``m = m * momentum - g * lr;
        var += m``: Keras's update with the same roundings (negation and a factor of one are exact),
        in one kernel instead of six operations. Nesterov keeps `update_step`.
        """
        import mindspore as ms

        own_step = type(self).update_step is SGD.update_step  # else a subclass's update_step runs
        if own_step:
            slots = [[self.momentums[self._get_variable_index(v)]] if self.momentum != 0 else [] for v in variables]
            if compiled_update(self, self._make_cell, grads, variables, slots, learning_rate):
                return
        if self.momentum == 0 or self.nesterov or not own_step:
            super()._update_variables(grads, variables, learning_rate)
            return
        apply, minus_one, momentum = _fused_momentum(self.momentum)
        for grad, variable in zip(grads, variables):
            if variable.dtype != ms.float32:  # the kernel's scalars are float32
                self.update_step(grad, variable, learning_rate)
                continue
            apply(variable, self.momentums[self._get_variable_index(variable)], minus_one,
                  -(grad * learning_rate), momentum)

    def _make_cell(self, variables, slots, rate):
        return _sgd_cell()(variables, slots, rate, self.momentum, self.nesterov)

    def update_step(self, gradient, variable, learning_rate):
        ops = _ops()
        if self.momentum != 0:
            m = self.momentums[self._get_variable_index(variable)]
            ops.assign(m, m * self.momentum - gradient * learning_rate)
            if self.nesterov:
                ops.assign_add(variable, m * self.momentum - gradient * learning_rate)
            else:
                ops.assign_add(variable, m * 1.0)
        else:
            ops.assign_sub(variable, gradient * learning_rate)

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}


@functools.lru_cache(maxsize=None)
def _fused_momentum(momentum: float):
    """MindSpore's ApplyMomentum primitive, the constant -1 and ``momentum`` as float32 tensors (made once)."""
    import mindspore as ms
    from mindspore import ops

    return ops.ApplyMomentum(), ms.Tensor(np.float32(-1.0)), ms.Tensor(np.float32(momentum))


@functools.lru_cache(maxsize=None)
def _sgd_cell():
    """SGD's compiled update: `update_step`'s operations (momentum: `_update_variables`'s fused kernel)."""
    from mindspore import ops

    class SGDUpdate(_cell_base()):
        def __init__(self, variables, slots, rate, momentum, nesterov):
            super().__init__(variables, slots, rate)
            self.slots_per_variable = 1 if momentum != 0 else 0
            self.momentum = momentum
            self.nesterov = nesterov
            self.apply, self.minus_one, self.momentum_tensor = _fused_momentum(momentum)

        def step(self, index, gradient, learning_rate, extra):
            variable = self.variables[index]
            if self.momentum == 0:
                return ops.assign_sub(variable, gradient * learning_rate)
            m = self.slot(index, 0)
            if self.nesterov:
                ops.assign(m, m * self.momentum - gradient * learning_rate)
                return ops.assign_add(variable, m * self.momentum - gradient * learning_rate)
            return self.apply(variable, m, self.minus_one, -(gradient * learning_rate), self.momentum_tensor)

    return SGDUpdate
