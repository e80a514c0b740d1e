"""`tf.keras.metrics` with Keras 3's state and formulas, synchronised on read across processes.

A metric keeps float32 state Parameters (Mean: `total` and `count`), updated with
`update_state(y_true, y_pred, sample_weight=None)`. Under a MirroredStrategy TF keeps
one copy of that state per replica and `result()` sums them (sync-on-read SUM). Here
each process is a replica, so in a launched job `result()` — also a subclass's own
`result()` — first all-reduces the state (one collective for all of a metric's
variables), computes the result from the sums, and puts the local state back: every
process reports the global value, and every process must call `result()` (it is a
collective). With one process it is a plain read.

Updates are eager MindSpore ops, several per call: made step by step they can cost a step
more host time than the step itself. So a built-in metric that accumulates per-example values
(``Mean``, ``Sum``, the accuracy, error and crossentropy metrics) keeps each call's tensors and
makes the updates of up to 32 calls as one, on the calls' tensors joined (concatenated along
the examples, or stacked where each call gives one value): the same sums over the same
examples. Anything that reads the state makes the waiting updates first (``result()``,
``variables``, a checkpoint, ``metric.total``); ``reset_state()`` drops them. A call whose inputs cannot be
joined with the waiting ones (another shape, a weight where they had none) makes those first.
"""

from __future__ import annotations

import contextlib
import enum
import functools

import numpy as np

from . import losses as losses_module
from .autodiff import is_building
from .serialization import AutoConfig
from ._tensors import as_float, as_tensor, contiguous
from ..tfvariable import with_variable_methods


def _ops():
    from mindspore import ops

    return ops


_WAIT_CALLS = 32  # calls whose updates wait to be made as one
_WAIT_VALUES = 1 << 22  # ... unless their inputs hold more values than this
_FRESH = [False]  # (inside `fresh_values()`: the updates' tensors are kept as they are)


@contextlib.contextmanager
def fresh_values():
    """Updates made inside keep their tensors, not copies: the caller made them for these calls
    and changes none of them later (a compiled step's outputs, a loop's batch). A copy of each
    costs about as much as the update itself on a small batch."""
    before, _FRESH[0] = _FRESH[0], True
    try:
        yield
    finally:
        _FRESH[0] = before


def _synchronized_result(result):
    @functools.wraps(result)
    def wrapper(self, *args, **kwargs):
        self._flush()
        with self._synchronized():
            return result(self, *args, **kwargs)

    wrapper._synchronizes = True
    return wrapper


def _still_while_building(update_state):
    """``update_state`` that does nothing in a forward pass run only to build layers, or run again
    for another gradient (``autodiff.building``): TF's forward pass updated the metric once."""
    @functools.wraps(update_state)
    def wrapper(self, *args, **kwargs):
        if is_building():
            return None
        return update_state(self, *args, **kwargs)

    wrapper._still_while_building = True
    return wrapper


