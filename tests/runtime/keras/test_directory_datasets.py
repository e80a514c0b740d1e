"""`image_dataset_from_directory` / `text_dataset_from_directory` against Keras's on the same folders.

Keras runs in a subprocess (TensorFlow and MindSpore stay in separate processes) and writes
what it gives; migrate's runs here. Compared: class names, file order (unshuffled, and
shuffled with a seed: the same files in each `validation_split` subset), labels in every
label mode, pixel values after resizing (rtol 1e-5), texts and batch shapes.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")
pytest.importorskip("PIL")

from migrate.runtime import keras as mk  # noqa: E402

pytestmark = pytest.mark.tf

KERAS_SIDE = r"""
import json, sys
import numpy as np
import tensorflow as tf

root, out = sys.argv[1], sys.argv[2]
results = {}

def batches(dataset):
    return [[np.asarray(part).tolist() if np.asarray(part).dtype != object else
             [x.decode() for x in np.asarray(part).reshape(-1)] for part in batch] for batch in dataset]

plain = tf.keras.utils.image_dataset_from_directory(root + "/images", shuffle=False, batch_size=4,
                                                    image_size=(5, 7), verbose=False)
results["plain"] = {"class_names": plain.class_names, "file_paths": plain.file_paths, "batches": batches(plain)}
for mode in ("categorical", "binary"):
    ds = tf.keras.utils.image_dataset_from_directory(root + "/two", shuffle=False, batch_size=3, label_mode=mode,
                                                     image_size=(4, 4), color_mode="rgba", verbose=False)
    results[mode] = {"batches": batches(ds)}
nearest = tf.keras.utils.image_dataset_from_directory(root + "/images", shuffle=False, batch_size=None,
                                                      labels=None, image_size=(3, 3), interpolation="nearest",
                                                      verbose=False)
results["nearest"] = {"elements": [np.asarray(x).tolist() for x in nearest]}
train, val = tf.keras.utils.image_dataset_from_directory(root + "/images", validation_split=0.3, subset="both",
                                                         seed=123, image_size=(5, 7), batch_size=2, verbose=False)
results["split"] = {"train": train.file_paths, "validation": val.file_paths,
                    "validation_batches": batches(val)}
text = tf.keras.utils.text_dataset_from_directory(root + "/texts", shuffle=False, batch_size=2, max_length=5,
                                                  verbose=False)
results["text"] = {"class_names": text.class_names, "batches": batches(text)}
image = root + "/images/cats/img_01.png"
loads = {}
for mode in ("rgb", "rgba", "grayscale"):
    for size, method, keep in ((None, "nearest", False), ((4, 9), "bilinear", False), ((5, 5), "bicubic", True)):
        img = tf.keras.utils.load_img(image, color_mode=mode, target_size=size, interpolation=method,
                                      keep_aspect_ratio=keep)
        loads[f"{mode}-{size}-{method}-{keep}"] = tf.keras.utils.img_to_array(img).tolist()
results["load_img"] = loads
array = np.linspace(-3.0, 5.0, 5 * 4 * 3, dtype=np.float32).reshape(5, 4, 3)
results["array_to_img"] = np.asarray(tf.keras.utils.array_to_img(array)).tolist()
results["channels_first"] = tf.keras.utils.img_to_array(tf.keras.utils.array_to_img(array, scale=False),
                                                        data_format="channels_first").tolist()
