"""``keras.datasets``: the same arrays, read from Keras's own cache, never from the network.

``mk.datasets.mnist.load_data()`` reads ``~/.keras/datasets/mnist.npz`` (``$KERAS_HOME``
instead of ``~/.keras`` when set), where Keras keeps it after its first download, checks its
SHA-256 as Keras does, and returns the arrays Keras returns. With the file missing it fails
with a message naming the file and where it comes from: a training job should not download
on every worker. ``fashion_mnist``, ``cifar10``, ``cifar100``, ``imdb``, ``reuters``,
``boston_housing`` and ``california_housing`` read their files the same way, and shuffle, shift
and filter them as Keras does (the same ``RandomState`` draws in the same order).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import pickle
import zipfile
from types import SimpleNamespace

import numpy as np

__all__ = ["mnist", "fashion_mnist", "cifar10", "cifar100", "imdb", "reuters", "boston_housing",
           "california_housing"]

_ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"

# Keras's `file_hash` for each file, by dataset rather than by file name: `path=` only renames the
# cached copy. 64 hex digits are a SHA-256, 32 an MD5 (Keras's `"auto"`: the word indexes).
_DIGESTS = {
    "imdb": "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f",
    "imdb_word_index": "bfafd718b763782e994055a2d397834f",
    "reuters": "d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916",
    "reuters_word_index": "4d44cc38712099c9e383dc6e5f11a921",
    "boston_housing": "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5",
    "california_housing": "1a2e3a52e0398de6463aebe6f4a8da34fb21fbb6b934cf88c3425e766f2a1a6f",
}


def _cache_dir() -> str:
    from .utils import keras_home

    return os.path.join(keras_home(), "datasets")


def _missing(what: str, path: str, origin: str, call: str = "load_data") -> FileNotFoundError:
    return FileNotFoundError(
        f"keras.datasets.{what}.{call}: {path} is not there, and migrate's Keras does not download "
        f"(every worker would). Fetch it once, e.g. with Keras itself (`keras.datasets.{what}.{call}()`) "
        f"or from {origin}, into {os.path.dirname(path)}")


def _checked(path: str, digest: str | None, what: str, call: str = "load_data") -> str:
    from .utils import _hasher, file_digest

    if digest is not None:
        hasher = _hasher("auto", digest)
        if file_digest(path, hasher) != digest:
            name = "SHA-256" if hasher.name == "sha256" else hasher.name.upper()
            raise ValueError(f"keras.datasets.{what}.{call}: {path} is not the file Keras publishes "
                             f"(its {name} differs); delete it and fetch it again")
    return path


def _file(what: str, name: str, origin: str, digest: str | None = None, subdir: str = "",
          call: str = "load_data") -> str:
    name = os.fspath(name)
    if os.sep in name:
        # Keras 3's `get_file` refuses these before looking at the cache.
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify the file's parent "
                         f"directory, use the `cache_dir` argument. Received: fname={name}")
    path = os.path.join(_cache_dir(), subdir, name)
    if not os.path.isfile(path):
        raise _missing(what, path, origin, call)
    return _checked(path, digest, what, call)


def _mnist_load_data(path="mnist.npz"):
    """``keras.datasets.mnist.load_data``: ``(x_train, y_train), (x_test, y_test)`` uint8 arrays."""
    file = _file("mnist", path, _ORIGIN + "mnist.npz",
                 "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1")
    with np.load(file, allow_pickle=False) as data:
        return (data["x_train"], data["y_train"]), (data["x_test"], data["y_test"])


def _fashion_mnist_load_data():
    """``keras.datasets.fashion_mnist.load_data``: the four IDX files Keras caches, as uint8 arrays."""
    names = ["train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
             "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz"]
    paths = [_file("fashion_mnist", n, _ORIGIN + n, subdir="fashion-mnist") for n in names]
    arrays = []
    for labels, images in ((paths[0], paths[1]), (paths[2], paths[3])):
        with gzip.open(labels, "rb") as handle:
            y = np.frombuffer(handle.read(), np.uint8, offset=8)
        with gzip.open(images, "rb") as handle:
            x = np.frombuffer(handle.read(), np.uint8, offset=16).reshape(len(y), 28, 28)
        arrays.append((x, y))
    return arrays[0], arrays[1]


class _Arrays(pickle.Unpickler):
    """Unpickles NumPy arrays and nothing else: the CIFAR batches, the ragged IMDB and Reuters arrays."""

    ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy", "ndarray"), ("numpy", "dtype"),
               ("numpy._core.multiarray", "_reconstruct")}

    def find_class(self, module, name):
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"a Keras dataset file may not hold {module}.{name}")
        return super().find_class(module, name)


def _batch(path: str, label_key: str):
    with open(path, "rb") as handle:
        data = {k.decode("utf8") if isinstance(k, bytes) else k: v for k, v in _Arrays(handle, encoding="bytes").load().items()}
    return data["data"].reshape(-1, 3, 32, 32), data[label_key]


def _cifar_dir(what: str, folder: str, origin: str) -> str:
    # Keras keeps the extracted folder in datasets/ (Keras 2) or under datasets/<folder>-target/ (Keras 3).
    for candidate in (os.path.join(_cache_dir(), f"{folder}-target", folder), os.path.join(_cache_dir(), folder)):
        if os.path.isdir(candidate):
            return candidate
    raise _missing(what, os.path.join(_cache_dir(), folder), origin)


def _channels_last(x: np.ndarray) -> np.ndarray:
    return x.transpose(0, 2, 3, 1)


def _cifar10_load_data():
    """``keras.datasets.cifar10.load_data``: ``(50000, 32, 32, 3)`` uint8 images, ``(n, 1)`` labels."""
    folder = _cifar_dir("cifar10", "cifar-10-batches-py", "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz")
    parts = [_batch(os.path.join(folder, f"data_batch_{i}"), "labels") for i in range(1, 6)]
    x_train = np.concatenate([p[0] for p in parts]).astype(np.uint8)
    y_train = np.concatenate([np.asarray(p[1], dtype=np.uint8) for p in parts])
    x_test, y_test = _batch(os.path.join(folder, "test_batch"), "labels")
    return ((_channels_last(x_train), y_train.reshape(-1, 1)),
            (_channels_last(x_test.astype(np.uint8)), np.asarray(y_test, dtype=np.uint8).reshape(-1, 1)))


def _cifar100_load_data(label_mode="fine"):
    """``keras.datasets.cifar100.load_data``: ``label_mode`` ``"fine"`` (100 classes) or ``"coarse"`` (20)."""
    if label_mode not in ("fine", "coarse"):
        raise ValueError(f'`label_mode` must be one of `"fine"`, `"coarse"`. Received: label_mode={label_mode}.')
    folder = _cifar_dir("cifar100", "cifar-100-python", "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz")
    key = f"{label_mode}_labels"
    x_train, y_train = _batch(os.path.join(folder, "train"), key)
    x_test, y_test = _batch(os.path.join(folder, "test"), key)
    return ((_channels_last(x_train.astype(np.uint8)), np.asarray(y_train, dtype=np.int64).reshape(-1, 1)),
            (_channels_last(x_test.astype(np.uint8)), np.asarray(y_test, dtype=np.int64).reshape(-1, 1)))


def _npy(buffer: io.BytesIO):
    try:
        return np.lib.format.read_array(buffer, allow_pickle=False)
    except ValueError:
        # A ragged (object) array is a pickle stream after the header: unpickle it, arrays only.
        buffer.seek(0)
        version = np.lib.format.read_magic(buffer)
        if version[0] == 1:
            np.lib.format.read_array_header_1_0(buffer)
        elif version[0] in (2, 3):
            np.lib.format.read_array_header_2_0(buffer)  # 3.0 differs only in the header's encoding
        else:
            raise ValueError(f"Unsupported `.npy` file version: {version}.")
        return _Arrays(buffer).load()


def _npz(path: str) -> dict:
    """The arrays of an ``.npz`` as Keras's ``npz_utils.load_npz`` reads them, never ``allow_pickle=True``."""
    arrays = {}
    with zipfile.ZipFile(path) as archive:
        for member in archive.namelist():
            if member.endswith(".npy"):
                with archive.open(member) as raw:
                    arrays[member[:-len(".npy")]] = _npy(io.BytesIO(raw.read()))
    return arrays


