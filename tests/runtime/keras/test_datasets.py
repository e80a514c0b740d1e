"""`mk.datasets` reads Keras's cached files as Keras does, and never the network."""

import gzip
import hashlib
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from migrate.runtime.keras import datasets

REPO = Path(__file__).resolve().parents[3]


def idx(path: Path, array: np.ndarray, header: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wb") as handle:
        handle.write(b"\0" * header + array.astype(np.uint8).tobytes())


def test_fashion_mnist_is_what_keras_reads(tmp_path, monkeypatch):
    pytest.importorskip("tensorflow")
    rng = np.random.default_rng(0)
    folder = tmp_path / "datasets" / "fashion-mnist"
    arrays = {"train-labels-idx1-ubyte.gz": (rng.integers(0, 10, 6), 8),
              "train-images-idx3-ubyte.gz": (rng.integers(0, 256, (6, 28, 28)), 16),
              "t10k-labels-idx1-ubyte.gz": (rng.integers(0, 10, 3), 8),
              "t10k-images-idx3-ubyte.gz": (rng.integers(0, 256, (3, 28, 28)), 16)}
    for name, (array, header) in arrays.items():
        idx(folder / name, array, header)
    code = ("import os, numpy as np; os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'; import tensorflow as tf; "
            "(a, b), (c, d) = tf.keras.datasets.fashion_mnist.load_data(); "
            "np.savez(os.environ['OUT'], a=a, b=b, c=c, d=d)")
    out = tmp_path / "keras.npz"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240, cwd=REPO,
                          env={**os.environ, "KERAS_HOME": str(tmp_path), "OUT": str(out)})
    assert done.returncode == 0, done.stderr[-2000:]
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    (a, b), (c, d) = datasets.fashion_mnist.load_data()
    with np.load(out) as keras:
        for mine, name in ((a, "a"), (b, "b"), (c, "c"), (d, "d")):
            assert mine.dtype == keras[name].dtype and np.array_equal(mine, keras[name])


def test_cifar10_batches_become_channels_last_images(tmp_path, monkeypatch):
    folder = tmp_path / "datasets" / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(1)
    batches = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        data = rng.integers(0, 256, (2, 3 * 32 * 32)).astype(np.uint8)
        labels = rng.integers(0, 10, 2).tolist()
        batches[name] = (data, labels)
        with open(folder / name, "wb") as handle:
            pickle.dump({b"data": data, b"labels": labels}, handle)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    (x_train, y_train), (x_test, y_test) = datasets.cifar10.load_data()
    assert x_train.shape == (10, 32, 32, 3) and y_train.shape == (10, 1) and x_test.shape == (2, 32, 32, 3)
    first = batches["data_batch_1"][0][0].reshape(3, 32, 32).transpose(1, 2, 0)
    assert np.array_equal(x_train[0], first) and y_test.ravel().tolist() == batches["test_batch"][1]


def test_a_missing_or_altered_file_fails_with_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"mnist\.npz is not there.*does not download.*tf-keras-datasets/mnist\.npz"):
        datasets.mnist.load_data()
    (tmp_path / "datasets").mkdir()
    np.savez(tmp_path / "datasets" / "mnist.npz", x_train=np.zeros(1))
    with pytest.raises(ValueError, match="SHA-256 differs"):
        datasets.mnist.load_data()
    (tmp_path / "datasets" / "cifar-100-python").mkdir()
    with open(tmp_path / "datasets" / "cifar-100-python" / "train", "wb") as handle:
        pickle.dump({b"data": np.zeros((1, 3072), np.uint8), b"fine_labels": os.system}, handle)
    with pytest.raises(pickle.UnpicklingError, match="may not hold"):
        datasets.cifar100.load_data()


