"""`image_` / `text_` / `audio_dataset_from_directory` against Keras's on the same folders.

Keras runs in a subprocess (TensorFlow and MindSpore stay in separate processes) and writes
what it gives; migrate's runs here. Compared: class names, file order (unshuffled, and
shuffled with a seed: the same files in each `validation_split` subset), labels in every
label mode, pixel values after resizing (rtol 1e-5), texts, decoded and padded WAV clips
(1e-6), batch shapes and dtypes, and Keras's messages for bad audio arguments.
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


# -- audio_dataset_from_directory -------------------------------------------------------------

# Every case runs on both sides with the same arguments; `AUDIO_CASES[name]` is
# (folder, keyword arguments), `labels="list"` standing for LIST_LABELS.
LIST_LABELS = [1, 0, 2, 2, 0, 1, 1, 0, 2, 1, 0, 2, 1, 0]
AUDIO_CASES = {
    "seeded": ("audio", {"seed": 7}),
    "plain": ("audio", {"shuffle": False, "batch_size": 4}),
    "categorical": ("audio", {"shuffle": False, "batch_size": 5, "label_mode": "categorical"}),
    "no_labels": ("audio", {"shuffle": False, "batch_size": 5, "label_mode": None}),
    "binary": ("audio_two", {"shuffle": False, "batch_size": 3, "label_mode": "binary"}),
    "cut": ("audio_two", {"shuffle": False, "batch_size": 4, "output_sequence_length": 25}),
    "padded": ("audio_two", {"shuffle": False, "batch_size": 4, "output_sequence_length": 150}),
    "cut_unbatched": ("audio", {"shuffle": False, "batch_size": None, "output_sequence_length": 30}),
    "training": ("audio", {"validation_split": 0.3, "subset": "training", "seed": 11, "batch_size": 4}),
    "validation": ("audio", {"validation_split": 0.3, "subset": "validation", "seed": 11, "batch_size": 3}),
    "both": ("audio", {"validation_split": 0.3, "subset": "both", "seed": 11, "batch_size": 3,
                       "label_mode": "categorical"}),
    "list": ("audio", {"labels": "list", "shuffle": False, "batch_size": 6}),
    "list_split": ("audio", {"labels": "list", "validation_split": 0.25, "subset": "both", "seed": 3,
                             "batch_size": 2}),
}
# Keras's messages for bad arguments, asked of both sides.
AUDIO_ERRORS = {
    "ragged_and_length": ("audio", {"ragged": True, "output_sequence_length": 10}),
    "rate_not_int": ("audio", {"sampling_rate": 16000.0}),
    "rate_zero": ("audio", {"sampling_rate": 0}),
    "labels_kind": ("audio", {"labels": "folders"}),
    "labels_and_class_names": ("audio", {"labels": "list", "class_names": ["down", "go", "up"]}),
    "label_mode": ("audio", {"label_mode": "sparse"}),
    "binary_of_three": ("audio", {"label_mode": "binary"}),
    "class_names": ("audio", {"class_names": ["down", "left"]}),
    "no_files": ("audio_none", {}),
    "list_length": ("audio", {"labels": [0, 1]}),
    "no_seed": ("audio", {"validation_split": 0.2, "subset": "both"}),
}

KERAS_AUDIO_SIDE = r"""
import json, sys
import numpy as np
import tensorflow as tf

root, cases, errors, list_labels = sys.argv[1], *(json.loads(a) for a in sys.argv[2:5])

def plain(part):
    array = np.asarray(part)
    return {"dtype": array.dtype.name, "shape": list(array.shape), "value": array.tolist()}

def batches(dataset):
    return [[plain(p) for p in (batch if isinstance(batch, tuple) else (batch,))] for batch in dataset]

def make(folder, kwargs):
    kwargs = dict(kwargs, verbose=False)
    if kwargs.get("labels") == "list":
        kwargs["labels"] = list(list_labels)
    return tf.keras.utils.audio_dataset_from_directory(root + "/" + folder, **kwargs)

results = {}
for name, (folder, kwargs) in cases.items():
    made = make(folder, kwargs)
    results[name] = [{"class_names": ds.class_names, "batches": batches(ds)}
                     for ds in (made if isinstance(made, tuple) else [made])]
