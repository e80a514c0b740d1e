"""`keras.preprocessing.image.ImageDataGenerator` and `keras.preprocessing.text.Tokenizer` in `mk`,
against Keras's on the same inputs and numpy seeds.

The same code (`RUNNER`) drives Keras's module in a subprocess and ours here, so every case makes
the same calls in the same order on both: the batches, transforms, statistics, iterator attributes,
the tokenizer's indices, matrices and JSON, and `fit` over a `flow(...)` iterator.
"""

import json
import os

import numpy as np
import pytest

from tests.helpers import assert_converts, python_json

pytest.importorskip("mindspore")
pytest.importorskip("scipy")
Image = pytest.importorskip("PIL.Image")

from migrate.runtime import keras as mk  # noqa: E402

pytestmark = pytest.mark.tf

RUNNER = r'''
import json, random
import numpy as np


def images():
    rs = np.random.RandomState(0)
    x = rs.uniform(0, 255, (10, 12, 10, 3)).astype("float32")
    return x, np.arange(10) % 3, rs.uniform(0, 1, 10).astype("float32")


PREPROCESS = {"affine": lambda x: x * 0.5 + 3.0}


def plain(value):
    a = np.asarray(value)
    return {"dtype": a.dtype.name, "shape": list(a.shape), "value": a.tolist()}


def parts(batch):
    out = []
    for item in (list(batch) if isinstance(batch, tuple) else [batch]):
        out.extend(item if isinstance(item, list) else [item])
    return [plain(p) for p in out]


def read(it, reads):
    batches = []
    for step in reads:
        if step == "end":
            it.on_epoch_end()
            continue
        batches.append(parts(next(it) if step == "next" else it[step]))
    return batches


def generator(image, gen):
    gen = dict(gen)
    if "preprocessing_function" in gen:
        gen["preprocessing_function"] = PREPROCESS[gen["preprocessing_function"]]
    return image.ImageDataGenerator(**gen)


def flow_case(image, case):
    x, y, w = images()
    np.random.seed(1234)
    gen = generator(image, case["gen"])
    if case["gen"].get("data_format") == "channels_first":
        x = x.transpose(0, 3, 1, 2)
    out = {}
    if "fit" in case:
        gen.fit(x, **case["fit"])
        for name in ("mean", "std", "zca_whitening_matrix"):
            value = getattr(gen, name)
            out[name] = None if value is None else plain(value)
    flow = dict(case.get("flow", {}))
    labels = y if flow.pop("labels", True) else None
    if flow.pop("weights", False):
        flow["sample_weight"] = w
    data = (x, [y.astype("float32") * 2]) if flow.pop("misc", False) else x
    it = gen.flow(data, labels, **flow)
    out.update(len=len(it), n=it.n, batch_size=it.batch_size, batches=read(it, case["reads"]))
    return out


def directory_case(image, root, case):
    np.random.seed(1234)
    it = generator(image, case.get("gen", {})).flow_from_directory(root, **case["flow"])
    return {"len": len(it), "n": it.n, "batch_size": it.batch_size, "samples": it.samples,
            "class_indices": it.class_indices, "classes": it.classes.tolist(), "filenames": it.filenames,
            "filepaths": [p[len(root):] for p in it.filepaths], "image_shape": list(it.image_shape),
            "batches": read(it, case["reads"])}


def transforms(image):
    x = images()[0]
    gen = image.ImageDataGenerator(rotation_range=20, width_shift_range=0.1, height_shift_range=[-1, 0, 1],
                                   shear_range=10, zoom_range=0.2, channel_shift_range=10, horizontal_flip=True,
                                   vertical_flip=True, brightness_range=(0.7, 1.3))
    params = gen.get_random_transform(x[0].shape, seed=5)
    out = {"params": {k: None if v is None else float(v) for k, v in params.items()},
           "apply": plain(gen.apply_transform(x[0], params)), "random": plain(gen.random_transform(x[1], seed=9))}
    axes = dict(row_axis=0, col_axis=1, channel_axis=2)
    np.random.seed(3)
    out["rotation"] = plain(image.random_rotation(x[2], 30, **axes))
    out["shift"] = plain(image.random_shift(x[2], 0.2, 0.3, fill_mode="reflect", **axes))
    out["shear"] = plain(image.random_shear(x[2], 25, fill_mode="constant", cval=5.0, **axes))
    out["zoom"] = plain(image.random_zoom(x[2], (0.7, 1.4), fill_mode="wrap", **axes))
    out["channel_shift"] = plain(image.random_channel_shift(x[2], 30, channel_axis=2))
    out["brightness"] = plain(image.random_brightness(x[2], (0.5, 1.5)))
    out["brightness_unscaled"] = plain(image.apply_brightness_shift(x[2] * 2 - 100, 1.2, scale=False))
    out["affine"] = plain(image.apply_affine_transform(x[3].transpose(2, 0, 1), theta=15, tx=1, ty=-2, shear=5,
                                                       zx=0.9, zy=1.1, row_axis=1, col_axis=2, channel_axis=0,
                                                       fill_mode="constant", cval=3.0, order=3))
    out["after"] = float(np.random.uniform())  # (the draws above took as many numbers)
    return out


def train(K, image):
    rs = np.random.RandomState(1)
    x = rs.uniform(0, 1, (12, 6, 6, 1)).astype("float32")
    y = np.eye(3, dtype="float32")[rs.randint(0, 3, 12)]
    kernel, bias = rs.normal(0, 0.3, (36, 3)).astype("float32"), np.zeros(3, "float32")
    out = {}
    for name, kwargs, flow in (("epochs", dict(epochs=2), {}), ("in_order", dict(epochs=2, shuffle=False), {}),
                               ("steps", dict(steps_per_epoch=2, epochs=3), dict(shuffle=False))):
        random.seed(0)
        np.random.seed(0)
        model = K.Sequential([K.Input((6, 6, 1)), K.layers.Flatten(), K.layers.Dense(3, activation="softmax")])
        model.set_weights([kernel, bias])
        model.compile(optimizer=K.optimizers.SGD(0.1), loss="categorical_crossentropy")
        gen = image.ImageDataGenerator(rotation_range=10, width_shift_range=0.1)
        history = model.fit(gen.flow(x, y, batch_size=4, seed=7, **flow), verbose=0, **kwargs)
        out[name] = [float(v) for v in history.history["loss"]]
    out["evaluate"] = float(model.evaluate(image.ImageDataGenerator().flow(x, y, batch_size=5, shuffle=False),
                                           verbose=0))
    return out


TEXTS = ["The cat sat on the mat.", "The dog ate my homework!", "Cats and dogs; dogs and cats?",
         "A mat, a cat, A HAT", ["the", "Cat", "unknown"], ""]
UNSEEN = TEXTS + ["an unseen text with the cat", ["dog", "zebra"]]
TOKENIZERS = {"default": {}, "oov": {"num_words": 6, "oov_token": "<unk>"}, "char": {"char_level": True},
              "case": {"lower": False, "split": ",", "filters": "!"}, "capped": {"num_words": 4}}
INNER = ("word_counts", "word_docs", "index_docs", "index_word", "word_index")


def parsed(json_string):
    config = json.loads(json_string)
    config["config"] = {k: json.loads(v) if k in INNER else v for k, v in config["config"].items()}
    return config


def state(tok):
    return {"word_index": list(tok.word_index.items()), "index_word": [[k, v] for k, v in tok.index_word.items()],
            "word_counts": list(tok.word_counts.items()), "word_docs": sorted(tok.word_docs.items()),
            "index_docs": sorted(tok.index_docs.items()), "document_count": tok.document_count}


def tokenizers(text, foreign):
    out = {}
    for name, config in TOKENIZERS.items():
        tok = text.Tokenizer(**config)
        tok.fit_on_texts(TEXTS)
        sequences = tok.texts_to_sequences(UNSEEN)
        case = {"state": state(tok), "sequences": sequences, "texts": tok.sequences_to_texts(sequences + [[0, 99, 1]]),
                "matrices": {m: tok.texts_to_matrix(UNSEEN, mode=m).tolist()
                             for m in ("binary", "count", "freq", "tfidf")},
                "json": parsed(tok.to_json()), "json_indented": parsed(tok.to_json(indent=2, sort_keys=True))}
        tok.fit_on_sequences([[1, 2, 2], [3], []])
        case["after_sequences"] = state(tok)
        case["tfidf_after_sequences"] = tok.sequences_to_matrix([[1, 2, 2, 50], [3]], mode="tfidf").tolist()
        if name in foreign:
            case["restored"] = text.tokenizer_from_json(foreign[name]).texts_to_sequences(UNSEEN)
        out[name] = case
    unfit = text.Tokenizer(num_words=5)
    out["unfit_matrix"] = unfit.sequences_to_matrix([[1, 2, 7], [4, 4]], mode="count").tolist()
    out["words"] = [text.text_to_word_sequence(t) for t in TEXTS[:4]] + [
        text.text_to_word_sequence("a-b,c d", filters=",", lower=False, split="-")]
    out["md5"] = [text.hashing_trick(t, 17, hash_function="md5") for t in TEXTS[:4]]
    out["custom_hash"] = text.hashing_trick("x yy zzz", 5, hash_function=len)
    out["analyzer"] = text.hashing_trick("a,b", 7, hash_function=len, analyzer=lambda s: s.split(","))
    return out
'''

