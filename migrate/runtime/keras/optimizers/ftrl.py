"""Ftrl with Keras 3's update (FTRL-Proximal with online and shrinkage-type L2 and beta).

Run eagerly, variable by variable, as Adagrad and the other adaptive optimizers here are (only
SGD and Adam have a compiled update, `compiled`).
"""

from __future__ import annotations

from .adaptive import _Adaptive
from .base import _ops


class Ftrl(_Adaptive):
    """`tf.keras.optimizers.Ftrl`: learning_rate=0.001, learning_rate_power=-0.5, initial_accumulator_value=0.1,
    l1_regularization_strength=0.0, l2_regularization_strength=0.0, l2_shrinkage_regularization_strength=0.0,
    beta=0.0.

    With p = -learning_rate_power, l2 = l2_regularization_strength + beta / (2 lr):
    n_new = n + g**2; linear += g + 2 * l2_shrinkage * var - (n_new**p - n**p) / lr * var;
    var = (clip(linear, -l1, l1) - linear) / (n_new**p / lr + 2 * l2); n = n_new.

    Every element is updated every step, as Keras 3 does: a row an embedding lookup gave no
    gradient still has its weight recomputed from `linear` (TF 2.10's sparse kernel, Keras 2's
    `legacy.Ftrl`, skips it).
    """

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0, **kwargs):
        super().__init__(learning_rate, **kwargs)
        if initial_accumulator_value < 0.0:
            raise ValueError("`initial_accumulator_value` needs to be positive or zero. Received: "
                             f"initial_accumulator_value={initial_accumulator_value}.")
        if learning_rate_power > 0.0:
            raise ValueError("`learning_rate_power` needs to be negative or zero. Received: "
                             f"learning_rate_power={learning_rate_power}.")
        for name, value in (("l1_regularization_strength", l1_regularization_strength),
                            ("l2_regularization_strength", l2_regularization_strength),
                            ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength)):
            if value < 0.0:
                raise ValueError(f"`{name}` needs to be positive or zero. Received: {name}={value}.")
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta
        self._accumulators: list = []
        self._linears: list = []

    def _build_slots(self, variables):
        from .. import initializers

        accumulators, linears = self.add_optimizer_variables(
            variables, ["accumulator", "linear"], [initializers.Constant(self.initial_accumulator_value), "zeros"])
        self._accumulators.extend(accumulators)
        self._linears.extend(linears)

    def update_step(self, gradient, variable, learning_rate):
        # Keras's operations in Keras's order, each rounded to float32 where TF rounds it
        ops = _ops()
        index = self._get_variable_index(variable)
        accum, linear = self._accumulators[index], self._linears[index]
        power = -self.learning_rate_power
        l2_reg = self.l2_regularization_strength + self.beta / (2.0 * learning_rate)
        grad_to_use = gradient + (2 * self.l2_shrinkage_regularization_strength) * variable
        new_accum = accum + ops.square(gradient)
        new_accum_power = ops.pow(new_accum, power)
        ops.assign_add(linear, grad_to_use - ((new_accum_power - ops.pow(accum, power)) / learning_rate) * variable)
        quadratic = new_accum_power / learning_rate + 2 * l2_reg
        l1 = self.l1_regularization_strength
        clipped = ops.clamp(linear, -l1, l1)
        ops.assign(variable, (clipped - linear) / quadratic)
        ops.assign(accum, new_accum)

    def get_config(self):
        return {**super().get_config(), "learning_rate_power": self.learning_rate_power,
                "initial_accumulator_value": self.initial_accumulator_value,
                "l1_regularization_strength": self.l1_regularization_strength,
                "l2_regularization_strength": self.l2_regularization_strength,
                "l2_shrinkage_regularization_strength": self.l2_shrinkage_regularization_strength,
                "beta": self.beta}
