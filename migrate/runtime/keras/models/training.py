"""`compile` / `fit` / `evaluate` / `predict` with the numbers Keras 3 (TensorFlow backend) produces.

One training step, as Keras's TF trainer does it:
- loss = compiled loss (reduction "sum_over_batch_size": mean over this replica's
  examples, times 1 / replicas in a launched job) + regularization losses;
- the epoch's "loss" is a `Mean` metric updated with the *unscaled* replica loss weighted
  by the replica's batch size, so it is the example-weighted mean over all batches of the
  epoch (a partial last batch counts for its size);
- gradients of the scaled loss are summed across replicas by `optimizer.apply_gradients`,
  so with replicas of unequal size (a last partial batch) the step follows the mean of
  the replicas' means, exactly as Keras under a MirroredStrategy;
- compiled metrics are updated per replica and read with a cross-process sum.

In a launched job every process reads the whole input and keeps its replica's
contiguous slice of each global batch (TF's split). A replica left without examples
contributes zero gradients. `predict` runs every batch whole on every process (no
split, no communication; the outputs are the same). With one process all of this is
plain single-replica Keras.
"""

from __future__ import annotations

import sys

import numpy as np

from .. import losses as losses_module
from .. import metrics as metrics_module
from .. import optimizers as optimizers_module
from .._tensors import flatten, map_structure, to_float
from ..autodiff import value_and_grad
from ..callbacks import CallbackList
from . import data_adapter
from .data_adapter import DataAdapter, local_share, pack_x_y_sample_weight, to_device, unpack_x_y_sample_weight


def _world():
    from ... import collectives

    return collectives.replicas()


def _shape(value):
    return tuple(value.shape)


def _resolve_loss(spec, y_true, y_pred):
    if spec is None:
        return None
    if isinstance(spec, str) and spec.lower() in ("crossentropy", "ce"):
        binary, sparse = _binary_or_sparse(y_true, y_pred)
        fn = (losses_module.binary_crossentropy if binary else
              losses_module.sparse_categorical_crossentropy if sparse else losses_module.categorical_crossentropy)
        return losses_module.LossFunctionWrapper(fn, name=fn.__name__)
    obj = losses_module.get(spec)
    if isinstance(obj, losses_module.Loss):
        return obj
    return losses_module.LossFunctionWrapper(obj, name=getattr(obj, "__name__", "loss"))


def _binary_or_sparse(y_true, y_pred):
    true_shape, pred_shape = _shape(y_true), _shape(y_pred)
    binary = pred_shape[-1] == 1
    sparse = len(true_shape) < len(pred_shape) or (true_shape[-1] == 1 and pred_shape[-1] > 1)
    return binary, sparse


def _resolve_metric(spec, y_true, y_pred):
    if isinstance(spec, str) and spec.lower() in ("accuracy", "acc"):
        binary, sparse = _binary_or_sparse(y_true, y_pred)
        cls = (metrics_module.BinaryAccuracy if binary else
               metrics_module.SparseCategoricalAccuracy if sparse else metrics_module.CategoricalAccuracy)
        return cls(name=spec)
    metric = metrics_module.get(spec)
    if isinstance(spec, str):
        metric.name = spec
    return metric


def _logs_to_floats(logs) -> dict:
    return {k: to_float(v) for k, v in logs.items()}


