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

    def metric_weight(self, metric, name, aggregation):
        """A metric's scalar weight aggregated across replicas by ``aggregation`` ("SUM", "MEAN",
        "ONLY_FIRST_REPLICA"): Keras 3's spelling (TF 2.21's Metric.add_weight takes none)."""
        return metric.add_variable(shape=(), initializer="zeros", aggregation=aggregation.lower(), name=name)

    def scaled_loss_and_grads(self, model, optimizer, x, y):
        """Mean squared error, its gradients through `optimizer.scale_loss` (the loss itself is unscaled)."""
        tf = self.tf
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            scaled = optimizer.scale_loss(loss)
        return loss, tape.gradient(scaled, model.trainable_variables)


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

    def scaled_loss_and_grads(self, model, optimizer, x, y):
        ops = self.ms.ops

        def forward():
            loss = ops.mean(ops.square(model(self.ms.Tensor(x), training=True) - self.ms.Tensor(y)))
            return optimizer.scale_loss(loss), loss

        (_, loss), grads = self.ms.value_and_grad(forward, None, model.trainable_variables, has_aux=True)()
        return loss, grads

    def constant_initializer(self, value):
        return self.keras.constant_initializer(value)

    def metric_weight(self, metric, name, aggregation):
        """What TFD300 converts Keras 2's `add_weight(..., aggregation=tf.VariableAggregation.X)` to."""
        from migrate.runtime import tfvariable

        return metric.add_weight(name=name, initializer="zeros",
                                 synchronization=tfvariable.VariableSynchronization.ON_READ,
                                 aggregation=getattr(tfvariable.VariableAggregation, aggregation))


def make(name: str):
    return TFBackend() if name == "tf" else MKBackend()


def tolist(value):
    return np.asarray(value, dtype=np.float64).tolist()
