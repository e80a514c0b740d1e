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
from .._tensors import _ms_dtype
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


def _zeros(batch: int, sizes, dtype) -> list:
    """Zero states `(batch, size)` for each of `sizes`, in `dtype`."""
    dtype = _ms_dtype(dtype)
    return [_ops().zeros((batch, size), dtype) for size in sizes]


def _training_kwargs(cell, training) -> dict:
    """`training=` for a call of `cell` when one is given and the cell's `call` takes it (as Keras passes it)."""
    return {"training": training} if training is not None and getattr(cell, "_call_takes_training", False) else {}


def _sequence_mask(layer, previous_mask, state_count: int):
    """Keras's mask of a recurrent layer's output: the sequence keeps its mask when the layer returns
    sequences; its states have none."""
    mask = previous_mask[0] if isinstance(previous_mask, (list, tuple)) else previous_mask
    output_mask = mask if layer.return_sequences else None
    return [output_mask] + [None] * state_count if layer.return_state else output_mask


def _tree_map2(fn, new, old):
    """`fn` over the matching tensors of two state structures (lists nest in a stack of cells)."""
    if isinstance(new, (list, tuple)):
        return [_tree_map2(fn, n, o) for n, o in zip(new, old)]
    return fn(new, old)


def _loop(step, steps: int, batch: int, states, mask, go_backwards: bool, zero_output_for_mask: bool):
    """Keras's recurrent loop (`backend.rnn`): `step(t, states) -> (output, states)` over the time
    axis, backwards with `go_backwards` (the outputs then in the order they are made). A masked step
    (`mask[:, t]` False) keeps the states and repeats the last output, or zeros with
    `zero_output_for_mask`. Returns the outputs and the last states."""
    ops = _ops()
    if mask is not None:
        import mindspore as ms

        mask = (mask if isinstance(mask, ms.Tensor) else ms.Tensor(np.asarray(mask))).astype(ms.bool_)
    previous = None
    outputs = []
    for t in (range(steps - 1, -1, -1) if go_backwards else range(steps)):
        output, new_states = step(t, states)
        if mask is not None:
            column = mask[:, t]

            def keep(new, old, column=column):
                return ops.where(column.reshape((batch,) + (1,) * (new.ndim - 1)), new, old)

            if previous is None:
                previous = ops.zeros_like(output)
            output = keep(output, ops.zeros_like(output) if zero_output_for_mask else previous)
            new_states = _tree_map2(keep, new_states, states)
            previous = output
        states = new_states
        outputs.append(output)
    return outputs, states


class _Recurrent(Layer):
    """The weights of a recurrent formula: `kernel` `(input_dim, gates * units)`, `recurrent_kernel`
    `(units, gates * units)` and `bias`, shared by the sequence layers and the cells."""

    gates = 1
    _state_count = 1

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 **kwargs):
        super().__init__(**kwargs)
        if dropout or recurrent_dropout:
            raise NotImplementedError(f"{type(self).__name__}: dropout and recurrent_dropout are not provided by "
                                      "migrate.runtime.keras (put a Dropout layer before the recurrent layer)")
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

    def _zero_states(self, batch: int, dtype) -> list:
        return _zeros(batch, [self.units] * self._state_count, dtype)

    def get_config(self):
        return {**super().get_config(), "units": self.units, "activation": activations.serialize(self.activation),
                "use_bias": self.use_bias}


class _RNN(_Recurrent):
    """A sequence layer: the formula stepped over the time axis."""

    def __init__(self, units, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, zero_output_for_mask=False, **kwargs):
        kwargs.pop("use_cudnn", None)  # a kernel choice of TF's; the formula is the same
        super().__init__(units, **kwargs)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        if stateful:
            raise NotImplementedError(f"{type(self).__name__}: stateful=True is not provided by migrate.runtime.keras")
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards = bool(go_backwards)
        if self._batch_input_shape is not None:
            self.build(self._batch_input_shape)

    supports_masking = True

    def compute_mask(self, inputs, previous_mask=None):
        return _sequence_mask(self, previous_mask, self._state_count)

    def call(self, inputs, mask=None, training=None, initial_state=None):
        ops = _ops()
        x = inputs if inputs.dtype == self.kernel.dtype else inputs.astype(self.kernel.dtype)
        batch, steps = int(x.shape[0]), int(x.shape[1])
        if initial_state is None:
            states = self._zero_states(batch, x.dtype)
        else:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
            if len(states) != self._state_count:
                raise ValueError(f"{type(self).__name__} takes {self._state_count} initial state(s), got {len(states)}")
        # The input projection of every step at once (one matrix product), as Keras's fused kernels do.
        projected = ops.matmul(x.reshape(batch * steps, -1), self.kernel).reshape(batch, steps, -1)
        outputs, states = _loop(lambda t, states: self._step(projected[:, t], states), steps, batch, states, mask,
                                self.go_backwards, self.zero_output_for_mask)
        result = ops.stack(outputs, axis=1) if self.return_sequences else outputs[-1]
        return [result, *states] if self.return_state else result

    def get_config(self):
        return {**super().get_config(), "return_sequences": self.return_sequences,
                "return_state": self.return_state, "go_backwards": self.go_backwards}


