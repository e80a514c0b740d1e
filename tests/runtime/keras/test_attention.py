"""Keras's `Attention` and `AdditiveAttention` in `mk`, against Keras on the same weights and inputs:
outputs, attention scores and gradients (of the input and the weights), with masks given or carried
by the inputs, causal masking, and training without dropout. Each case is written once and run by
both sides; query, value and key are cut from the one input the harness gives.
"""

import numpy as np
import pytest
from keras_helpers import assert_case_is_kerass, keras_cases

pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402

pytestmark = pytest.mark.tf

CASES = '''
def _in(K):
    return K.Input((6, 4))


def dot_self(K):
    inputs = _in(K)
    return K.Model(inputs, K.layers.Attention()([inputs, inputs]))


def dot_scaled_query_value_key(K):
    inputs = _in(K)
    key = K.layers.Dense(4)(inputs[:, 2:])
    return K.Model(inputs, K.layers.Attention(use_scale=True)([inputs[:, :3], inputs[:, 2:], key]))


def concat_scores(K):
    inputs = _in(K)
    layer = K.layers.Attention(score_mode="concat")
    return K.Model(inputs, layer([inputs[:, :4], inputs[:, 1:]], return_attention_scores=True))


def concat_scaled(K):
    inputs = _in(K)
    return K.Model(inputs, K.layers.Attention(use_scale=True, score_mode="concat")([inputs[:, :4], inputs]))


def carried_masks(K):
    # an input's mask (Masking's) reaches the layer as [query_mask, value_mask]; the output keeps the query's
    inputs = _in(K)
    masked = K.layers.Masking(-1.0)(inputs)
    attended, scores = K.layers.Attention(use_scale=True)([masked, masked], return_attention_scores=True)
    return K.Model(inputs, [attended, scores, K.layers.LSTM(2)(attended)])


def value_mask_only(K):
    inputs = _in(K)
    masked = K.layers.Masking(-1.0)(inputs)
    return K.Model(inputs, K.layers.Attention()([inputs, masked], return_attention_scores=True))


def given_masks(K):
    class Attend(K.Model):
        def __init__(self):
            super().__init__()
            self.key = K.layers.Dense(4)
            self.attention = K.layers.Attention(use_scale=True)

        def call(self, x):
            query, value = x[:, :4], x[:, 1:]
            return self.attention([query, value, self.key(value)], mask=[query[:, :, 0] > -1.0, value[:, :, 1] > -1.0],
                                  return_attention_scores=True)

    return Attend()


def causal(K):
    inputs = _in(K)
    return K.Model(inputs, K.layers.Attention(use_scale=True)([inputs, inputs], use_causal_mask=True,
                                                              return_attention_scores=True))


def causal_masked_rectangular(K):
    inputs = _in(K)
    masked = K.layers.Masking(-1.0)(inputs)
    return K.Model(inputs, K.layers.Attention()([masked[:, :4], masked], use_causal_mask=True,
                                                return_attention_scores=True))


def keras2_causal(K):
    # Keras 2's `causal=True` (which Keras 3 refuses) is Keras's `use_causal_mask=True`
    inputs = _in(K)
    if K.__name__.startswith("migrate"):
        return K.Model(inputs, K.layers.Attention(causal=True)([inputs, inputs]))
    return K.Model(inputs, K.layers.Attention()([inputs, inputs], use_causal_mask=True))


def training_without_dropout(K):
    class Attend(K.Model):
        def __init__(self):
            super().__init__()
            self.attention = K.layers.Attention(dropout=0.0)
            self.additive = K.layers.AdditiveAttention(dropout=0.0)

        def call(self, x):
            return [self.attention([x, x], training=True), self.additive([x, x], training=True)]

    return Attend()


def dropout_in_inference(K):
    inputs = _in(K)
    return K.Model(inputs, [K.layers.Attention(dropout=0.5)([inputs, inputs]),
                            K.layers.AdditiveAttention(dropout=0.5)([inputs, inputs])])


def additive(K):
    inputs = _in(K)
    return K.Model(inputs, K.layers.AdditiveAttention()([inputs[:, :3], inputs[:, 1:]], return_attention_scores=True))


def additive_unscaled_key(K):
    inputs = _in(K)
    key = K.layers.Dense(4, activation="tanh")(inputs)
    return K.Model(inputs, K.layers.AdditiveAttention(use_scale=False)([inputs, inputs, key]))


def additive_masked_causal(K):
    inputs = _in(K)
    masked = K.layers.Masking(-1.0)(inputs)
    return K.Model(inputs, K.layers.AdditiveAttention()([masked, masked], use_causal_mask=True,
                                                        return_attention_scores=True))


def bahdanau_decoder(K):
    # the translation tutorials' decoder: an LSTM's states attend over an encoder's, then a Dense
    # (a subclassed model: its weights are in the order its layers were assigned, on both sides)
    class Decoder(K.Model):
        def __init__(self):
            super().__init__()
            self.encoder = K.layers.LSTM(5, return_sequences=True)
            self.decoder = K.layers.LSTM(5, return_sequences=True)
            self.attention = K.layers.AdditiveAttention()
            self.head = K.layers.Dense(3)

        def call(self, x):
            decoded = self.decoder(x[:, 2:])
            context = self.attention([decoded, self.encoder(x)])
            return self.head(K.layers.concatenate([context, decoded]))

    return Decoder()
'''
NAMES = ["dot_self", "dot_scaled_query_value_key", "concat_scores", "concat_scaled", "carried_masks",
         "value_mask_only", "given_masks", "causal", "causal_masked_rectangular", "keras2_causal",
         "training_without_dropout", "dropout_in_inference", "additive", "additive_unscaled_key",
         "additive_masked_causal", "bahdanau_decoder"]


