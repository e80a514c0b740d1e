"""TFR101: ``tf.random.uniform/normal/truncated_normal`` -> ``migrate.runtime.tfrandom``.

The generators differ, so values cannot match; what must match TF is everything else.
Each case is a TF call; TF runs it in a subprocess (TF and MindSpore are not loaded into
one process) and reports shape, dtype, range and moments of a large draw; the converted
call runs here on MindSpore and must agree: shape and dtype exactly, the range within
TF's bounds, the moments within sampling error.
"""

from __future__ import annotations

import importlib.util
import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from migrate.config import NATIVE_RULES
from tests.helpers import convert, python_json

ms = pytest.importorskip("mindspore")
if importlib.util.find_spec("tensorflow") is None:
    pytest.skip("TensorFlow is not installed", allow_module_level=True)

N = 200_000
CASES = {
    "uniform_default": f"tf.random.uniform([{N}])",
    "uniform_bounds": f"tf.random.uniform(({N},), minval=-3.0, maxval=5.0, seed=4)",
    "uniform_f16": f"tf.random.uniform([{N}], 2, 3, dtype=tf.float16)",
    "uniform_f64_shape_tensor": f"tf.random.uniform(tf.constant([{N // 4}, 4]), dtype=tf.float64)",
    "uniform_int": f"tf.random.uniform([{N}], minval=-2, maxval=3, dtype=tf.int32)",
    "uniform_int64_maxval_only": f"tf.random.uniform([{N}], maxval=7, dtype=tf.int64)",
    "uniform_broadcast_bounds": f"tf.random.uniform([{N // 2}, 2], minval=[0.0, 10.0], maxval=[1.0, 20.0])",
    "uniform_scalar_shape": "tf.random.uniform([])",
    "normal_default": f"tf.random.normal([{N}])",
    "normal_mean_std": f"tf.random.normal([{N // 10}, 10], mean=2.0, stddev=0.5, seed=1)",
    "normal_f16": f"tf.random.normal([{N}], 1.0, 3.0, tf.float16)",
    "truncated": f"tf.random.truncated_normal([{N}])",
    "truncated_mean_std": f"tf.random.truncated_normal([{N}], mean=-1.0, stddev=2.0, dtype=tf.float64)",
    "normal_f64_far_mean": f"tf.random.normal([{N}], mean=1e8, stddev=1.0, dtype=tf.float64)",
    "uniform_f64_far_bounds": f"tf.random.uniform([{N}], minval=1e8, maxval=1e8 + 1.0, dtype=tf.float64)",
    "random_uniform_v1": f"tf.compat.v1.random_uniform([{N}], -1.0, 2.0, dtype=tf.float32)",
    "categorical": f"tf.random.categorical([[-2.3, -1.6, -1.2, -0.9]] * {N}, 1)",
    "categorical_int32_two": f"tf.random.categorical([[0.0, 3.0, float('-inf')]] * {N // 2}, 2, dtype=tf.int32, seed=5)",
    "shuffle": f"tf.random.shuffle([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]] * {N // 4})",
}

TF_SCRIPT = r"""
import json, sys
import numpy as np
import tensorflow as tf

tf.random.set_seed(0)
out = {}
for name, expr in json.loads(open(sys.argv[1]).read()).items():
    value = eval(expr, {"tf": tf})
    out[name] = summary = {"shape": list(value.shape), "dtype": value.dtype.name}
    a = np.atleast_1d(value.numpy().astype(np.float64))
    summary.update(min=float(a.min()), max=float(a.max()), mean=a.mean(axis=0).tolist(), std=a.std(axis=0).tolist())
print(json.dumps(out))
"""


def summarize(value) -> dict:
    a = np.atleast_1d(value.asnumpy().astype(np.float64))
    return {"shape": list(value.shape), "dtype": np.dtype(value.asnumpy().dtype).name,
            "min": float(a.min()), "max": float(a.max()), "mean": a.mean(axis=0).tolist(), "std": a.std(axis=0).tolist()}


