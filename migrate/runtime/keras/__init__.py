"""The Keras API on MindSpore, numerically equal to TensorFlow's Keras 3.

Converted programs say ``from migrate.runtime import keras as mk`` and keep their Keras
code: ``mk.Sequential``, ``mk.Model``, ``mk.Input``, ``mk.layers.Dense``,
``mk.losses.SparseCategoricalCrossentropy``, ``mk.optimizers.Adam``,
``mk.metrics.Mean``, ``model.compile/fit/evaluate/predict``, ``mk.train.Checkpoint``.
Everything underneath is a MindSpore Cell, Tensor or Parameter, so converted code can
mix it with plain MindSpore (``ops.*``, ``ms.value_and_grad(fn, None,
model.trainable_variables)``).

Same numbers as TF: Keras's formulas, defaults (epsilons, momenta, initializers) and
layouts (Dense kernels ``(in, out)``, Conv2D kernels ``(kh, kw, in, out)``, NHWC
inputs). Distributed semantics follow Keras under a MirroredStrategy, with one replica
per process of a ``migrate run -n N`` job: optimizers sum gradients across processes,
metrics sum their state on read, ``fit`` splits every global batch as TF does, losses
scale by 1 / replicas, checkpoints are written by rank 0.

Importing this package imports MindSpore (layers are Cells), never TensorFlow.
"""

from . import (activations, applications, backend, callbacks, constraints, datasets, initializers, layers, losses, metrics, mixed_precision,
               models, optimizers, preprocessing, regularizers, train, utils)
from .autodiff import value_and_grad, value_and_grads
from .distribute import compute_average_loss, scale_regularization_loss
from .initializers import constant_initializer, ones_initializer, random_normal_initializer
from .initializers import random_uniform_initializer, zeros_initializer
from .layers import Input, InputLayer, InputSpec, Layer
from .models import Model, Sequential
from .optimizers import schedules
from .symbolic import KerasTensor

__all__ = [
    "Sequential", "Model", "Input", "InputLayer", "InputSpec", "Layer", "KerasTensor", "layers", "models", "activations",
    "initializers", "regularizers", "constraints", "losses", "metrics", "mixed_precision", "optimizers", "schedules", "callbacks", "datasets", "train",
    "applications",
    "preprocessing",
    "utils",
    "backend", "compute_average_loss", "scale_regularization_loss", "constant_initializer", "zeros_initializer",
    "ones_initializer", "random_normal_initializer", "random_uniform_initializer", "value_and_grad", "value_and_grads",
]
