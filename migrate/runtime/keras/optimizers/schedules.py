"""`tf.keras.optimizers.schedules` with Keras 3's formulas, evaluated in float32.

A schedule maps the optimizer's step counter (`optimizer.iterations`, the number of
updates already applied) to a learning rate. Calling a schedule returns a float32
MindSpore Tensor; optimizers use `schedule.value(step)` (a numpy float32) internally.
Each formula follows keras/src/optimizers/schedules/learning_rate_schedule.py
operation by operation in float32, so the rates equal TF's to a few ulps.
"""

from __future__ import annotations

import math

import numpy as np

f32 = np.float32


def _step(step) -> np.float32:
    if hasattr(step, "asnumpy"):
        step = step.asnumpy()
    elif hasattr(step, "numpy") and not isinstance(step, np.ndarray):
        step = step.numpy()
    return f32(np.asarray(step).reshape(()))


class LearningRateSchedule:
    """Base class: implement `value(step) -> numpy float32`; `__call__` returns a MindSpore Tensor."""

    def value(self, step) -> np.float32:
        raise NotImplementedError

    def __call__(self, step):
        import mindspore as ms

        return ms.Tensor(np.asarray(self.value(step), dtype=np.float32))

    def get_config(self) -> dict:
        raise NotImplementedError

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class ExponentialDecay(LearningRateSchedule):
    """initial * decay_rate ** (step / decay_steps) (floor of the exponent when `staircase`)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="ExponentialDecay"):
        if decay_steps <= 0:
            raise ValueError(f"Argument `decay_steps` must be > 0. Received: decay_steps={decay_steps}")
        self.initial_learning_rate, self.decay_steps, self.decay_rate = initial_learning_rate, decay_steps, decay_rate
        self.staircase, self.name = staircase, name

    def value(self, step):
        p = _step(step) / f32(self.decay_steps)
        if self.staircase:
            p = np.floor(p)
        return f32(f32(self.initial_learning_rate) * np.power(f32(self.decay_rate), p))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}


class PiecewiseConstantDecay(LearningRateSchedule):
    """values[0] while step <= boundaries[0], values[i] for boundaries[i-1] < step <= boundaries[i], then values[-1]."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError("The length of boundaries should be 1 less than the length of values. Received: "
                             f"boundaries={boundaries} of length {len(boundaries)}, and values={values} of "
                             f"length {len(values)}.")
        self.boundaries, self.values, self.name = list(boundaries), list(values), name

    def value(self, step):
        step = float(_step(step))
        if step <= self.boundaries[0]:
            return f32(self.values[0])
        for low, high, value in zip(self.boundaries[:-1], self.boundaries[1:], self.values[1:-1]):
            if low < step <= high:
                return f32(value)
        return f32(self.values[-1])

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                 name="PolynomialDecay"):
        if decay_steps <= 0:
            raise ValueError(f"Argument `decay_steps` must be > 0. Received: decay_steps={decay_steps}")
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.end_learning_rate, self.power, self.cycle, self.name = end_learning_rate, power, cycle, name

    def value(self, step):
        initial, end = f32(self.initial_learning_rate), f32(self.end_learning_rate)
        step = _step(step)
        decay_steps = f32(self.decay_steps)
        if self.cycle:
            multiplier = f32(1.0) if step == 0 else f32(np.ceil(step / f32(self.decay_steps)))
            decay_steps = decay_steps * multiplier
        else:
            step = min(step, decay_steps)
        p = f32(step / decay_steps)
        return f32((initial - end) * np.power(f32(1) - p, f32(self.power)) + end)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "end_learning_rate": self.end_learning_rate, "power": self.power, "cycle": self.cycle,
                "name": self.name}


class InverseTimeDecay(LearningRateSchedule):
    """initial / (1 + decay_rate * step / decay_steps) (floor of the ratio when `staircase`)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="InverseTimeDecay"):
        if decay_steps <= 0:
            raise ValueError(f"Argument `decay_steps` must be > 0. Received: decay_steps={decay_steps}")
        self.initial_learning_rate, self.decay_steps, self.decay_rate = initial_learning_rate, decay_steps, decay_rate
        self.staircase, self.name = staircase, name

    def value(self, step):
        p = _step(step) / f32(self.decay_steps)
        if self.staircase:
            p = np.floor(p)
        return f32(f32(self.initial_learning_rate) / (f32(1) + f32(self.decay_rate) * p))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}


class CosineDecay(LearningRateSchedule):
    """Cosine decay to `alpha * initial` over `decay_steps`, after an optional linear warmup."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay", warmup_target=None,
                 warmup_steps=0):
        if decay_steps <= 0:
            raise ValueError(f"Argument `decay_steps` must be > 0. Received: decay_steps={decay_steps}")
        self.initial_learning_rate, self.decay_steps, self.alpha = initial_learning_rate, decay_steps, alpha
        self.name, self.warmup_target, self.warmup_steps = name, warmup_target, warmup_steps

    def _decay(self, step, decay_steps, decay_from):
        fraction = f32(step / decay_steps)
        cosine = f32(0.5) * (f32(1.0) + np.cos(f32(math.pi) * fraction))
        decayed = f32(1 - self.alpha) * cosine + f32(self.alpha)
        return f32(decay_from * decayed)

    def value(self, step):
        initial = f32(self.initial_learning_rate)
        decay_steps = f32(self.decay_steps)
        step = _step(step)
        if self.warmup_target is None:
            return self._decay(min(step, decay_steps), decay_steps, initial)
        target, warmup_steps = f32(self.warmup_target), f32(self.warmup_steps)
        step = min(step, decay_steps + warmup_steps)
        if step < warmup_steps:
            return f32((target - initial) * f32(step / warmup_steps) + initial)
        return self._decay(f32(step - warmup_steps), decay_steps, target)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "name": self.name, "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps}


