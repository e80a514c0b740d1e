"""Keras's dot-product (`Attention`, Luong-style) and additive (`AdditiveAttention`, Bahdanau-style) attention.

Keras 3's computation step for step: scores from the query and the key (`[query, value]`
uses the value as the key), masked positions lowered by 1e9 (65504 in float16) before the
softmax, dropout on the distribution in training, the distribution times the value, and
zeros where the query is masked. Masks come as Keras gives them: `mask=[query_mask,
value_mask]`, or the masks the inputs carry (an `Embedding(mask_zero=True)`'s); the output
carries the query's.
"""

from __future__ import annotations

import numpy as np

from ... import draws
from .. import initializers
from .._tensors import tensor_of
from .base import Layer


def _ops():
    from mindspore import ops

    return ops


def _bool(mask):
    """A mask as a bool Tensor (Keras casts a mask of 0s and 1s to bool too)."""
    import mindspore as ms

    mask = tensor_of(mask)
    return mask if mask.dtype == ms.bool_ else mask.astype(ms.bool_)


class Attention(Layer):
    """`tf.keras.layers.Attention(use_scale=False, score_mode="dot", dropout=0.0, seed=None)`.

    "dot": scores = query @ key^T (times `scale`); "concat": scores =
    concat_score_weight * sum(tanh(scale * (query + key)), -1). Keras 2's `causal=True`
    (deprecated there in favour of `use_causal_mask`, refused by Keras 3) is taken as
    `use_causal_mask=True` on every call, as Keras 2 did.
    """

    supports_masking = True

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        self.causal = bool(kwargs.pop("causal", False))
        super().__init__(**kwargs)
        self.use_scale = use_scale
        self.score_mode = score_mode
        self.dropout = dropout
        self.seed = seed
        if self.dropout > 0 and seed is None:
            initializers.draw_default_seed()  # (Keras's SeedGenerator for the layer)
        if self.score_mode not in ["dot", "concat"]:
            raise ValueError("Invalid value for argument score_mode. Expected one of {'dot', 'concat'}. "
                             f"Received: score_mode={score_mode}")

    def build(self, input_shape):
        self._validate_inputs(input_shape)
        # (assigned once each: a name taken by None first would push the weight to `scale_1`)
        self.scale = self.add_weight(name="scale", shape=(), initializer="ones", dtype=self.dtype) \
            if self.use_scale else None
        self.concat_score_weight = self.add_weight(name="concat_score_weight", shape=(), initializer="ones",
                                                   dtype=self.dtype) if self.score_mode == "concat" else None
        self.built = True

    def _calculate_scores(self, query, key):
        ops = _ops()
        if self.score_mode == "dot":
            scores = ops.matmul(query, ops.swapaxes(key, -2, -1))
            if self.scale is not None:
                scores = scores * self.scale
            return scores
        q_reshaped = ops.expand_dims(query, -2)  # (batch, Tq, 1, dim)
        k_reshaped = ops.expand_dims(key, -3)    # (batch, 1, Tv, dim)
        summed = q_reshaped + k_reshaped
        if self.scale is not None:
            summed = self.scale * summed
        return self.concat_score_weight * ops.sum(ops.tanh(summed), dim=-1)

    def _apply_scores(self, scores, value, scores_mask=None, training=False):
        import mindspore as ms

        ops = _ops()
        if scores_mask is not None:
            padding_mask = ops.logical_not(scores_mask)
            max_value = 65504.0 if scores.dtype == ms.float16 else 1.0e9
            if padding_mask.ndim == 2:
                padding_mask = ops.expand_dims(padding_mask, -2)
            scores = ops.where(padding_mask, scores - max_value, scores)
        weights = ops.softmax(scores, axis=-1)
        if training and self.dropout > 0:
            weights = self._dropped(weights)
        return ops.matmul(weights, value), weights

    def _dropped(self, weights):
        ops = _ops()
        if draws.active():  # a forward pass repeated for another gradient: the mask, recorded, times the weights
            kept = draws.draw(lambda: ops.dropout(ops.ones_like(weights), p=self.dropout, training=True),
                              f"dropout{tuple(weights.shape)}")
            return weights * kept
        return ops.dropout(weights, p=self.dropout, training=True)

    def _calculate_score_mask(self, scores, v_mask, use_causal_mask):
        if not use_causal_mask:
            return v_mask
        # position i attends to positions j <= i only: Keras's row index >= column index
        causal_mask = tensor_of(np.tri(scores.shape[-2], scores.shape[-1], dtype=bool)[None])
        if v_mask is None:
            return causal_mask
        return _ops().logical_and(_ops().expand_dims(v_mask, -2), causal_mask)

    def call(self, inputs, mask=None, training=False, return_attention_scores=False, use_causal_mask=False):
        self._validate_inputs(inputs, mask)
        ops = _ops()
        q, v = inputs[0], inputs[1]
        k = inputs[2] if len(inputs) > 2 else v
        q_mask = mask[0] if mask else None
        v_mask = mask[1] if mask else None
        v_mask = None if v_mask is None else _bool(v_mask)
        scores = self._calculate_scores(query=q, key=k)
        scores_mask = self._calculate_score_mask(scores, v_mask, use_causal_mask or self.causal)
        attention_output, attention_scores = self._apply_scores(scores=scores, value=v, scores_mask=scores_mask,
                                                                training=training)
        if q_mask is not None:
            attention_output = ops.where(ops.expand_dims(_bool(q_mask), -1), attention_output,
                                         ops.zeros_like(attention_output))
        if return_attention_scores:
            return attention_output, attention_scores
        return attention_output

    def compute_mask(self, inputs, previous_mask=None):
        self._validate_inputs(inputs, previous_mask)
        if previous_mask is None or previous_mask[0] is None:
            return None
        return tensor_of(previous_mask[0])

    def _validate_inputs(self, inputs, mask=None):
        class_name = type(self).__name__
        if not isinstance(inputs, list):
            raise ValueError(f"{class_name} layer must be called on a list of inputs, namely [query, value] or "
                             f"[query, value, key]. Received: inputs={inputs}.")
        if len(inputs) < 2 or len(inputs) > 3:
            raise ValueError(f"{class_name} layer accepts inputs list of length 2 or 3, namely [query, value] or "
                             f"[query, value, key]. Received length: {len(inputs)}.")
        if mask is not None:
            if not isinstance(mask, list):
                raise ValueError(f"{class_name} layer mask must be a list, namely [query_mask, value_mask]. "
                                 f"Received: mask={mask}.")
            if len(mask) < 2 or len(mask) > 3:
                raise ValueError(f"{class_name} layer accepts mask list of length 2 or 3. Received: "
                                 f"inputs={inputs}, mask={mask}.")

    def get_config(self):
        return {**super().get_config(), "use_scale": self.use_scale, "score_mode": self.score_mode,
                "dropout": self.dropout, "seed": self.seed}


class AdditiveAttention(Attention):
    """`tf.keras.layers.AdditiveAttention(use_scale=True, dropout=0.0)`: scores =
    sum(scale * tanh(query + key), -1), `scale` a glorot-uniform vector of the query's width."""

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape):
        self._validate_inputs(input_shape)
        dim = input_shape[0][-1]
        self.scale = self.add_weight(name="scale", shape=(dim,), initializer="glorot_uniform", dtype=self.dtype) \
            if self.use_scale else None
        self.built = True

    def _calculate_scores(self, query, key):
        ops = _ops()
        tanh = ops.tanh(ops.expand_dims(query, -2) + ops.expand_dims(key, -3))
        return ops.sum((self.scale if self.use_scale else 1.0) * tanh, dim=-1)

    def get_config(self):
        config = super().get_config()
        del config["score_mode"]
        return config
