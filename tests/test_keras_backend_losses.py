"""TFK210, TFK211 and TFF342: Keras's legacy backend crossentropies and ``one_hot``, and ``tf.timestamp``.

TF 2.21's ``tf.keras.backend`` is Keras 3's legacy backend, whose crossentropies clip, reshape
and order their arguments their own way (not as ``tf.keras.losses``' functions do). Each case
is a TF expression; TF evaluates it in a subprocess (TF and MindSpore are not loaded into one
process), the converted expression runs here on MindSpore tensors holding the same arrays,
and values, shapes and dtypes must agree; so must the gradients a training step takes.
"""

from __future__ import annotations

import importlib.util
import json
import time

import numpy as np
import pytest

from tests.helpers import PLAIN_JSON, convert, python_json

ms = pytest.importorskip("mindspore")
if importlib.util.find_spec("tensorflow") is None:
    pytest.skip("TensorFlow is not installed", allow_module_level=True)


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(5)
    probs = rng.dirichlet(np.ones(4), size=6).astype(np.float32)
    probs[0] = [1.0, 0.0, 0.0, 0.0]  # (0 and 1: the clipping decides)
    seq_logits = (rng.normal(size=(2, 3, 5)) * 3).astype(np.float32)
    return {
        "labels": np.array([0, 3, 1, 2, 2, 0], np.int32),
        "labels64": np.array([[1], [0], [3], [3], [2], [1]], np.int64),
        "seq_labels": rng.integers(0, 5, (2, 3)).astype(np.int32),
        "logits": (rng.normal(size=(6, 4)) * 4).astype(np.float32),
        "probs": probs,
        "unnormalised": rng.uniform(0.1, 2.0, size=(6, 4)).astype(np.float32),  # (rows not summing to 1)
        "onehot": np.eye(4, dtype=np.float32)[[0, 3, 1, 2, 2, 0]],
        "soft": rng.dirichlet(np.ones(4), size=6).astype(np.float32),
        "seq_logits": seq_logits,
        "seq_probs": np.exp(seq_logits) / np.exp(seq_logits).sum(-1, keepdims=True),
        "bits": (rng.uniform(size=(6, 4)) > 0.5).astype(np.float32),
        "logits0": np.array([[0.0, -30.0, 30.0, 2.0]] * 6, np.float32),  # (0 exactly; large enough to overflow exp)
        "predictions": np.log(rng.dirichlet(np.ones(7), size=(2, 5))).astype(np.float32),
        "mlm_labels": rng.integers(0, 7, (2, 5)).astype(np.int32),
    }


INPUTS = _inputs()

CASES = {
    # TFK210 sparse_categorical_crossentropy
    "sparse_logits": "tf.keras.backend.sparse_categorical_crossentropy(labels, logits, from_logits=True)",
    "sparse_probs_clipped": "tf.keras.backend.sparse_categorical_crossentropy(labels, probs)",
    "sparse_unnormalised": "tf.keras.backend.sparse_categorical_crossentropy(labels, unnormalised)",
    "sparse_column_target_int64": "tf.keras.backend.sparse_categorical_crossentropy(labels64, logits, True)",
    "sparse_sequence": "tf.keras.backend.sparse_categorical_crossentropy(seq_labels, seq_logits, from_logits=True)",
    "sparse_sequence_column_target": "tf.keras.backend.sparse_categorical_crossentropy(seq_labels[..., None], "
                                     "seq_probs)",
    "sparse_axis_1": "tf.keras.backend.sparse_categorical_crossentropy(seq_labels[:, :2], "
                     "tf.transpose(seq_logits, [0, 2, 1])[:, :, :2], from_logits=True, axis=1)",
    "sparse_axis_0": "tf.keras.backend.sparse_categorical_crossentropy(labels[:4], tf.transpose(probs[:4]), axis=0)",
    "sparse_ignore_class": "tf.keras.backend.sparse_categorical_crossentropy(seq_labels, seq_logits, True, -1, "
                           "ignore_class=2)",
    "sparse_keywords": "tf.keras.backend.sparse_categorical_crossentropy(output=logits, target=labels, "
                       "from_logits=True)",
    # TFK210 categorical_crossentropy
    "categorical_probs": "tf.keras.backend.categorical_crossentropy(onehot, probs)",
    "categorical_unnormalised": "tf.keras.backend.categorical_crossentropy(soft, unnormalised)",
    "categorical_logits": "tf.keras.backend.categorical_crossentropy(soft, logits, from_logits=True)",
    "categorical_axis_0": "tf.keras.backend.categorical_crossentropy(tf.transpose(onehot), tf.transpose(unnormalised), "
                          "axis=0)",
    "categorical_logits_axis_1": "tf.keras.backend.categorical_crossentropy(tf.one_hot(seq_labels, 5, axis=1), "
                                 "tf.transpose(seq_logits, [0, 2, 1]), True, 1)",
    # TFK210 binary_crossentropy (elementwise)
    "binary_probs": "tf.keras.backend.binary_crossentropy(bits, probs)",
    "binary_soft_targets": "tf.keras.backend.binary_crossentropy(soft, unnormalised / 2.0)",
    "binary_logits": "tf.keras.backend.binary_crossentropy(bits, logits, from_logits=True)",
    "binary_logits_extreme": "tf.keras.backend.binary_crossentropy(bits, logits0, True)",
    # TFK211 one_hot
    "one_hot": "tf.keras.backend.one_hot(labels, 4)",
    "one_hot_out_of_range": "tf.keras.backend.one_hot(labels, 3)",
    "one_hot_2d_int64": "tf.keras.backend.one_hot(tf.cast(seq_labels, tf.int64), num_classes=5)",
    # BERT's weighted_sparse_categorical_crossentropy (official/nlp/modeling/losses)
    "bert_per_example_loss": "-tf.keras.backend.sum(predictions * tf.keras.backend.cast("
                             "tf.keras.backend.one_hot(mlm_labels, predictions.shape[-1]), predictions.dtype), "
                             "axis=[-1])",
}