class Metric(AutoConfig):
    """Base class: `update_state`, `result`, `reset_state` (also `reset_states`), calling = update + result."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        result = cls.__dict__.get("result")
        if result is not None and not getattr(result, "_synchronizes", False):
            cls.result = _synchronized_result(result)
        update_state = cls.__dict__.get("update_state")
        if update_state is not None and not getattr(update_state, "_still_while_building", False):
            cls.update_state = _still_while_building(update_state)

    def __init__(self, name=None, dtype=None):
        from .layers.base import to_snake_case

        self.name = name or to_snake_case(type(self).__name__)
        self.dtype = dtype or "float32"
        self._variables: list = []
        self._aggregations: list = []
        self._in_sync = False

    def add_variable(self, shape=(), initializer="zeros", dtype=None, aggregation="sum", name=None):
        import mindspore as ms

        from . import initializers

        value = initializers.get(initializer)(tuple(shape), dtype=dtype or self.dtype)
        variable = with_variable_methods(ms.Parameter(ms.Tensor(contiguous(value)),
                                                      name=f"{self.name}/{name or 'variable'}", requires_grad=False))
        self._variables.append(variable)
        # (Keras 2 takes `tf.VariableAggregation` members, converted to tfvariable's: the same names)
        self._aggregations.append(aggregation.name.lower() if isinstance(aggregation, enum.Enum) else aggregation)
        return variable

    def add_weight(self, name=None, shape=(), initializer="zeros", dtype=None, aggregation="sum", **kwargs):
        """Keras 2's spelling (name first)."""
        if name is not None and not isinstance(name, str):
            shape, name = name, None
        return self.add_variable(shape=shape, initializer=initializer, dtype=dtype, aggregation=aggregation,
                                 name=name)

    @property
    def variables(self) -> list:
        self._flush()
        return list(self._variables)

    def _defer(self, update, args: tuple, sample_weight, batched: bool = False) -> bool:
        """Keep a call's update (``update(self, *args, sample_weight=...)``, made on the calls'
        inputs joined along their first axis, or stacked where each is one value) to make with
        the next calls'; False, after making what waits, where it cannot be joined with them.
        ``batched``: the inputs must have a batch axis and a feature axis (a function of
        ``(y_true, y_pred)`` reduces the last axis: over 1-D inputs it is one value per call).
        What is kept is a copy (a view of a variable, or a tensor changed in place after the
        call, counts as it was at the call)."""
        import mindspore as ms

        kept = []
        for value in (*args, sample_weight):
            if value is None:
                kept.append(None)
            elif isinstance(value, ms.Tensor) and getattr(value, "_keras_logits", None) is None:
                kept.append(value)  # (a Parameter too: copied below, as every tensor is)
            elif isinstance(value, (float, int, np.ndarray, np.generic)) and not isinstance(value, bool):
                kept.append(ms.Tensor(np.array(value, copy=True)))
            else:
                kept.append(False)  # (a list, a tensor carrying its logits for a crossentropy...)
        *values, weight = kept
        first = values[0]
        fits = all(v is not False and v is not None for v in values) and weight is not False
        if fits:
            stacked = first.ndim == 0 and not batched
            if stacked:  # one value per call, and a scalar weight
                fits = all(v.ndim == 0 for v in values) and (weight is None or weight.ndim == 0)
            else:  # a batch axis in every input, and a weight per example
                fits = all(v.ndim >= (2 if batched and i == len(values) - 1 else 1) and v.shape[0] == first.shape[0]
                           for i, v in enumerate(values)) and (weight is None or tuple(weight.shape) == (first.shape[0],))
        if not fits:
            self._flush()
            return False
        joined = [v if v is None or _FRESH[0] else v.copy() for v in kept]
        key = (update, stacked, weight is None, *((v.dtype, tuple(v.shape[1:])) for v in joined if v is not None))
        waiting = self.__dict__.get("_waiting")
        if waiting is not None and waiting["key"] != key:
            self._flush()
            waiting = None
        if waiting is None:
            waiting = self.__dict__["_waiting"] = {"key": key, "calls": [], "size": 0}
        waiting["calls"].append(joined)
        waiting["size"] += sum(int(np.prod(v.shape)) for v in joined if v is not None)
        if len(waiting["calls"]) >= _WAIT_CALLS or waiting["size"] >= _WAIT_VALUES:
            self._flush()
        return True

    def _flush(self) -> None:
        """Make the updates that wait, as one. Should that fail, they are made call by call, so
        that the calls before a bad one count and the bad one raises, as it would have."""
        waiting = self.__dict__.pop("_waiting", None)
        if not waiting:
            return
        ops = _ops()
        update, stacked = waiting["key"][0], waiting["key"][1]
        calls = waiting["calls"]
        join = ops.stack if stacked else ops.concat
        columns = [None if column[0] is None else (column[0] if len(column) == 1 else join(list(column)))
                   for column in zip(*calls)]
        *values, weight = columns
        try:
            update(self, *values, sample_weight=weight)
        except Exception:
            if len(calls) == 1:
                raise
            for *call_values, call_weight in calls:  # (the bad call raises here; alone, each may go through)
                update(self, *call_values, sample_weight=call_weight)

    def reset_state(self):
        import mindspore as ms

        self.__dict__.pop("_waiting", None)
        for variable in self._variables:
            variable.set_data(ms.Tensor(np.zeros(variable.shape, dtype=variable.asnumpy().dtype)))

    def reset_states(self):
        self.reset_state()

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self) -> dict:
        from .serialization import with_auto_config

        return with_auto_config(self, {"name": self.name, "dtype": self.dtype})

    @contextlib.contextmanager
    def _synchronized(self):
        from .. import collectives

        group = collectives.replicas()
        if group.size <= 1 or self._in_sync or not self._variables:
            yield
            return
        import mindspore as ms

        local = [v.asnumpy().copy() for v in self._variables]
        # (one sum for all: the first replica's copy is what every other adds nothing to)
        flat = np.concatenate([(a if aggregation != "only_first_replica" or group.rank == 0 else np.zeros_like(a))
                               .astype(np.float32).reshape(-1) for a, aggregation in zip(local, self._aggregations)])
        summed = group.all_reduce_sum(ms.Tensor(flat)).asnumpy()
        offset = 0
        for variable, array, aggregation in zip(self._variables, local, self._aggregations):
            part = summed[offset:offset + array.size].reshape(array.shape)
            offset += array.size
            if aggregation == "mean":
                part = part / group.size
            variable.set_data(ms.Tensor(part.astype(array.dtype)))
        self._in_sync = True
        try:
            yield
        finally:
            for variable, array in zip(self._variables, local):
                variable.set_data(ms.Tensor(array))
            self._in_sync = False

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


