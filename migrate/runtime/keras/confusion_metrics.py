"""Keras's confusion-matrix metrics: TruePositives/FalsePositives/TrueNegatives/FalseNegatives,
Precision, Recall and AUC, with Keras 3's thresholds, counting and formulas.

A prediction counts as positive at a threshold when it is strictly greater than it; labels
count as positive when non-zero. Thresholds spread evenly over [0, 1] (AUC's, always) are
counted as Keras counts them, by buckets (``ceil(p * (T - 1)) - 1``, predictions clipped to
[0, 1]); others by comparing every prediction with every threshold. ``top_k`` keeps the k
largest predictions of a row, ``class_id`` one column, ``sample_weight`` weighs each
example. AUC sums the curve with Keras's Riemann rule (``interpolation``, ``minoring``,
``majoring``) for ROC and PR (PR by the Davis-Goadrich interpolation), per label and then
averaged with ``multi_label``. The counts are float32 state variables the base class sums
across processes on read, as TF's sync-on-read variables are.
"""

from __future__ import annotations

import numpy as np

from ._tensors import to_numpy
from .metrics import Metric

NEG_INF = -1e10
EPSILON = 1e-7

__all__ = ["AUC", "FalseNegatives", "FalsePositives", "Precision", "Recall", "TrueNegatives", "TruePositives"]


def _thresholds(thresholds, default) -> list[float]:
    if thresholds is not None:
        values = list(thresholds) if isinstance(thresholds, (list, tuple, np.ndarray)) else [thresholds]
        bad = [t for t in values if t is None or t < 0 or t > 1]
        if bad:
            raise ValueError(f"Threshold values must be in [0, 1]. Received: {bad}")
    chosen = default if thresholds is None else thresholds
    return [float(t) for t in (list(chosen) if isinstance(chosen, (list, tuple, np.ndarray)) else [chosen])]


def _evenly(thresholds) -> bool:
    count = len(thresholds)
    if count < 3:
        return False
    return bool(np.allclose(thresholds, np.arange(count, dtype=np.float32) / (count - 1), atol=EPSILON))


def _same_rank(x1, x2, expand_rank_1=True):
    """Keras's squeeze_or_expand_to_same_rank on arrays."""
    if x1.ndim == x2.ndim + 1 and x1.shape[-1] == 1:
        if x2.ndim == 1 and expand_rank_1:
            x2 = x2[..., None]
        else:
            x1 = x1[..., 0]
    if x2.ndim == x1.ndim + 1 and x2.shape[-1] == 1:
        if x1.ndim == 1 and expand_rank_1:
            x1 = x1[..., None]
        else:
            x2 = x2[..., 0]
    return x1, x2


def _top_k(x, k: int):
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    mask = np.zeros_like(x)
    np.put_along_axis(mask, order, 1.0, axis=-1)
    return x * mask + np.float32(NEG_INF) * (1 - mask)


def _divide_no_nan(a, b):
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return np.where(b == 0, np.float32(0), a / np.where(b == 0, np.float32(1), b)).astype(np.float32)


