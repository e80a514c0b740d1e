"""Keras's masks and `Bidirectional` in `mk`, against Keras on the same weights and inputs.

A mask made by `Masking` or `Embedding(mask_zero=True)` travels with the tensors to the
layers that take one: recurrent layers skip the masked steps (keeping their states,
repeating their last output), `GlobalAveragePooling1D` averages over the kept steps,
merges combine masks, layers between them pass the mask on. `Bidirectional` runs a copy of
the layer each way and merges. Each model is written once and built by both sides.
"""

import json

import numpy as np
import pytest

from tests.helpers import python_json

pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402

pytestmark = pytest.mark.tf

MODELS = '''
def masked_lstm_last(K):
    return K.Sequential([K.Input((6, 3)), K.layers.Masking(-1.0), K.layers.LSTM(4)])


def masked_lstm_sequences(K):
    return K.Sequential([K.Input((6, 3)), K.layers.Masking(-1.0), K.layers.LSTM(4, return_sequences=True)])


def masked_gru_pooled(K):
    return K.Sequential([K.Input((6, 3)), K.layers.Masking(-1.0), K.layers.GRU(3, return_sequences=True),
                         K.layers.Dense(2), K.layers.GlobalAveragePooling1D()])


def embedding_mask_backwards(K):
    return K.Sequential([K.Input((6,), dtype="int32"), K.layers.Embedding(9, 3, mask_zero=True),
                         K.layers.SimpleRNN(4, go_backwards=True, return_sequences=True)])


def bidirectional_concat(K):
    return K.Sequential([K.Input((6, 3)), K.layers.Bidirectional(K.layers.LSTM(3))])


def bidirectional_masked_sum(K):
    return K.Sequential([K.Input((6, 3)), K.layers.Masking(-1.0),
                         K.layers.Bidirectional(K.layers.LSTM(3, return_sequences=True), merge_mode="sum"),
                         K.layers.LSTM(2)])


def bidirectional_own_backward(K):
    return K.Sequential([K.Input((6, 3)), K.layers.Bidirectional(
        K.layers.GRU(2), backward_layer=K.layers.GRU(2, go_backwards=True), merge_mode="ave")])


def bidirectional_states(K):
    inputs = K.Input((6, 3))
    outputs = K.layers.Bidirectional(K.layers.LSTM(2, return_state=True))(inputs)
    return K.Model(inputs, list(outputs))


def masks_merged(K):
    a, b = K.Input((6, 3)), K.Input((6, 3))
    joined = K.layers.Concatenate()([K.layers.Masking(-1.0)(a), K.layers.Masking(-1.0)(b)])
    added = K.layers.Add()([K.layers.Masking(-1.0)(a), K.layers.Masking(-1.0)(b)])
    return K.Model([a, b], [K.layers.LSTM(2)(joined), K.layers.SimpleRNN(2)(added)])
'''
NAMES = ["masked_lstm_last", "masked_lstm_sequences", "masked_gru_pooled", "embedding_mask_backwards",
         "bidirectional_concat", "bidirectional_masked_sum", "bidirectional_own_backward", "bidirectional_states",
         "masks_merged"]


def _inputs(name):
    rng = np.random.default_rng(7)
    if name == "embedding_mask_backwards":
        ids = rng.integers(1, 9, size=(3, 6)).astype(np.int32)
        ids[0, 4:] = 0
        ids[1, 2] = 0
        return ids
    x = rng.normal(size=(3, 6, 3)).astype(np.float32)
    x[0, 4:] = -1.0  # trailing padding
    x[1, 1] = -1.0  # a hole in the middle
    x[2, :2] = -1.0  # leading padding
    if name == "masks_merged":
        y = rng.normal(size=(3, 6, 3)).astype(np.float32)
        y[0, 3:] = -1.0
        y[2, 5] = -1.0
        return [x, y]
    return x


KERAS_SIDE = r"""
import json, sys
import numpy as np
import keras
exec(sys.argv[1])
out = {}
for name in json.loads(sys.argv[2]):
    model = globals()[name](keras)
    rng = np.random.default_rng(11)
    weights = [rng.normal(scale=0.5, size=w.shape).astype(np.float32) for w in model.get_weights()]
    model.set_weights(weights)
    inputs = json.loads(sys.argv[3])[name]
    inputs = [np.asarray(i, np.int32 if name == "embedding_mask_backwards" else np.float32) for i in inputs] \
        if name == "masks_merged" else np.asarray(inputs, np.int32 if name == "embedding_mask_backwards" else np.float32)
    result = model(inputs)
    results = result if isinstance(result, (list, tuple)) else [result]
    out[name] = {"weights": [w.tolist() for w in weights], "outputs": [np.asarray(r).tolist() for r in results]}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def keras():
    inputs = {name: ([i.tolist() for i in _inputs(name)] if name == "masks_merged" else _inputs(name).tolist())
              for name in NAMES}
    return python_json(KERAS_SIDE, MODELS, json.dumps(NAMES), json.dumps(inputs))


@pytest.mark.parametrize("name", NAMES)
def test_masked_and_bidirectional_models_compute_kerass_outputs(name, keras):
    scope = {}
    exec(MODELS, scope)  # noqa: S102 - the test's own model code, shared with Keras's side
    model = scope[name](mk)
    model.set_weights([np.asarray(w, np.float32) for w in keras[name]["weights"]])
    result = model(_inputs(name))
    results = result if isinstance(result, (list, tuple)) else [result]
    assert len(results) == len(keras[name]["outputs"])
    for ours, theirs in zip(results, keras[name]["outputs"]):
        np.testing.assert_allclose(ours.asnumpy(), np.asarray(theirs, np.float32), rtol=1e-5, atol=1e-6)


def test_the_mask_travels_with_the_output_and_stops_where_keras_stops_it():
    x = _inputs("masked_lstm_last")
    masked = mk.layers.Masking(-1.0)(x)
    assert masked._keras_mask.asnumpy().tolist()[0] == [True] * 4 + [False] * 2
    sequence = mk.layers.LSTM(2, return_sequences=True)(masked)
    assert np.array_equal(sequence._keras_mask.asnumpy(), masked._keras_mask.asnumpy())
    assert getattr(mk.layers.LSTM(2)(masked), "_keras_mask", None) is None  # the last output has no time axis
    assert getattr(mk.layers.GlobalAveragePooling1D()(sequence), "_keras_mask", None) is None
    with pytest.warns(UserWarning, match="does not support masking"):
        mk.layers.Flatten()(masked)


def test_bidirectional_checks_its_layers_as_keras_does():
    with pytest.raises(ValueError, match="Invalid merge mode"):
        mk.layers.Bidirectional(mk.layers.LSTM(2), merge_mode="max")
    with pytest.raises(ValueError, match="different `go_backwards`"):
        mk.layers.Bidirectional(mk.layers.LSTM(2), backward_layer=mk.layers.LSTM(2))
    with pytest.raises(ValueError, match='same value for attribute "return_sequences"'):
        mk.layers.Bidirectional(mk.layers.LSTM(2), backward_layer=mk.layers.LSTM(2, go_backwards=True,
                                                                                  return_sequences=True))
    layer = mk.layers.Bidirectional(mk.layers.LSTM(2, name="enc"))
    assert (layer.forward_layer.name, layer.backward_layer.name) == ("forward_enc", "backward_enc")
    assert layer.backward_layer.go_backwards and not layer.forward_layer.go_backwards
