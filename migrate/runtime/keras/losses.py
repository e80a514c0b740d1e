"""`tf.keras.losses` with Keras 3's formulas, on MindSpore ops.

Semantics kept from Keras 3 (TensorFlow backend):
- probabilities are clipped to [1e-7, 1 - 1e-7] (`backend.epsilon()`) before the log;
  categorical crossentropy first renormalises them to sum to one;
- a `softmax`/`sigmoid` output that remembers its logits is scored from the logits
  (Keras finds them in the TF graph; here the activation leaves them on the Tensor);
- reductions: "sum_over_batch_size" (default; sum / number of loss elements), "sum",
  "mean", "mean_with_sample_weight", "none"/None. `Reduction.AUTO` is
  "sum_over_batch_size";
- "sum_over_batch_size"/"mean" results are scaled by 1 / (number of replicas) in a
  launched job, as Keras scales them by `num_replicas_in_sync` inside a strategy, so that
  summing replica gradients gives the mean gradient. TF scales only inside a strategy's
  scope or replica context; a converted program has no scope, so here every call in a
  launched job with more than one process is scaled.
"""

from __future__ import annotations

from . import backend
from ._tensors import as_float, as_tensor, is_tensor
from .serialization import AutoConfig


def _ops():
    from mindspore import ops

    return ops


class Reduction:
    """Loss reduction names (`tf.keras.losses.Reduction` of Keras 2; Keras 3 takes the strings)."""

    AUTO = "sum_over_batch_size"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"
    MEAN = "mean"
    MEAN_WITH_SAMPLE_WEIGHT = "mean_with_sample_weight"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE, cls.MEAN, cls.MEAN_WITH_SAMPLE_WEIGHT)


def standardize_reduction(reduction):
    if reduction == "auto":
        reduction = "sum_over_batch_size"
    allowed = {"sum_over_batch_size", "sum", None, "none", "mean", "mean_with_sample_weight"}
    if reduction not in allowed:
        raise ValueError(f"Invalid value for argument `reduction`. Expected one of {allowed}. "
                         f"Received: reduction={reduction}")
    return reduction


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    """Squeeze/expand the last dim of one argument when ranks differ by exactly one (Keras's rule)."""
    ops = _ops()
    r1, r2 = x1.ndim, x2.ndim
    if r1 == r2:
        return x1, x2
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        if r2 == 1 and expand_rank_1:
            x2 = ops.expand_dims(x2, -1)
        else:
            x1 = ops.squeeze(x1, -1)
    if r2 == r1 + 1 and x2.shape[-1] == 1:
        if r1 == 1 and expand_rank_1:
            x1 = ops.expand_dims(x1, -1)
        else:
            x2 = ops.squeeze(x2, -1)
    return x1, x2


def divide_no_nan(a, b):
    """a / b, and 0 where b is 0 (a Python number that is not 0 divides directly: one operation)."""
    ops = _ops()
    if isinstance(b, (int, float)) and not isinstance(b, bool) and b != 0:
        return a / float(b)
    b = as_tensor(b, "float32") if not is_tensor(b) else b
    safe = ops.where(b == 0, ops.ones_like(b), b)
    return ops.where(b == 0, ops.zeros_like(a * safe), a / safe)


def num_replicas() -> int:
    from .. import collectives

    return collectives.replicas().size


def scale_loss_for_distribution(value):
    """Multiply by 1 / replicas in a launched job (Keras's `scale_loss_for_distribution`)."""
    replicas = num_replicas()
    return value * (1.0 / replicas) if replicas > 1 else value


def unscale_loss_for_distribution(value):
    replicas = num_replicas()
    return value * float(replicas) if replicas > 1 else value


