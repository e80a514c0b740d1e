"""`tf.keras.initializers` with Keras 3's formulas and defaults, producing numpy float32 arrays.

Constant initializers (`Constant`, `constant_initializer`, Zeros, Ones, Identity) give
exactly the given numbers, so a program that initialises from numpy starts where TF
starts. Random initializers use Keras's distributions and scales (VarianceScaling fans,
truncation at two standard deviations) but draw from numpy: TF's random streams cannot
be reproduced, so only the distribution matches, not the numbers.

Unseeded initializers draw from one process-wide generator with a fixed seed (reset by
`mk.utils.set_random_seed`), so every process of a launched job builds identical weights
(TF's mirrored variables start identical on every replica).
"""

from __future__ import annotations

import math

import random as python_random

import numpy as np

_DEFAULT_SEED = 1337
_seed = _DEFAULT_SEED
_generator = np.random.default_rng(_DEFAULT_SEED)


def set_global_seed(seed: int) -> None:
    """Reset the generator unseeded initializers (and `fit`'s shuffling) draw from."""
    global _generator, _seed
    _seed = int(seed)
    _generator = np.random.default_rng(_seed)


def global_seed() -> int:
    return _seed


def _rng(seed):
    return _generator if seed is None else np.random.default_rng(seed)


class Initializer:
    """Base class: `initializer(shape, dtype=None)` returns a numpy array of that shape."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _dtype(dtype):
    return np.dtype(str(dtype).replace("mindspore.", "").lower()) if dtype is not None else np.float32


class Zeros(Initializer):
    def __call__(self, shape, dtype=None):
        return np.zeros(shape, dtype=_dtype(dtype))


class Ones(Initializer):
    def __call__(self, shape, dtype=None):
        return np.ones(shape, dtype=_dtype(dtype))


class Constant(Initializer):
    """Fills with `value`: a scalar, or an array reshaped to the requested shape (as TF does).

    `tf.constant_initializer(array)` requires as many elements as the variable has and
    reshapes them; a scalar is broadcast.
    """

    def __init__(self, value=0.0):
        if hasattr(value, "asnumpy"):
            value = value.asnumpy()
        elif hasattr(value, "numpy") and not isinstance(value, np.ndarray):
            value = value.numpy()
        self.value = value

    def __call__(self, shape, dtype=None):
        array = np.asarray(self.value, dtype=_dtype(dtype))
        shape = tuple(int(d) for d in shape)
        if array.ndim == 0:
            return np.full(shape, array, dtype=array.dtype)
        if array.size != int(np.prod(shape, dtype=np.int64)):
            raise TypeError(f"Constant initializer has {array.size} values, but the variable has shape {shape}")
        return array.reshape(shape).copy()

    def get_config(self):
        return {"value": self.value}


class Identity(Initializer):
    def __init__(self, gain=1.0):  # (its config is {}, as Keras's is)
        self.gain = gain

    def __call__(self, shape, dtype=None):
        if len(shape) != 2:
            raise ValueError(f"Identity initializer needs a 2-D shape, got {tuple(shape)}")
        return (self.gain * np.eye(*shape)).astype(_dtype(dtype))


def draw_default_seed() -> int:
    """What Keras 3 does where an unseeded random object is made (an initializer, a dropout's or a
    random layer's seed generator): draw a seed from Python's ``random``. The weights here come
    from this module's own generator; the draw is made so that Python's ``random`` is where
    Keras leaves it (``fit``'s batch order of a ``PyDataset``, a program's own ``random`` calls)."""
    return python_random.randint(1, int(1e9))


class RandomInitializer(Initializer):
    def __init__(self, seed=None):
        self.seed = seed
        if seed is None:
            draw_default_seed()

    def get_config(self):
        return {"seed": self.seed}


class RandomNormal(RandomInitializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def get_config(self):
        return {"seed": self.seed, "mean": self.mean, "stddev": self.stddev}

    def __call__(self, shape, dtype=None):
        return _rng(self.seed).normal(self.mean, self.stddev, size=shape).astype(_dtype(dtype))


class RandomUniform(RandomInitializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def get_config(self):
        return {"seed": self.seed, "minval": self.minval, "maxval": self.maxval}

    def __call__(self, shape, dtype=None):
        return _rng(self.seed).uniform(self.minval, self.maxval, size=shape).astype(_dtype(dtype))


def _truncated_normal(rng, shape, mean, stddev):
    """Normal samples redrawn until within two standard deviations (TF's truncated_normal)."""
    out = rng.normal(size=shape)
    bad = np.abs(out) > 2.0
    while bad.any():
        out[bad] = rng.normal(size=int(bad.sum()))
        bad = np.abs(out) > 2.0
    return mean + stddev * out


class TruncatedNormal(RandomInitializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def get_config(self):
        return {"seed": self.seed, "mean": self.mean, "stddev": self.stddev}

    def __call__(self, shape, dtype=None):
        return _truncated_normal(_rng(self.seed), shape, self.mean, self.stddev).astype(_dtype(dtype))


def compute_fans(shape):
    """Keras's fans: (in, out) for 2-D; for kernels (..., in, out) times the receptive field."""
    shape = tuple(shape)
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


class VarianceScaling(RandomInitializer):
    """scale / fan (fan_in, fan_out or their average); truncated normal, normal or uniform."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None, input_axes=None,
                 output_axes=None):
        super().__init__(seed)
        if input_axes is not None or output_axes is not None:
            raise NotImplementedError("VarianceScaling: input_axes / output_axes (fans over chosen axes) are not "
                                      "supported by migrate.runtime.keras")
        if distribution == "normal":
            distribution = "truncated_normal"
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def __call__(self, shape, dtype=None):
        fan_in, fan_out = compute_fans(shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, fan)
        rng = _rng(self.seed)
        if self.distribution == "truncated_normal":
            stddev = math.sqrt(scale) / 0.87962566103423978
            values = _truncated_normal(rng, shape, 0.0, stddev)
        elif self.distribution == "untruncated_normal":
            values = rng.normal(0.0, math.sqrt(scale), size=shape)
        else:
            limit = math.sqrt(3.0 * scale)
            values = rng.uniform(-limit, limit, size=shape)
        return np.asarray(values).astype(_dtype(dtype))

    def get_config(self):
        return {"seed": self.seed, "scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "input_axes": None, "output_axes": None}


class _Preset(VarianceScaling):
    """Glorot, He and Lecun: VarianceScaling with their scale, mode and distribution fixed."""

    def get_config(self):
        return {"seed": self.seed, "input_axes": None, "output_axes": None}


class GlorotUniform(_Preset):
    def __init__(self, seed=None, input_axes=None, output_axes=None):
        super().__init__(1.0, "fan_avg", "uniform", seed, input_axes, output_axes)


class GlorotNormal(_Preset):
    def __init__(self, seed=None, input_axes=None, output_axes=None):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, input_axes, output_axes)


class HeNormal(_Preset):
    def __init__(self, seed=None, input_axes=None, output_axes=None):
        super().__init__(2.0, "fan_in", "truncated_normal", seed, input_axes, output_axes)


class HeUniform(_Preset):
    def __init__(self, seed=None, input_axes=None, output_axes=None):
        super().__init__(2.0, "fan_in", "uniform", seed, input_axes, output_axes)


class LecunNormal(_Preset):
    def __init__(self, seed=None, input_axes=None, output_axes=None):
        super().__init__(1.0, "fan_in", "truncated_normal", seed, input_axes, output_axes)


class LecunUniform(_Preset):
    def __init__(self, seed=None, input_axes=None, output_axes=None):
        super().__init__(1.0, "fan_in", "uniform", seed, input_axes, output_axes)


class Orthogonal(RandomInitializer):
    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = gain

    def get_config(self):
        return {"seed": self.seed, "gain": self.gain}

    def __call__(self, shape, dtype=None):
        rows = int(np.prod(shape[:-1]))
        cols = shape[-1]
        a = _rng(self.seed).normal(size=(max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q *= np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return (self.gain * q.reshape(shape)).astype(_dtype(dtype))


# Lower-case aliases, as tf.keras.initializers exports them.
zeros, ones, constant, identity = Zeros, Ones, Constant, Identity
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
variance_scaling, orthogonal = VarianceScaling, Orthogonal
glorot_uniform, glorot_normal, he_normal, he_uniform = GlorotUniform, GlorotNormal, HeNormal, HeUniform
lecun_normal, lecun_uniform = LecunNormal, LecunUniform

_BY_NAME = {
    "zeros": Zeros, "zero": Zeros, "ones": Ones, "one": Ones, "constant": Constant, "identity": Identity,
    "random_normal": RandomNormal, "normal": RandomNormal, "random_uniform": RandomUniform,
    "uniform": RandomUniform, "truncated_normal": TruncatedNormal, "variance_scaling": VarianceScaling,
    "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal, "he_normal": HeNormal,
    "he_uniform": HeUniform, "lecun_normal": LecunNormal, "lecun_uniform": LecunUniform,
    "orthogonal": Orthogonal,
}


def get(identifier) -> Initializer | None:
    """An initializer from a name ("glorot_uniform", "GlorotUniform", "zeros"), an instance, a class or a callable."""
    if identifier is None or isinstance(identifier, Initializer):
        return identifier
    if isinstance(identifier, str):
        key = identifier
        if key not in _BY_NAME:
            key = "".join("_" + c.lower() if c.isupper() else c for c in identifier).lstrip("_")
        if key not in _BY_NAME:
            raise ValueError(f"Unknown initializer: {identifier!r}")
        return _BY_NAME[key]()
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if hasattr(identifier, "asnumpy") or isinstance(identifier, np.ndarray):
        return Constant(identifier)
    if isinstance(identifier, type):  # (a class, `initializer=RandomNormal`: Keras makes one with its defaults)
        return identifier()
    if callable(identifier):
        return _CallableInitializer(identifier)
    raise ValueError(f"Could not interpret initializer: {identifier!r}")


class _CallableInitializer(Initializer):
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, shape, dtype=None):
        value = self.fn(shape, dtype=dtype) if dtype is not None else self.fn(shape)
        if hasattr(value, "asnumpy"):
            value = value.asnumpy()
        return np.asarray(value, dtype=_dtype(dtype))


def constant_initializer(value=0):
    """`tf.constant_initializer(value)`: exactly `value` (a scalar or an array of the variable's size)."""
    return Constant(value)


def zeros_initializer():
    return Zeros()


def ones_initializer():
    return Ones()


def random_normal_initializer(mean=0.0, stddev=0.05, seed=None):
    return RandomNormal(mean, stddev, seed)


def random_uniform_initializer(minval=-0.05, maxval=0.05, seed=None):
    return RandomUniform(minval, maxval, seed)


_BUILTINS = {cls.__name__: cls for cls in (Initializer, Zeros, Ones, Constant, Identity, RandomNormal, RandomUniform,
                                           TruncatedNormal, VarianceScaling, GlorotUniform, GlorotNormal, HeNormal,
                                           HeUniform, LecunNormal, LecunUniform, Orthogonal)}


def serialize(initializer):
    """Keras 3's `{"module", "class_name", "config", "registered_name"}` of an initializer."""
    from . import serialization

    return serialization.serialize(initializer, "keras.initializers", _BUILTINS)


def deserialize(config, custom_objects=None):
    from . import serialization

    return serialization.deserialize(config, {**_BY_NAME, **_BUILTINS}, "initializer", custom_objects)