tf.keras.preprocessing.image.save_img(root + "/keras_saved.png", array)
results["saved"] = open(root + "/keras_saved.png", "rb").read().hex()
json.dump(results, open(out, "w"))
"""


def _batches(dataset):
    out = []
    for batch in dataset:
        parts = []
        for part in batch:
            array = part.asnumpy() if hasattr(part, "asnumpy") else np.asarray(part)
            parts.append([x.decode() for x in array.reshape(-1)] if array.dtype == object else array.tolist())
        out.append(parts)
    return out


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    from PIL import Image

    root = tmp_path_factory.mktemp("folders")
    rng = np.random.default_rng(5)
    for group, classes, count in (("images", ["cats", "dogs", "owls"], 5), ("two", ["no", "yes"], 3)):
        for name in classes:
            (root / group / name).mkdir(parents=True)
            for i in range(count):
                size = (int(rng.integers(6, 12)), int(rng.integers(6, 12)))
                pixels = rng.integers(0, 256, size=(size[1], size[0], 4), dtype=np.uint8)
                Image.fromarray(pixels, "RGBA" if group == "two" else "RGBA").convert(
                    "RGBA" if group == "two" else "RGB").save(root / group / name / f"img_{i:02d}.png")
        (root / group / ".hidden").mkdir()  # not a class
        (root / group / "cats" if group == "images" else root / group / "no").joinpath("notes.txt").write_text("x")
    for name, texts in (("neg", ["bad film", "awful, really"]), ("pos", ["great", "loved it a lot", "fine"])):
        (root / "texts" / name).mkdir(parents=True)
        for i, text in enumerate(texts):
            (root / "texts" / name / f"{i}.txt").write_text(text)
    out = root / "keras.json"
    completed = subprocess.run([sys.executable, "-c", KERAS_SIDE, str(root), str(out)], capture_output=True,
                               text=True, timeout=300, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert completed.returncode == 0, completed.stderr[-3000:]
    return root, json.loads(out.read_text())


def _close(ours, theirs):
    np.testing.assert_allclose(np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64),
                               rtol=1e-5, atol=1e-4)


def test_unshuffled_images_labels_and_pixels_are_keras(folders):
    root, keras = folders
    plain = mk.utils.image_dataset_from_directory(str(root / "images"), shuffle=False, batch_size=4,
                                                  image_size=(5, 7), verbose=False)
    assert plain.class_names == keras["plain"]["class_names"] == ["cats", "dogs", "owls"]
    assert plain.file_paths == keras["plain"]["file_paths"]
    ours, theirs = _batches(plain), keras["plain"]["batches"]
    assert [np.shape(b[0]) for b in ours] == [np.shape(b[0]) for b in theirs] == [(4, 5, 7, 3)] * 3 + [(3, 5, 7, 3)]
    for (images, labels), (tf_images, tf_labels) in zip(ours, theirs):
        assert labels == tf_labels
        _close(images, tf_images)


@pytest.mark.parametrize("mode", ["categorical", "binary"])
def test_label_modes_and_rgba(folders, mode):
    root, keras = folders
    ds = mk.utils.image_dataset_from_directory(str(root / "two"), shuffle=False, batch_size=3, label_mode=mode,
                                               image_size=(4, 4), color_mode="rgba", verbose=False)
    ours, theirs = _batches(ds), keras[mode]["batches"]
    assert len(ours) == len(theirs) == 2
    for (images, labels), (tf_images, tf_labels) in zip(ours, theirs):
        assert labels == tf_labels
        _close(images, tf_images)


def test_nearest_resizing_without_labels_or_batches(folders):
    root, keras = folders
    ds = mk.utils.image_dataset_from_directory(str(root / "images"), shuffle=False, batch_size=None, labels=None,
                                               image_size=(3, 3), interpolation="nearest", verbose=False)
    ours = [x.asnumpy().tolist() if hasattr(x, "asnumpy") else np.asarray(x).tolist() for x in ds]
    assert len(ours) == len(keras["nearest"]["elements"]) == 15
    _close(ours, keras["nearest"]["elements"])


def test_a_seeded_split_puts_the_same_files_in_each_subset(folders):
    root, keras = folders
    train, validation = mk.utils.image_dataset_from_directory(str(root / "images"), validation_split=0.3,
                                                              subset="both", seed=123, image_size=(5, 7),
                                                              batch_size=2, verbose=False)
    assert train.file_paths == keras["split"]["train"]
    assert validation.file_paths == keras["split"]["validation"]
    assert len(validation.file_paths) == 4 and not set(train.file_paths) & set(validation.file_paths)
    # the validation subset is not shuffled again: its batches are Keras's
    for (images, labels), (tf_images, tf_labels) in zip(_batches(validation), keras["split"]["validation_batches"]):
        assert labels == tf_labels
        _close(images, tf_images)
    # the training subset is shuffled each epoch (tfdata's order), with every file once
    seen = sorted(label for _, labels in _batches(train) for label in labels)
    assert len(seen) == 11


def test_texts_are_the_files_bytes_cut_to_max_length(folders):
    root, keras = folders
    ds = mk.utils.text_dataset_from_directory(str(root / "texts"), shuffle=False, batch_size=2, max_length=5,
                                              verbose=False)
    assert ds.class_names == keras["text"]["class_names"] == ["neg", "pos"]
    assert _batches(ds) == keras["text"]["batches"]


def test_keras_messages_for_bad_arguments(folders):
    root, _ = folders
    with pytest.raises(ValueError, match="you must provide a `seed` argument"):
        mk.utils.image_dataset_from_directory(str(root / "images"), validation_split=0.2, subset="training")
    with pytest.raises(ValueError, match="there must be exactly 2 class_names"):
        mk.utils.image_dataset_from_directory(str(root / "images"), label_mode="binary", verbose=False)
    with pytest.raises(ValueError, match="did not match the names of the subdirectories"):
        mk.utils.image_dataset_from_directory(str(root / "images"), class_names=["cats", "zebras"])
    with pytest.raises(ValueError, match="No images found in directory"):
        mk.utils.image_dataset_from_directory(str(root / "texts"), verbose=False)


def test_image_helpers_give_keras_arrays_and_files(folders, tmp_path):
    root, keras = folders
    image = str(root / "images" / "cats" / "img_01.png")
    for mode in ("rgb", "rgba", "grayscale"):
        for size, method, keep in ((None, "nearest", False), ((4, 9), "bilinear", False), ((5, 5), "bicubic", True)):
            img = mk.utils.load_img(image, color_mode=mode, target_size=size, interpolation=method,
                                    keep_aspect_ratio=keep)
            key = f"{mode}-{None if size is None else list(size)}-{method}-{keep}".replace("[", "(").replace("]", ")")
            assert mk.utils.img_to_array(img).tolist() == keras["load_img"][key], key
    array = np.linspace(-3.0, 5.0, 5 * 4 * 3, dtype=np.float32).reshape(5, 4, 3)
    assert np.asarray(mk.utils.array_to_img(array)).tolist() == keras["array_to_img"]
    assert mk.utils.img_to_array(mk.utils.array_to_img(array, scale=False),
                                 data_format="channels_first").tolist() == keras["channels_first"]
    mk.utils.save_img(str(tmp_path / "ours.png"), array)
    assert (tmp_path / "ours.png").read_bytes().hex() == keras["saved"]
    with pytest.raises(ValueError, match='color_mode must be "grayscale", "rgb", or "rgba"'):
        mk.utils.load_img(image, color_mode="cmyk")
