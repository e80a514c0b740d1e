"""Keras's `compile` / `fit` / `evaluate` / `predict` over MindSpore's own cell, optimizer and loss.

The native tier (TFL160) lowers a Keras model to an ``nn.Cell``, its optimizer to MindSpore's
(``nn.Momentum``, ``nn.Adam``...) and its loss to an ``nn`` loss. What stays is the loop:
Keras's ``fit`` reports what ``mindspore.train.Model.train`` does not (per-epoch means of the
loss and of training metrics computed on each step's pre-update predictions, in a
``History``), and splits each global batch the way ``tf.distribute`` does (each process
takes the contiguous slice of every batch; ``Model.train`` with a sharded dataset deals
examples round-robin and pads). So the converted program reads::

    model = nn.SequentialCell([...])
    training.compile(model, optimizer=nn.Momentum(model.trainable_params(), 0.1, 0.9),
                     loss=nn.CrossEntropyLoss(), metrics=["accuracy"])
    history = training.fit(model, x, y, batch_size=32, epochs=3)

and each step is one compiled cell (forward, loss, ``ms.value_and_grad``, the gradient
all-reduce, the optimizer), as a MindSpore engineer writes it.

Numbers, as Keras 3 under a MirroredStrategy:
- the loss is the mean over the replica's examples (``nn`` losses' ``"mean"``); gradients are
  averaged across processes (``nn.DistributedGradReducer(mean=True)``), which is Keras's sum of
  replica losses scaled by ``1 / replicas``, partial last batches included; a process whose
  slice is empty contributes zero gradients;
- the epoch's ``loss`` is the example-weighted mean of the replica losses over the epoch, and
  each metric accumulates across processes (read with a cross-process sum);
- ``evaluate`` does the same without updates; ``predict`` runs every batch whole on every
  process (no split, no communication).

Integer labels reach the loss as int32 (MindSpore's class-index losses take int32 only).
"""

from __future__ import annotations

import sys
from collections import OrderedDict

import mindspore as ms
import numpy as np
from mindspore import nn

from .keras._tensors import map_structure
from .keras.callbacks import CallbackList
from .keras.metrics import fresh_values
from .keras.models.data_adapter import DataAdapter, local_share, predict_outputs, to_device
from .keras.models.training import _logs_to_floats, _resolve_metric, _validation_args
from .parameters import write_in_place

__all__ = ["compile", "fit", "evaluate", "predict", "save_weights", "load_weights"]

_STATE = "_migrate_training"


class _Compiled:
    def __init__(self, network, optimizer, loss, metrics, loss_on_logits=False):
        from .keras import metrics as metrics_module

        self.network, self.optimizer, self.loss = network, optimizer, loss
        self.loss_on_logits = loss_on_logits
        self.metric_specs = list(metrics) if isinstance(metrics, (list, tuple)) else ([] if metrics is None else [metrics])
        self.metrics = None  # resolved on the first batch (``"accuracy"`` depends on the shapes)
        self.loss_tracker = metrics_module.Mean(name="loss")
        self.train_step = self.eval_step = self.forward = self.empty_step = None
        self.view = _KerasView(network, self)

    def all_metrics(self) -> list:
        return [self.loss_tracker, *(self.metrics or [])]

    def resolve(self, y, y_pred) -> None:
        if self.metrics is None:
            self.metrics = [_resolve_metric(spec, y, y_pred) for spec in self.metric_specs]

    def results(self) -> dict:
        return _logs_to_floats({metric.name: metric.result() for metric in self.all_metrics()})

    def reset(self) -> None:
        for metric in self.all_metrics():
            metric.reset_state()


def _state(network, what: str) -> _Compiled:
    state = network.__dict__.get(_STATE)
    if state is None:
        raise ValueError(f"You must call `compile()` before using the model ({what}).")
    return state


def _world():
    from . import collectives

    return collectives.replicas()