FLOWS = {
    "rescale": dict(gen=dict(rescale=1 / 255), flow=dict(batch_size=4, shuffle=False), reads=["next"] * 4),
    "rotation": dict(gen=dict(rotation_range=30), flow=dict(batch_size=4, seed=3), reads=[0, 1, 2, "next", "next"]),
    "width_shift": dict(gen=dict(width_shift_range=0.2), flow=dict(batch_size=5, seed=3), reads=[0, 1]),
    "width_shift_list": dict(gen=dict(width_shift_range=[-2, 0, 2]), flow=dict(batch_size=5, seed=3), reads=[0, 1]),
    "height_shift": dict(gen=dict(height_shift_range=0.2), flow=dict(batch_size=5, seed=3), reads=[0, 1]),
    "height_shift_int": dict(gen=dict(height_shift_range=3), flow=dict(batch_size=5, seed=3), reads=[0, 1]),
    "shear": dict(gen=dict(shear_range=20), flow=dict(batch_size=5, seed=3), reads=[0, 1]),
    "zoom": dict(gen=dict(zoom_range=0.3), flow=dict(batch_size=5, seed=3), reads=[0, 1]),
    "zoom_pair": dict(gen=dict(zoom_range=[0.8, 1.2]), flow=dict(batch_size=5, seed=3), reads=[0, 1]),
    "channel_shift": dict(gen=dict(channel_shift_range=40), flow=dict(batch_size=5, seed=3), reads=[0, 1]),
    "horizontal_flip": dict(gen=dict(horizontal_flip=True), flow=dict(batch_size=5, seed=3), reads=[0, 1]),
    "vertical_flip": dict(gen=dict(vertical_flip=True), flow=dict(batch_size=5, seed=3), reads=[0, 1]),
    "brightness": dict(gen=dict(brightness_range=[0.5, 1.5]), flow=dict(batch_size=5, seed=3), reads=[0, 1]),
    "fill_constant": dict(gen=dict(rotation_range=40, fill_mode="constant", cval=7.0), flow=dict(batch_size=5, seed=3),
                          reads=[0]),
    "fill_reflect": dict(gen=dict(width_shift_range=0.3, fill_mode="reflect"), flow=dict(batch_size=5, seed=3),
                         reads=[0]),
    "fill_wrap": dict(gen=dict(zoom_range=0.5, fill_mode="wrap"), flow=dict(batch_size=5, seed=3), reads=[0]),
    "order_0": dict(gen=dict(rotation_range=25, interpolation_order=0), flow=dict(batch_size=5, seed=3), reads=[0]),
    "samplewise": dict(gen=dict(samplewise_center=True, samplewise_std_normalization=True),
                       flow=dict(batch_size=5, shuffle=False), reads=[0, 1]),
    "preprocessing_function": dict(gen=dict(preprocessing_function="affine", rescale=0.5),
                                   flow=dict(batch_size=5, shuffle=False), reads=[0]),
    "horovod": dict(gen=dict(rotation_range=8, width_shift_range=0.08, shear_range=0.3, height_shift_range=0.08,
                             zoom_range=0.08), flow=dict(batch_size=4), reads=["next"] * 5),
    "featurewise": dict(gen=dict(featurewise_center=True, featurewise_std_normalization=True), fit={},
                        flow=dict(batch_size=5, shuffle=False), reads=[0, 1]),
    "featurewise_augmented_fit": dict(gen=dict(featurewise_center=True, rescale=1 / 255, rotation_range=10),
                                      fit=dict(augment=True, rounds=2, seed=1), flow=dict(batch_size=5, seed=2),
                                      reads=[0]),
    "zca": dict(gen=dict(zca_whitening=True), fit={}, flow=dict(batch_size=5, shuffle=False), reads=[0]),
    "two_epochs_by_index": dict(gen=dict(width_shift_range=0.1), flow=dict(batch_size=4, seed=11),
                                reads=[0, 1, 2, "end", 0, 1, 2, "end", 2]),
    "two_epochs_endless": dict(gen=dict(width_shift_range=0.1), flow=dict(batch_size=4, seed=11), reads=["next"] * 7),
    "unseeded_shuffle": dict(gen=dict(), flow=dict(batch_size=3), reads=[0, 1, 2, 3, "end", 0]),
    "sample_weight": dict(gen=dict(rotation_range=5), flow=dict(batch_size=3, shuffle=False, weights=True),
                          reads=[0, 3]),
    "extra_inputs": dict(gen=dict(), flow=dict(batch_size=4, misc=True, seed=5), reads=[0, 2]),
    "training_subset": dict(gen=dict(validation_split=0.3, rotation_range=5), flow=dict(subset="training", seed=2,
                                                                                        batch_size=4), reads=[0, 1]),
    "validation_subset": dict(gen=dict(validation_split=0.3), flow=dict(subset="validation", batch_size=4),
                              reads=[0]),
    "no_labels": dict(gen=dict(), flow=dict(labels=False, batch_size=4, shuffle=False), reads=[2]),
    "channels_first": dict(gen=dict(data_format="channels_first", rotation_range=20, width_shift_range=0.1,
                                    horizontal_flip=True), flow=dict(batch_size=5, seed=4), reads=[0, 1]),
    "float64": dict(gen=dict(dtype="float64", rotation_range=10), flow=dict(batch_size=5, seed=4), reads=[0]),
}

