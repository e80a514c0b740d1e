"""Nadam with Keras 3's update rule (Adam with Nesterov momentum, Dozat's momentum schedule)."""

from __future__ import annotations

import numpy as np

from .base import Optimizer, _ops, _scalar

f32 = np.float32


class Nadam(Optimizer):
    """`tf.keras.optimizers.Nadam`: learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7.

    At step t = iterations + 1, with u_k = beta_1 * (1 - 0.5 * 0.96**k) and
    u_product = u_1 * ... * u_t (float32, in order, as Keras keeps it):
    m += (g - m) * (1 - beta_1); v += (g**2 - v) * (1 - beta_2);
    m_hat = u_{t+1} * m / (1 - u_product * u_{t+1}) + (1 - u_t) * g / (1 - u_product);
    v_hat = v / (1 - beta_2**t); var -= lr * m_hat / (sqrt(v_hat) + epsilon).
    u_product is a function of t alone, so it is recomputed from `iterations` (a restored
    optimizer continues with Keras's value).
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None, gradient_accumulation_steps=None,
                 name=None, **kwargs):
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor, gradient_accumulation_steps=gradient_accumulation_steps,
                         name=name, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self._momentums: list = []
        self._velocities: list = []
        self._products: list = [f32(1.0)]  # u_product after 0, 1, 2, ... steps

    def _build_slots(self, variables):
        momentums, velocities = self.add_optimizer_variables(variables, ["momentum", "velocity"])
        self._momentums.extend(momentums)
        self._velocities.extend(velocities)

    def _u(self, k) -> np.float32:
        return f32(self.beta_1) * (f32(1.0) - f32(0.5) * np.power(f32(0.96), f32(k)))

    def _scalars(self):
        """This step's (u_t, u_{t+1}, u_product, 1 - beta_2**t), from one read of `iterations`."""
        t = int(self._iterations.asnumpy()) + 1
        while len(self._products) <= t:  # (multiplied in Keras's order: product * beta_1 * (1 - 0.5 * 0.96**k))
            k = f32(len(self._products))
            self._products.append(f32(f32(self._products[-1] * f32(self.beta_1))
                                      * (f32(1.0) - f32(0.5) * np.power(f32(0.96), k))))
        return self._u(t), self._u(t + 1), self._products[t], f32(1) - np.power(f32(self.beta_2), f32(t))

    def _per_step(self, learning_rate):
        return self._scalars()

    def update_step(self, gradient, variable, learning_rate):
        ops = _ops()
        index = self._get_variable_index(variable)
        u_t, u_next, product, beta_2_correction = self._step(learning_rate)
        m, v = self._momentums[index], self._velocities[index]
        ops.assign_add(m, (gradient - m) * (1 - self.beta_1))
        ops.assign_add(v, (ops.square(gradient) - v) * (1 - self.beta_2))
        m_hat = m * _scalar(u_next / (f32(1) - product * u_next)) + gradient * _scalar((f32(1) - u_t) / (f32(1) - product))
        v_hat = v / _scalar(beta_2_correction)
        ops.assign_sub(variable, (m_hat * learning_rate) / (ops.sqrt(v_hat) + self.epsilon))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}