class _Step:
    """What the loop's compiled cells share: they broadcast no parameters when they compile.

    Under ``parameter_broadcast=True``, GRAPH_MODE broadcasts a cell's parameters from rank 0
    each time it compiles the cell, for each new input shape. Processes whose slices of a
    batch differ in size compile different shapes at different steps, so those broadcasts
    would pair up wrongly across processes (and started without a launcher there is no
    collective to run). ``compile`` broadcasts the network's parameters once instead."""

    def parameters_broadcast_dict(self, recurse=True):
        return OrderedDict()

    def keras_loss(self, logits, y):
        """The loss as Keras computes it: class indices as int32 (MindSpore's class-index losses
        take no other type), a trailing axis of 1 squeezed; other labels in the predictions'
        type and rank (a trailing axis of 1 added to the one that lacks it)."""
        if self.class_index:
            if y.ndim == logits.ndim and y.shape[-1] == 1:
                y = y.reshape(y.shape[:-1])
            y = y.astype(ms.int32)
        else:
            y = y.astype(logits.dtype)
            if y.ndim == logits.ndim - 1 and logits.shape[-1] == 1:
                y = y.reshape(logits.shape)
            elif logits.ndim == y.ndim - 1 and y.shape[-1] == 1:
                logits = logits.reshape(y.shape)
        return self.loss_fn(logits, y)


def _broadcast_parameters(network) -> None:
    """Rank 0's initial weights on every process, as ``parameter_broadcast=True`` asks (once)."""
    world = _world()
    if world.size > 1 and ms.get_auto_parallel_context("parameter_broadcast"):
        for parameter in network.get_parameters():
            write_in_place(parameter, world.broadcast(parameter, root=0))


def _cells(state: _Compiled):
    """The compiled steps, made once per compile (GRAPH_MODE compiles them; under PyNative ``ms.jit`` does)."""
    if state.train_step is not None:
        return
    network, loss_fn, optimizer = state.network, state.loss, state.optimizer
    # the part whose output the loss reads, and the part after it (Keras's crossentropy reads a final
    # softmax's logits: the loss sees ``body``'s output, the metrics ``head``'s)
    body, head = (network[:-1], network[-1]) if state.loss_on_logits else (network, nn.Identity())
    weights = optimizer.parameters if optimizer is not None else None
    processes = _world().size

    class_index = isinstance(loss_fn, (nn.CrossEntropyLoss, nn.NLLLoss))

    class TrainStep(_Step, nn.Cell):
        def __init__(self):
            super().__init__(auto_prefix=False)
            self.body, self.head, self.loss_fn, self.optimizer = body, head, loss_fn, optimizer
            self.class_index = class_index
            self.weights = weights
            self.grad_reducer = nn.DistributedGradReducer(weights, mean=True) if processes > 1 else nn.Identity()

        def forward(self, x, y, scale):
            logits = self.body(x)
            loss = self.keras_loss(logits, y)
            return loss * scale, (loss, self.head(logits))

        @ms.jit
        def construct(self, x, y, scale):
            (_, (loss, logits)), grads = ms.value_and_grad(self.forward, None, self.weights, has_aux=True)(x, y, scale)
            self.optimizer(self.grad_reducer(grads))
            return loss, logits

    class EvalStep(_Step, nn.Cell):
        def __init__(self):
            super().__init__(auto_prefix=False)
            self.body, self.head, self.loss_fn = body, head, loss_fn
            self.class_index = class_index

        @ms.jit
        def construct(self, x, y):
            logits = self.body(x)
            return self.keras_loss(logits, y), self.head(logits)

    train, empty, evaluate = TrainStep(), TrainStep(), EvalStep()
    one, zero = ms.Tensor(1.0, ms.float32), ms.Tensor(0.0, ms.float32)
    state.train_step = lambda x, y: train(x, y, one)
    state.eval_step = evaluate
    state.forward = state.forward or _forward_cell(network)

    def empty_step(x, y):
        """This process's slice is empty: a step on the batch's first example with the loss scaled
        by 0 all-reduces zero gradients, as the other processes' steps all-reduce theirs (the same
        step, the same collectives in the same order). It runs in inference mode, in a cell of its
        own (compiled so), so no BatchNormalization statistics or Dropout draws move."""
        with _Mode(network, False):
            empty(x, y, zero)

    state.empty_step = empty_step