class _Cell(_Recurrent):
    """A cell: one step, `call(inputs, states) -> (output, new_states)`, for `RNN` or a loop of the
    program's own (Keras's `SimpleRNNCell`, `GRUCell`, `LSTMCell`)."""

    @property
    def state_size(self):
        return self.units if self._state_count == 1 else [self.units] * self._state_count

    @property
    def output_size(self):
        return self.units

    def get_initial_state(self, batch_size=None):
        return self._zero_states(int(batch_size), self.dtype_policy.compute_dtype)

    def call(self, inputs, states, training=None):
        as_list = isinstance(states, (list, tuple))
        states = list(states) if as_list else [states]
        if len(states) != self._state_count:
            raise ValueError(f"{type(self).__name__} takes {self._state_count} state(s), got {len(states)}")
        x = inputs if inputs.dtype == self.kernel.dtype else inputs.astype(self.kernel.dtype)
        output, new_states = self._step(_ops().matmul(x, self.kernel), states)
        if self._state_count == 1 and not as_list:  # (Keras: a state given bare comes back bare)
            return output, new_states[0]
        return output, new_states


class _SimpleStep:
    """`h = activation(x @ kernel + h @ recurrent_kernel + bias)`."""

    def _step(self, projected, states):
        z = projected + _ops().matmul(states[0], self.recurrent_kernel)
        if self.bias is not None:
            z = z + self.bias
        h = self.activation(z)
        return h, [h]


class _Gated:
    """LSTM and GRU: gates squashed by `recurrent_activation` (sigmoid by default)."""

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", **kwargs):
        self.recurrent_activation = activations.get(recurrent_activation)
        super().__init__(units, activation=activation, **kwargs)

    def get_config(self):
        return {**super().get_config(), "recurrent_activation": activations.serialize(self.recurrent_activation)}


class _LSTMStep(_Gated):
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


class _GRUStep(_Gated):
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


class SimpleRNN(_SimpleStep, _RNN):
    """Keras's SimpleRNN."""


class LSTM(_LSTMStep, _RNN):
    """Keras's LSTM."""


class GRU(_GRUStep, _RNN):
    """Keras's GRU."""


class SimpleRNNCell(_SimpleStep, _Cell):
    """Keras's SimpleRNNCell: one step of SimpleRNN."""


class LSTMCell(_LSTMStep, _Cell):
    """Keras's LSTMCell: one step of LSTM; its states are `[h, c]`."""


class GRUCell(_GRUStep, _Cell):
    """Keras's GRUCell: one step of GRU."""


def _state_sizes(cell) -> list:
    size = getattr(cell, "state_size", None)
    if isinstance(size, int):
        return [size]
    if isinstance(size, (list, tuple)):
        return list(size)
    raise ValueError("state_size must be an integer, or a list/tuple of integers (one for each state tensor).")


class StackedRNNCells(Layer):
    """Keras's `StackedRNNCells`: cells run one after the other in a step, each on the last one's
    output; the states are each cell's (a bare state for a cell with an integer `state_size`)."""

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        for cell in cells:
            if not hasattr(cell, "call"):
                raise ValueError(f"All cells must have a `call` method. Received cell without a `call` method: {cell}")
            if not hasattr(cell, "state_size"):
                raise ValueError(f"All cells must have a `state_size` attribute. Received cell without a "
                                 f"`state_size`: {cell}")
        self.cells = list(cells)

    @property
    def state_size(self):
        return [c.state_size for c in self.cells]

    @property
    def output_size(self):
        last = self.cells[-1]
        if getattr(last, "output_size", None) is not None:
            return last.output_size
        return _state_sizes(last)[0]

    def build(self, input_shape):
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                cell.build(input_shape)
                cell.built = True
            output = getattr(cell, "output_size", None)
            input_shape = (input_shape[0], output if output is not None else _state_sizes(cell)[0])
        self.built = True

    def get_initial_state(self, batch_size=None):
        states = []
        for cell in self.cells:
            if hasattr(cell, "get_initial_state"):
                initial = cell.get_initial_state(batch_size=batch_size)
                states.append(initial[0] if isinstance(cell.state_size, int) and isinstance(initial, list) else initial)
            else:
                zeros = _zeros(batch_size, _state_sizes(cell), self.dtype_policy.compute_dtype)
                states.append(zeros[0] if isinstance(cell.state_size, int) else zeros)
        return states

    def call(self, inputs, states, training=None):
        new_states = []
        for cell, state in zip(self.cells, states):
            as_list = isinstance(state, (list, tuple))
            inputs, state = cell(inputs, list(state) if as_list else [state], **_training_kwargs(cell, training))
            if len(state) == 1 and not as_list:
                state = state[0]
            new_states.append(state)
        return inputs, new_states[0] if len(new_states) == 1 else new_states