# The word-index datasets, Boston and California: one Keras subprocess reads every case below from the
# same fake cache, and each test reads it with mk.datasets and compares.
CASES = [
    ("imdb", "load_data", {}),
    ("imdb", "load_data", {"num_words": 10, "skip_top": 2}),
    ("imdb", "load_data", {"maxlen": 6, "seed": 7}),
    ("imdb", "load_data", {"start_char": None, "index_from": 0}),
    ("imdb", "load_data", {"start_char": None, "index_from": 4}),
    ("imdb", "load_data", {"start_char": None, "oov_char": None, "num_words": 12, "skip_top": 3}),
    ("imdb", "load_data", {"start_char": 0, "oov_char": None, "index_from": 5, "seed": 1}),
    ("imdb", "load_data", {"maxlen": 2}),
    ("imdb", "get_word_index", {}),
    ("reuters", "load_data", {}),
    ("reuters", "load_data", {"num_words": 10, "skip_top": 1, "test_split": 0.3}),
    ("reuters", "load_data", {"maxlen": 5, "seed": 3}),
    ("reuters", "load_data", {"start_char": None, "index_from": 0}),
    ("reuters", "load_data", {"start_char": None, "oov_char": None, "index_from": 2, "test_split": 0.5}),
    ("reuters", "load_data", {"test_split": 0}),
    ("reuters", "get_word_index", {}),
    ("reuters", "get_label_names", {}),
    ("boston_housing", "load_data", {}),
    ("boston_housing", "load_data", {"test_split": 0.1, "seed": 1, "path": "boston_copy.npz"}),
    ("boston_housing", "load_data", {"test_split": 0}),
    ("boston_housing", "load_data", {"test_split": 1}),
    ("california_housing", "load_data", {}),
    ("california_housing", "load_data", {"version": "small", "test_split": 0.25, "seed": 5}),
    ("california_housing", "load_data", {"version": "medium"}),
]

KERAS_SIDE = """
import json, os, pickle, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import importlib
from keras.src.utils import file_utils

home = os.environ["KERAS_HOME"]
calls = []

def cached(fname=None, origin=None, file_hash=None, **kwargs):
    calls.append((fname, origin, file_hash))
    return os.path.join(home, "datasets", fname)

out = {"cases": [], "calls": calls}
for what, call, kwargs in json.loads(os.environ["CASES"]):
    module = importlib.import_module(f"keras.src.datasets.{what}")
    # The one patch: Keras would re-download a fake file (its hash is not the published one) and there
    # is no network; everything after the download is Keras's own code.
    module.get_file = cached
    try:
        out["cases"].append(("ok", getattr(module, call)(**kwargs)))
    except Exception as error:
        out["cases"].append(("error", type(error).__name__, str(error)))
try:
    file_utils.get_file(os.path.join("sub", "imdb.npz"), origin="https://example.invalid/imdb.npz")
except ValueError as error:
    out["path_error"] = str(error)
with open(os.environ["OUT"], "wb") as handle:
    pickle.dump(out, handle)
"""


def ragged(rng, count, top):
    array = np.empty(count, dtype=object)
    for i in range(count):
        array[i] = [int(w) for w in rng.integers(1, top, rng.integers(1, 9))]
    return array


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    root = tmp_path_factory.mktemp("keras_home")
    folder = root / "datasets"
    folder.mkdir()
    rng = np.random.default_rng(2)
    np.savez(folder / "imdb.npz", x_train=ragged(rng, 12, 25), y_train=rng.integers(0, 2, 12),
             x_test=ragged(rng, 9, 25), y_test=rng.integers(0, 2, 9))
    np.savez(folder / "reuters.npz", x=ragged(rng, 17, 20), y=rng.integers(0, 46, 17))
    for name in ("imdb_word_index.json", "reuters_word_index.json"):
        (folder / name).write_text(json.dumps({f"w{i}": i for i in range(1, 25)}))
    np.savez(folder / "boston_housing.npz", x=rng.normal(size=(23, 13)), y=rng.uniform(10, 50, 23))
    (folder / "boston_copy.npz").write_bytes((folder / "boston_housing.npz").read_bytes())
    np.savez(folder / "california_housing.npz", x=rng.normal(size=(640, 8)).astype(np.float32),
             y=rng.uniform(2e4, 5e5, 640).astype(np.float32))
    return root


