"""The Keras 3 optimizer machinery on MindSpore Parameters.

`apply_gradients(zip(grads, vars))` follows Keras 3's TensorFlow backend step by step:
build the slots on first use (variables bind lazily; new variables later get slots
too), drop None gradients, undo `loss_scale_factor`, clip (`clipnorm`, `clipvalue`,
`global_clipnorm` — on the replica's own gradients, before aggregation, as TF does),
apply decoupled weight decay `var -= var * weight_decay * lr`, **sum the gradients
across replicas**, run each variable's `update_step` with the learning rate at the
current step, apply constraints, and add one to `iterations`.

The cross-replica sum is what TF's `apply_gradients` does under a MirroredStrategy; here
each process is a replica, so in a launched job with more than one process gradients
are summed with `migrate.runtime.spmd.aggregate_gradients` (fused all-reduce). Pass
`skip_gradients_aggregation=True` or `experimental_aggregate_gradients=False` when the
gradients are already reduced (e.g. by `nn.DistributedGradReducer`).

All arithmetic is float32, with the scalar factors (learning rate, bias corrections)
computed in float32 as TF computes them.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from .._tensors import as_tensor, contiguous
from . import schedules as schedules_module

f32 = np.float32


class _VariableList(list):
    """Keras 3's `optimizer.variables` list, also callable as TF 2.x's `optimizer.variables()`.

    Code written for TF 2.x's optimizers (Horovod's examples among it:
    `hvd.broadcast_variables(opt.variables(), root_rank=0)`) calls it; it gives the list.
    """

    def __call__(self):
        return list(self)


def _ops():
    from mindspore import ops

    return ops


@functools.lru_cache(maxsize=None)
def _one_int64():
    """The int64 1 added to `iterations` every step (made once, not once per step)."""
    import mindspore as ms

    return ms.Tensor(np.array(1, dtype=np.int64))


def _scalar(value):
    import mindspore as ms

    return ms.Tensor(np.asarray(value, dtype=np.float32))


class Optimizer:
    """Base class of the Keras optimizers here; subclasses implement `build` and `update_step`."""

    def __init__(self, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        import mindspore as ms

        from ..layers.base import to_snake_case, unique_name

        if "lr" in kwargs:
            learning_rate = kwargs.pop("lr")
        if not kwargs.get("decay"):  # Keras 2's `decay=0.0` is harmless; a real decay is refused below
            kwargs.pop("decay", None)
        if kwargs:
            raise ValueError(f"Argument(s) not recognized: {kwargs}")
        if use_ema or gradient_accumulation_steps:
            raise NotImplementedError("use_ema and gradient_accumulation_steps are not supported by migrate's "
                                      "Keras optimizers")
        if sum(a is not None for a in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set.")
        self.name = name or unique_name(to_snake_case(type(self).__name__))
        self.weight_decay = weight_decay
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        self.loss_scale_factor = loss_scale_factor
        self.built = False
        self._iterations = ms.Parameter(ms.Tensor(np.array(0, dtype=np.int64)), name=f"{self.name}/iteration",
                                        requires_grad=False)
        if isinstance(learning_rate, schedules_module.LearningRateSchedule) or (
                callable(learning_rate) and not hasattr(learning_rate, "asnumpy")):
            self._learning_rate = learning_rate
        else:
            self._learning_rate = ms.Parameter(ms.Tensor(np.asarray(_to_float(learning_rate), dtype=np.float32)),
                                               name=f"{self.name}/learning_rate", requires_grad=False)
        self._variables: list = []             # slot variables in creation order
        self._slot_keys: list = []             # "<variable index>/<slot kind>" per slot (checkpoint keys)
        self._trainable_variables: list = []
        self._index: dict = {}                 # id(parameter) -> index into _trainable_variables
        self._exclude_ids: set = set()
        self._exclude_names: list = []
        self._pending_restore: dict | None = None

    # --- state ---------------------------------------------------------------------------

    @property
    def iterations(self):
        """Number of updates applied so far (an int64 Parameter)."""
        return self._iterations

    @property
    def learning_rate(self):
        """The learning rate at the current step: the Parameter for a fixed rate, a Tensor for a schedule."""
        if isinstance(self._learning_rate, schedules_module.LearningRateSchedule):
            return self._learning_rate(int(self._iterations.asnumpy()))
        if callable(self._learning_rate) and not hasattr(self._learning_rate, "asnumpy"):
            return as_tensor(_to_float(self._learning_rate()), "float32")
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        import mindspore as ms

        if isinstance(value, schedules_module.LearningRateSchedule) or (
                callable(value) and not hasattr(value, "asnumpy")):
            self._learning_rate = value
            return
        if isinstance(self._learning_rate, schedules_module.LearningRateSchedule):
            raise TypeError("This optimizer was created with a `LearningRateSchedule` object as its "
                            "`learning_rate` constructor argument, hence its learning rate is not settable.")
        self._learning_rate.set_data(ms.Tensor(np.asarray(_to_float(value), dtype=np.float32)))

    lr = learning_rate

    def current_learning_rate(self) -> np.float32:
        """The rate `update_step` gets now, as a float32 (a schedule evaluated at `iterations`)."""
        if isinstance(self._learning_rate, schedules_module.LearningRateSchedule):
            return f32(self._learning_rate.value(int(self._iterations.asnumpy())))
        if callable(self._learning_rate) and not hasattr(self._learning_rate, "asnumpy"):
            return f32(_to_float(self._learning_rate()))
        return f32(self._learning_rate.asnumpy())

    def _step_learning_rate(self):
        """The rate this step's update reads, as a float32 tensor.

        A fixed rate is its Parameter itself, read on the device: reading it back to the host
        every step would wait for all the work queued before it.
        """
        if hasattr(self._learning_rate, "asnumpy"):
            return self._learning_rate
        return _scalar(self.current_learning_rate())

    @property
    def variables(self) -> list:
        out = [self._iterations]
        if hasattr(self._learning_rate, "asnumpy"):
            out.append(self._learning_rate)
        return _VariableList(out + list(self._variables))

    def get_config(self) -> dict:
        from ..serialization import serialize_object

        rate = self._learning_rate
        return {"name": self.name, "learning_rate": serialize_object(rate) if hasattr(rate, "get_config")
                else float(self.current_learning_rate()), "weight_decay": self.weight_decay,
                "clipnorm": self.clipnorm, "clipvalue": self.clipvalue, "global_clipnorm": self.global_clipnorm}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ..serialization import deserialize_value

        return cls(**deserialize_value(config, custom_objects))

    # --- slots ---------------------------------------------------------------------------

    def build(self, var_list) -> None:
        """Record the variables (Keras order) and create the slot variables for them."""
        new = [v for v in var_list if id(v) not in self._index]
        for variable in new:
            self._index[id(variable)] = len(self._trainable_variables)
            self._trainable_variables.append(variable)
        if new:
            self._build_slots(new)
        self.built = True
        if self._pending_restore:
            self._restore_pending()

    def _build_slots(self, variables) -> None:
        """Create this optimizer's slots for `variables` (appended to per-kind lists)."""

    def add_variable_from_reference(self, reference_variable, name=None, initializer="zeros"):
        import mindspore as ms

        from .. import initializers

        values = initializers.get(initializer)(tuple(reference_variable.shape), dtype="float32")
        base = str(reference_variable.name).replace("/", "_")
        slot = ms.Parameter(ms.Tensor(contiguous(values)), name=f"{self.name}/{base}_{name}",
                            requires_grad=False)
        self._variables.append(slot)
        self._slot_keys.append(f"{self._index.get(id(reference_variable), len(self._slot_keys)):05d}/{name}")
        return slot

    def add_optimizer_variables(self, variables, names, initializer="zeros"):
        """One slot per variable for each name; a list per name (a single list for one name).

        `initializer` is one for all names or, as in Keras 3, a list of one per name."""
        single = isinstance(names, str)
        names = [names] if single else list(names)
        initializers = list(initializer) if isinstance(initializer, (list, tuple)) else [initializer] * len(names)
        if len(initializers) != len(names):
            raise ValueError("The number of provided names must match the number of provided initializers.  "
                             f"Received name='{names}', initializer='{initializer}'")
        lists = [[] for _ in names]
        for variable in variables:
            for kind, init, slots in zip(names, initializers, lists):
                slots.append(self.add_variable_from_reference(variable, kind, init))
        return lists[0] if single else tuple(lists)

    def _get_variable_index(self, variable) -> int:
        return self._index[id(variable)]

    def checkpoint_entries(self) -> list:
        """[(key, Parameter)]: iterations, a fixed learning rate, and slots keyed by variable index and kind.

        Keys do not depend on names, so a checkpoint restores into a new optimizer for the
        same model, as TF's object-based checkpoints do.
        """
        entries = [("iterations", self._iterations)]
        if hasattr(self._learning_rate, "asnumpy"):
            entries.append(("learning_rate", self._learning_rate))
        return entries + [(f"slots/{key}", slot) for key, slot in zip(self._slot_keys, self._variables)]

    def restore_entries(self, values: dict) -> None:
        """Assign {key: array}; slots that do not exist yet are assigned when `build` creates them."""
        self._pending_restore = dict(values)
        self._restore_pending()

    def _restore_pending(self) -> None:
        import mindspore as ms

        for key, parameter in self.checkpoint_entries():
            value = self._pending_restore.get(key)
            if value is not None and tuple(value.shape) == tuple(parameter.shape):
                parameter.set_data(ms.Tensor(value.astype(parameter.asnumpy().dtype)))
                del self._pending_restore[key]
        if not self._pending_restore:
            self._pending_restore = None

    # --- weight decay ---------------------------------------------------------------------

    def exclude_from_weight_decay(self, var_list=None, var_names=None) -> None:
        if self.built:
            raise ValueError("`exclude_from_weight_decay()` can only be configured before the optimizer is built.")
        self._exclude_ids = {id(v) for v in (var_list or [])}
        self._exclude_names = list(var_names or [])

    def _use_weight_decay(self, variable) -> bool:
        if id(variable) in self._exclude_ids:
            return False
        return not any(name in str(variable.name) for name in self._exclude_names)

    def _apply_weight_decay(self, variables, lr) -> None:
        if self.weight_decay is None:
            return
        ops = _ops()
        wd = _scalar(self.weight_decay)
        for variable in variables:
            if self._use_weight_decay(variable):
                ops.assign(variable, variable - variable * wd * lr)

    # --- clipping --------------------------------------------------------------------------

    def _clip_gradients(self, grads):
        ops = _ops()
        if self.clipnorm and self.clipnorm > 0:
            return [_clip_by_norm(g, self.clipnorm) for g in grads]
        if self.global_clipnorm and self.global_clipnorm > 0:
            norm = ops.sqrt(sum(ops.sum(ops.square(g)) for g in grads))
            clip = f32(self.global_clipnorm)
            scale = clip * ops.minimum(1.0 / norm, _scalar(1.0 / clip))
            return [g * scale for g in grads]
        if self.clipvalue and self.clipvalue > 0:
            v = float(self.clipvalue)
            return [ops.clip_by_value(g, -v, v) for g in grads]
        return grads

    # --- applying ---------------------------------------------------------------------------

    def apply_gradients(self, grads_and_vars, name=None, skip_gradients_aggregation=False,
                        experimental_aggregate_gradients=True, **kwargs):
        """Update variables from (gradient, variable) pairs; returns `iterations`.

        In a launched job gradients are summed across processes first (TF's behaviour
        under a MirroredStrategy) unless aggregation is turned off.
        """
        pairs = list(grads_and_vars)
        if not pairs:
            return self.iterations
        grads = [g for g, _ in pairs]
        variables = [v for _, v in pairs]
        aggregate = experimental_aggregate_gradients and not skip_gradients_aggregation
        self.apply(grads, variables, aggregate=aggregate)
        return self.iterations

    def apply(self, grads, trainable_variables=None, aggregate=True) -> None:
        ops = _ops()
        grads = list(grads)
        if trainable_variables is None:
            if not self.built:
                raise ValueError("When passing `grads` without `variables`, the optimizer must already be built "
                                 "on a list of variables. Call `optimizer.build(trainable_variables)` first.")
            trainable_variables = list(self._trainable_variables)
        trainable_variables = list(trainable_variables)
        if len(grads) == 0:
            return
        self.build(trainable_variables)
        kept = [(g, v) for g, v in zip(grads, trainable_variables) if g is not None]
        if len(kept) < len(grads):
            if not kept:
                raise ValueError("No gradients provided for any variable.")
            missing = [v.name for g, v in zip(grads, trainable_variables) if g is None]
            warnings.warn(f"Gradients do not exist for variables {missing} when minimizing the loss.")
        grads = [as_tensor(g) if not hasattr(g, "asnumpy") else g for g, _ in kept]
        grads = [g.astype(v.dtype) if g.dtype != v.dtype else g for g, (_, v) in zip(grads, kept)]
        variables = [v for _, v in kept]
        if self.loss_scale_factor is not None:
            grads = [g / float(self.loss_scale_factor) for g in grads]
        lr = self._step_learning_rate()
        grads = self._clip_gradients(grads)
        self._apply_weight_decay(variables, lr)
        if aggregate:
            from ... import collectives, spmd

            if collectives.replicas().size > 1:
                grads = list(spmd.aggregate_gradients(grads))
        self._update_variables(grads, variables, lr)
        for variable in variables:
            constraint = getattr(variable, "_keras_constraint", None)
            if constraint is not None:
                ops.assign(variable, constraint(variable))
        ops.assign_add(self._iterations, _one_int64())

    def _update_variables(self, grads, variables, learning_rate) -> None:
        """Apply `update_step` to every (gradient, variable); optimizers may update all at once instead.

        What :meth:`_per_step` computes (bias corrections from one read of `iterations`) is
        computed once for the step and shared by every variable's update."""
        self._step_values = self._per_step(learning_rate)
        try:
            for grad, variable in zip(grads, variables):
                self.update_step(grad, variable, learning_rate)
        finally:
            self._step_values = None

    def _per_step(self, learning_rate):
        """Values every variable's update of this step shares (None: none)."""
        return None

    def _step(self, learning_rate):
        """This step's :meth:`_per_step` values (computed here when `update_step` is called on its own,
        as a custom optimizer's code may)."""
        values = getattr(self, "_step_values", None)
        return values if values is not None else self._per_step(learning_rate)

    def update_step(self, gradient, variable, learning_rate) -> None:
        raise NotImplementedError

    def minimize(self, loss, var_list, tape=None):
        """Compute gradients of `loss` (a zero-argument callable) for `var_list` and apply them."""
        import mindspore as ms

        if callable(var_list):
            var_list = var_list()
        var_list = list(var_list)
        if not callable(loss):
            raise TypeError("`loss` must be a callable returning the loss (MindSpore differentiates functions)")
        from ..autodiff import reset_on_error

        with reset_on_error():
            _, grads = ms.value_and_grad(lambda: loss(), None, var_list)()
        return self.apply_gradients(zip(grads, var_list))

    def scale_loss(self, loss):
        return loss * self.loss_scale_factor if self.loss_scale_factor is not None else loss

    # Keras helpers used by custom optimizers written against Keras 3
    def assign(self, variable, value):
        _ops().assign(variable, value)

    def assign_add(self, variable, value):
        _ops().assign_add(variable, value)

    def assign_sub(self, variable, value):
        _ops().assign_sub(variable, value)


def _clip_by_norm(t, clip_norm):
    """tf.clip_by_norm: t * clip / max(||t||, clip)."""
    from migrate.runtime.tfmath import clip_by_norm

    return clip_by_norm(t, float(clip_norm))


def _to_float(value) -> float:
    if hasattr(value, "asnumpy"):
        return float(value.asnumpy())
    if hasattr(value, "numpy"):
        return float(value.numpy())
    return float(value)