def confusion_counts(wanted, y_true, y_pred, thresholds, evenly: bool, top_k=None, class_id=None, sample_weight=None,
                     multi_label=False, label_weights=None) -> dict:
    """The counts ``wanted`` (of "tp", "fp", "tn", "fn") of one batch, as Keras's
    update_confusion_matrix_variables adds them: float32 arrays of shape (thresholds,) or
    (thresholds, labels)."""
    y_true = np.asarray(to_numpy(y_true)).astype(np.float32)
    y_pred = np.asarray(to_numpy(y_pred)).astype(np.float32)
    y_pred, y_true = _same_rank(y_pred, y_true)
    weights = None
    if sample_weight is not None:
        weights = np.asarray(to_numpy(sample_weight)).astype(np.float32)[..., None]
        _, weights = _same_rank(y_true, weights, expand_rank_1=False)
    if top_k is not None:
        y_pred = _top_k(y_pred, int(top_k))
    if class_id is not None:
        if y_pred.ndim == 1:
            raise ValueError("When class_id is provided, y_pred must be a 2D array with shape "
                             f"(num_samples, num_classes), found shape: {y_pred.shape}")
        y_true, y_pred = y_true[..., class_id, None], y_pred[..., class_id, None]
    thresholds = np.asarray(thresholds, np.float32)
    count = len(thresholds)
    weights = np.float32(1.0) if weights is None else np.broadcast_to(weights, y_pred.shape).astype(np.float32)
    if label_weights is not None and not multi_label:
        weights = weights * np.broadcast_to(np.asarray(label_weights, np.float32)[None], y_pred.shape)
    if evenly:
        with_epsilon = thresholds[0] < 0.0 or thresholds[-1] > 1.0
        y_pred = np.clip(y_pred, 0.0, 1.0)
        positive = (y_true != 0).astype(np.float32)
        weights = np.broadcast_to(weights, y_pred.shape).astype(np.float32)
        if not multi_label:
            positive, y_pred, weights = positive.reshape(-1, 1), y_pred.reshape(-1, 1), weights.reshape(-1, 1)
        true_labels, false_labels = positive * weights, (np.float32(1) - positive) * weights
        buckets = np.ceil(y_pred * np.float32(count - 1)) - 1
        if with_epsilon:
            buckets = np.maximum(buckets, 0)
        buckets = buckets.astype(np.int64)
        tp = np.zeros((count, y_pred.shape[-1]), np.float32)
        fp = np.zeros_like(tp)
        for label in range(y_pred.shape[-1]):
            keep = buckets[:, label] >= 0  # (a prediction of 0 is above no threshold of 0)
            index = buckets[keep, label]
            tp[:, label] = np.bincount(index, true_labels[keep, label], count)[::-1].cumsum()[::-1]
            fp[:, label] = np.bincount(index, false_labels[keep, label], count)[::-1].cumsum()[::-1]
        counts = {"tp": tp, "fp": fp, "fn": true_labels.sum(0) - tp, "tn": false_labels.sum(0) - fp}
    else:
        if multi_label:
            predictions, labels = y_pred[None], (y_true != 0)[None]
            above = predictions > thresholds.reshape(-1, 1, 1)
        else:
            predictions, labels = y_pred.reshape(1, -1), (y_true != 0).reshape(1, -1)
            above = predictions > thresholds.reshape(-1, 1)
        weight = np.broadcast_to(weights, y_pred.shape).reshape(predictions.shape[1:])[None]
        cases = {"tp": labels & above, "fp": ~labels & above, "fn": labels & ~above, "tn": ~labels & ~above}
        counts = {key: np.where(case, weight, np.float32(0)).sum(1).astype(np.float32) for key, case in cases.items()}
    if not multi_label:
        counts = {key: value.reshape(count) for key, value in counts.items()}
    return {key: counts[key].astype(np.float32) for key in wanted}


class _Confusion(Metric):
    """A metric of confusion counts kept per threshold."""

    _counts: tuple = ()

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None, default=0.5):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds, self.top_k, self.class_id = thresholds, top_k, class_id
        self.thresholds = _thresholds(thresholds, default)
        self._evenly = _evenly(self.thresholds)
        for key, attribute in self._counts:
            setattr(self, attribute, self.add_variable(shape=(len(self.thresholds),), name=attribute))

    def update_state(self, y_true, y_pred, sample_weight=None):
        import mindspore as ms

        found = confusion_counts([key for key, _ in self._counts], y_true, y_pred, self.thresholds, self._evenly,
                                 self.top_k, self.class_id, sample_weight)
        for key, attribute in self._counts:
            variable = getattr(self, attribute)
            variable.set_data(ms.Tensor(variable.asnumpy() + found[key]))

    def _value(self, values):
        import mindspore as ms

        values = np.asarray(values, np.float32)
        return ms.Tensor(values[0] if len(self.thresholds) == 1 else values)

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds}


class _ConditionCount(_Confusion):
    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(thresholds=thresholds, name=name, dtype=dtype)

    def result(self):
        return self._value(self.accumulator.asnumpy())


class TruePositives(_ConditionCount):
    _counts = (("tp", "accumulator"),)


class FalsePositives(_ConditionCount):
    _counts = (("fp", "accumulator"),)


class TrueNegatives(_ConditionCount):
    _counts = (("tn", "accumulator"),)


class FalseNegatives(_ConditionCount):
    _counts = (("fn", "accumulator"),)


