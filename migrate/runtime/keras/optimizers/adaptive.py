"""Adagrad, Adadelta and Adamax with Keras 3's update rules (epsilon 1e-7)."""

from __future__ import annotations

import numpy as np

from .base import Optimizer, _ops, _scalar

class _Adaptive(Optimizer):
    def __init__(self, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor, gradient_accumulation_steps=gradient_accumulation_steps,
                         name=name, **kwargs)


class Adagrad(_Adaptive):
    """`tf.keras.optimizers.Adagrad`: learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7.

    accumulator += g**2; var -= lr * g / sqrt(accumulator + epsilon).
    """

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.initial_accumulator_value, self.epsilon = initial_accumulator_value, epsilon
        self._accumulators: list = []

    def _build_slots(self, variables):
        from .. import initializers

        self._accumulators.extend(self.add_optimizer_variables(
            variables, "accumulator", initializers.Constant(self.initial_accumulator_value)))

    def update_step(self, gradient, variable, learning_rate):
        ops = _ops()
        accumulator = self._accumulators[self._get_variable_index(variable)]
        ops.assign_add(accumulator, ops.square(gradient))
        ops.assign_sub(variable, (learning_rate * gradient) / ops.sqrt(accumulator + self.epsilon))

    def get_config(self):
        return {**super().get_config(), "initial_accumulator_value": self.initial_accumulator_value,
                "epsilon": self.epsilon}


class Adadelta(_Adaptive):
    """`tf.keras.optimizers.Adadelta`: learning_rate=0.001, rho=0.95, epsilon=1e-7.

    a = rho * a + (1 - rho) * g**2; delta = -sqrt(d + eps) * g / sqrt(a + eps);
    d = rho * d + (1 - rho) * delta**2; var += lr * delta.
    """

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.rho, self.epsilon = rho, epsilon
        self._accumulated_grads: list = []
        self._accumulated_delta_vars: list = []

    def _build_slots(self, variables):
        grads, deltas = self.add_optimizer_variables(variables, ["accumulated_grad", "accumulated_delta_var"])
        self._accumulated_grads.extend(grads)
        self._accumulated_delta_vars.extend(deltas)

    def update_step(self, gradient, variable, learning_rate):
        ops = _ops()
        index = self._get_variable_index(variable)
        grads, deltas = self._accumulated_grads[index], self._accumulated_delta_vars[index]
        rho = self.rho
        ops.assign(grads, rho * grads + (1 - rho) * ops.square(gradient))
        delta = -(ops.sqrt(deltas + self.epsilon) * gradient) / ops.sqrt(grads + self.epsilon)
        ops.assign(deltas, rho * deltas + (1 - rho) * ops.square(delta))
        ops.assign_add(variable, learning_rate * delta)

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "epsilon": self.epsilon}


class Adamax(_Adaptive):
    """`tf.keras.optimizers.Adamax`: learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7.

    At step t = iterations + 1: m += (g - m) * (1 - beta_1); u = max(beta_2 * u, |g|);
    var -= lr * m / ((1 - beta_1**t) * (u + epsilon)).
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self._m: list = []
        self._u: list = []

    def _build_slots(self, variables):
        m, u = self.add_optimizer_variables(variables, ["momentum", "norm"])
        self._m.extend(m)
        self._u.extend(u)

    def _per_step(self, learning_rate):
        step = np.float32(int(self._iterations.asnumpy()) + 1)  # one read of `iterations` per step
        return _scalar(np.float32(1) - np.power(np.float32(self.beta_1), step))

    def update_step(self, gradient, variable, learning_rate):
        ops = _ops()
        index = self._get_variable_index(variable)
        m, u = self._m[index], self._u[index]
        ops.assign_add(m, (gradient - m) * (1 - self.beta_1))
        ops.assign(u, ops.maximum(self.beta_2 * u, ops.abs(gradient)))
        ops.assign_sub(variable, (learning_rate * m) / (self._step(learning_rate) * (u + self.epsilon)))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}