def reduce_values(values, sample_weight=None, reduction="sum_over_batch_size"):
    ops = _ops()
    if reduction in (None, "none") or tuple(values.shape) in ((), (0,)):
        return values
    loss = ops.sum(values)
    if reduction in ("sum_over_batch_size", "mean", "mean_with_sample_weight"):
        if reduction == "mean_with_sample_weight" and sample_weight is not None:
            divisor = ops.sum(sample_weight).astype(loss.dtype)
        else:
            divisor = float(values.size)
        loss = divide_no_nan(loss, divisor)
        loss = scale_loss_for_distribution(loss)
    return loss


def reduce_weighted_values(values, sample_weight=None, reduction="sum_over_batch_size"):
    reduction = standardize_reduction(reduction)
    values = as_float(values)
    if sample_weight is not None:
        sample_weight = as_float(sample_weight)
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        values = values * sample_weight
    return reduce_values(values, sample_weight, reduction)


class Loss(AutoConfig):
    """Base class: subclasses implement `call(y_true, y_pred)` returning per-example losses."""

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        from .layers.base import to_snake_case

        self.name = name or to_snake_case(type(self).__name__)
        self.reduction = standardize_reduction(reduction)
        self.dtype = dtype or "float32"

    def __call__(self, y_true, y_pred, sample_weight=None, _compiled=True):
        if _compiled:  # (a built-in loss: its recorded graph, see `compiled.call_loss`)
            from . import compiled

            out = compiled.call_loss(self, y_true, y_pred, sample_weight)
            if out is not compiled.NOT:
                return out
        logits = getattr(y_pred, "_keras_logits", None)
        y_pred = as_float(y_pred)
        if logits is not None:
            y_pred = _with_logits(y_pred, logits)
        y_true = as_float(y_true)
        losses = self.call(y_true, y_pred)
        return reduce_weighted_values(losses, sample_weight=sample_weight, reduction=self.reduction)

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def get_config(self) -> dict:
        from .serialization import with_auto_config

        return with_auto_config(self, {"name": self.name, "reduction": self.reduction})

    @classmethod
    def from_config(cls, config):
        from .serialization import deserialize_value

        return cls(**deserialize_value(config))


def _with_logits(tensor, logits):
    try:
        tensor._keras_logits = logits
    except AttributeError:
        pass
    return tensor


class LossFunctionWrapper(Loss):
    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        logits = getattr(y_pred, "_keras_logits", None)
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        if logits is not None and getattr(y_pred, "_keras_logits", None) is None:
            y_pred = _with_logits(y_pred, logits) if tuple(logits.shape) == tuple(y_pred.shape) else y_pred
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


# --- per-example loss functions ------------------------------------------------------------

def _prepare(y_true, y_pred):
    logits = getattr(y_pred, "_keras_logits", None)
    y_pred = as_float(y_pred)
    if logits is not None:
        _with_logits(y_pred, logits)
    return as_tensor(y_true, "float32") if not is_tensor(y_true) else y_true.astype(y_pred.dtype), y_pred