messages = {}
for name, (folder, kwargs) in errors.items():
    try:
        make(folder, kwargs)
    except ValueError as error:
        messages[name] = str(error)
print(json.dumps({"cases": results, "errors": messages}))
"""


def _write_wav(path, samples: np.ndarray, rate: int = 8000) -> None:
    import wave

    with wave.open(str(path), "wb") as writer:
        writer.setnchannels(samples.shape[1])
        writer.setsampwidth(2)
        writer.setframerate(rate)
        writer.writeframes(samples.astype("<i2").tobytes())


@pytest.fixture(scope="module")
def audio_folders(tmp_path_factory):
    from tests.helpers import python_json

    root = tmp_path_factory.mktemp("audio")
    rng = np.random.default_rng(11)
    # 14 clips in three classes, mono and stereo, 20 to 120 samples, one in a sub-folder and one
    # spelled .WAV (Keras's walk finds both); and two classes of mono clips, which batch unpadded
    # once cut to one length (clips of another channel count would not, in Keras either)
    layout = {"audio": {"down": ["a.wav", "b.wav", "sub/c.wav", "d.wav", "e.wav"],
                        "go": ["a.wav", "B.WAV", "c.wav", "d.wav"],
                        "up": ["a.wav", "b.wav", "c.wav", "d.wav", "e.wav"]},
              "audio_two": {"no": ["1.wav", "2.wav", "3.wav"], "yes": ["1.wav", "2.wav", "3.wav", "4.wav"]}}
    for group, classes in layout.items():
        for label, names in classes.items():
            for name in names:
                path = root / group / label / name
                path.parent.mkdir(parents=True, exist_ok=True)
                channels = 1 if group == "audio_two" else int(rng.integers(1, 3))
                clip = rng.integers(-32768, 32768, size=(int(rng.integers(20, 121)), channels))
                clip[0], clip[1] = -32768, 32767  # the ends of the range
                _write_wav(path, clip)
        (root / group / ".hidden").mkdir()  # not a class
        (root / group / next(iter(classes)) / "notes.txt").write_text("not audio")
    (root / "audio_none" / "empty").mkdir(parents=True)
    keras = python_json(KERAS_AUDIO_SIDE, str(root), json.dumps(AUDIO_CASES), json.dumps(AUDIO_ERRORS),
                        json.dumps(LIST_LABELS))
    return root, keras


def _audio(root, folder, kwargs):
    kwargs = dict(kwargs, verbose=False)
    if kwargs.get("labels") == "list":
        kwargs["labels"] = list(LIST_LABELS)
    made = mk.utils.audio_dataset_from_directory(str(root / folder), **kwargs)
    return list(made) if isinstance(made, tuple) else [made]


def _audio_batches(dataset):
    out = []
    for batch in dataset:
        parts = []
        for part in batch if isinstance(batch, tuple) else (batch,):
            array = part.asnumpy() if hasattr(part, "asnumpy") else np.asarray(part)
            parts.append({"dtype": array.dtype.name, "shape": list(array.shape), "value": array.tolist()})
        out.append(parts)
    return out


def _same_batches(ours, theirs):
    assert len(ours) == len(theirs)
    for our_batch, their_batch in zip(ours, theirs):
        assert [(p["dtype"], p["shape"]) for p in our_batch] == [(p["dtype"], p["shape"]) for p in their_batch]
        for ours_part, theirs_part in zip(our_batch, their_batch):
            np.testing.assert_allclose(ours_part["value"], theirs_part["value"], rtol=0, atol=1e-6)


def _rows(batches):
    """Each example as (label, clip without its padding), sorted: what a shuffle keeps."""
    rows = []
    for audio, labels in batches:
        for clip, label in zip(audio["value"], labels["value"]):
            clip = np.asarray(clip)
            kept = np.flatnonzero(clip.any(axis=1))  # the batch's padding: zero samples after the clip's
            clip = clip[: kept[-1] + 1]
            clip = clip[:, : np.flatnonzero(clip.any(axis=0))[-1] + 1]  # and zero channels after its own
            rows.append((json.dumps(label), json.dumps(clip.tolist())))
    return sorted(rows)


@pytest.mark.parametrize("name", ["plain", "categorical", "no_labels", "binary", "cut", "padded", "cut_unbatched",
                                  "list"])
def test_audio_batches_are_keras(audio_folders, name):
    root, keras = audio_folders
    folder, kwargs = AUDIO_CASES[name]
    ours = _audio(root, folder, kwargs)
    assert [ds.class_names for ds in ours] == [part["class_names"] for part in keras["cases"][name]]
    for dataset, theirs in zip(ours, keras["cases"][name]):
        _same_batches(_audio_batches(dataset), theirs["batches"])


def test_audio_batches_pad_to_their_longest_clip_and_most_channels(audio_folders):
    root, keras = audio_folders
    shapes = [batch[0]["shape"] for batch in keras["cases"]["plain"][0]["batches"]]
    assert len({s[1] for s in shapes}) > 1 and {s[2] for s in shapes} == {1, 2}  # the cases pad both
    assert [batch[0]["shape"] for batch in _audio_batches(_audio(root, *AUDIO_CASES["plain"])[0])] == shapes


@pytest.mark.parametrize("name", ["seeded", "training", "validation"])
def test_shuffled_audio_holds_keras_examples(audio_folders, name):
    """The per-epoch shuffle is tfdata's, not tf.data's (Keras shuffles a lone "validation"
    subset too): the same examples (the same files in a seeded split), batches of Keras's sizes
    and dtypes, in another order."""
    root, keras = audio_folders
    (ours,), (theirs,) = _audio(root, *AUDIO_CASES[name]), keras["cases"][name]
    batches = _audio_batches(ours)
    assert ours.class_names == theirs["class_names"]
    assert [len(b[1]["value"]) for b in batches] == [len(b[1]["value"]) for b in theirs["batches"]]
    assert {(p["dtype"], len(p["shape"])) for b in batches for p in b} == {
        (p["dtype"], len(p["shape"])) for b in theirs["batches"] for p in b}
    assert _rows(batches) == _rows(theirs["batches"])


@pytest.mark.parametrize("name, validation_count", [("both", 4), ("list_split", 3)])
def test_both_subsets_are_keras(audio_folders, name, validation_count):
    """The seeded global shuffle is Keras's: the validation files come in Keras's order (that
    subset is not shuffled again), the training files are Keras's."""
    root, keras = audio_folders
    train, validation = _audio(root, *AUDIO_CASES[name])
    (their_train, their_validation) = keras["cases"][name]
    assert train.class_names == validation.class_names == their_train["class_names"]
    _same_batches(_audio_batches(validation), their_validation["batches"])
    assert _rows(_audio_batches(train)) == _rows(their_train["batches"])
    assert len(validation.file_paths) == validation_count
    assert len(train.file_paths) == 14 - validation_count and not set(train.file_paths) & set(validation.file_paths)