# name -> (the loss, a function of `x`; the input `x` is)
GRADIENTS = {
    "sparse_logits": ("tf.reduce_mean(tf.keras.backend.sparse_categorical_crossentropy(labels, x, from_logits=True))",
                      "logits"),
    "sparse_probs": ("tf.reduce_sum(tf.keras.backend.sparse_categorical_crossentropy(labels, x))", "soft"),
    "categorical_probs": ("tf.reduce_sum(tf.keras.backend.categorical_crossentropy(onehot, x))", "unnormalised"),
    "categorical_logits": ("tf.reduce_sum(tf.keras.backend.categorical_crossentropy(soft, x, True))", "logits"),
    "binary_probs": ("tf.reduce_mean(tf.keras.backend.binary_crossentropy(bits, x))", "soft"),
    "binary_logits": ("tf.reduce_mean(tf.keras.backend.binary_crossentropy(bits, x, from_logits=True))", "logits0"),
}

TF_SCRIPT = PLAIN_JSON + r"""
import json, sys, time
import numpy as np
import tensorflow as tf

arrays = dict(np.load(sys.argv[1]))
cases, gradients = json.loads(open(sys.argv[2]).read())
tensors = {k: tf.constant(v) for k, v in arrays.items()}
out = {name: plain(eval(expr, {"tf": tf, **tensors})) for name, expr in cases.items()}
for name, (expr, wrt) in gradients.items():
    x = tensors[wrt]
    with tf.GradientTape() as tape:
        tape.watch(x)
        value = eval(expr, {"tf": tf, **tensors, "x": x})
    out["grad_" + name] = plain(tape.gradient(value, x))
before = time.time()
stamp = tf.timestamp()
out["timestamp"] = {**plain(stamp), "before": before, "after": time.time()}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def tf_results(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("tf_backend_losses")
    np.savez(work / "inputs.npz", **INPUTS)
    (work / "cases.json").write_text(json.dumps([CASES, GRADIENTS]))
    return python_json("import numpy as np\n" + TF_SCRIPT, str(work / "inputs.npz"), str(work / "cases.json"))


def converted(expr: str) -> tuple[str, set[str]]:
    code, findings = convert(f"import tensorflow as tf\n\nresult = {expr}\n")
    assert "tf." not in code and "tensorflow" not in code, f"not everything was converted:\n{code}"
    return code, {f.rule for f in findings}


def evaluate(expr: str, **extra):
    code, _ = converted(expr)
    env = {k: ms.Tensor(v) for k, v in INPUTS.items()} | extra
    exec(compile(code, "case", "exec"), env)
    return env["result"]


def assert_matches(got, want: dict, rtol=1e-6, atol=1e-6):
    value = got.asnumpy()
    assert (list(value.shape), value.dtype.name) == (want["shape"], want["dtype"])
    np.testing.assert_allclose(value, np.asarray(want["value"], value.dtype), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_tensorflow(name, tf_results):
    assert_matches(evaluate(CASES[name]), tf_results[name])


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_match_tensorflow(name, tf_results):
    expr, wrt = GRADIENTS[name]
    code, _ = convert(f"import tensorflow as tf\n\ndef loss(x):\n    return {expr}\n")
    assert "tf." not in code and "tensorflow" not in code, code
    # (MindSpore's grad asks a function for its module's name)
    env = {"__name__": "case", **{k: ms.Tensor(v) for k, v in INPUTS.items()}}
    exec(compile(code, "case", "exec"), env)
    assert_matches(ms.grad(env["loss"])(ms.Tensor(INPUTS[wrt])), tf_results["grad_" + name])


def test_the_rules_that_convert_them():
    assert {"TFK210"} <= converted(CASES["sparse_logits"])[1]
    assert {"TFK211"} <= converted(CASES["one_hot"])[1]
    assert {"TFF342"} <= converted("tf.timestamp()")[1]


def test_timestamp_is_tensorflow_s_float64_scalar_of_the_wall_clock(tf_results):
    want = tf_results["timestamp"]
    assert want["before"] <= want["value"] <= want["after"] + 1e-6  # (TF's clock counts microseconds)
    before = time.time()
    stamp = evaluate("tf.timestamp()")
    after = time.time()
    value = stamp.asnumpy()
    assert (list(value.shape), value.dtype.name) == (want["shape"], want["dtype"]) == ([], "float64")
    assert before <= float(value) <= after
