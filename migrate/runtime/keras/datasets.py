"""``keras.datasets``: the same arrays, read from Keras's own cache, never from the network.

``mk.datasets.mnist.load_data()`` reads ``~/.keras/datasets/mnist.npz`` (``$KERAS_HOME``
instead of ``~/.keras`` when set), where Keras keeps it after its first download, checks its
SHA-256 as Keras does, and returns the arrays Keras returns. With the file missing it fails
with a message naming the file and where it comes from: a training job should not download
on every worker. ``fashion_mnist``, ``cifar10`` and ``cifar100`` read their files the same way.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import pickle
from types import SimpleNamespace

import numpy as np

__all__ = ["mnist", "fashion_mnist", "cifar10", "cifar100"]

_ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def _cache_dir() -> str:
    from .utils import keras_home

    return os.path.join(keras_home(), "datasets")


def _missing(what: str, path: str, origin: str) -> FileNotFoundError:
    return FileNotFoundError(
        f"keras.datasets.{what}.load_data: {path} is not there, and migrate's Keras does not download "
        f"(every worker would). Fetch it once, e.g. with Keras itself (`keras.datasets.{what}.load_data()`) "
        f"or from {origin}, into {os.path.dirname(path)}")


def _checked(path: str, sha256: str | None, what: str) -> str:
    from .utils import file_digest

    if sha256 is not None:
        if file_digest(path, hashlib.sha256()) != sha256:
            raise ValueError(f"keras.datasets.{what}.load_data: {path} is not the file Keras publishes "
                             f"(its SHA-256 differs); delete it and fetch it again")
    return path


def _file(what: str, name: str, origin: str, sha256: str | None = None, subdir: str = "") -> str:
    path = os.path.join(_cache_dir(), subdir, name)
    if not os.path.isfile(path):
        raise _missing(what, path, origin)
    return _checked(path, sha256, what)


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
    """Unpickles the CIFAR batches' NumPy arrays and nothing else."""

    ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy", "ndarray"), ("numpy", "dtype"),
               ("numpy._core.multiarray", "_reconstruct")}

    def find_class(self, module, name):
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"a CIFAR batch may not hold {module}.{name}")
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


mnist = SimpleNamespace(load_data=_mnist_load_data)
fashion_mnist = SimpleNamespace(load_data=_fashion_mnist_load_data)
cifar10 = SimpleNamespace(load_data=_cifar10_load_data)
cifar100 = SimpleNamespace(load_data=_cifar100_load_data)