def _remove_long_seq(maxlen, seq, label):
    # Keras keeps sequences strictly shorter than maxlen (its `remove_long_seq`).
    kept = [(x, y) for x, y in zip(seq, label) if len(x) < maxlen]
    return [x for x, _ in kept], [y for _, y in kept]


def _vocabulary(xs, num_words, skip_top, oov_char):
    if not num_words:
        # Keras's own bound: the largest index itself then falls outside `w < num_words`.
        num_words = max(max(x) for x in xs)
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    return [[w for w in x if skip_top <= w < num_words] for x in xs]


def _imdb_load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1, oov_char=2,
                    index_from=3, **kwargs):
    """``keras.datasets.imdb.load_data``: reviews as object arrays of word-index lists, 0/1 labels.

    Keras 3 accepts and ignores further keyword arguments; so does this."""
    f = _npz(_file("imdb", path, _ORIGIN + "imdb.npz", _DIGESTS["imdb"]))
    x_train, labels_train = f["x_train"], f["y_train"]
    x_test, labels_test = f["x_test"], f["y_test"]
    # One generator for both shuffles, train first: the test order depends on the training set's size.
    rng = np.random.RandomState(seed)
    indices = np.arange(len(x_train))
    rng.shuffle(indices)
    x_train, labels_train = x_train[indices], labels_train[indices]
    indices = np.arange(len(x_test))
    rng.shuffle(indices)
    x_test, labels_test = x_test[indices], labels_test[indices]
    if start_char is not None:
        x_train = [[start_char] + [w + index_from for w in x] for x in x_train]
        x_test = [[start_char] + [w + index_from for w in x] for x in x_test]
    elif index_from:
        x_train = [[w + index_from for w in x] for x in x_train]
        x_test = [[w + index_from for w in x] for x in x_test]
    else:
        x_train = [list(x) for x in x_train]
        x_test = [list(x) for x in x_test]
    if maxlen:
        x_train, labels_train = _remove_long_seq(maxlen, x_train, labels_train)
        x_test, labels_test = _remove_long_seq(maxlen, x_test, labels_test)
        if not x_train or not x_test:
            raise ValueError(f"After filtering for sequences shorter than maxlen={str(maxlen)}, "
                             "no sequence was kept. Increase maxlen.")
    # The vocabulary bound comes from train and test together, as in Keras.
    xs = _vocabulary(x_train + x_test, num_words, skip_top, oov_char)
    labels = np.concatenate([labels_train, labels_test])
    idx = len(x_train)
    return ((np.array(xs[:idx], dtype="object"), labels[:idx]),
            (np.array(xs[idx:], dtype="object"), labels[idx:]))


