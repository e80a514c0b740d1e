"""Keras's recurrent layers: SimpleRNN, GRU and LSTM, with Keras 3's weights, gates and options.

Each keeps Keras's weight layout, so `get_weights`/`set_weights` and checkpoints line up
with Keras's: `kernel` `(input_dim, k * units)`, `recurrent_kernel` `(units, k * units)`
and `bias`, the gates in Keras's order (LSTM: input, forget, cell, output; GRU: update,
reset, candidate, with `reset_after=True` by default and then a `(2, 3 * units)` bias).
A step is Keras's cell formula on MindSpore ops, run over the time axis in Python
(MindSpore's `nn.LSTM`/`nn.GRU` keep other layouts and gate orders, and its GRU is the
`reset_after` variant only); gradients flow through every step. `return_sequences`,
`return_state`, `go_backwards` and `initial_state` behave as in Keras; `unit_forget_bias`
starts the forget gate's bias at one. Dropout on the inputs or the recurrent state, masks
and `stateful` are not provided and are refused when asked for.
"""

from __future__ import annotations

import numpy as np

from .. import activations, initializers
from .base import Layer


def _ops():
    from mindspore import ops

    return ops


class _ForgetBiasOne(initializers.Initializer):
    """LSTM's `unit_forget_bias`: the bias initializer's values with the forget gate's set to one."""

    def __init__(self, base, units: int) -> None:
        self.base, self.units = base, units

    def __call__(self, shape, dtype=None):
        values = np.array(self.base((self.units * 4,), dtype=dtype))
        values[self.units:2 * self.units] = 1
        return values