class _Ratio(_Confusion):
    """``tp / (tp + other)`` per threshold (0.5 by default; with ``top_k``, the top k of each row),
    ``other`` the second of ``_counts``."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(thresholds, top_k, class_id, name, dtype, default=0.5 if top_k is None else NEG_INF)

    def result(self):
        tp, other = (getattr(self, attribute).asnumpy() for _, attribute in self._counts)
        return self._value(_divide_no_nan(tp, tp + other))

    def get_config(self):
        return {**super().get_config(), "top_k": self.top_k, "class_id": self.class_id}


class Precision(_Ratio):
    """``tp / (tp + fp)``."""

    _counts = (("tp", "true_positives"), ("fp", "false_positives"))


class Recall(_Ratio):
    """``tp / (tp + fn)``."""

    _counts = (("tp", "true_positives"), ("fn", "false_negatives"))


class AUC(Metric):
    """Keras's AUC: the area under the ROC or PR curve from counts at ``num_thresholds`` thresholds."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None, dtype=None,
                 thresholds=None, multi_label=False, num_labels=None, label_weights=None, from_logits=False):
        curve = str(curve).upper()
        if curve not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are ["PR", "ROC"]')
        summation = str(summation_method).lower()
        if summation not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f'Invalid AUC summation method value: "{summation_method}". '
                             'Expected values are ["interpolation", "majoring", "minoring"]')
        if thresholds is not None:
            self.num_thresholds = len(thresholds) + 2
            inner = sorted(float(t) for t in thresholds)
            self._evenly = _evenly(np.array([0.0] + inner + [1.0]))
        else:
            if num_thresholds <= 1:
                raise ValueError(f"Argument `num_thresholds` must be an integer > 1. Received: "
                                 f"num_thresholds={num_thresholds}")
            self.num_thresholds = int(num_thresholds)
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self._evenly = True
        self._thresholds = np.array([0.0 - EPSILON] + inner + [1.0 + EPSILON])
        self.curve, self.summation_method = curve, summation
        super().__init__(name=name, dtype=dtype)
        self.multi_label, self.num_labels, self._from_logits = multi_label, num_labels, from_logits
        self.label_weights = None if label_weights is None else np.asarray(label_weights, np.float32)
        if num_labels and not multi_label:
            raise ValueError("`num_labels` is needed only when `multi_label` is True.")
        self._built = False
        if not multi_label:
            self._build(None)
        elif num_labels:
            self._build((None, num_labels))

    @property
    def thresholds(self):
        return list(self._thresholds)

    def _build(self, shape):
        if self.multi_label:
            if len(shape) != 2:
                raise ValueError(f"`y_pred` must have rank 2 when `multi_label=True`. Found rank {len(shape)}.")
            variable_shape = (self.num_thresholds, int(shape[1]))
        else:
            variable_shape = (self.num_thresholds,)
        for name in ("true_positives", "false_positives", "true_negatives", "false_negatives"):
            setattr(self, name, self.add_variable(shape=variable_shape, name=name))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        import mindspore as ms

        y_pred = np.asarray(to_numpy(y_pred)).astype(np.float32)
        if not self._built:
            self._build(y_pred.shape)
        if self._from_logits:
            y_pred = (1.0 / (1.0 + np.exp(-y_pred))).astype(np.float32)
        found = confusion_counts(("tp", "fp", "tn", "fn"), y_true, y_pred, self._thresholds, self._evenly,
                                 sample_weight=sample_weight, multi_label=self.multi_label,
                                 label_weights=None if self.multi_label else self.label_weights)
        for key, name in (("tp", "true_positives"), ("fp", "false_positives"), ("tn", "true_negatives"),
                          ("fn", "false_negatives")):
            variable = getattr(self, name)
            variable.set_data(ms.Tensor(variable.asnumpy() + found[key]))

    def _by_label(self, terms):
        import mindspore as ms

        if not self.multi_label:
            return ms.Tensor(np.float32(terms.sum()))
        by_label = terms.sum(0)
        if self.label_weights is None:
            return ms.Tensor(np.float32(by_label.mean()))
        return ms.Tensor(_divide_no_nan((by_label * self.label_weights).sum(), self.label_weights.sum()))

    def _interpolate_pr_auc(self, tp, fp, fn):
        n = self.num_thresholds
        dtp = tp[:n - 1] - tp[1:]
        p = tp + fp
        dp = p[:n - 1] - p[1:]
        slope = _divide_no_nan(dtp, np.maximum(dp, 0))
        intercept = tp[1:] - slope * p[1:]
        ratio = np.where((p[:n - 1] > 0) & (p[1:] > 0), _divide_no_nan(p[:n - 1], np.maximum(p[1:], 0)),
                         np.ones_like(p[1:]))
        with np.errstate(divide="ignore", invalid="ignore"):
            increment = _divide_no_nan(slope * (dtp + intercept * np.log(ratio)), np.maximum(tp[1:] + fn[1:], 0))
        return self._by_label(increment)

    def result(self):
        if not self._built:
            import mindspore as ms

            return ms.Tensor(np.float32(0.0))
        tp, fp, tn, fn = (getattr(self, name).asnumpy() for name in
                          ("true_positives", "false_positives", "true_negatives", "false_negatives"))
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolate_pr_auc(tp, fp, fn)
        recall = _divide_no_nan(tp, tp + fn)
        x, y = (_divide_no_nan(fp, fp + tn), recall) if self.curve == "ROC" else (recall, _divide_no_nan(tp, tp + fp))
        n = self.num_thresholds
        if self.summation_method == "interpolation":
            heights = (y[:n - 1] + y[1:]) / np.float32(2)
        elif self.summation_method == "minoring":
            heights = np.minimum(y[:n - 1], y[1:])
        else:
            heights = np.maximum(y[:n - 1], y[1:])
        return self._by_label((x[:n - 1] - x[1:]) * heights)

    def reset_state(self):
        if self._built:
            super().reset_state()

    def get_config(self):
        return {**super().get_config(), "num_thresholds": self.num_thresholds, "curve": self.curve,
                "summation_method": self.summation_method, "multi_label": self.multi_label,
                "num_labels": self.num_labels, "from_logits": self._from_logits,
                "label_weights": None if self.label_weights is None else self.label_weights.tolist(),
                "thresholds": self.thresholds[1:-1]}