@pytest.fixture(scope="module")
def tf_summaries(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("tf_random")
    (work / "cases.json").write_text(json.dumps(CASES))
    return python_json(TF_SCRIPT, str(work / "cases.json"))


def converted_value(expr: str, tier: str):
    """The converted call's value: the shim's ``tfrandom`` in the shim tier; in the native tier
    MindSpore's own ops where TFL180 lowers the call (the shim's otherwise)."""
    from migrate.runtime import tfrandom

    code, findings = convert(f"import tensorflow as tf\n\nvalue = {expr}\n",
                             ignore=(NATIVE_RULES,) if tier == "shim" else ())
    assert [f.rule for f in findings if f.rule.startswith("TFR")] in (["TFR101"], ["TFR103"]), findings
    assert "tensorflow" not in code, code
    env: dict = {}
    exec(code, env)
    if tier == "shim":
        assert env["tfrandom"] is tfrandom, code
    return env["value"]


@pytest.mark.parametrize("tier", ["native", "shim"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_draws_look_like_tensorflow_draws(name, tier, tf_summaries):
    ms.set_seed(0)
    want, got = tf_summaries[name], summarize(converted_value(CASES[name], tier))
    assert got["shape"] == want["shape"] and got["dtype"] == want["dtype"]
    if name == "uniform_scalar_shape":
        return
    # Range (of the bounded draws): integers cover TF's exactly; floats stay inside TF's
    # bounds, which a draw this large nearly reaches.
    if "int" in want["dtype"]:
        assert (got["min"], got["max"]) == (want["min"], want["max"])
    elif not name.startswith("normal"):
        spread = want["max"] - want["min"]
        assert got["min"] >= want["min"] - 0.02 * spread and got["max"] <= want["max"] + 0.02 * spread
    for key in ("mean", "std"):
        assert np.allclose(got[key], want[key], rtol=0.03, atol=0.02), (key, got[key], want[key])


def test_a_seed_repeats_the_stream_and_calls_draw_anew():
    from migrate.runtime import tfrandom

    ms.set_seed(3)
    first = [tfrandom.normal([4]).asnumpy() for _ in range(2)]
    ms.set_seed(3)
    again = [tfrandom.normal([4]).asnumpy() for _ in range(2)]
    assert np.array_equal(first[0], again[0]) and np.array_equal(first[1], again[1])
    assert not np.array_equal(first[0], first[1])


def test_shuffle_reorders_rows_whole():
    from migrate.runtime import tfrandom

    rows = np.arange(40, dtype=np.float32).reshape(20, 2)
    ms.set_seed(1)
    shuffled = tfrandom.shuffle(ms.Tensor(rows)).asnumpy()
    assert not np.array_equal(shuffled, rows)
    assert sorted(map(tuple, shuffled)) == sorted(map(tuple, rows))


def test_truncated_draws_stay_within_two_deviations():
    from migrate.runtime import tfrandom

    value = tfrandom.truncated_normal([50_000], mean=1.0, stddev=0.5).asnumpy()
    assert value.min() >= 0.0 and value.max() <= 2.0


@pytest.mark.parametrize(
    "call, error",
    [
        ("uniform([3], dtype=ms.int32)", "Must specify maxval for integer dtype"),
        ("uniform([3], minval=5, maxval=5, dtype=ms.int32)", "Need minval < maxval"),
        ("normal([3], dtype=ms.int32)", "takes a floating dtype"),
        ("categorical([0.0, 1.0], 2)", "logits should be a matrix"),
    ],
)
def test_tf_errors_are_kept(call, error):
    from migrate.runtime import tfrandom

    with pytest.raises((ValueError, TypeError), match=error):
        eval(f"tfrandom.{call}", {"tfrandom": tfrandom, "ms": ms})


# -- TFR102: random image augmentations -------------------------------------------------------

def _images():
    return np.random.default_rng(0).uniform(size=(16, 5, 6, 3)).astype(np.float32)


def test_image_augmentations_convert_to_tfimage():
    code, findings = convert("import tensorflow as tf\n\nimage = tf.image.random_hue(tf.image.random_flip_left_right(image), 0.1)\n")
    assert "tfimage.random_hue(tfimage.random_flip_left_right(image), 0.1)" in code and "tensorflow" not in code
    assert {f.rule for f in findings} == {"TFR102"}


def test_random_flip_flips_each_image_of_a_batch_or_not():
    from migrate.runtime import tfimage

    ms.set_seed(2)
    images = _images()
    out = tfimage.random_flip_left_right(ms.Tensor(images)).asnumpy()
    flipped = [np.array_equal(o, i[:, ::-1]) for o, i in zip(out, images)]
    kept = [np.array_equal(o, i) for o, i in zip(out, images)]
    assert all(f or k for f, k in zip(flipped, kept)) and any(flipped) and any(kept)
    single = tfimage.random_flip_up_down(ms.Tensor(images[0])).asnumpy()
    assert np.array_equal(single, images[0]) or np.array_equal(single, images[0][::-1])


def test_random_colour_factors_stay_in_their_ranges():
    from migrate.runtime import tfimage

    images = ms.Tensor(_images())
    for _ in range(5):
        delta = (tfimage.random_brightness(images, 0.2) - images).asnumpy()
        assert np.allclose(delta, delta.flat[0], atol=1e-6) and -0.2 <= delta.flat[0] <= 0.2
        contrast = tfimage.random_contrast(images, 0.5, 0.7).asnumpy()
        factors = [np.allclose(contrast, tfimage.adjust_contrast(images, f).asnumpy(), atol=2e-3)
                   for f in np.linspace(0.5, 0.7, 201)]
        assert any(factors)
    with pytest.raises(ValueError, match="max_delta must be <= 0.5"):
        tfimage.random_hue(images, 0.6)
    with pytest.raises(ValueError, match="upper must be > lower"):
        tfimage.random_saturation(images, 1.0, 1.0)


def test_random_crop_is_a_block_of_the_value():
    from migrate.runtime import tfimage

    image = np.arange(5 * 6 * 3, dtype=np.float32).reshape(5, 6, 3)
    seen = set()
    for _ in range(20):
        crop = tfimage.random_crop(ms.Tensor(image), [3, 4, 3]).asnumpy()
        top, left = divmod(int(crop[0, 0, 0]) // 3, 6)
        assert np.array_equal(crop, image[top:top + 3, left:left + 4])
        seen.add((top, left))
    assert len(seen) > 1
    with pytest.raises(ValueError, match="Need value.shape >= size"):
        tfimage.random_crop(ms.Tensor(image), [6, 4, 3])


SAMPLE_BOX = ("[64, 80, 3]", "[[[0.1, 0.2, 0.7, 0.9]]]", "min_object_covered=0.5, aspect_ratio_range=(0.5, 2.0), "
              "area_range=(0.1, 1.0), max_attempts=20")

TF_BOXES = r"""
import json, sys
import numpy as np
import tensorflow as tf

tf.random.set_seed(0)
size, boxes, options = json.loads(sys.argv[1])
draws = [eval(f"tf.image.sample_distorted_bounding_box({size}, tf.constant({boxes}), {options})", {"tf": tf})
         for _ in range(2000)]
begin = np.array([d[0].numpy() for d in draws], dtype=np.float64)
extent = np.array([d[1].numpy() for d in draws], dtype=np.float64)
print(json.dumps({"begin_mean": begin.mean(0).tolist(), "size_mean": extent.mean(0).tolist(),
                  "size_std": extent.std(0).tolist(), "whole": float(np.mean(extent[:, 0] == 64))}))
"""


def test_sample_distorted_bounding_box_draws_as_tensorflow_draws():
    from migrate.runtime import tfimage

    code, _ = convert(f"import tensorflow as tf\n\nbox = tf.image.sample_distorted_bounding_box({SAMPLE_BOX[0]}, "
                      f"{SAMPLE_BOX[1]}, {SAMPLE_BOX[2]})\n")
    assert "tfimage.sample_distorted_bounding_box(" in code and "tensorflow" not in code
    with ThreadPoolExecutor(1) as pool:  # TF's draws in their own process, beside ours
        tf_draws = pool.submit(python_json, TF_BOXES, json.dumps(list(SAMPLE_BOX)))
        ms.set_seed(0)
        draws = [eval(f"tfimage.sample_distorted_bounding_box({SAMPLE_BOX[0]}, {SAMPLE_BOX[1]}, {SAMPLE_BOX[2]})",
                      {"tfimage": tfimage}) for _ in range(2000)]
        want = tf_draws.result()
    begin = np.array([d[0].asnumpy() for d in draws], dtype=np.float64)
    extent = np.array([d[1].asnumpy() for d in draws], dtype=np.float64)
    boxes = np.array([d[2].asnumpy()[0, 0] for d in draws])
    assert np.all(begin[:, :2] >= 0) and np.all(begin[:, :2] + extent[:, :2] <= [64, 80]) and np.all(extent[:, 2] == -1)
    assert np.allclose(boxes, np.stack([begin[:, 0] / 64, begin[:, 1] / 80, (begin[:, 0] + extent[:, 0]) / 64,
                                        (begin[:, 1] + extent[:, 1]) / 80], 1), atol=1e-6)
    assert np.allclose(begin.mean(0), want["begin_mean"], rtol=0.08, atol=0.6)
    assert np.allclose(extent.mean(0), want["size_mean"], rtol=0.05, atol=0.6)
    assert np.allclose(extent.std(0), want["size_std"], rtol=0.12, atol=0.6)
    assert abs(np.mean(extent[:, 0] == 64) - want["whole"]) < 0.05


def test_sample_distorted_bounding_box_needs_boxes_or_the_image():
    from migrate.runtime import tfimage

    with pytest.raises(ValueError, match="No bounding boxes provided"):
        tfimage.sample_distorted_bounding_box([8, 8, 3], np.zeros((1, 0, 4), np.float32))
    begin, size, _ = tfimage.sample_distorted_bounding_box([8, 8, 3], np.zeros((1, 0, 4), np.float32),
                                                           area_range=(1.0, 1.0), aspect_ratio_range=(1.0, 1.0),
                                                           use_image_if_no_bounding_boxes=True)
    assert begin.asnumpy().tolist() == [0, 0, 0] and size.asnumpy().tolist() == [8, 8, -1]