DIRECTORIES = {
    "categorical": dict(flow=dict(target_size=(6, 5), batch_size=3, shuffle=False), reads=[0, 1, 2] + ["next"] * 4),
    "binary": dict(flow=dict(classes=["cats", "dogs"], class_mode="binary", target_size=(5, 5), batch_size=4,
                             shuffle=False), reads=[0, 1]),
    "sparse_two_epochs": dict(flow=dict(class_mode="sparse", target_size=(4, 4), batch_size=4, seed=3),
                              reads=[0, 1, 2, "end", 0, 1, 2]),
    "no_labels": dict(flow=dict(class_mode=None, color_mode="grayscale", interpolation="bilinear", target_size=(5, 6),
                                batch_size=5, shuffle=False), reads=[0, 1]),
    "input_rgba": dict(flow=dict(class_mode="input", color_mode="rgba", keep_aspect_ratio=True,
                                 interpolation="bicubic", target_size=(4, 6), batch_size=4, shuffle=False), reads=[0]),
    "augmented": dict(gen=dict(horizontal_flip=True, rotation_range=15, rescale=1 / 255),
                      flow=dict(target_size=(7, 7), batch_size=3, seed=1), reads=["next"] * 4),
    "unseeded": dict(gen=dict(zoom_range=0.2), flow=dict(target_size=(6, 6), batch_size=4), reads=["next"] * 3),
    "training": dict(gen=dict(validation_split=0.4), flow=dict(subset="training", target_size=(4, 4), batch_size=2,
                                                               shuffle=False), reads=[0, 1]),
    "validation": dict(gen=dict(validation_split=0.4), flow=dict(subset="validation", target_size=(4, 4),
                                                                 batch_size=2, shuffle=False), reads=[0]),
    "channels_first": dict(gen=dict(data_format="channels_first", shear_range=10),
                           flow=dict(target_size=(5, 4), batch_size=9, seed=2), reads=[0]),
}