@pytest.fixture(scope="module")
def keras_side(home):
    pytest.importorskip("tensorflow")
    out = home / "keras.pickle"
    done = subprocess.run([sys.executable, "-c", KERAS_SIDE], capture_output=True, text=True, timeout=240, cwd=REPO,
                          env={**os.environ, "KERAS_HOME": str(home), "OUT": str(out), "CASES": json.dumps(CASES)})
    assert done.returncode == 0, done.stderr[-2000:]
    with open(out, "rb") as handle:
        return pickle.load(handle)


@pytest.fixture()
def fake_digests(home, monkeypatch):
    """Our side reads the fake files with their own digests, so that the rest can be compared."""
    monkeypatch.setenv("KERAS_HOME", str(home))
    for key in datasets._DIGESTS:
        name = key + (".json" if key.endswith("word_index") else ".npz")
        hasher = hashlib.sha256() if len(datasets._DIGESTS[key]) == 64 else hashlib.md5()
        hasher.update((home / "datasets" / name).read_bytes())
        monkeypatch.setitem(datasets._DIGESTS, key, hasher.hexdigest())


def same(mine, theirs):
    assert type(mine) is type(theirs)
    if isinstance(theirs, (tuple, list)):
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            same(a, b)
    elif isinstance(theirs, np.ndarray):
        assert (mine.dtype, mine.shape) == (theirs.dtype, theirs.shape)
        if theirs.dtype == object:
            assert mine.tolist() == theirs.tolist()
            assert [[type(w) for w in x] for x in mine.tolist()] == [[type(w) for w in x] for x in theirs.tolist()]
        else:
            assert np.array_equal(mine, theirs)
    else:
        assert mine == theirs


@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{w}.{c}{k or ''}" for w, c, k in CASES])
def test_word_index_and_housing_datasets_are_what_keras_returns(case, keras_side, fake_digests):
    what, call, kwargs = CASES[case]
    theirs = keras_side["cases"][case]
    if theirs[0] == "ok":
        same(getattr(getattr(datasets, what), call)(**kwargs), theirs[1])
    else:
        with pytest.raises(Exception) as raised:
            getattr(getattr(datasets, what), call)(**kwargs)
        assert (type(raised.value).__name__, str(raised.value)) == theirs[1:]


def test_the_files_urls_and_hashes_are_the_ones_keras_asks_for(keras_side):
    assert keras_side["calls"]
    for fname, origin, file_hash in keras_side["calls"]:
        published = origin.rsplit("/", 1)[1]
        assert origin == datasets._ORIGIN + published
        assert datasets._DIGESTS[published.rsplit(".", 1)[0]] == file_hash


def test_a_path_for_the_file_name_is_refused_as_keras_refuses_it(keras_side, home, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(home))
    with pytest.raises(ValueError) as raised:
        datasets.imdb.load_data(path=os.path.join("sub", "imdb.npz"))
    assert str(raised.value) == keras_side["path_error"]


def test_a_fake_or_missing_word_index_file_is_refused_naming_it(home, tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(home))
    with pytest.raises(ValueError, match=r"imdb\.load_data: .*imdb\.npz is not the file Keras publishes \(its SHA-256"):
        datasets.imdb.load_data()
    with pytest.raises(ValueError, match=r"reuters\.get_word_index: .*reuters_word_index\.json .*its MD5 differs"):
        datasets.reuters.get_word_index()
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"imdb\.get_word_index: .*imdb_word_index\.json is not there.*"
                                                r"`keras\.datasets\.imdb\.get_word_index\(\)`.*tf-keras-datasets/"
                                                r"imdb_word_index\.json, into .*datasets"):
        datasets.imdb.get_word_index()


def test_a_ragged_array_may_hold_only_arrays(tmp_path, monkeypatch):
    (tmp_path / "datasets").mkdir()
    x = np.empty(1, dtype=object)
    x[0] = os.system
    np.savez(tmp_path / "datasets" / "reuters.npz", x=x, y=np.zeros(1, np.int64))
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    monkeypatch.setitem(datasets._DIGESTS, "reuters", None)
    with pytest.raises(pickle.UnpicklingError, match="may not hold posix.system"):
        datasets.reuters.load_data()
