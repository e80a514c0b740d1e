"""TFM320: ``tf.image.ssim``, ``ssim_multiscale`` and ``psnr`` compute what TF computes.

Each case is a TF expression over random images (uint8 and float32, one image to a batch of
batches, TF's default window and others, ``max_val`` 1 and 255). TF evaluates it in a
subprocess (TF and MindSpore are not loaded into one process); the expression is converted
and runs here on MindSpore tensors holding the same arrays. A loss ``1 - ssim`` is
differentiated in training code, so gradients are compared too, on the loss of a real
segmentation model (DeepLearningExamples' UNet 3+).
"""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from tests.helpers import PLAIN_JSON, convert, python_json

ms = pytest.importorskip("mindspore")
if importlib.util.find_spec("tensorflow") is None:
    pytest.skip("TensorFlow is not installed", allow_module_level=True)


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    u1 = rng.integers(0, 256, (2, 32, 28, 3)).astype(np.uint8)
    f1 = rng.uniform(size=(3, 24, 20, 1)).astype(np.float32)
    m1 = rng.uniform(size=(2, 181, 190, 3)).astype(np.float32)
    return {
        "u1": u1,
        "u2": np.clip(u1.astype(np.int64) + rng.integers(-40, 41, u1.shape), 0, 255).astype(np.uint8),
        "f1": f1,
        "f2": np.clip(f1 + rng.normal(0, 0.1, f1.shape), 0, 1).astype(np.float32),
        "single1": rng.uniform(size=(16, 17, 2)).astype(np.float32),
        "single2": rng.uniform(size=(16, 17, 2)).astype(np.float32),
        "nested": rng.uniform(size=(2, 2, 13, 15, 3)).astype(np.float32),  # (batch dims broadcast against "flat")
        "flat": rng.uniform(size=(2, 13, 15, 3)).astype(np.float32),
        "m1": m1,  # (the five default scales need 176 pixels a side; 181 and 190 are odd and even at different scales)
        "m2": np.clip(m1 + rng.normal(0, 0.05, m1.shape), 0, 1).astype(np.float32),
        "wide1": (rng.uniform(size=(1, 20, 20, 3)) * 255).astype(np.float32),
        "wide2": (rng.uniform(size=(1, 20, 20, 3)) * 255).astype(np.float32),
        "seg_true": (rng.uniform(size=(2, 24, 24, 4)) > 0.7).astype(np.float32),
        "seg_pred": rng.uniform(size=(2, 24, 24, 4)).astype(np.float32),
    }


INPUTS = _inputs()

CASES = {
    "ssim_uint8": "tf.image.ssim(u1, u2, 255)",
    "ssim_uint8_max_val_1": "tf.image.ssim(u1, u2, max_val=1)",  # (1 as uint8 is 1/255 of the range)
    "ssim_float": "tf.image.ssim(f1, f2, 1.0)",
    "ssim_window_and_constants": "tf.image.ssim(f1, f2, 1.0, filter_size=5, filter_sigma=0.8, k1=0.02, k2=0.05)",
    "ssim_even_window": "tf.image.ssim(u1, u2, 255, filter_size=6, filter_sigma=2.0)",
    "ssim_single_image": "tf.image.ssim(single1, single2, 1.0, filter_size=7)",
    "ssim_broadcast_batches": "tf.image.ssim(nested, flat, 1.0, filter_size=3, filter_sigma=1.0)",
    "ssim_max_val_255_floats": "tf.image.ssim(wide1, wide2, 255.0)",
    "ssim_float64": "tf.image.ssim(tf.cast(f1, tf.float64), tf.cast(f2, tf.float64), 1.0)",
    "ssim_index_map": "tf.image.ssim(f1, f2, 1.0, return_index_map=True)",
    "ssim_identical": "tf.image.ssim(u1, u1, 255)",
    "psnr_uint8": "tf.image.psnr(u1, u2, 255)",
    "psnr_uint8_max_val_1": "tf.image.psnr(u1, u2, 1)",
    "psnr_float": "tf.image.psnr(f1, f2, max_val=1.0)",
    "psnr_single_image": "tf.image.psnr(single1, single2, 1.0)",
    "psnr_broadcast_batches": "tf.image.psnr(nested, flat, 2.0)",
    "ssim_multiscale": "tf.image.ssim_multiscale(m1, m2, 1.0)",
    "ssim_multiscale_three_scales": "tf.image.ssim_multiscale(f1, f2, 1.0, power_factors=(0.3, 0.3, 0.4), "
                                    "filter_size=5)",
    "ssim_multiscale_uint8": "tf.image.ssim_multiscale(u1, u2, 255, power_factors=[0.5, 0.5], filter_size=7, "
                             "filter_sigma=1.2, k1=0.02)",
    "ssim_multiscale_broadcast": "tf.image.ssim_multiscale(nested, flat, 1.0, power_factors=(0.6, 0.4), filter_size=3)",
}

