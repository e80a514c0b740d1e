"""TFK196: Keras's confusion-matrix metrics (AUC, Precision, Recall, the four counts) give Keras's results."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from tests.helpers import convert, python_json

ms = pytest.importorskip("mindspore")
if importlib.util.find_spec("keras") is None:
    pytest.skip("Keras is not installed", allow_module_level=True)

RNG = np.random.default_rng(0)
Y_TRUE = (RNG.uniform(size=(64, 3)) > 0.6).astype(np.float32)
Y_PRED = RNG.uniform(size=(64, 3)).astype(np.float32)
Y_PRED[0, 0], Y_PRED[1, 1], Y_PRED[2, 2] = 0.5, 0.0, 1.0  # on the thresholds and the ends
WEIGHTS = RNG.uniform(size=(64,)).astype(np.float32)

CASES = {
    "true_positives": "TruePositives()",
    "false_positives_thresholds": "FalsePositives(thresholds=[0.2, 0.5, 0.9])",
    "true_negatives": "TrueNegatives(0.3)",
    "false_negatives": "FalseNegatives()",
    "precision": "Precision()",
    "precision_even_thresholds": "Precision(thresholds=[0.0, 0.5, 1.0])",
    "precision_top_k": "Precision(top_k=1)",
    "precision_class_id": "Precision(class_id=1)",
    "recall_thresholds": "Recall(thresholds=[0.1, 0.7])",
    "recall_top_k_class_id": "Recall(top_k=2, class_id=0)",
    "auc": "AUC()",
    "auc_pr": "AUC(curve='PR')",
    "auc_minoring": "AUC(num_thresholds=50, summation_method='minoring')",
    "auc_majoring_thresholds": "AUC(thresholds=[0.1, 0.4, 0.8], summation_method='majoring')",
    "auc_multi_label": "AUC(multi_label=True)",
    "auc_multi_label_weights_pr": "AUC(multi_label=True, label_weights=[1.0, 2.0, 0.5], curve='PR')",
    "auc_from_logits": "AUC(from_logits=True)",
}

RUN = """
import json, sys
import numpy as np

def run(namespace, make, cases, y_true, y_pred, weights):
    out = {}
    for name, expression in cases.items():
        for weighted in (False, True):
            metric = eval(make + expression, {namespace[0]: namespace[1]})
            scores = y_pred * 6 - 3 if "logits" in name else y_pred
            for i in range(0, 64, 16):  # four batches
                extra = {"sample_weight": weights[i:i + 16]} if weighted else {}
                metric.update_state(y_true[i:i + 16], scores[i:i + 16], **extra)
            value = metric.result()
            value = value.numpy() if hasattr(value, "numpy") else value.asnumpy()
            out[name + ("_weighted" if weighted else "")] = np.asarray(value, np.float64).tolist()
    return out
"""

KERAS = RUN + """
import keras
data = json.loads(sys.argv[1])
arrays = [np.asarray(data[k], np.float32) for k in ("y_true", "y_pred", "weights")]
print(json.dumps(run(("keras", keras), "keras.metrics.", data["cases"], *arrays)))
"""


def test_confusion_metrics_match_keras():
    from migrate.runtime.keras import metrics

    payload = json.dumps({"cases": CASES, "y_true": Y_TRUE.tolist(), "y_pred": Y_PRED.tolist(),
                          "weights": WEIGHTS.tolist()})
    want = python_json(KERAS, payload)
    namespace: dict = {}
    exec(RUN, namespace)  # noqa: S102 - the same driver as Keras's run
    got = namespace["run"](("metrics", metrics), "metrics.", CASES, Y_TRUE, Y_PRED, WEIGHTS)
    assert set(got) == set(want)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_confusion_metrics_convert_and_reset():
    code, findings = convert("import tensorflow as tf\n\nm = [tf.keras.metrics.AUC(name='prc', curve='PR'), "
                             "tf.keras.metrics.Precision(name='precision')]\n")
    assert "mk.metrics.AUC(name='prc', curve='PR')" in code and "mk.metrics.Precision(name='precision')" in code
    assert {f.rule for f in findings} == {"TFK196"}
    from migrate.runtime.keras import metrics

    auc = metrics.get("auc")
    auc.update_state(Y_TRUE[:, 0], Y_PRED[:, 0])
    assert 0.0 < float(auc.result().asnumpy()) < 1.0
    auc.reset_state()
    assert float(auc.result().asnumpy()) == 0.0
    with pytest.raises(ValueError, match="Threshold values must be in"):
        metrics.Precision(thresholds=[1.5])
