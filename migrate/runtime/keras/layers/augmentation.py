"""Keras 3's random image layers, drawing from MindSpore's generator (as `tf.random` does here)."""

from __future__ import annotations

from .base import Layer

_MODES = ("horizontal", "vertical", "horizontal_and_vertical")


class RandomFlip(Layer):
    """`keras.layers.RandomFlip`: in training, each image is flipped with probability 0.5 (one draw
    per image: with "horizontal_and_vertical" the same draw flips both ways, as in Keras 3); in
    inference the images pass, cast to the compute dtype. Channels-last images, batched or not."""

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        if mode not in _MODES:
            raise ValueError(f"RandomFlip layer {self.name} received an unknown mode argument {mode}")
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("RandomFlip: channels-last images (Keras's default) only")
        self.mode, self.seed = mode, seed

    def call(self, inputs, training=True):
        from mindspore import ops

        from ... import tfrandom

        images = inputs.astype(self.compute_dtype)
        if not training:
            return images
        batched = images.ndim == 4
        x = images if batched else images[None]
        flips = tfrandom.uniform((x.shape[0], 1, 1, 1)) <= 0.5
        if self.mode in ("horizontal", "horizontal_and_vertical"):
            x = ops.where(flips, ops.flip(x, (-2,)), x)
        if self.mode in ("vertical", "horizontal_and_vertical"):
            x = ops.where(flips, ops.flip(x, (-3,)), x)
        return x if batched else x[0]

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)