def test_audio_datasets_map_cache_and_prefetch_as_the_tutorial_does(audio_folders):
    root, _ = audio_folders
    train, _ = _audio(root, "audio_two", {"validation_split": 0.25, "subset": "both", "seed": 0,
                                          "output_sequence_length": 150})
    squeezed = train.map(lambda audio, labels: (ms.ops.squeeze(audio, -1)[:, :100], labels), -1).cache().prefetch(-1)
    for audio, labels in squeezed.take(1):
        assert tuple(audio.shape) == (6, 100) and labels.dtype == ms.int32


@pytest.mark.parametrize("name", sorted(AUDIO_ERRORS))
def test_audio_argument_errors_are_keras(audio_folders, name):
    root, keras = audio_folders
    with pytest.raises(ValueError) as raised:
        _audio(root, *AUDIO_ERRORS[name])
    assert str(raised.value) == keras["errors"][name]


def test_ragged_and_resampling_are_refused_naming_what_to_do(audio_folders):
    root, _ = audio_folders
    with pytest.raises(NotImplementedError, match="pass `output_sequence_length`"):
        mk.utils.audio_dataset_from_directory(str(root / "audio"), ragged=True)
    with pytest.raises(NotImplementedError, match="resample the files beforehand"):
        mk.utils.audio_dataset_from_directory(str(root / "audio"), sampling_rate=16000)