def mean_squared_error(y_true, y_pred):
    ops = _ops()
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return ops.mean(ops.square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    ops = _ops()
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return ops.mean(ops.abs(y_true - y_pred), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    ops = _ops()
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    diff = ops.abs((y_true - y_pred) / ops.maximum(ops.abs(y_true), backend.epsilon()))
    return 100.0 * ops.mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    ops = _ops()
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    first = ops.log(ops.maximum(y_pred, backend.epsilon()) + 1.0)
    second = ops.log(ops.maximum(y_true, backend.epsilon()) + 1.0)
    return ops.mean(ops.square(first - second), axis=-1)


def huber(y_true, y_pred, delta=1.0):
    ops = _ops()
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    error = y_pred - y_true
    abs_error = ops.abs(error)
    half = 0.5
    return ops.mean(ops.where(abs_error <= delta, half * ops.square(error),
                              delta * abs_error - half * ops.square(as_tensor(float(delta), "float32"))), axis=-1)


def kl_divergence(y_true, y_pred):
    ops = _ops()
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    eps = backend.epsilon()
    y_true = ops.clip_by_value(y_true, eps, 1.0)
    y_pred = ops.clip_by_value(y_pred, eps, 1.0)
    return ops.sum(y_true * ops.log(y_true / y_pred), -1)


def _logits_of(y_pred, from_logits):
    logits = getattr(y_pred, "_keras_logits", None)
    if logits is not None:
        return as_float(logits), True
    return y_pred, from_logits


def _log_softmax(logits, axis=-1):
    ops = _ops()
    shifted = logits - ops.stop_gradient(ops.amax(logits, axis=axis, keepdims=True))
    return shifted - ops.log(ops.sum(ops.exp(shifted), axis, True))


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """-sum(y_true * log(p)); p renormalised and clipped, or log_softmax(logits)."""
    ops = _ops()
    y_true, y_pred = _prepare(y_true, y_pred)
    if label_smoothing:
        num_classes = float(y_true.shape[-1])
        y_true = y_true * (1.0 - label_smoothing) + (label_smoothing / num_classes)
    output, from_logits = _logits_of(y_pred, from_logits)
    if from_logits:
        return -ops.sum(y_true * _log_softmax(output, axis), axis)
    output = output / ops.sum(output, axis, True)
    eps = backend.epsilon()
    output = ops.clip_by_value(output, eps, 1.0 - eps)
    return -ops.sum(y_true * ops.log(output), axis)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """-log p[label]; probabilities clipped to [eps, 1 - eps] first (no renormalisation), as Keras."""
    ops = _ops()
    logits = getattr(y_pred, "_keras_logits", None)
    y_pred = as_float(y_pred)
    y_true = as_tensor(y_true)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = ops.squeeze(y_true, -1)
    labels = y_true.astype("int32")
    if logits is not None:
        output, from_logits = as_float(logits), True
    else:
        output = y_pred
    valid = None
    if ignore_class is not None:
        valid = labels != int(ignore_class)
        labels = ops.where(valid, labels, ops.zeros_like(labels))
    if not from_logits:
        eps = backend.epsilon()
        output = ops.log(ops.clip_by_value(output, eps, 1.0 - eps))
    log_probs = _log_softmax(output, -1)
    if output.ndim == labels.ndim + 1:
        # TF's formula (so its gradient, softmax - one_hot), with the label's entry gathered, not a one-hot product.
        result = -ops.squeeze(ops.gather_elements(log_probs, -1, ops.expand_dims(labels, -1)), -1)
    else:  # labels that only broadcast against the predictions
        one_hot = ops.one_hot(labels, output.shape[-1], as_tensor(1.0, "float32"), as_tensor(0.0, "float32"))
        result = -ops.sum(one_hot * log_probs, -1)
    if valid is not None:
        result = ops.where(valid, result, ops.zeros_like(result))
    return result


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """mean over `axis` of the elementwise binary crossentropy (clipped probabilities or logits)."""
    ops = _ops()
    y_true, y_pred = _prepare(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    output, from_logits = _logits_of(y_pred, from_logits)
    if from_logits:
        # TF's sigmoid_cross_entropy_with_logits: max(x, 0) - x * z + log(1 + exp(-|x|))
        elementwise = ops.relu(output) - output * y_true + ops.log1p(ops.exp(-ops.abs(output)))
    else:
        eps = backend.epsilon()
        output = ops.clip_by_value(output, eps, 1.0 - eps)
        bce = y_true * ops.log(output)
        bce = bce + (1.0 - y_true) * ops.log(1.0 - output)
        elementwise = -bce
    return ops.mean(elementwise, axis=axis)


def cosine_similarity(y_true, y_pred, axis=-1):
    ops = _ops()
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)

    def l2_normalize(x):
        return x / ops.sqrt(ops.maximum(ops.sum(ops.square(x), axis, True), 1e-12))

    return -ops.sum(l2_normalize(y_true) * l2_normalize(y_pred), axis)


def hinge(y_true, y_pred):
    ops = _ops()
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    y_true = ops.where(y_true == 0, -ops.ones_like(y_true), y_true)
    return ops.mean(ops.relu(1.0 - y_true * y_pred), axis=-1)


# --- classes --------------------------------------------------------------------------------

class MeanSquaredError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, name=name, reduction=reduction, dtype=dtype)


class MeanAbsoluteError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, name=name, reduction=reduction, dtype=dtype)