class CosineDecayRestarts(LearningRateSchedule):
    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0, name="SGDRDecay"):
        if first_decay_steps <= 0:
            raise ValueError(f"Argument `first_decay_steps` must be > 0. Received: {first_decay_steps}")
        self.initial_learning_rate, self.first_decay_steps = initial_learning_rate, first_decay_steps
        self._t_mul, self._m_mul, self.alpha, self.name = t_mul, m_mul, alpha, name

    def value(self, step):
        t_mul, m_mul, alpha = f32(self._t_mul), f32(self._m_mul), f32(self.alpha)
        fraction = f32(_step(step) / f32(self.first_decay_steps))
        if t_mul == 1.0:
            i_restart = np.floor(fraction)
            fraction = f32(fraction - i_restart)
        else:
            i_restart = np.floor(np.log(f32(1.0) - fraction * (f32(1.0) - t_mul)) / np.log(t_mul))
            sum_r = (f32(1.0) - np.power(t_mul, i_restart)) / (f32(1.0) - t_mul)
            fraction = f32((fraction - sum_r) / np.power(t_mul, i_restart))
        m_fac = np.power(m_mul, i_restart)
        cosine = f32(0.5) * m_fac * (f32(1.0) + np.cos(f32(math.pi) * fraction))
        return f32(f32(self.initial_learning_rate) * ((f32(1) - alpha) * cosine + alpha))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "first_decay_steps": self.first_decay_steps,
                "t_mul": self._t_mul, "m_mul": self._m_mul, "alpha": self.alpha, "name": self.name}


class LinearCosineDecay(LearningRateSchedule):
    """Keras 2's `tf.keras.experimental.LinearCosineDecay` (TF 1's `train.linear_cosine_decay`):
    a cosine of `num_periods` periods times a linear decay, plus `beta`, over `decay_steps`."""

    def __init__(self, initial_learning_rate, decay_steps, num_periods=0.5, alpha=0.0, beta=0.001, name=None):
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.num_periods, self.alpha, self.beta, self.name = num_periods, alpha, beta, name

    def _parts(self, step):
        decay_steps = f32(self.decay_steps)
        step = min(_step(step), decay_steps)
        linear = f32((decay_steps - step) / decay_steps)
        fraction = f32(f32(2.0) * f32(self.num_periods) * f32(step / decay_steps))
        cosine = f32(f32(0.5) * (f32(1.0) + np.cos(f32(math.pi) * fraction)))
        return step, linear, cosine

    def _rate(self, linear, cosine):
        return f32(f32(self.initial_learning_rate) * f32((f32(self.alpha) + linear) * cosine + f32(self.beta)))

    def value(self, step):
        _, linear, cosine = self._parts(step)
        return self._rate(linear, cosine)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "num_periods": self.num_periods, "alpha": self.alpha, "beta": self.beta, "name": self.name}


class NoisyLinearCosineDecay(LinearCosineDecay):
    """Keras 2's `tf.keras.experimental.NoisyLinearCosineDecay`: the linear part gets Gaussian noise
    of variance `initial_variance / (1 + step) ** variance_decay`, drawn anew at every call. The draws
    are NumPy's (seeded by `seed`), not TF's: the rates differ from TF's by that noise alone."""

    def __init__(self, initial_learning_rate, decay_steps, initial_variance=1.0, variance_decay=0.55,
                 num_periods=0.5, alpha=0.0, beta=0.001, seed=None, name=None):
        super().__init__(initial_learning_rate, decay_steps, num_periods, alpha, beta, name)
        self.initial_variance, self.variance_decay, self.seed = initial_variance, variance_decay, seed
        self._draws = np.random.default_rng(seed)

    def value(self, step):
        step, linear, cosine = self._parts(step)
        variance = f32(f32(self.initial_variance) / np.power(f32(1.0) + step, f32(self.variance_decay)))
        noise = f32(self._draws.normal(0.0, math.sqrt(variance))) if variance > 0 else f32(0.0)
        return self._rate(f32(linear + noise), cosine)

    def get_config(self):
        return {**super().get_config(), "initial_variance": self.initial_variance,
                "variance_decay": self.variance_decay, "seed": self.seed}