def _imdb_get_word_index(path="imdb_word_index.json"):
    """``keras.datasets.imdb.get_word_index``: word -> index (before ``index_from`` is added)."""
    file = _file("imdb", path, _ORIGIN + "imdb_word_index.json", _DIGESTS["imdb_word_index"], call="get_word_index")
    with open(file) as handle:
        return json.load(handle)


def _reuters_load_data(path="reuters.npz", num_words=None, skip_top=0, maxlen=None, test_split=0.2, seed=113,
                       start_char=1, oov_char=2, index_from=3):
    """``keras.datasets.reuters.load_data``: newswires as object arrays of word-index lists, topic labels."""
    f = _npz(_file("reuters", path, _ORIGIN + "reuters.npz", _DIGESTS["reuters"]))
    xs, labels = f["x"], f["y"]
    rng = np.random.RandomState(seed)
    indices = np.arange(len(xs))
    rng.shuffle(indices)
    xs, labels = xs[indices], labels[indices]
    if start_char is not None:
        xs = [[start_char] + [w + index_from for w in x] for x in xs]
    elif index_from:
        xs = [[w + index_from for w in x] for x in xs]
    if maxlen:
        xs, labels = _remove_long_seq(maxlen, xs, labels)
    xs = _vocabulary(xs, num_words, skip_top, oov_char)
    idx = int(len(xs) * (1 - test_split))
    return ((np.array(xs[:idx], dtype="object"), np.array(labels[:idx])),
            (np.array(xs[idx:], dtype="object"), np.array(labels[idx:])))