class MeanAbsolutePercentageError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_percentage_error", dtype=None):
        super().__init__(mean_absolute_percentage_error, name=name, reduction=reduction, dtype=dtype)


class MeanSquaredLogarithmicError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_logarithmic_error", dtype=None):
        super().__init__(mean_squared_logarithmic_error, name=name, reduction=reduction, dtype=dtype)


class Huber(LossFunctionWrapper):
    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss", dtype=None):
        super().__init__(huber, name=name, reduction=reduction, dtype=dtype, delta=delta)


class KLDivergence(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="kl_divergence", dtype=None):
        super().__init__(kl_divergence, name=name, reduction=reduction, dtype=dtype)


class CosineSimilarity(LossFunctionWrapper):
    def __init__(self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity", dtype=None):
        super().__init__(cosine_similarity, name=name, reduction=reduction, dtype=dtype, axis=axis)


class Hinge(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="hinge", dtype=None):
        super().__init__(hinge, name=name, reduction=reduction, dtype=dtype)


class BinaryCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="binary_crossentropy", dtype=None):
        super().__init__(binary_crossentropy, name=name, reduction=reduction, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis


class CategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="categorical_crossentropy", dtype=None):
        super().__init__(categorical_crossentropy, name=name, reduction=reduction, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, ignore_class=None, reduction="sum_over_batch_size", axis=-1,
                 name="sparse_categorical_crossentropy", dtype=None):
        super().__init__(sparse_categorical_crossentropy, name=name, reduction=reduction, dtype=dtype,
                         from_logits=from_logits, ignore_class=ignore_class, axis=axis)
        self.from_logits, self.ignore_class = from_logits, ignore_class


# Keras's short aliases.
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence

_FUNCTIONS = {
    "mean_squared_error": mean_squared_error, "mse": mean_squared_error,
    "mean_absolute_error": mean_absolute_error, "mae": mean_absolute_error,
    "mean_absolute_percentage_error": mean_absolute_percentage_error, "mape": mean_absolute_percentage_error,
    "mean_squared_logarithmic_error": mean_squared_logarithmic_error, "msle": mean_squared_logarithmic_error,
    "huber": huber, "huber_loss": huber, "kl_divergence": kl_divergence, "kld": kl_divergence,
    "kullback_leibler_divergence": kl_divergence, "cosine_similarity": cosine_similarity, "hinge": hinge,
    "binary_crossentropy": binary_crossentropy, "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
}
_CLASSES = {
    "MeanSquaredError": MeanSquaredError, "MeanAbsoluteError": MeanAbsoluteError,
    "MeanAbsolutePercentageError": MeanAbsolutePercentageError,
    "MeanSquaredLogarithmicError": MeanSquaredLogarithmicError, "Huber": Huber, "KLDivergence": KLDivergence,
    "CosineSimilarity": CosineSimilarity, "Hinge": Hinge, "BinaryCrossentropy": BinaryCrossentropy,
    "CategoricalCrossentropy": CategoricalCrossentropy,
    "SparseCategoricalCrossentropy": SparseCategoricalCrossentropy,
}


def get(identifier):
    """A loss from a name (function names, their short forms, class names), an instance or a callable.

    As in Keras, a function name gives the function and a class name an instance.
    """
    if identifier is None or isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str):
        if identifier in _FUNCTIONS:
            return _FUNCTIONS[identifier]
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
        raise ValueError(f"Could not interpret loss identifier: {identifier!r}")
    if isinstance(identifier, dict):
        return _CLASSES[identifier["class_name"]](**identifier.get("config", {}))
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss identifier: {identifier!r}")


def serialize(loss):
    return loss.get_config() if isinstance(loss, Loss) else getattr(loss, "__name__", str(loss))
