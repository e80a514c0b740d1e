"""`keras.mixed_precision.LossScaleOptimizer`: Keras 3's dynamic loss scaling on MindSpore.

Keras 3's TensorFlow backend, step by step (``loss_scale_optimizer.py``):

- ``scale_loss(loss)`` multiplies by the current scale (``initial_scale``, 2**15, before
  the first step);
- ``apply_gradients`` checks that every gradient is finite. If one is not, the step is
  skipped: no variable moves, the inner optimizer's ``iterations`` stays, the scale
  halves and the growth counter restarts. Otherwise the gradients are divided by the
  scale, the inner optimizer applies them (clipping, weight decay, the cross-replica
  sum, as it does alone), and then the scale doubles if this was the
  ``dynamic_growth_steps``-th finite step in a row (2,000 by default).

The finiteness test is MindSpore's own ``mindspore.amp.all_finite``. In a job of several
processes every process must take the same branch, or the inner optimizer's all-reduce
would pair one process's update with another's skipped step: the test is agreed across
processes, so a step is skipped everywhere when any replica's gradients overflow. Under
TF's MirroredStrategy the replicas agree too (replica 0's answer is taken); the two
differ only when some replicas overflow and others do not, where TF would apply
replica 0's verdict to gradients whose sum holds an inf.

Keras 2's custom-loop API is there too, for programs of TF 2.4-2.15: ``get_scaled_loss``,
``get_unscaled_gradients`` (after which ``apply_gradients`` takes the gradients as given)
and ``loss_scale``. ``Keras2LossScaleOptimizer`` is TF 2.1-2.3's experimental wrapper.
"""

from __future__ import annotations

import numpy as np

from .._tensors import as_tensor
from .base import Optimizer


class LossScaleOptimizer(Optimizer):
    """Wraps `inner_optimizer` and scales the loss dynamically (Keras 3's rules; see the module)."""

    def __init__(self, inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000, name=None, **kwargs):
        import mindspore as ms

        if not kwargs.pop("dynamic", True):
            raise ValueError("LossScaleOptimizer no longer supports `dynamic=False`. Instead, simply set "
                             "`loss_scale_factor` directly on the `inner_optimizer`.")
        if kwargs:
            raise ValueError(f"LossScaleOptimizer does not support arguments: `{'`, `'.join(kwargs)}`.")
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(f"LossScaleOptimizer wraps a Keras optimizer; got {inner_optimizer!r}")
        super().__init__(learning_rate=0.0, name=name)
        self.inner_optimizer = inner_optimizer
        self.initial_scale = float(initial_scale)
        self.dynamic_growth_steps = int(dynamic_growth_steps)
        inner_optimizer.loss_scale_factor = None  # the inner optimizer must not unscale a second time
        self.step_counter = ms.Parameter(ms.Tensor(np.array(0, dtype=np.int64)), name=f"{self.name}/step_counter",
                                         requires_grad=False)
        self.dynamic_scale = ms.Parameter(ms.Tensor(np.array(self.initial_scale, dtype=np.float32)),
                                          name=f"{self.name}/dynamic_scale", requires_grad=False)

    # --- what passes through to the inner optimizer ----------------------------------------

    @property
    def iterations(self):
        return self.inner_optimizer.iterations

    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self.inner_optimizer.learning_rate = value

    lr = learning_rate

    def current_learning_rate(self) -> np.float32:
        return self.inner_optimizer.current_learning_rate()

    @property
    def variables(self) -> list:
        return [self.step_counter, self.dynamic_scale] + self.inner_optimizer.variables

    def build(self, var_list) -> None:
        self.inner_optimizer.build(var_list)
        self.built = True

    def checkpoint_entries(self) -> list:
        return [("step_counter", self.step_counter), ("dynamic_scale", self.dynamic_scale)] + [
            (f"inner_optimizer/{key}", value) for key, value in self.inner_optimizer.checkpoint_entries()]

    def restore_entries(self, values: dict) -> None:
        import mindspore as ms

        for key, parameter in (("step_counter", self.step_counter), ("dynamic_scale", self.dynamic_scale)):
            if key in values:
                parameter.set_data(ms.Tensor(np.asarray(values[key]).astype(parameter.asnumpy().dtype)))
        from ..saving import entries_under

        self.inner_optimizer.restore_entries(entries_under("inner_optimizer/", values))

    def get_config(self) -> dict:
        from ..serialization import serialize_object

        return {"name": self.name, "inner_optimizer": serialize_object(self.inner_optimizer),
                "initial_scale": self.initial_scale, "dynamic_growth_steps": self.dynamic_growth_steps}

    # --- scaling -----------------------------------------------------------------------------

    def scale_loss(self, loss):
        """`loss` times the current scale (`initial_scale` before the first step)."""
        return loss * (self.dynamic_scale if self.built else self.initial_scale)

    # Keras 2's custom-loop API (TF 2.4-2.15 programs): the caller unscales, `apply_gradients` then takes
    # the unscaled gradients. The step is the same as Keras 3's, where `apply` unscales.
    _caller_unscaled = False

    @property
    def loss_scale(self):
        """The current loss scale (Keras 2's property)."""
        return self.dynamic_scale

    def get_scaled_loss(self, loss):
        """Keras 2's: the loss (or a loss function's result) times the current scale."""
        if callable(loss):
            return lambda: self.get_scaled_loss(loss())
        return self.scale_loss(loss)

    def get_unscaled_gradients(self, grads):
        """Keras 2's: the gradients divided by the current scale; the next `apply_gradients` takes them so."""
        scale = self.dynamic_scale if self.built else as_tensor(np.float32(self.initial_scale))
        self._caller_unscaled = True
        return [None if g is None else g / scale.astype(g.dtype) for g in grads]

    def _unscaled(self, grads) -> list:
        """The gradients without the scale: divided here, unless the caller did (Keras 2's loop)."""
        if self._caller_unscaled:
            self._caller_unscaled = False
            return grads
        scale = self.dynamic_scale
        return [None if g is None else g / scale.astype(g.dtype) for g in grads]

    def check_finite(self, grads) -> bool:
        """Whether every gradient is finite, here and (in a job) on every other replica."""
        from mindspore import amp

        from ... import collectives

        present = [g for g in grads if g is not None]
        finite = bool(amp.all_finite(present)) if present else True
        group = collectives.replicas()
        if group.size > 1:
            import mindspore as ms

            overflowed = group.all_reduce_sum(ms.Tensor(np.array([0.0 if finite else 1.0], dtype=np.float32)))
            finite = float(overflowed.asnumpy()[0]) == 0.0
        return finite

    def _prepared(self, grads, trainable_variables) -> tuple[list, list]:
        """The gradients as tensors and the variables they update (the optimizer built on them)."""
        grads = list(grads)
        if trainable_variables is None:
            if not self.built:
                raise ValueError("When passing `grads` without `variables`, the optimizer must already be built "
                                 "on a list of variables. Call `optimizer.build(trainable_variables)` first.")
            trainable_variables = list(self.inner_optimizer._trainable_variables)
        self.build(list(trainable_variables))
        return [g if g is None or hasattr(g, "asnumpy") else as_tensor(g) for g in grads], trainable_variables

    def _halved(self):
        """The scale after an overflow (Keras 3: half of it)."""
        return self.dynamic_scale * 0.5

    def _grown(self, counter: int):
        """The scale after a finite step with `counter` finite steps before it in a row, or None to count on
        (Keras 3: double on the `dynamic_growth_steps`-th)."""
        return self.dynamic_scale * 2.0 if counter == self.dynamic_growth_steps - 1 else None

    def apply(self, grads, trainable_variables=None, aggregate=True) -> None:
        from mindspore import ops

        grads, trainable_variables = self._prepared(grads, trainable_variables)
        by_caller = self._caller_unscaled
        unscaled = self._unscaled(grads)
        if not self.check_finite(unscaled if by_caller else grads):
            ops.assign(self.step_counter, _int64(0))
            ops.assign(self.dynamic_scale, self._halved())
            return
        self.inner_optimizer.apply(unscaled, trainable_variables, aggregate=aggregate)
        grown = self._grown(int(self.step_counter.asnumpy()))
        if grown is None:
            ops.assign_add(self.step_counter, _int64(1))
        else:
            ops.assign(self.step_counter, _int64(0))
            ops.assign(self.dynamic_scale, grown)

    def update_step(self, gradient, variable, learning_rate) -> None:
        raise NotImplementedError("LossScaleOptimizer updates through its inner optimizer")

    def finalize_variable_values(self, var_list) -> None:
        """Nothing to do: no moving averages are kept (use_ema is refused)."""