def _assign_add(variable, value):
    _ops().assign_add(variable, value.astype(variable.dtype).reshape(variable.shape))


def reduce_to_samplewise_values(values, sample_weight, reduce_fn):
    """Keras's rule: weight per sample, then reduce every non-batch axis with `reduce_fn`."""
    values = as_float(values)
    if sample_weight is not None:
        sample_weight = as_float(sample_weight)
        values, sample_weight = losses_module.squeeze_or_expand_to_same_rank(values, sample_weight)
        weight_ndim, values_ndim = sample_weight.ndim, values.ndim
        if values_ndim > weight_ndim:
            values = reduce_fn(values, axis=tuple(range(weight_ndim, values_ndim)))
        # Checked here, before any state changes: MindSpore's broadcast is a view whose shapes are
        # checked when it is computed, which can be after the update was queued (the error then
        # came out of a later `result()`, the state already spoiled).
        target = tuple(values.shape)
        try:
            fits = np.broadcast_shapes(tuple(sample_weight.shape), target) == target
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"`sample_weight` of shape {tuple(sample_weight.shape)} cannot be broadcast to the "
                             f"values' shape {target}")
        sample_weight = _ops().broadcast_to(sample_weight, values.shape)
        values = values * sample_weight
        if weight_ndim > 1:
            sample_weight = reduce_fn(sample_weight, axis=tuple(range(1, weight_ndim)))
    if values.ndim > 1:
        values = reduce_fn(values, axis=tuple(range(1, values.ndim)))
    return values, sample_weight


def _sum(x, axis=None):
    return _ops().sum(x, axis)


def _mean(x, axis=None):
    return _ops().mean(x, axis)


class _State:
    """A deferring metric's state variable (``total``, ``count``): reading it, as a subclass's
    ``result()`` or a program does, makes the waiting updates first."""

    def __set_name__(self, owner, name: str) -> None:
        self.key = f"_state_{name}"

    def __get__(self, metric, owner=None):
        if metric is None:
            return self
        metric._flush()
        try:
            return metric.__dict__[self.key]
        except KeyError:
            raise AttributeError(self.key[len("_state_"):]) from None

    def __set__(self, metric, value) -> None:
        metric.__dict__[self.key] = value