def compile(network, optimizer=None, loss=None, metrics=None, loss_on_logits=False):  # noqa: A001 (Keras's name)
    """Keras's ``model.compile`` for a MindSpore cell: ``optimizer`` is a MindSpore optimizer over
    the cell's parameters, ``loss`` a MindSpore loss taking ``(logits, labels)`` and reducing to
    the mean, ``metrics`` Keras metric names or objects. ``loss_on_logits``: the network is an
    ``nn.SequentialCell`` ending in ``nn.Softmax()``, and the loss reads the softmax's input, as
    Keras's crossentropy reads a softmax output's logits (the metrics read the probabilities)."""
    if loss is None:
        raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
    if loss_on_logits:
        if not (isinstance(network, nn.SequentialCell) and len(network) > 1 and isinstance(network[-1], nn.Softmax)):
            raise ValueError("`loss_on_logits=True` needs an nn.SequentialCell whose last cell is nn.Softmax()")
    _broadcast_parameters(network)
    network.__dict__[_STATE] = _Compiled(network, optimizer, loss, metrics, loss_on_logits)


class _Mode:
    """Sets the cell's training mode for a loop and restores it after (a direct call keeps its own)."""

    def __init__(self, network, training: bool):
        self.network, self.training, self.before = network, training, network.training

    def __enter__(self):
        self.network.set_train(self.training)

    def __exit__(self, *exc):
        self.network.set_train(self.before)


def _run(state: _Compiled, batch, step):
    """One step on this process's contiguous slice of a global batch; the slice's size."""
    group = _world()
    local, count = local_share(batch, group.rank, group.size)
    if count == 0:
        if step is state.train_step:
            x, y, _ = to_device(map_structure(lambda a: None if a is None else a[:1], batch))
            state.empty_step(x, y)
        return 0
    x, y, weights = to_device(local)
    if weights is not None:
        raise ValueError("sample weights are not supported by the native loop (the shim's `fit` takes them)")
    loss, logits = step(x, y)
    state.resolve(y, logits)
    with fresh_values():  # (the step's outputs and this batch: nothing changes them after)
        state.loss_tracker.update_state(loss, sample_weight=float(count))
        for metric in state.metrics:
            metric.update_state(y, logits)
    return count


def fit(network, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
        validation_data=None, shuffle=True, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
        validation_batch_size=None, validation_freq=1):
    """Keras's ``model.fit``: trains for ``epochs`` and returns a ``History``. ``callbacks`` are
    Keras's (``migrate.runtime.keras.callbacks``): they see the network through a view that
    answers what Keras's built-in callbacks ask of a model (see ``_KerasView``)."""
    state = _state(network, "fit")
    if state.optimizer is None:
        raise ValueError("`fit` needs an optimizer: pass one to `compile()`.")
    _cells(state)
    adapter = DataAdapter(x, y, None, batch_size, shuffle, steps_per_epoch)
    if validation_split and validation_data is None:
        validation_data = adapter.validation_split(validation_split)
    verbose = 1 if verbose == "auto" else verbose
    view = state.view
    hooks = CallbackList(callbacks, model=view, params={"epochs": epochs, "steps": adapter.num_batches,
                                                        "verbose": verbose})
    view.stop_training = False
    batch_logs = hooks.wants_batch_logs
    hooks.on_train_begin()
    logs: dict = {}
    with _Mode(network, True):
        for epoch in range(initial_epoch, epochs):
            state.reset()
            hooks.on_epoch_begin(epoch)
            for step, batch in enumerate(adapter.epoch(epoch)):
                hooks.on_train_batch_begin(step)
                _run(state, batch, state.train_step)
                if batch_logs:
                    hooks.on_train_batch_end(step, state.results())
                if view.stop_training:
                    break
            logs = state.results()
            if validation_data is not None and (epoch + 1) % validation_freq == 0:
                held_out = _validation_args(validation_data)
                if held_out.pop("sample_weight", None) is not None:
                    raise ValueError("validation sample weights are not supported by the native loop")
                tail = _evaluate(network, state, held_out, validation_batch_size or batch_size, validation_steps, hooks)
                logs.update({f"val_{k}": v for k, v in tail.items()})
            hooks.on_epoch_end(epoch, logs)
            if verbose and _world().rank == 0:
                text = " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())
                print(f"Epoch {epoch + 1}/{epochs} - {text}", file=sys.stdout, flush=True)
            if view.stop_training:
                break
    hooks.on_train_end(logs)
    return hooks.history