def _int64(value: int):
    return as_tensor(np.array(value, dtype=np.int64), "int64")


class Keras2LossScaleOptimizer(LossScaleOptimizer):
    """TF 2.1-2.3's `keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale)`, with Keras 2's
    API and rules (``loss_scale_optimizer.py`` and ``loss_scale.py`` of TF 2.3):

    - ``loss_scale="dynamic"``: start at 2**15, double after 2,000 finite steps in a row, halve
      (never below 1) and skip the step on an inf or a NaN; a number: that fixed scale, every
      step applied;
    - ``get_scaled_loss(loss)`` multiplies by the scale, ``get_unscaled_gradients(grads)``
      divides by it, and ``apply_gradients`` takes the unscaled gradients, as Keras 2's
      custom loops give them. Under ``fit`` (which scales the loss with ``scale_loss``) the
      gradients arrive scaled and are unscaled first: the step is the same.
    """

    def __init__(self, optimizer, loss_scale="dynamic", name=None):
        if isinstance(loss_scale, str):
            if loss_scale != "dynamic":
                raise ValueError(f'Invalid loss scale: "{loss_scale}". Only "dynamic" or a number is accepted')
            fixed = None
        else:
            fixed = float(loss_scale)
        super().__init__(optimizer, initial_scale=2.0 ** 15 if fixed is None else fixed, name=name)
        self.fixed_scale = fixed

    def apply(self, grads, trainable_variables=None, aggregate=True) -> None:
        if self.fixed_scale is None:
            super().apply(grads, trainable_variables, aggregate)
            return
        grads, trainable_variables = self._prepared(grads, trainable_variables)
        self.inner_optimizer.apply(self._unscaled(grads), trainable_variables, aggregate=aggregate)

    def _halved(self):
        """Keras 2: half the scale, never below 1."""
        from mindspore import ops

        return ops.maximum(self.dynamic_scale * 0.5, as_tensor(np.float32(1.0)))

    def _grown(self, counter: int):
        """Keras 2: after `dynamic_growth_steps` finite steps the count restarts, and the scale doubles
        unless doubling overflows."""
        from mindspore import ops

        if counter + 1 < self.dynamic_growth_steps:
            return None
        doubled = self.dynamic_scale * 2.0
        return doubled if bool(ops.isfinite(doubled).asnumpy()) else self.dynamic_scale

    def get_config(self) -> dict:
        from ..serialization import serialize_object

        return {"name": self.name, "optimizer": serialize_object(self.inner_optimizer),
                "loss_scale": "dynamic" if self.fixed_scale is None else self.fixed_scale}