KERAS_SIDE = RUNNER + r'''
import importlib.util, sys
import tensorflow as tf

root, ours_text, foreign = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
image, text = tf.keras.preprocessing.image, tf.keras.preprocessing.text
spec = importlib.util.spec_from_file_location("ours_text", ours_text)
ours = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ours)
print(json.dumps({
    "flows": {name: flow_case(image, case) for name, case in json.loads(sys.argv[4]).items()},
    "directories": {name: directory_case(image, root, case) for name, case in json.loads(sys.argv[5]).items()},
    "transforms": transforms(image),
    "train": train(tf.keras, image),
    "text": tokenizers(text, foreign),
    # (Python's hash, which one_hot uses, is the same in two processes only with PYTHONHASHSEED set: ours
    # runs here, beside Keras's, under the same seed)
    "one_hot": [[text.one_hot(t, 50) for t in TEXTS[:4]], [ours.one_hot(t, 50) for t in TEXTS[:4]]],
}))
'''

ours_scope: dict = {}
exec(RUNNER, ours_scope)


def _write_images(root):
    rs = np.random.RandomState(3)

    def pixels(h, w, c):
        return rs.randint(0, 256, (h, w, c)).astype("uint8")

    files = {
        "cats/a.png": Image.fromarray(pixels(9, 7, 3)),
        "cats/b.jpg": Image.fromarray(pixels(12, 8, 3)),
        "cats/c.png": Image.fromarray(pixels(10, 10, 1)[..., 0], "L"),
        "cats/inner/d.png": Image.fromarray(pixels(6, 6, 3)),
        "dogs/e.png": Image.fromarray(pixels(8, 8, 4), "RGBA"),
        "dogs/f.bmp": Image.fromarray(pixels(7, 9, 3)),
        "dogs/g.jpeg": Image.fromarray(pixels(11, 5, 3)),
        "zebras/h.png": Image.fromarray(pixels(5, 5, 3)),
        "zebras/i.PNG": Image.fromarray(pixels(8, 6, 3)),
    }
    for name, img in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        img.save(path, format={"jpg": "JPEG", "jpeg": "JPEG", "bmp": "BMP"}.get(name.rsplit(".", 1)[-1], "PNG"))
    for name in ("cats/notes.txt", "readme.txt"):
        with open(os.path.join(root, name), "w") as handle:
            handle.write("not an image")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("images")) + os.sep
    _write_images(path)
    return path