class Sum(Metric):
    total = _State()

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(name="total")

    def update_state(self, values, sample_weight=None):
        if not self._defer(Sum._update, (values,), sample_weight):
            self._update(values, sample_weight=sample_weight)

    def _update(self, values, sample_weight=None):
        values, _ = reduce_to_samplewise_values(values, sample_weight, _sum)
        _assign_add(self.total, _ops().sum(values))

    def result(self):
        return self.total * 1.0


class Mean(Metric):
    """Weighted mean: total += sum(values * weights), count += sum(weights) (or the number of values)."""

    total = _State()
    count = _State()

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(name="total")
        self.count = self.add_variable(name="count")

    def update_state(self, values, sample_weight=None):
        if not self._defer(Mean._update, (values,), sample_weight):
            self._update(values, sample_weight=sample_weight)

    def _update(self, values, sample_weight=None):
        values, sample_weight = reduce_to_samplewise_values(values, sample_weight, _mean)
        _assign_add(self.total, _ops().sum(values))
        if sample_weight is not None:
            count = _ops().sum(sample_weight)
        else:
            count = as_tensor(float(values.shape[0]) if values.ndim >= 1 else 1.0, "float32")
        _assign_add(self.count, count)

    def result(self):
        return losses_module.divide_no_nan(self.total * 1.0, self.count * 1.0)


