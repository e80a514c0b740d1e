"""RMSprop with Keras 3's update (epsilon 1e-7 added inside the square root)."""

from __future__ import annotations

from .base import Optimizer, _ops


class RMSprop(Optimizer):
    """`tf.keras.optimizers.RMSprop`: learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False.

    v = rho * v + (1 - rho) * g**2; (centered: a = rho * a + (1 - rho) * g; denominator
    v - a**2 + eps, else v + eps); increment = lr * g / sqrt(denominator); with momentum
    m = momentum * m + increment, var -= m; else var -= increment.
    """

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None, gradient_accumulation_steps=None, name=None,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor, gradient_accumulation_steps=gradient_accumulation_steps,
                         name=name, **kwargs)
        self.rho, self.momentum, self.epsilon, self.centered = rho, momentum, epsilon, centered
        self._velocities: list = []
        self._momentums: list = []
        self._average_gradients: list = []

    def _build_slots(self, variables):
        self._velocities.extend(self.add_optimizer_variables(variables, "velocity"))
        if self.momentum > 0:
            self._momentums.extend(self.add_optimizer_variables(variables, "momentum"))
        if self.centered:
            self._average_gradients.extend(self.add_optimizer_variables(variables, "average_gradient"))

    def update_step(self, gradient, variable, learning_rate):
        ops = _ops()
        index = self._get_variable_index(variable)
        velocity = self._velocities[index]
        rho = self.rho
        ops.assign(velocity, rho * velocity + (1 - rho) * ops.square(gradient))
        if self.centered:
            average = self._average_gradients[index]
            ops.assign(average, rho * average + (1 - rho) * gradient)
            denominator = velocity - ops.square(average) + self.epsilon
        else:
            denominator = velocity + self.epsilon
        increment = (learning_rate * gradient) / ops.sqrt(denominator)
        if self.momentum > 0:
            momentum = self._momentums[index]
            ops.assign(momentum, self.momentum * momentum + increment)
            ops.assign_sub(variable, momentum * 1.0)
        else:
            ops.assign_sub(variable, increment)

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon,
                "centered": self.centered}