@pytest.fixture(scope="module")
def ours_json():
    out = {}
    for name, config in ours_scope["TOKENIZERS"].items():
        tok = mk.preprocessing.text.Tokenizer(**config)
        tok.fit_on_texts(ours_scope["TEXTS"])
        out[name] = tok.to_json()
    return out


@pytest.fixture(scope="module")
def keras(root, ours_json):
    return python_json(KERAS_SIDE, root, mk.preprocessing.text.__file__, json.dumps(ours_json), json.dumps(FLOWS),
                       json.dumps(DIRECTORIES), PYTHONHASHSEED="0")


def assert_batches_equal(ours, theirs):
    assert len(ours) == len(theirs)
    for mine, keras_batch in zip(ours, theirs):
        assert [(p["dtype"], p["shape"]) for p in mine] == [(p["dtype"], p["shape"]) for p in keras_batch]
        for a, b in zip(mine, keras_batch):
            np.testing.assert_allclose(np.asarray(a["value"], dtype="float64"), np.asarray(b["value"], dtype="float64"),
                                       rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(FLOWS))
def test_flow_batches_are_kerass(name, keras):
    ours = ours_scope["flow_case"](mk.preprocessing.image, FLOWS[name])
    theirs = keras["flows"][name]
    assert {k: v for k, v in ours.items() if k != "batches"}.keys() == {k for k in theirs if k != "batches"}
    for key in ("len", "n", "batch_size"):
        assert ours[key] == theirs[key]
    for key in ("mean", "std", "zca_whitening_matrix"):
        if key in theirs:
            assert (ours[key] is None) == (theirs[key] is None)
            if theirs[key] is not None:
                assert ours[key]["shape"] == theirs[key]["shape"]
                np.testing.assert_allclose(ours[key]["value"], theirs[key]["value"], rtol=1e-6, atol=1e-6)
    assert_batches_equal(ours["batches"], theirs["batches"])