def _inputs():
    x = np.random.default_rng(4).normal(size=(3, 6, 4)).astype(np.float32)
    x[0, 4:] = -1.0  # trailing padding, masked by `Masking(-1.0)` and the given masks
    x[1, 2] = -1.0
    return x


@pytest.fixture(scope="module")
def keras():
    return keras_cases(CASES, NAMES, _inputs(), gradients=True)


# Scores through a tanh ("concat", the additive layer; the LSTM's gates) are compared at 1e-4, as the
# recurrent layers are: MindSpore's CPU tanh is within 1e-6 of TF's below |x| = 2 but 1e-5 to 1e-4 off
# between 3 and 5 and exactly 1 from 4.97 (so its gradient is 0 there), and the weights' gradients sum
# those over every query, key and batch entry.
TANH = {"concat_scores", "concat_scaled", "training_without_dropout", "dropout_in_inference", "additive",
        "additive_unscaled_key", "additive_masked_causal", "bahdanau_decoder"}


@pytest.mark.parametrize("name", NAMES)
def test_attention_layers_compute_kerass_outputs_and_gradients(name, keras):
    tolerance = 1e-4 if name in TANH else 1e-5
    assert_case_is_kerass(CASES, name, keras, _inputs(), rtol=tolerance, atol=tolerance)


def test_masks_and_weights_are_kerass():
    x = _inputs()
    masked = mk.layers.Masking(-1.0)(x)
    layer = mk.layers.Attention(use_scale=True, score_mode="concat")
    out = layer([masked, masked])
    np.testing.assert_array_equal(out._keras_mask.asnumpy(), (x != -1.0).any(-1))
    assert [w.name for w in layer.weights] == [f"{layer.name}/scale", f"{layer.name}/concat_score_weight"]
    assert [tuple(w.shape) for w in layer.weights] == [(), ()]
    additive = mk.layers.AdditiveAttention()
    additive([x[:, :2, :3], x[:, :, :3]])
    assert [tuple(w.shape) for w in additive.weights] == [(3,)]
    assert mk.layers.AdditiveAttention(use_scale=False).get_config()["use_scale"] is False
    assert "score_mode" not in mk.layers.AdditiveAttention().get_config()
    config = mk.layers.Attention(use_scale=True, score_mode="concat", dropout=0.1, seed=3).get_config()
    assert {k: config[k] for k in ("use_scale", "score_mode", "dropout", "seed")} == {
        "use_scale": True, "score_mode": "concat", "dropout": 0.1, "seed": 3}
    assert mk.layers.Attention.from_config(mk.layers.Attention(causal=True).get_config()).causal


def test_dropout_in_training_drops_and_rescales_the_distribution():
    import mindspore as ms

    x = ms.Tensor(_inputs())
    layer = mk.layers.Attention(dropout=0.5)
    _, scores = layer([x, x], return_attention_scores=True, training=True)
    _, plain = layer([x, x], return_attention_scores=True)
    kept = scores.asnumpy() != 0
    assert 0 < kept.mean() < 1
    np.testing.assert_allclose(scores.asnumpy()[kept], 2 * plain.asnumpy()[kept], rtol=1e-6)


def test_inputs_and_masks_are_checked_as_keras_does():
    x = _inputs()
    with pytest.raises(ValueError, match="must be called on a list of inputs"):
        mk.layers.Attention()(x)
    with pytest.raises(ValueError, match="accepts inputs list of length 2 or 3"):
        mk.layers.Attention()([x])
    with pytest.raises(ValueError, match="mask must be a list"):
        mk.layers.Attention()([x, x], mask=x[..., 0] > 0)
    with pytest.raises(ValueError, match="Invalid value for argument score_mode"):
        mk.layers.Attention(score_mode="general")
