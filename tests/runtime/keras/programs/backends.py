"""The two sides of every comparison: TensorFlow's Keras and migrate's Keras on MindSpore.

Case programs are written once against `backend.keras` (tf.keras or migrate.runtime.keras,
which mirrors it) plus the few helpers below for what the frameworks spell differently.
"""

from __future__ import annotations

import numpy as np


class TFBackend:
    name = "tf"

    def __init__(self):
        import tensorflow as tf

        self.tf = tf
        self.keras = tf.keras

    def variable(self, array, name):
        return self.tf.Variable(np.asarray(array, dtype=np.float32), name=name)

    def tensor(self, array):
        return self.tf.constant(array)

    def numpy(self, value):
        return np.asarray(value.numpy() if hasattr(value, "numpy") else value)

    def compute_average_loss(self, per_example, **kwargs):
        return self.tf.nn.compute_average_loss(per_example, **kwargs)

    def constant_initializer(self, value):
        return self.tf.constant_initializer(value)


class MKBackend:
    name = "mk"

    def __init__(self):
        import mindspore as ms

        from migrate.runtime import keras as mk

        self.ms = ms
        self.keras = mk

    def variable(self, array, name):
        return self.ms.Parameter(self.ms.Tensor(np.asarray(array, dtype=np.float32)), name=name)

    def tensor(self, array):
        return self.ms.Tensor(array)

    def numpy(self, value):
        return np.asarray(value.asnumpy() if hasattr(value, "asnumpy") else value)

    def compute_average_loss(self, per_example, **kwargs):
        return self.keras.compute_average_loss(per_example, **kwargs)

    def constant_initializer(self, value):
        return self.keras.constant_initializer(value)


def make(name: str):
    return TFBackend() if name == "tf" else MKBackend()


def tolist(value):
    return np.asarray(value, dtype=np.float64).tolist()