@pytest.mark.parametrize("name", sorted(DIRECTORIES))
def test_flow_from_directory_is_kerass(name, keras, root, capsys):
    ours = ours_scope["directory_case"](mk.preprocessing.image, root, DIRECTORIES[name])
    theirs = keras["directories"][name]
    for key in ("len", "n", "batch_size", "samples", "class_indices", "classes", "filenames", "filepaths",
                "image_shape"):
        assert ours[key] == theirs[key], key
    assert_batches_equal(ours["batches"], theirs["batches"])
    found = f"Found {ours['samples']} images belonging to {len(ours['class_indices'])} classes."
    assert found in capsys.readouterr().out


def test_transforms_draw_and_resample_as_keras(keras):
    ours, theirs = ours_scope["transforms"](mk.preprocessing.image), keras["transforms"]
    assert ours["params"] == theirs["params"]
    assert ours["after"] == theirs["after"]
    for key in sorted(set(theirs) - {"params", "after"}):
        assert_batches_equal([[ours[key]]], [[theirs[key]]])


def test_fit_trains_on_an_iterator_as_keras(keras):
    ours, theirs = ours_scope["train"](mk, mk.preprocessing.image), keras["train"]
    # `fit` shuffles the batches with Python's `random` (seeded alike), the iterator reseeds numpy
    # before each batch from its seed: the same augmented batches train in the same order. With
    # `steps_per_epoch` TF reads the next epoch's first batch before this epoch's `on_epoch_end`,
    # where the iterator reshuffles its examples, and mk reads it after (TFK182, TFK203): an
    # iterator that does not shuffle gives the same batches there.
    for key in ("epochs", "in_order", "steps"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, err_msg=key)
    np.testing.assert_allclose(ours["evaluate"], theirs["evaluate"], rtol=1e-5)


def test_tokenizer_is_kerass(keras, ours_json):
    theirs = keras["text"]
    keras_json = {name: json.dumps(
        {"class_name": "Tokenizer", "config": {k: json.dumps(v) if k in ours_scope["INNER"] else v
                                               for k, v in case["json"]["config"].items()}})
        for name, case in theirs.items() if name in ours_scope["TOKENIZERS"]}
    ours = json.loads(json.dumps(ours_scope["tokenizers"](mk.preprocessing.text, keras_json)))
    for name in ours_scope["TOKENIZERS"]:
        mine, keras_case = ours[name], theirs[name]
        for key in ("state", "sequences", "texts", "matrices", "json", "json_indented", "after_sequences",
                    "tfidf_after_sequences"):
            assert mine[key] == keras_case[key], (name, key)
        # a JSON string from either side reads back in the other as the tokenizer it came from
        assert mine["restored"] == keras_case["restored"] == keras_case["sequences"]
    for key in ("unfit_matrix", "words", "md5", "custom_hash", "analyzer"):
        assert ours[key] == theirs[key], key
    keras_one_hot, ours_one_hot = keras["one_hot"]
    assert ours_one_hot == keras_one_hot


def test_errors_are_kerass():
    image, text = mk.preprocessing.image, mk.preprocessing.text
    with pytest.raises(ValueError, match="`validation_split` must be strictly between 0 and 1"):
        image.ImageDataGenerator(validation_split=1.5)
    with pytest.raises(ValueError, match="`zoom_range` should be a float or a tuple or list of two floats"):
        image.ImageDataGenerator(zoom_range=(1, 2, 3))
    with pytest.raises(ValueError, match="different number of classes after the split"):
        image.ImageDataGenerator(validation_split=0.5).flow(np.zeros((4, 2, 2, 1)), np.array([0, 0, 1, 1]),
                                                             subset="training")
    with pytest.raises(ValueError, match="Asked to retrieve element 3, but the Sequence has length 3"):
        image.ImageDataGenerator().flow(np.zeros((9, 2, 2, 1)), batch_size=3)[3]
    with pytest.raises(ValueError, match="Specify a dimension"):
        text.Tokenizer().texts_to_matrix(["a"])
    with pytest.raises(TypeError, match="Unrecognized keyword arguments"):
        text.Tokenizer(oov="x")