def _reuters_get_word_index(path="reuters_word_index.json"):
    """``keras.datasets.reuters.get_word_index``: word -> index (before ``index_from`` is added)."""
    file = _file("reuters", path, _ORIGIN + "reuters_word_index.json", _DIGESTS["reuters_word_index"],
                 call="get_word_index")
    with open(file) as handle:
        return json.load(handle)


def _reuters_get_label_names():
    """``keras.datasets.reuters.get_label_names``: the 46 topics, in label order."""
    return ("cocoa", "grain", "veg-oil", "earn", "acq", "wheat", "copper", "housing", "money-supply", "coffee",
            "sugar", "trade", "reserves", "ship", "cotton", "carcass", "crude", "nat-gas", "cpi", "money-fx",
            "interest", "gnp", "meal-feed", "alum", "oilseed", "gold", "tin", "strategic-metal", "livestock",
            "retail", "ipi", "iron-steel", "rubber", "heat", "jobs", "lei", "bop", "zinc", "orange", "pet-chem",
            "dlr", "gas", "silver", "wpi", "hog", "lead")


def _test_split_checked(test_split):
    if not (0 <= test_split < 1):
        raise ValueError(f"Invalid `test_split` argument: {test_split}. "
                         "It must be between 0 and 1 (exclusive of 1).")


def _split(x, y, test_split, seed):
    rng = np.random.RandomState(seed)
    indices = np.arange(len(x))
    rng.shuffle(indices)
    x, y = x[indices], y[indices]
    cut = int(len(x) * (1 - test_split))
    return (np.array(x[:cut]), np.array(y[:cut])), (np.array(x[cut:]), np.array(y[cut:]))


def _boston_housing_load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """``keras.datasets.boston_housing.load_data``: ``(n, 13)`` features, ``(n,)`` prices in k$."""
    _test_split_checked(test_split)
    file = _file("boston_housing", path, _ORIGIN + "boston_housing.npz", _DIGESTS["boston_housing"])
    with np.load(file, allow_pickle=False) as f:
        x, y = f["x"], f["y"]
    return _split(x, y, test_split, seed)


def _california_housing_load_data(version="large", path="california_housing.npz", test_split=0.2, seed=113):
    """``keras.datasets.california_housing.load_data``: ``(n, 8)`` features, ``(n,)`` prices in dollars;
    ``version="small"`` keeps the first 600 samples."""
    _test_split_checked(test_split)
    file = _file("california_housing", path, _ORIGIN + "california_housing.npz", _DIGESTS["california_housing"])
    with np.load(file, allow_pickle=False) as f:
        x, y = f["x"], f["y"]
    # Keras reads the file before it looks at `version`, so a missing file is reported first.
    if version == "small":
        x, y = x[:600], y[:600]
    elif version != "large":
        raise ValueError(f"Argument `version` must be one of 'small', 'large'. Received: version={version}")
    return _split(x, y, test_split, seed)


mnist = SimpleNamespace(load_data=_mnist_load_data)
fashion_mnist = SimpleNamespace(load_data=_fashion_mnist_load_data)
cifar10 = SimpleNamespace(load_data=_cifar10_load_data)
cifar100 = SimpleNamespace(load_data=_cifar100_load_data)
imdb = SimpleNamespace(load_data=_imdb_load_data, get_word_index=_imdb_get_word_index)
reuters = SimpleNamespace(load_data=_reuters_load_data, get_word_index=_reuters_get_word_index,
                          get_label_names=_reuters_get_label_names)
boston_housing = SimpleNamespace(load_data=_boston_housing_load_data)
california_housing = SimpleNamespace(load_data=_california_housing_load_data)