# The loss of DeepLearningExamples/Segmentation/Contrib/UNet3P/losses/loss.py, and the
# gradient training takes of it: name -> (code defining `loss(y_pred)`, the input it differentiates).
GRADIENTS = {
    "unet3p_ssim_loss": ("""
def loss(y_pred, y_true=seg_true, smooth=1.e-9):
    ssim_value = tf.image.ssim(y_true, y_pred, max_val=1)
    return K.mean(1 - ssim_value + smooth, axis=0)
""", "seg_pred"),
    "ms_ssim_loss": ("""
def loss(y_pred):
    return 1.0 - tf.reduce_mean(tf.image.ssim_multiscale(f1, y_pred, 1.0, power_factors=(0.3, 0.3, 0.4), filter_size=5))
""", "f2"),
    "psnr_loss": ("""
def loss(y_pred):
    return -tf.reduce_mean(tf.image.psnr(f1, y_pred, 1.0))
""", "f2"),
}

PRELUDE = "import tensorflow as tf\nfrom tensorflow.keras import backend as K\n"

TF_SCRIPT = PLAIN_JSON + r"""
import json, sys
import numpy as np
import tensorflow as tf
from tensorflow.keras import backend as K

arrays = dict(np.load(sys.argv[1]))
cases, gradients = json.loads(open(sys.argv[2]).read())
tensors = {k: tf.constant(v) for k, v in arrays.items()}
out = {name: plain(eval(expr, {"tf": tf, **tensors})) for name, expr in cases.items()}
for name, (code, wrt) in gradients.items():
    env = {"tf": tf, "K": K, **tensors}
    exec(code, env)
    with tf.GradientTape() as tape:
        tape.watch(tensors[wrt])
        value = env["loss"](tensors[wrt])
    out[name] = {"loss": plain(value), "gradient": plain(tape.gradient(value, tensors[wrt]))}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def tf_results(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("tf_image_quality")
    np.savez(work / "inputs.npz", **INPUTS)
    (work / "cases.json").write_text(json.dumps([CASES, GRADIENTS]))
    return python_json("import numpy as np\n" + TF_SCRIPT, str(work / "inputs.npz"), str(work / "cases.json"))


def converted(code: str) -> str:
    out, findings = convert(PRELUDE + code)
    assert "tf." not in out and "tensorflow" not in out, f"not everything was converted:\n{out}"
    assert "TFM320" in {f.rule for f in findings}
    return out


def run(code: str) -> dict:
    # (MindSpore's grad asks a function for its module's name)
    env = {"__name__": "case", **{k: ms.Tensor(v) for k, v in INPUTS.items()}}
    exec(compile(converted(code), "case", "exec"), env)
    return env


def assert_matches(got, want: dict, rtol: float = 1e-5, atol: float = 1e-6):
    value = got.asnumpy()
    assert (list(value.shape), value.dtype.name) == (want["shape"], want["dtype"])
    # float32 rounding: two one-axis passes of the window where TF makes one 2-D pass, and
    # SSIM's variances are differences of local means (atol: values near 0, unrelated images)
    np.testing.assert_allclose(value, np.asarray(want["value"], value.dtype), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_tensorflow(name, tf_results):
    assert_matches(run(f"result = {CASES[name]}\n")["result"], tf_results[name])


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_match_tensorflow(name, tf_results):
    code, wrt = GRADIENTS[name]
    env = run(code)
    loss, gradient = ms.value_and_grad(env["loss"])(env[wrt])
    want = tf_results[name]
    assert_matches(loss, want["loss"])
    scale = np.abs(np.asarray(want["gradient"]["value"])).max()
    # (float32 sums over five scales: on some CPUs a few of MS-SSIM's smallest gradients differ
    # from TF's by 2e-5 of the largest one)
    assert_matches(gradient, want["gradient"], rtol=1e-4, atol=5e-5 * scale)


def test_images_smaller_than_the_window_are_refused():
    from migrate.runtime import tfimage

    small = ms.Tensor(INPUTS["f1"][:, :10])  # (10 high: TF's check fails too, as an InvalidArgumentError)
    with pytest.raises(ValueError, match="at least filter_size"):
        tfimage.ssim(small, small, 1.0)
    with pytest.raises(ValueError, match="not compatible"):
        tfimage.psnr(INPUTS["f1"], INPUTS["flat"], 1.0)