def evaluate(network, x=None, y=None, batch_size=None, verbose="auto", steps=None, callbacks=None, return_dict=False):
    """Keras's ``model.evaluate``: the loss and metrics over the data (example-weighted means)."""
    state = _state(network, "evaluate")
    _cells(state)
    hooks = CallbackList(callbacks, model=state.view, add_history=False) if callbacks else None
    logs = _evaluate(network, state, {"x": x, "y": y}, batch_size, steps, hooks)
    if verbose and verbose != "auto" and _world().rank == 0:
        print(" - ".join(f"{k}: {v:.4f}" for k, v in logs.items()), flush=True)
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


def _evaluate(network, state: _Compiled, data: dict, batch_size, steps, hooks) -> dict:
    """One pass without updates; Keras's test hooks on ``hooks`` (``fit`` passes its own, for validation)."""
    adapter = DataAdapter(data.get("x"), data.get("y"), None, batch_size, False, steps)
    state.reset()
    if hooks is not None:
        hooks.on_test_begin()
    batch_logs = hooks is not None and hooks.wants_test_batch_logs
    with _Mode(network, False):
        for step, batch in enumerate(adapter.epoch(0)):
            if hooks is not None:
                hooks.on_test_batch_begin(step)
            _run(state, batch, state.eval_step)
            if hooks is not None:
                hooks.on_test_batch_end(step, state.results() if batch_logs else None)
    logs = state.results()
    if hooks is not None:
        hooks.on_test_end(logs)
    return logs


def predict(network, x, batch_size=None, verbose="auto", steps=None):
    """Keras's ``model.predict``: the outputs for every example, as NumPy, each row computed by the
    replica TF gives it to (``data_adapter.predict_outputs``)."""
    adapter = DataAdapter(x, None, None, batch_size, False, steps)
    state = network.__dict__.get(_STATE)
    if state is None:
        state = network.__dict__[_STATE] = _Compiled(network, None, None, None)
    if state.forward is None:
        state.forward = _forward_cell(network)
    with _Mode(network, False):
        return predict_outputs(adapter.epoch(0), state.forward, network, _world())


def save_weights(network, filepath, overwrite=True):
    """Keras's ``model.save_weights``: the network's parameters (MindSpore's order and layouts) in a
    MindSpore checkpoint at exactly ``filepath`` (whatever its suffix), written by rank 0
    atomically; every process waits for it. ``load_weights`` reads it back."""
    from .keras import saving

    saving.write_entries(filepath, saving.weight_entries("weights/", network.get_parameters()))


def load_weights(network, filepath):
    """Keras's ``model.load_weights`` for a file ``save_weights`` wrote (matched by position, shapes checked)."""
    from .keras import saving

    saving.assign_by_position("weights/", list(network.get_parameters()), saving.read_entries(filepath),
                              f"load_weights({str(filepath)!r})", write=write_in_place)