def test_a_program_using_both_converts():
    before = """\
import tensorflow as tf
from tensorflow.keras.preprocessing import text
from tensorflow.keras.preprocessing.image import ImageDataGenerator

augment = ImageDataGenerator(rotation_range=8, shear_range=0.3, zoom_range=0.08)
model.fit(augment.flow(x_train, y_train, batch_size=64), steps_per_epoch=100, epochs=3)
folders = tf.keras.preprocessing.image.ImageDataGenerator(rescale=1 / 255, validation_split=0.2)
train = folders.flow_from_directory("data", target_size=(64, 64), subset="training")
tokenizer = text.Tokenizer(num_words=1000, oov_token="<unk>")
tokenizer.fit_on_texts(lines)
words = text.text_to_word_sequence(lines[0])
restored = tf.keras.preprocessing.text.tokenizer_from_json(tokenizer.to_json())
padded = tf.keras.preprocessing.sequence.pad_sequences(tokenizer.texts_to_sequences(lines), padding="post")
"""
    after = """\
from migrate.runtime import keras as mk

augment = mk.preprocessing.image.ImageDataGenerator(rotation_range=8, shear_range=0.3, zoom_range=0.08)
model.fit(augment.flow(x_train, y_train, batch_size=64), steps_per_epoch=100, epochs=3)
folders = mk.preprocessing.image.ImageDataGenerator(rescale=1 / 255, validation_split=0.2)
train = folders.flow_from_directory("data", target_size=(64, 64), subset="training")
tokenizer = mk.preprocessing.text.Tokenizer(num_words=1000, oov_token="<unk>")
tokenizer.fit_on_texts(lines)
words = mk.preprocessing.text.text_to_word_sequence(lines[0])
restored = mk.preprocessing.text.tokenizer_from_json(tokenizer.to_json())
padded = mk.utils.pad_sequences(tokenizer.texts_to_sequences(lines), padding="post")
"""
    assert_converts(before, after)


def test_the_module_as_a_value_converts():
    assert_converts("from keras.preprocessing import image\n\ngen = image.ImageDataGenerator(horizontal_flip=True)\n"
                    "img = image.load_img(path)\nhelpers = image\n",
                    "from migrate.runtime import keras as mk\n\ngen = mk.preprocessing.image.ImageDataGenerator("
                    "horizontal_flip=True)\nimg = mk.utils.load_img(path)\nhelpers = mk.preprocessing.image\n")


@pytest.mark.parametrize("source", ["arrays", "files"])
def test_save_to_dir_writes_each_augmented_image_of_a_batch(tmp_path, source):
    """Keras's `save_to_dir`: one `<prefix>_<index>_<random>.<format>` file per image of each batch."""
    from PIL import Image

    from migrate.runtime.keras.preprocessing.image import ImageDataGenerator

    out = tmp_path / "saved"
    out.mkdir()
    generator = ImageDataGenerator(rotation_range=10)
    images = (np.random.default_rng(1).random((4, 8, 8, 3)) * 255).astype(np.float32)
    if source == "arrays":
        batches = generator.flow(images, np.arange(4), batch_size=2, shuffle=False, save_to_dir=str(out),
                                 save_prefix="aug", save_format="png")
    else:
        folder = tmp_path / "data" / "cls"
        folder.mkdir(parents=True)
        for k, image in enumerate(images):
            Image.fromarray(image.astype(np.uint8)).save(folder / f"{k}.png")
        batches = generator.flow_from_directory(str(tmp_path / "data"), target_size=(8, 8), batch_size=2,
                                                shuffle=False, save_to_dir=str(out), save_prefix="aug")
    for index in range(len(batches)):
        batches[index]  # (each batch read saves its images)
    names = sorted(p.name for p in out.iterdir())
    assert len(names) == 4 and all(n.startswith("aug_") and n.endswith(".png") for n in names)
    assert sorted(int(n.split("_")[1]) for n in names) == [0, 1, 2, 3]
