"""Adam and AdamW with Keras 3's update rules (epsilon 1e-7; MindSpore's nn.Adam uses 1e-8)."""

from __future__ import annotations

import functools

import numpy as np

from .base import Optimizer, _ops, _scalar
from .compiled import _cell_base, compiled_update

f32 = np.float32


class Adam(Optimizer):
    """`tf.keras.optimizers.Adam`: learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False.

    Per step t = iterations + 1: alpha = lr * sqrt(1 - beta_2**t) / (1 - beta_1**t);
    m += (g - m) * (1 - beta_1); v += (g**2 - v) * (1 - beta_2); (amsgrad: v_hat = max(v_hat, v));
    var -= m * alpha / (sqrt(v) + epsilon). Epsilon is added to sqrt(v) ("epsilon hat").
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor, gradient_accumulation_steps=gradient_accumulation_steps,
                         name=name, **kwargs)
        self.beta_1, self.beta_2, self.epsilon, self.amsgrad = beta_1, beta_2, epsilon, amsgrad
        self._momentums: list = []
        self._velocities: list = []
        self._velocity_hats: list = []

    def _build_slots(self, variables):
        momentums, velocities = self.add_optimizer_variables(variables, ["momentum", "velocity"])
        self._momentums.extend(momentums)
        self._velocities.extend(velocities)
        if self.amsgrad:
            self._velocity_hats.extend(self.add_optimizer_variables(variables, "velocity_hat"))

    def _alpha(self, learning_rate):
        """``lr * sqrt(1 - beta_2**t) / (1 - beta_1**t)`` at step ``t = iterations + 1`` (one read of `iterations`)."""
        local_step = f32(int(self._iterations.asnumpy()) + 1)
        beta_1_power = np.power(f32(self.beta_1), local_step)
        beta_2_power = np.power(f32(self.beta_2), local_step)
        return learning_rate * _scalar(np.sqrt(f32(1) - beta_2_power)) / _scalar(f32(1) - beta_1_power)

    def _per_step(self, learning_rate):
        return self._alpha(learning_rate)  # the bias corrections, shared by every variable

    def _update_variables(self, grads, variables, learning_rate) -> None:
        """Every variable's update in one compiled graph (see `compiled`), else one by one."""
        if type(self).update_step is Adam.update_step:
            slots = []
            for variable in variables:
                index = self._get_variable_index(variable)
                slots.append([self._momentums[index], self._velocities[index]]
                             + ([self._velocity_hats[index]] if self.amsgrad else []))
            if compiled_update(self, self._make_cell, grads, variables, slots, None,
                               extra=lambda: self._alpha(learning_rate)):
                return
        super()._update_variables(grads, variables, learning_rate)

    def _make_cell(self, variables, slots, rate):
        return _adam_cell()(variables, slots, self.beta_1, self.beta_2, self.epsilon, self.amsgrad)

    def update_step(self, gradient, variable, learning_rate):
        ops = _ops()
        index = self._get_variable_index(variable)
        alpha = self._step(learning_rate)
        m = self._momentums[index]
        v = self._velocities[index]
        ops.assign_add(m, (gradient - m) * (1 - self.beta_1))
        ops.assign_add(v, (ops.square(gradient) - v) * (1 - self.beta_2))
        if self.amsgrad:
            v_hat = self._velocity_hats[index]
            ops.assign(v_hat, ops.maximum(v_hat, v))
            v = v_hat
        ops.assign_sub(variable, (m * alpha) / (ops.sqrt(v) + self.epsilon))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
                "amsgrad": self.amsgrad}


class AdamW(Adam):
    """Adam with decoupled weight decay (default 0.004): var -= var * weight_decay * lr before the Adam step."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        if weight_decay is None:
            raise ValueError("Argument `weight_decay` must be a float. Received: weight_decay=None")
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
                         amsgrad=amsgrad, weight_decay=weight_decay, clipnorm=clipnorm, clipvalue=clipvalue,
                         global_clipnorm=global_clipnorm, use_ema=use_ema, ema_momentum=ema_momentum,
                         ema_overwrite_frequency=ema_overwrite_frequency, loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, name=name, **kwargs)


@functools.lru_cache(maxsize=None)
def _adam_cell():
    """Adam's compiled update: `update_step`'s operations, with this step's `alpha` passed in."""
    from mindspore import ops

    class AdamUpdate(_cell_base()):
        def __init__(self, variables, slots, beta_1, beta_2, epsilon, amsgrad):
            super().__init__(variables, slots)
            self.slots_per_variable = 3 if amsgrad else 2
            # `1 - beta` in Python (double), as the eager update computes it: written in
            # `step`, MindSpore would fold it in float32 (0.100000024 for 1 - 0.9, not 0.1)
            self.one_minus_beta_1, self.one_minus_beta_2 = 1 - beta_1, 1 - beta_2
            self.epsilon, self.amsgrad = epsilon, amsgrad

        def step(self, index, gradient, learning_rate, alpha):
            m = self.slot(index, 0)
            v = self.slot(index, 1)
            ops.assign_add(m, (gradient - m) * self.one_minus_beta_1)
            ops.assign_add(v, (ops.square(gradient) - v) * self.one_minus_beta_2)
            if self.amsgrad:
                v_hat = self.slot(index, 2)
                ops.assign(v_hat, ops.maximum(v_hat, v))
                v = v_hat
            return ops.assign_sub(self.variables[index], (m * alpha) / (ops.sqrt(v) + self.epsilon))

    return AdamUpdate