class _KerasView:
    """The network as Keras's built-in callbacks see a model: ``stop_training``, ``optimizer``
    (its learning rate, read and set as Keras's), ``metrics``, ``get_weights``/``set_weights``
    (every parameter, BatchNorm statistics included, as Keras's weights) and
    ``save_weights``/``load_weights``. The native tier lowers a ``fit`` only with callbacks
    known to ask nothing more (TFL160)."""

    def __init__(self, network, state: _Compiled):
        self.network, self._state = network, state
        self.stop_training = False

    @property
    def optimizer(self):
        return _OptimizerView(self._state.optimizer)

    @property
    def metrics(self) -> list:
        return self._state.all_metrics()

    def get_weights(self) -> list:
        return [parameter.asnumpy().copy() for parameter in self.network.get_parameters()]

    def set_weights(self, weights) -> None:
        parameters = list(self.network.get_parameters())
        if len(weights) != len(parameters):
            raise ValueError(f"You called `set_weights(weights)` on a model with {len(parameters)} weights, "
                             f"but the provided weight list has {len(weights)} elements.")
        for parameter, value in zip(parameters, weights):
            if tuple(np.shape(value)) != tuple(parameter.shape):
                raise ValueError(f"Layer weight shape {tuple(parameter.shape)} not compatible with provided weight "
                                 f"shape {tuple(np.shape(value))}")
            write_in_place(parameter, value)

    def save_weights(self, filepath, overwrite=True) -> None:
        save_weights(self.network, filepath)

    def load_weights(self, filepath) -> None:
        load_weights(self.network, filepath)

    def save(self, filepath, *args, **kwargs):
        raise NotImplementedError("a native model saves its weights only (`save_weights`); "
                                  "`ModelCheckpoint(save_weights_only=False)` needs the shim's model (`--tier shim`)")


class _OptimizerView:
    """A MindSpore optimizer's learning rate as Keras's: a float32 read, and a write that keeps
    Keras's update. Keras's SGD keeps ``v = m*v - lr*g`` (each gradient scaled by the rate of its
    step); MindSpore's ``nn.SGD``/``nn.Momentum`` keep ``v = m*v + g`` and subtract ``lr*v``, so
    Keras's ``v`` is MindSpore's times ``-lr``. When the rate changes from ``a`` to ``b``, the
    velocity is rescaled by ``a / b``, and the next steps give Keras's weights again (Nesterov
    alike). Adam's rate scales each step's update in both, so it is set as it is."""

    def __init__(self, optimizer):
        self._optimizer = optimizer

    @property
    def iterations(self):
        return self._optimizer.global_step

    def current_learning_rate(self) -> np.float32:
        return np.float32(self._optimizer.learning_rate.asnumpy())

    @property
    def learning_rate(self) -> np.float32:
        return self.current_learning_rate()

    @learning_rate.setter
    def learning_rate(self, value) -> None:
        optimizer = self._optimizer
        old, new = float(self.current_learning_rate()), float(np.float32(value))
        velocity = _velocity(optimizer)
        if velocity is not None and old != new:
            if new == 0.0:
                raise ValueError("a learning rate of 0 for a native SGD with momentum: MindSpore's velocity "
                                 "cannot keep Keras's update (run with `--tier shim`)")
            for slot in velocity:
                write_in_place(slot, slot.asnumpy() * np.float32(old / new))
        write_in_place(optimizer.learning_rate, np.float32(new))

    lr = learning_rate


def _velocity(optimizer):
    """The momentum slots whose meaning depends on the rate (``nn.SGD``'s ``accum``, ``nn.Momentum``'s
    ``moments``), None where there are none or the momentum is 0."""
    if isinstance(optimizer, nn.Momentum):
        return optimizer.moments
    if isinstance(optimizer, nn.SGD) and float(np.asarray(optimizer.momentum.asnumpy())) > 0:
        return optimizer.accum
    return None


def _forward_cell(network):
    class Forward(_Step, nn.Cell):
        def __init__(self):
            super().__init__(auto_prefix=False)
            self.network = network

        @ms.jit
        def construct(self, x):
            return self.network(x)

    return Forward()