class Trainer:
    """The training half of `Model` (mixed into it)."""

    def _init_trainer(self):
        self.optimizer = None
        self._is_compiled = False
        self.loss = None
        self._loss_spec = None
        self._loss_weights = None
        self._compile_losses = None
        self._metric_specs = None
        self._compile_metrics = None
        self._loss_tracker = None
        self.stop_training = False
        self.history = None

    # --- compile ---------------------------------------------------------------------------------

    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None, weighted_metrics=None,
                run_eagerly=False, steps_per_execution=1, jit_compile="auto", auto_scale_loss=True, **kwargs):
        """Keras's compile: optimizer (instance or name), loss (instance, function or name), metrics."""
        self.optimizer = optimizers_module.get(optimizer)
        # A TF 2.3 experimental Policy names its loss scale; otherwise Keras's rule (mixed_float16).
        scale = getattr(self.dtype_policy, "loss_scale", "keras")
        dynamic = auto_scale_loss and self.dtype_policy.name == "mixed_float16" if scale == "keras" else scale == "dynamic"
        if self.optimizer is not None and not isinstance(self.optimizer, optimizers_module.LossScaleOptimizer):
            if dynamic:
                self.optimizer = optimizers_module.LossScaleOptimizer(self.optimizer, name="loss_scale_optimizer")
            elif isinstance(scale, float):
                self.optimizer.loss_scale_factor = scale
        self.loss = loss
        self._loss_spec = loss
        self._loss_weights = loss_weights
        self._compile_losses = None
        self._metric_specs = list(metrics) if isinstance(metrics, (list, tuple)) else (
            [metrics] if metrics is not None else [])
        self._weighted_metric_specs = list(weighted_metrics or [])
        self._compile_metrics = None
        self._loss_tracker = metrics_module.Mean(name="loss")
        self._is_compiled = True

    def _build_compiled(self, y, y_pred) -> None:
        if self._compile_losses is None and self._loss_spec is not None:
            outputs = y_pred if isinstance(y_pred, (list, tuple)) else [y_pred]
            targets = y if isinstance(y, (list, tuple)) else [y]
            specs = self._loss_spec
            if isinstance(specs, dict):
                specs = [specs.get(getattr(layer, "name", None)) for layer in self._output_layers()]
            if not isinstance(specs, (list, tuple)):
                specs = [specs] * len(outputs) if len(outputs) > 1 else [specs]
            self._compile_losses = [_resolve_loss(s, t, o) for s, t, o in zip(specs, targets, outputs)]
        if self._compile_metrics is None and y is not None:
            first_y = y[0] if isinstance(y, (list, tuple)) else y
            first_pred = y_pred[0] if isinstance(y_pred, (list, tuple)) else y_pred
            self._compile_metrics = [_resolve_metric(s, first_y, first_pred) for s in self._metric_specs]
            self._compile_weighted_metrics = [_resolve_metric(s, first_y, first_pred)
                                              for s in self._weighted_metric_specs]

    def _output_layers(self) -> list:
        outputs = getattr(self, "_graph_outputs", None)
        return [t.node.layer for t in flatten(outputs)] if outputs is not None else []

    # --- metrics ----------------------------------------------------------------------------------

    @property
    def metrics(self) -> list:
        out = []
        if self._loss_tracker is not None:
            out.append(self._loss_tracker)
        out.extend(self._compile_metrics or [])
        out.extend(getattr(self, "_compile_weighted_metrics", None) or [])
        out.extend(self.__dict__.get("_tracked_metrics", []))
        return out

    @property
    def metrics_names(self) -> list:
        return [m.name for m in self.metrics]

    def reset_metrics(self) -> None:
        for metric in self.metrics:
            metric.reset_state()

    def get_metrics_result(self) -> dict:
        """{name: result} of every metric (each result is a cross-process read in a launched job)."""
        return {metric.name: metric.result() for metric in self.metrics}

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        self._build_compiled(y, y_pred)
        first_y = y[0] if isinstance(y, (list, tuple)) else y
        first_pred = y_pred[0] if isinstance(y_pred, (list, tuple)) else y_pred
        for metric in self._compile_metrics or []:
            metric.update_state(first_y, first_pred)
        for metric in getattr(self, "_compile_weighted_metrics", None) or []:
            metric.update_state(first_y, first_pred, sample_weight=sample_weight)
        return _DeferredLogs(self)

    # --- loss -------------------------------------------------------------------------------------

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """Compiled loss (scaled by 1 / replicas) plus regularization losses (not scaled, as Keras)."""
        from mindspore import ops

        self._build_compiled(y, y_pred)
        losses = []
        if self._compile_losses:
            outputs = y_pred if isinstance(y_pred, (list, tuple)) and len(self._compile_losses) > 1 else [y_pred]
            targets = y if isinstance(y, (list, tuple)) and len(self._compile_losses) > 1 else [y]
            weights = self._loss_weights
            if isinstance(weights, dict):
                weights = [weights.get(layer.name, 1.0) for layer in self._output_layers()]
            for index, (loss_fn, target, output) in enumerate(zip(self._compile_losses, targets, outputs)):
                if loss_fn is None:
                    continue
                value = loss_fn(target, output, sample_weight)
                if weights is not None:
                    value = value * float(weights[index])
                losses.append(value)
        for extra in self.losses:
            losses.append(ops.sum(extra))
        if not losses:
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        total = losses[0]
        for value in losses[1:]:
            total = total + value
        return total

    # --- steps ------------------------------------------------------------------------------------

    def train_step(self, data):
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        weights = self.trainable_weights

        def forward():
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight, training=True)
            scaled = self.optimizer.scale_loss(loss) if self.optimizer is not None else loss
            return scaled, (loss, y_pred)

        (_, (loss, y_pred)), grads = value_and_grad(forward, None, weights, has_aux=True)()
        self._loss_tracker.update_state(losses_module.unscale_loss_for_distribution(loss),
                                        sample_weight=float(data_adapter.batch_size_of(x)))
        if self.optimizer is not None:
            reduce = getattr(self.optimizer, "hvd_reduce_gradients", None)  # Horovod's optimizer reduces here
            if reduce is not None:
                grads = reduce(grads)
            self.optimizer.apply_gradients(zip(grads, weights))
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def _empty_train_step(self):
        """This replica got no examples: contribute zero gradients to the cross-replica sum."""
        from mindspore import ops

        weights = self.trainable_weights
        if self.optimizer is not None and weights:
            self.optimizer.apply_gradients(zip([ops.zeros_like(w) for w in weights], weights))

    def test_step(self, data):
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        y_pred = self(x, training=False)
        loss = self.compute_loss(x, y, y_pred, sample_weight, training=False)
        self._loss_tracker.update_state(losses_module.unscale_loss_for_distribution(loss),
                                        sample_weight=float(data_adapter.batch_size_of(x)))
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def predict_step(self, data):
        x, _, _ = unpack_x_y_sample_weight(data)
        return self(x, training=False)

    # --- loops ------------------------------------------------------------------------------------

    def _ensure_built(self, global_batch) -> None:
        """Create every weight before the first step (a replica may get no examples then)."""
        if getattr(self, "_called_once", False):
            return
        x = global_batch[0]
        self(map_structure(lambda a: a[:1], to_device(x)), training=False)
        self._called_once = True

    def _step_on_global_batch(self, batch, step_fn, empty_fn=None):
        group = _world()
        local, count = local_share(batch, group.rank, group.size)
        if count == 0:
            if empty_fn is not None:
                empty_fn()
            return None
        x, y, w = to_device(local)
        return step_fn(pack_x_y_sample_weight(x, y, w))

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_batch_size=None, validation_freq=1, **kwargs):
        """Train for `epochs`; returns a `History` whose `history` maps metric names to per-epoch values."""
        self._assert_compiled("fit")
        adapter = DataAdapter(x, y, sample_weight, batch_size, shuffle, steps_per_epoch)
        if validation_split and validation_data is None:
            validation_data = adapter.validation_split(validation_split)
        if class_weight is not None:
            adapter.apply_class_weight(class_weight)  # the training examples only, after the split, as Keras
        adapter.settle()
        rank = _world().rank
        verbose = 1 if verbose == "auto" else verbose
        callback_list = CallbackList(callbacks, model=self, params={"epochs": epochs, "steps": adapter.num_batches,
                                                                     "verbose": verbose})
        self.history = callback_list.history
        self.stop_training = False
        wants_batch_logs = callback_list.wants_batch_logs
        callback_list.on_train_begin()
        epoch_logs: dict = {}
        initial_epoch = getattr(self, "_initial_epoch", None) or initial_epoch  # set by BackupAndRestore
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            callback_list.on_epoch_begin(epoch)
            self.set_train(True)
            returned = None
            for step, batch in enumerate(adapter.epoch(epoch)):
                self._ensure_built(batch)
                callback_list.on_train_batch_begin(step)
                returned = self._step_on_global_batch(batch, self.train_step, self._empty_train_step)
                if wants_batch_logs:
                    callback_list.on_train_batch_end(step, self._logs_from(returned))
                if self.stop_training:
                    break
            epoch_logs = self._logs_from(returned)
            if validation_data is not None and (epoch + 1) % validation_freq == 0:
                validation_logs = self.evaluate(**_validation_args(validation_data), batch_size=validation_batch_size
                                                or batch_size, steps=validation_steps, verbose=0, return_dict=True,
                                                _in_fit=True, _callbacks=callback_list)
                epoch_logs.update({f"val_{k}": v for k, v in validation_logs.items()})
            callback_list.on_epoch_end(epoch, epoch_logs)
            if verbose and rank == 0:
                text = " - ".join(f"{k}: {v:.4f}" for k, v in epoch_logs.items())
                print(f"Epoch {epoch + 1}/{epochs} - {text}", file=sys.stdout, flush=True)
            if self.stop_training:
                break
        self.set_train(False)
        callback_list.on_train_end(epoch_logs)
        return self.history

    def _logs_from(self, returned) -> dict:
        """Logs for callbacks/history: the metrics' results, or what a custom train_step returned."""
        if isinstance(returned, dict) and not isinstance(returned, _DeferredLogs) and returned:
            return _logs_to_floats(returned)
        return _logs_to_floats(self.get_metrics_result())

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, return_dict=False, _in_fit=False, _callbacks=None, **kwargs):
        """Loss and metrics over the data (example-weighted means across batches and replicas).
        Callbacks get Keras's test hooks (``fit`` passes its own, for validation)."""
        self._assert_compiled("evaluate")
        # (validation in `fit` reads a PyDataset's first batches and ends an epoch of it once in
        # Keras, when it first validates; here not at all)
        adapter = DataAdapter(x, y, sample_weight, batch_size, False, steps, peek=not _in_fit)
        if not _in_fit:
            adapter.settle()
        hooks = _callbacks if _callbacks is not None else (
            CallbackList(callbacks, model=self, add_history=False) if callbacks else None)
        self.reset_metrics()
        self.set_train(False)
        if hooks is not None:
            hooks.on_test_begin()
        batch_logs = hooks is not None and hooks.wants_test_batch_logs
        returned = None
        for step, batch in enumerate(adapter.epoch(0)):
            self._ensure_built(batch)
            if hooks is not None:
                hooks.on_test_batch_begin(step)
            returned = self._step_on_global_batch(batch, self.test_step)
            if hooks is not None:
                hooks.on_test_batch_end(step, self._logs_from(returned) if batch_logs else None)
        logs = self._logs_from(returned)
        if hooks is not None:
            hooks.on_test_end(logs)
        if verbose and not _in_fit and verbose != "auto" and _world().rank == 0:
            print(" - ".join(f"{k}: {v:.4f}" for k, v in logs.items()), flush=True)
        if return_dict:
            return logs
        values = [logs[name] for name in logs]
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None, **kwargs):
        """Model outputs for every example, as numpy, each row computed by the replica TF gives it
        to (`data_adapter.predict_outputs`)."""
        adapter = DataAdapter(x, None, None, batch_size, False, steps)
        self.set_train(False)
        return data_adapter.predict_outputs(adapter.epoch(0), lambda x_batch: self.predict_step((x_batch,)), self,
                                            _world())

    # Keras 2's generator spellings, which TF 2.0-2.15 kept (deprecated) as these calls of fit, evaluate
    # and predict; its loader options (queue size, workers, processes) only fed the generator faster.
    def fit_generator(self, generator, steps_per_epoch=None, epochs=1, verbose=1, callbacks=None,
                      validation_data=None, validation_steps=None, validation_freq=1, class_weight=None,
                      max_queue_size=10, workers=1, use_multiprocessing=False, shuffle=True, initial_epoch=0):
        return self.fit(generator, steps_per_epoch=steps_per_epoch, epochs=epochs, verbose=verbose,
                        callbacks=callbacks, validation_data=validation_data, validation_steps=validation_steps,
                        validation_freq=validation_freq, class_weight=class_weight, shuffle=shuffle,
                        initial_epoch=initial_epoch)

    def evaluate_generator(self, generator, steps=None, callbacks=None, max_queue_size=10, workers=1,
                           use_multiprocessing=False, verbose=0):
        return self.evaluate(generator, steps=steps, callbacks=callbacks, verbose=verbose)

    def predict_generator(self, generator, steps=None, callbacks=None, max_queue_size=10, workers=1,
                          use_multiprocessing=False, verbose=0):
        return self.predict(generator, steps=steps, callbacks=callbacks, verbose=verbose)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False,
                       reset_metrics=True):
        self._assert_compiled("train_on_batch")
        if reset_metrics:
            self.reset_metrics()
        batch = tuple(map_structure(data_adapter._host, v) for v in (x, y, sample_weight))
        self._ensure_built(batch)
        self.set_train(True)
        returned = self._step_on_global_batch(batch, self.train_step, self._empty_train_step)
        logs = self._logs_from(returned)
        return logs if return_dict else (list(logs.values()) if len(logs) > 1 else next(iter(logs.values())))

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        self.reset_metrics()
        batch = tuple(map_structure(data_adapter._host, v) for v in (x, y, sample_weight))
        self._ensure_built(batch)
        returned = self._step_on_global_batch(batch, self.test_step)
        logs = self._logs_from(returned)
        return logs if return_dict else (list(logs.values()) if len(logs) > 1 else next(iter(logs.values())))

    def predict_on_batch(self, x):
        return self.predict(x, batch_size=data_adapter.batch_size_of(x) or None)

    def _assert_compiled(self, what: str) -> None:
        if not self._is_compiled:
            raise ValueError(f"You must call `compile()` before using the model ({what}).")


class _DeferredLogs(dict):
    """What the default steps return: the metrics are read (a collective) only when logs are needed."""

    def __init__(self, model):
        super().__init__()
        self._model = model


def _validation_args(validation_data) -> dict:
    if isinstance(validation_data, tuple) and len(validation_data) in (2, 3):
        x, y, w = unpack_x_y_sample_weight(validation_data)
        return {"x": x, "y": y, "sample_weight": w}
    return {"x": validation_data}

