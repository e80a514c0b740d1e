"""Keras's recurrent layers: SimpleRNN, GRU and LSTM, with Keras 3's weights, gates and options.

Each keeps Keras's weight layout, so `get_weights`/`set_weights` and checkpoints line up
with Keras's: `kernel` `(input_dim, k * units)`, `recurrent_kernel` `(units, k * units)`
and `bias`, the gates in Keras's order (LSTM: input, forget, cell, output; GRU: update,
reset, candidate, with `reset_after=True` by default and then a `(2, 3 * units)` bias).
A step is Keras's cell formula on MindSpore ops, run over the time axis in Python
(MindSpore's `nn.LSTM`/`nn.GRU` keep other layouts and gate orders, and its GRU is the
`reset_after` variant only); gradients flow through every step. `return_sequences`,
`return_state`, `go_backwards` and `initial_state` behave as in Keras; `unit_forget_bias`
starts the forget gate's bias at one. A mask (from `Masking`, `Embedding(mask_zero=True)` or
passed) skips steps as Keras's loop does: a masked step keeps the states and repeats the
last output (zeros with `zero_output_for_mask`). `Bidirectional` runs a layer both ways.
Dropout on the inputs or the recurrent state and `stateful` are not provided and are
refused when asked for.
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
                 zero_output_for_mask=False, **kwargs):
        kwargs.pop("use_cudnn", None)  # a kernel choice of TF's; the formula is the same
        super().__init__(**kwargs)
        self.zero_output_for_mask = bool(zero_output_for_mask)
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

    supports_masking = True

    def compute_mask(self, inputs, previous_mask=None):
        """Keras's: the sequence keeps its mask when the layer returns sequences; its states have none."""
        mask = previous_mask[0] if isinstance(previous_mask, (list, tuple)) else previous_mask
        output_mask = mask if self.return_sequences else None
        return [output_mask] + [None] * self._state_count if self.return_state else output_mask

    def call(self, inputs, mask=None, training=None, initial_state=None):
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
        if mask is not None:  # Keras's masked loop: a masked step keeps the states, its output is the last one's
            import mindspore as ms  # (or zeros, with `zero_output_for_mask`)

            mask = (mask if isinstance(mask, ms.Tensor) else ms.Tensor(np.asarray(mask))).astype(ms.bool_)
            previous = ops.zeros((batch, self.units), x.dtype)
        outputs = []
        for t in order:
            output, new_states = self._step(projected[:, t], states)
            if mask is not None:
                kept = mask[:, t].reshape(batch, 1)
                output = ops.where(kept, output, ops.zeros_like(output) if self.zero_output_for_mask else previous)
                new_states = [ops.where(kept, new, old) for new, old in zip(new_states, states)]
                previous = output
            states = new_states
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


def _copy(layer, **changes):
    """A new layer of `layer`'s class and configuration, with `changes` (Keras's serialize/deserialize round trip)."""
    config = layer.get_config()
    config.update(changes)
    return type(layer).from_config(config)


class Bidirectional(Layer):
    """Keras's `Bidirectional`: a copy of `layer` reads the sequence forwards, another (or `backward_layer`)
    backwards, and their outputs are merged (`concat`, `sum`, `ave`, `mul`, or kept apart with None);
    the backward sequence is flipped back to forward order first. The forward copy's weights come
    first, as in Keras (`get_weights`, checkpoints)."""

    supports_masking = True

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `Bidirectional` layer with a `keras.layers.Layer` instance. "
                             f"Received: {layer}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError(f"`backward_layer` need to be a `keras.layers.Layer` instance. Received: {backward_layer}")
        if merge_mode not in ["sum", "mul", "ave", "concat", None]:
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should be one of "
                             '{"sum", "mul", "ave", "concat", None}')
        super().__init__(**kwargs)
        name = layer.name
        self.forward_layer = _copy(layer, name=f"forward_{name[len('forward_'):] if name.startswith('forward_') else name}")
        if backward_layer is None:
            backward_name = name[len("backward_"):] if name.startswith("backward_") else name
            self.backward_layer = _copy(layer, go_backwards=True, name=f"backward_{backward_name}")
        else:
            self.backward_layer = backward_layer
        if self.forward_layer.go_backwards == self.backward_layer.go_backwards:
            raise ValueError("Forward layer and backward layer should have different `go_backwards` value. Received: "
                             f"forward_layer.go_backwards {self.forward_layer.go_backwards}, "
                             f"backward_layer.go_backwards={self.backward_layer.go_backwards}")
        for attribute in ("return_sequences", "return_state"):
            forward, backward = getattr(self.forward_layer, attribute), getattr(self.backward_layer, attribute)
            if forward != backward:
                raise ValueError(f'Forward layer and backward layer are expected to have the same value for attribute '
                                 f'"{attribute}", got "{forward}" for forward layer and "{backward}" for backward layer')
        for inner in (self.forward_layer, self.backward_layer):  # (Keras forces it: masked steps read as zeros)
            inner.zero_output_for_mask = inner.return_sequences
        self.merge_mode = merge_mode
        self.return_sequences = self.forward_layer.return_sequences
        self.return_state = self.forward_layer.return_state
        self._initial_weights = list(weights) if weights else None

    def build(self, input_shape):
        for inner in (self.forward_layer, self.backward_layer):
            if not inner.built:
                inner.build(input_shape)
                inner.built = True
        if self._initial_weights is not None:
            half = len(self._initial_weights) // 2
            self.forward_layer.set_weights(self._initial_weights[:half])
            self.backward_layer.set_weights(self._initial_weights[half:])
            self._initial_weights = None
        self.built = True

    def call(self, sequences, initial_state=None, mask=None, training=None):
        ops = _ops()
        extra = {} if mask is None else {"mask": mask}
        forward_state = backward_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            forward_state, backward_state = list(initial_state[:half]), list(initial_state[half:])
        y = self.forward_layer(sequences, initial_state=forward_state, **extra)
        y_rev = self.backward_layer(sequences, initial_state=backward_state, **extra)
        states = ()
        if self.return_state:
            states = tuple(y[1:]) + tuple(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = ops.flip(y_rev, (1,))
        if self.merge_mode == "concat":
            output = ops.cat([y, y_rev], axis=-1)
        elif self.merge_mode == "sum":
            output = y + y_rev
        elif self.merge_mode == "ave":
            output = (y + y_rev) / 2
        elif self.merge_mode == "mul":
            output = y * y_rev
        else:
            output = (y, y_rev)
        if self.return_state:
            return (output + states) if self.merge_mode is None else (output,) + states
        return output

    def compute_mask(self, inputs, previous_mask=None):
        """Keras's: the sequence's mask when sequences are returned (one per direction without a merge)."""
        mask = previous_mask[0] if isinstance(previous_mask, (list, tuple)) else previous_mask
        if self.return_sequences:
            output_mask = (mask, mask) if not self.merge_mode else mask
        else:
            output_mask = (None, None) if not self.merge_mode else None
        if self.return_state:
            count = self.forward_layer._state_count * 2
            return list(output_mask if isinstance(output_mask, tuple) else (output_mask,)) + [None] * count
        return output_mask