class _RNN(Layer):
    gates = 1

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 return_sequences=False, return_state=False, go_backwards=False, stateful=False, unroll=False,
                 **kwargs):
        kwargs.pop("use_cudnn", None)  # a kernel choice of TF's; the formula is the same
        super().__init__(**kwargs)
        if dropout or recurrent_dropout:
            raise NotImplementedError(f"{type(self).__name__}: dropout and recurrent_dropout are not provided by "
                                      "migrate.runtime.keras (put a Dropout layer before the recurrent layer)")
        if stateful:
            raise NotImplementedError(f"{type(self).__name__}: stateful=True is not provided by migrate.runtime.keras")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer, self.recurrent_regularizer = kernel_regularizer, recurrent_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint, self.recurrent_constraint = kernel_constraint, recurrent_constraint
        self.bias_constraint = bias_constraint
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards = bool(go_backwards)
        if self._batch_input_shape is not None:
            self.build(self._batch_input_shape)

    # -- weights -------------------------------------------------------------------------------

    def _bias_shape(self) -> tuple:
        return (self.gates * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def build(self, input_shape):
        width = self.gates * self.units
        self.kernel = self.add_weight(name="kernel", shape=(int(input_shape[-1]), width),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(name="recurrent_kernel", shape=(self.units, width),
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        self.bias = self.add_weight(name="bias", shape=self._bias_shape(), initializer=self._bias_initializer(),
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.built = True

    # -- the loop ------------------------------------------------------------------------------

    def _zero_states(self, batch: int, like) -> list:
        return [_ops().zeros((batch, self.units), like.dtype) for _ in range(self._state_count)]

    _state_count = 1

    def call(self, inputs, mask=None, training=None, initial_state=None):
        if mask is not None:
            raise NotImplementedError(f"{type(self).__name__}: masks are not provided by migrate.runtime.keras")
        ops = _ops()
        x = inputs if inputs.dtype == self.kernel.dtype else inputs.astype(self.kernel.dtype)
        batch, steps = int(x.shape[0]), int(x.shape[1])
        if initial_state is None:
            states = self._zero_states(batch, x)
        else:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
            if len(states) != self._state_count:
                raise ValueError(f"{type(self).__name__} takes {self._state_count} initial state(s), got {len(states)}")
        # The input projection of every step at once (one matrix product), as Keras's fused kernels do.
        projected = ops.matmul(x.reshape(batch * steps, -1), self.kernel).reshape(batch, steps, -1)
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        outputs = []
        for t in order:
            output, states = self._step(projected[:, t], states)
            outputs.append(output)
        last = outputs[-1]
        result = ops.stack(outputs, axis=1) if self.return_sequences else last
        return [result, *states] if self.return_state else result

    def get_config(self):
        return {**super().get_config(), "units": self.units, "activation": activations.serialize(self.activation),
                "use_bias": self.use_bias, "return_sequences": self.return_sequences,
                "return_state": self.return_state, "go_backwards": self.go_backwards}


class SimpleRNN(_RNN):
    """`h = activation(x @ kernel + h @ recurrent_kernel + bias)`."""

    def _step(self, projected, states):
        z = projected + _ops().matmul(states[0], self.recurrent_kernel)
        if self.bias is not None:
            z = z + self.bias
        h = self.activation(z)
        return h, [h]


class _Gated(_RNN):
    """LSTM and GRU: gates squashed by `recurrent_activation` (sigmoid by default)."""

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", **kwargs):
        self.recurrent_activation = activations.get(recurrent_activation)
        super().__init__(units, activation=activation, **kwargs)

    def get_config(self):
        return {**super().get_config(), "recurrent_activation": activations.serialize(self.recurrent_activation)}


class LSTM(_Gated):
    """Keras's LSTM: gates input, forget, cell, output; `c = f * c + i * activation(z_c)`,
    `h = o * activation(c)`."""

    gates = 4
    _state_count = 2

    def __init__(self, units, unit_forget_bias=True, **kwargs):
        self.unit_forget_bias = bool(unit_forget_bias)
        super().__init__(units, **kwargs)

    def _bias_initializer(self):
        return _ForgetBiasOne(self.bias_initializer, self.units) if self.unit_forget_bias else self.bias_initializer

    def _step(self, projected, states):
        ops = _ops()
        h, c = states
        z = projected + ops.matmul(h, self.recurrent_kernel)
        if self.bias is not None:
            z = z + self.bias
        zi, zf, zc, zo = ops.split(z, self.units, axis=1)
        i, f, o = self.recurrent_activation(zi), self.recurrent_activation(zf), self.recurrent_activation(zo)
        c = f * c + i * self.activation(zc)
        h = o * self.activation(c)
        return h, [h, c]

    def get_config(self):
        return {**super().get_config(), "unit_forget_bias": self.unit_forget_bias}


class GRU(_Gated):
    """Keras's GRU: gates update, reset, candidate; `h = z * h + (1 - z) * candidate`. With
    `reset_after` (Keras's default) the reset gate multiplies the recurrent projection, which has
    its own bias (the second row of a `(2, 3 * units)` bias); without, it multiplies the state."""

    gates = 3

    def __init__(self, units, reset_after=True, **kwargs):
        self.reset_after = bool(reset_after)
        super().__init__(units, **kwargs)

    def _bias_shape(self) -> tuple:
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _step(self, projected, states):
        ops = _ops()
        (h,) = states
        u = self.units
        if self.bias is not None:
            projected = projected + (self.bias[0] if self.reset_after else self.bias)
        xz, xr, xh = ops.split(projected, u, axis=1)
        if self.reset_after:
            inner = ops.matmul(h, self.recurrent_kernel)
            if self.bias is not None:
                inner = inner + self.bias[1]
            rz, rr, rh = ops.split(inner, u, axis=1)
            z, r = self.recurrent_activation(xz + rz), self.recurrent_activation(xr + rr)
            candidate = self.activation(xh + r * rh)
        else:
            inner = ops.matmul(h, self.recurrent_kernel[:, :2 * u])
            rz, rr = ops.split(inner, u, axis=1)
            z, r = self.recurrent_activation(xz + rz), self.recurrent_activation(xr + rr)
            candidate = self.activation(xh + ops.matmul(r * h, self.recurrent_kernel[:, 2 * u:]))
        h = z * h + (1 - z) * candidate
        return h, [h]

    def get_config(self):
        return {**super().get_config(), "reset_after": self.reset_after}