class RNN(Layer):
    """Keras's `RNN(cell)`: a cell (a layer with `call(inputs, states)` and `state_size`, this
    package's or the program's own; a list of cells is stacked) run over the time axis, with
    Keras's `return_sequences`, `return_state` (the output, then every state), `go_backwards`,
    `initial_state`, masks and `zero_output_for_mask`. `stateful` and `unroll` (a compile-time
    choice of TF's; the numbers are the same) as in the sequence layers: `stateful` is refused."""

    supports_masking = True

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, zero_output_for_mask=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if not hasattr(cell, "call"):
            raise ValueError(f"Argument `cell` should have a `call` method. Received: cell={cell}")
        if not hasattr(cell, "state_size"):
            raise ValueError("The RNN cell should have a `state_size` attribute (single integer or list of "
                             f"integers, one integer per RNN state). Received: cell={cell}")
        super().__init__(**kwargs)
        if stateful:
            raise NotImplementedError("RNN: stateful=True is not provided by migrate.runtime.keras")
        self.cell = cell
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.state_size = _state_sizes(cell)

    @property
    def _state_count(self) -> int:
        """How many states `return_state` gives after the output: one per entry of `state_size` (a
        stack's cells each give theirs as one entry)."""
        return len(self.state_size)

    def build(self, input_shape):
        if isinstance(self.cell, Layer) and not self.cell.built:
            self.cell.build((input_shape[0],) + tuple(input_shape[2:]))
            self.cell.built = True
        self.built = True

    def get_initial_state(self, batch_size):
        if hasattr(self.cell, "get_initial_state"):
            states = self.cell.get_initial_state(batch_size=batch_size)
            return list(states) if isinstance(states, (list, tuple)) else [states]
        return _zeros(batch_size, self.state_size, self.dtype_policy.compute_dtype)

    def compute_mask(self, inputs, previous_mask=None):
        return _sequence_mask(self, previous_mask, self._state_count)

    def call(self, sequences, initial_state=None, mask=None, training=None):
        ops = _ops()
        batch, steps = int(sequences.shape[0]), int(sequences.shape[1])
        if initial_state is None:
            states = self.get_initial_state(batch)
        else:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
        extra = _training_kwargs(self.cell, training)

        def step(t, states):
            output, new_states = self.cell(sequences[:, t], states, **extra)
            return output, (list(new_states) if isinstance(new_states, (list, tuple)) else [new_states])

        outputs, states = _loop(step, steps, batch, states, mask, self.go_backwards, self.zero_output_for_mask)
        result = ops.stack(outputs, axis=1) if self.return_sequences else outputs[-1]
        return [result, *states] if self.return_state else result


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


class TimeDistributed(Layer):
    """Keras's `TimeDistributed(layer)`: `layer` applied to every step of the time axis (axis 1), one
    call per step as Keras 3 makes them (so a batch normalization in training sees each step's
    batch), the outputs stacked back along time. A mask `(batch, time)` gives each call its step's."""

    supports_masking = True

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `TimeDistributed` layer with a `keras.layers.Layer` instance. "
                             f"Received: {layer}")
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape):
        if len(input_shape) < 3:
            raise ValueError(f"`TimeDistributed` Layer should be passed an `input_shape` with at least 3 dimensions, "
                             f"received: {input_shape}")
        if not self.layer.built:
            self.layer.build((input_shape[0],) + tuple(input_shape[2:]))
            self.layer.built = True
        self.built = True

    def call(self, inputs, training=None, mask=None):
        if mask is not None and (len(mask.shape) < 2 or tuple(mask.shape[:2]) != tuple(inputs.shape[:2])):
            raise ValueError(f"The `mask` passed to the `TimeDistributed` layer has a shape {tuple(mask.shape)} that "
                             f"is incompatible with the input shape {tuple(inputs.shape)}. The first two dimensions "
                             "of the mask (batch size and timesteps) must match the input's first two dimensions.")
        outputs = []
        for t in range(int(inputs.shape[1])):
            extra = _training_kwargs(self.layer, training)
            if mask is not None and self.layer._call_takes_mask:
                extra["mask"] = mask[:, t]
            outputs.append(self.layer(inputs[:, t], **extra))
        return _ops().stack(outputs, axis=1)

    def compute_mask(self, inputs, previous_mask=None):
        return previous_mask
