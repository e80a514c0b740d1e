"""Keras's `RNN(cell)` and its cells in `mk`, against Keras on the same weights and inputs.

`SimpleRNNCell`, `GRUCell` and `LSTMCell` are one step of the sequence layers; `RNN` runs a
cell (or a stack of cells, or a cell of the program's own) over the time axis with Keras's
options; a cell is also called alone, as the time-series tutorial's autoregressive model does.
Each case is written once and run by both sides.
"""

import numpy as np
import pytest
from keras_helpers import assert_case_is_kerass, keras_cases

pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402

pytestmark = pytest.mark.tf

CASES = '''
def lstm_cell_sequences(K, matmul):
    return K.layers.RNN(K.layers.LSTMCell(4), return_sequences=True)


def gru_cell_states(K, matmul):
    return K.layers.RNN(K.layers.GRUCell(3, reset_after=False), return_state=True)


def simple_cell_backwards(K, matmul):
    return K.layers.RNN(K.layers.SimpleRNNCell(3, activation="relu"), go_backwards=True, return_sequences=True)


def stacked_cells_states(K, matmul):
    return K.layers.RNN([K.layers.SimpleRNNCell(3), K.layers.LSTMCell(2)], return_state=True)


def masked_cell(K, matmul):
    return K.Sequential([K.Input((6, 3)), K.layers.Masking(-1.0),
                         K.layers.RNN(K.layers.LSTMCell(3), return_sequences=True)])


def own_cell(K, matmul):
    class MinimalRNNCell(K.layers.Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.state_size = units

        def build(self, input_shape):
            self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="uniform", name="kernel")
            self.recurrent_kernel = self.add_weight(shape=(self.units, self.units), initializer="uniform",
                                                    name="recurrent_kernel")

        def call(self, inputs, states):
            h = matmul(inputs, self.kernel)
            output = h + matmul(states[0], self.recurrent_kernel)
            return output, [output]

    return K.layers.RNN(MinimalRNNCell(3), return_sequences=True, return_state=True)


def feedback(K, matmul):
    # The time-series tutorial's autoregressive model: one cell, in an RNN to warm up, then alone.
    class FeedBack(K.Model):
        def __init__(self):
            super().__init__()
            self.lstm_cell = K.layers.LSTMCell(4)
            self.lstm_rnn = K.layers.RNN(self.lstm_cell, return_state=True)
            self.dense = K.layers.Dense(3)

        def call(self, inputs, training=None):
            x, *state = self.lstm_rnn(inputs)
            prediction = self.dense(x)
            predictions = [prediction]
            for _ in range(1, 3):
                x, state = self.lstm_cell(prediction, states=state, training=training)
                prediction = self.dense(x)
                predictions.append(prediction)
            return predictions

    return FeedBack()
'''
NAMES = ["lstm_cell_sequences", "gru_cell_states", "simple_cell_backwards", "stacked_cells_states", "masked_cell",
         "own_cell", "feedback"]


def _inputs():
    x = np.random.default_rng(7).normal(size=(3, 6, 3)).astype(np.float32)
    x[0, 4:] = -1.0  # trailing padding (a mask for `masked_cell`)
    x[1, 1] = -1.0
    return x


@pytest.fixture(scope="module")
def keras():
    return keras_cases(CASES, NAMES, _inputs(), extra=("keras.ops.matmul",))


@pytest.mark.parametrize("name", NAMES)
def test_rnn_and_cells_compute_kerass_outputs(name, keras):
    from mindspore import ops

    assert_case_is_kerass(CASES, name, keras, _inputs(), ops.matmul)


def test_cells_state_sizes_and_initial_states_are_kerass():
    assert mk.layers.LSTMCell(4).state_size == [4, 4]
    assert mk.layers.GRUCell(3).state_size == 3 and mk.layers.SimpleRNNCell(2).output_size == 2
    stacked = mk.layers.StackedRNNCells([mk.layers.SimpleRNNCell(3), mk.layers.LSTMCell(2)])
    assert stacked.state_size == [3, [2, 2]] and stacked.output_size == 2
    states = mk.layers.LSTMCell(4).get_initial_state(batch_size=5)
    assert [tuple(s.shape) for s in states] == [(5, 4), (5, 4)] and not any(s.asnumpy().any() for s in states)
    # A single state given bare comes back bare, in a list as a list (Keras's cells).
    cell = mk.layers.GRUCell(2)
    x = np.ones((1, 3), np.float32)
    _, bare = cell(x, cell.get_initial_state(batch_size=1)[0])
    _, listed = cell(x, cell.get_initial_state(batch_size=1))
    assert not isinstance(bare, list) and isinstance(listed, list) and len(listed) == 1


def test_rnn_checks_its_cell_as_keras_does():
    with pytest.raises(ValueError, match="should have a `state_size` attribute"):
        mk.layers.RNN(mk.layers.Dense(2))
    with pytest.raises(ValueError, match="takes 2 state"):
        mk.layers.LSTMCell(2)(np.ones((1, 3), np.float32), [np.zeros((1, 2), np.float32)])
    with pytest.raises(NotImplementedError, match="stateful=True"):
        mk.layers.RNN(mk.layers.LSTMCell(2), stateful=True)
    with pytest.raises(NotImplementedError, match="dropout"):
        mk.layers.LSTMCell(2, dropout=0.1)


def test_an_rnn_over_a_cell_trains_and_copies_as_a_layer():
    layer = mk.layers.RNN(mk.layers.LSTMCell(3))
    model = mk.Sequential([mk.Input((5, 2)), layer, mk.layers.Dense(1)])
    assert len(model.trainable_weights) == 5  # the cell's kernel, recurrent kernel and bias, then Dense's
    twin = mk.layers.Bidirectional(mk.layers.RNN(mk.layers.GRUCell(2), return_sequences=True))
    out = twin(np.ones((2, 4, 3), np.float32))
    assert tuple(out.shape) == (2, 4, 4)
    forward, backward = twin.forward_layer.cell, twin.backward_layer.cell
    assert forward is not backward and forward.kernel is not backward.kernel