class MeanMetricWrapper(Mean):
    """Mean of `fn(y_true, y_pred, **kwargs)` over the examples."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", "mean_metric_wrapper"), dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        if not (self._fn in _PER_EXAMPLE and self._defer(MeanMetricWrapper._update_wrapped, (y_true, y_pred),
                                                          sample_weight, batched=True)):
            self._update_wrapped(y_true, y_pred, sample_weight=sample_weight)

    def _update_wrapped(self, y_true, y_pred, sample_weight=None):
        values = self._fn(y_true, y_pred, **self._fn_kwargs)
        Mean._update(self, values, sample_weight=sample_weight)


# --- accuracy functions (Keras 3) ------------------------------------------------------------

def accuracy(y_true, y_pred):
    y_pred = as_float(y_pred)
    y_true = as_float(y_true)
    y_true, y_pred = losses_module.squeeze_or_expand_to_same_rank(y_true, y_pred)
    return (y_true == y_pred).astype("float32")


def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_pred = as_float(y_pred)
    y_true = as_float(y_true)
    y_true, y_pred = losses_module.squeeze_or_expand_to_same_rank(y_true, y_pred)
    y_pred = (y_pred > threshold).astype(y_true.dtype)
    return (y_true == y_pred).astype("float32")


def categorical_accuracy(y_true, y_pred):
    ops = _ops()
    y_true = ops.argmax(as_float(y_true), -1)
    y_pred = as_float(y_pred)
    reshape_to = None
    if y_true.ndim == y_pred.ndim:
        reshape_to = y_true.shape
        y_true = ops.squeeze(y_true, -1)
    matches = (y_true.astype("int32") == ops.argmax(y_pred, -1).astype("int32")).astype("float32")
    return matches.reshape(reshape_to) if reshape_to is not None else matches


def sparse_categorical_accuracy(y_true, y_pred):
    ops = _ops()
    y_pred = as_float(y_pred)
    y_true = as_float(y_true)
    original_shape = y_true.shape
    reshape = False
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = ops.squeeze(y_true, -1)
        reshape = True
    predicted = ops.argmax(y_pred, -1).astype(y_true.dtype)
    matches = (y_true == predicted).astype("float32")
    if reshape:
        matches = matches.reshape(original_shape)
    if matches.ndim > 1 and matches.shape[-1] == 1:
        matches = ops.squeeze(matches, -1)
    return matches


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    ops = _ops()
    y_pred = as_float(y_pred)
    labels = as_tensor(y_true).astype("int32").reshape(-1)
    if y_pred.ndim > 2:
        y_pred = y_pred.reshape(-1, y_pred.shape[-1])
    target = ops.gather_elements(y_pred, 1, labels.reshape(-1, 1))
    # in_top_k: the target's score is among the k largest (ties count as in, as TF's in_top_k)
    better = ops.sum((y_pred > target).astype("int32"), 1)
    return (better < k).astype("float32")


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    return sparse_top_k_categorical_accuracy(_ops().argmax(as_float(y_true), -1), y_pred, k)


class Accuracy(MeanMetricWrapper):
    def __init__(self, name="accuracy", dtype=None):
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None):
        super().__init__(sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=k)


class TopKCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        super().__init__(top_k_categorical_accuracy, name=name, dtype=dtype, k=k)


# --- loss-valued metrics -----------------------------------------------------------------------

class MeanSquaredError(MeanMetricWrapper):
    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(losses_module.mean_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(losses_module.mean_absolute_error, name=name, dtype=dtype)


class RootMeanSquaredError(Mean):
    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = losses_module.squeeze_or_expand_to_same_rank(as_float(y_true), as_float(y_pred))
        return super().update_state(_ops().square(y_pred - y_true), sample_weight=sample_weight)

    def result(self):
        return _ops().sqrt(losses_module.divide_no_nan(self.total * 1.0, self.count * 1.0))


class BinaryCrossentropy(MeanMetricWrapper):
    def __init__(self, name="binary_crossentropy", dtype=None, from_logits=False, label_smoothing=0.0):
        super().__init__(losses_module.binary_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing)


class CategoricalCrossentropy(MeanMetricWrapper):
    def __init__(self, name="categorical_crossentropy", dtype=None, from_logits=False, label_smoothing=0.0,
                 axis=-1):
        super().__init__(losses_module.categorical_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    def __init__(self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False, axis=-1):
        super().__init__(losses_module.sparse_categorical_crossentropy, name=name, dtype=dtype,
                         from_logits=from_logits, axis=axis)


mean_squared_error = mse = losses_module.mean_squared_error
mean_absolute_error = mae = losses_module.mean_absolute_error
binary_crossentropy = losses_module.binary_crossentropy
categorical_crossentropy = losses_module.categorical_crossentropy
sparse_categorical_crossentropy = losses_module.sparse_categorical_crossentropy

from .confusion_metrics import (AUC, FalseNegatives, FalsePositives, Precision, Recall,  # noqa: E402
                                TrueNegatives, TruePositives)

_BY_NAME = {
    "accuracy": Accuracy, "binary_accuracy": BinaryAccuracy, "categorical_accuracy": CategoricalAccuracy,
    "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
    "top_k_categorical_accuracy": TopKCategoricalAccuracy,
    "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError, "mean_absolute_error": MeanAbsoluteError,
    "mae": MeanAbsoluteError, "root_mean_squared_error": RootMeanSquaredError,
    "binary_crossentropy": BinaryCrossentropy, "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy, "mean": Mean, "sum": Sum,
    "auc": AUC, "precision": Precision, "recall": Recall, "true_positives": TruePositives,
    "false_positives": FalsePositives, "true_negatives": TrueNegatives, "false_negatives": FalseNegatives,
}
_CLASSES = {cls.__name__: cls for cls in set(_BY_NAME.values())}
# Functions of (y_true, y_pred) giving one value per example: a mean of them over several calls'
# examples joined is their mean call by call (a user's function may reduce over the batch).
_PER_EXAMPLE = frozenset({accuracy, binary_accuracy, categorical_accuracy, sparse_categorical_accuracy,
                          sparse_top_k_categorical_accuracy, top_k_categorical_accuracy, mean_squared_error,
                          mean_absolute_error, binary_crossentropy, categorical_crossentropy,
                          sparse_categorical_crossentropy})


def get(identifier):
    """A metric instance from a name or class name, an instance, or a function (wrapped in a mean)."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str):
        if identifier in _BY_NAME:
            return _BY_NAME[identifier]()
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
        raise ValueError(f"Could not interpret metric identifier: {identifier!r}")
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if callable(identifier):
        return MeanMetricWrapper(identifier)
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}")
