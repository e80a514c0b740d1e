"""`mk.datasets` reads Keras's cached files as Keras does, and never the network."""

import gzip
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
