"""``migrate.runtime.tfdatasets``: ``tfds.load`` read from the files TensorFlow Datasets prepared,
compared element by element with what TFDS itself reads (TFDS writes the data here too)."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from tests.helpers import python_json

ms = pytest.importorskip("mindspore")
if importlib.util.find_spec("tensorflow_datasets") is None or importlib.util.find_spec("tensorflow") is None:
    pytest.skip("TensorFlow Datasets is not installed", allow_module_level=True)

# Each load: (keyword arguments), as both sides call `load("tiny", data_dir=..., **kwargs)`.
LOADS = {
    "train": {"split": "train"},
    "sliced": {"split": "train[:25%]+test", "as_supervised": True},
    "tail": {"split": "train[-10%:]"},
    "absolute": {"split": "test[2:5]", "as_supervised": True},
    "shards": {"split": "train[1shard:]"},
    "one_shard": {"split": "train[1shard]"},
    "to_shard_zero": {"split": "train[:0shard]"},  # (TFDS: a shard end of 0 counts from the last: all)
    "all": {"split": "all", "as_supervised": True},
    "halves": {"split": ["train[:50%]", "train[50%:]"], "as_supervised": True},
    "batched": {"split": "test", "batch_size": 3},
}

TENSORFLOW = r"""
import json, sys
import numpy as np
import tensorflow as tf
import tensorflow_datasets as tfds

data_dir, loads = sys.argv[1], json.loads(sys.argv[2])


class Tiny(tfds.core.GeneratorBasedBuilder):
    VERSION = tfds.core.Version("1.0.0")

    def _info(self):
        return tfds.core.DatasetInfo(builder=self, features=tfds.features.FeaturesDict({
            "image": tfds.features.Image(shape=(6, 5, 3)),
            "label": tfds.features.ClassLabel(names=["cat", "dog", "bird"]),
            "values": tfds.features.Tensor(shape=(2,), dtype=np.float32),
            "name": tfds.features.Text(),
            "meta": {"id": tfds.features.Scalar(dtype=np.int64), "mask": tfds.features.Tensor(shape=(3,), dtype=np.bool_)},
            "depth": tfds.features.Image(shape=(2, 2, 1), dtype=np.uint16),
            "ragged": tfds.features.Tensor(shape=(None, None), dtype=np.int32, encoding="zlib"),
        }), supervised_keys=("image", "label"))

    def _split_generators(self, dl_manager):
        return {"train": self._generate_examples(40, 0), "test": self._generate_examples(7, 100)}

    def _generate_examples(self, n, seed):
        rng = np.random.default_rng(seed)
        for i in range(n):
            yield i, {"image": rng.integers(0, 255, size=(6, 5, 3), dtype=np.uint8), "label": int(i % 3),
                      "values": rng.normal(size=2).astype(np.float32), "name": f"item {seed + i}",
                      "meta": {"id": seed + i, "mask": rng.random(3) > 0.5},
                      "depth": rng.integers(0, 65535, size=(2, 2, 1)).astype(np.uint16),
                      "ragged": np.arange(4, dtype=np.int32).reshape(-1, 2) + i}  # (stored with its shape)


Tiny(data_dir=data_dir).download_and_prepare(download_config=tfds.download.DownloadConfig(num_shards=3))


def plain(value):
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    value = value.numpy() if hasattr(value, "numpy") else value
    if isinstance(value, bytes):
        return value.decode()
    array = np.asarray(value)
    if array.dtype == object:
        return [v.decode() for v in array.reshape(-1)]
    return array.tolist()


out = {}
for key, kwargs in loads.items():
    result = tfds.load("tiny", data_dir=data_dir, **kwargs)
    datasets = result if isinstance(result, list) else [result]
    out[key] = [[plain(e) for e in d] for d in datasets]
whole, info = tfds.load("tiny", split="train", data_dir=data_dir, batch_size=-1, as_supervised=True, with_info=True)
out["whole"] = plain(whole)
out["info"] = {"num_examples": {k: v.num_examples for k, v in info.splits.items()},
               "num_classes": info.features["label"].num_classes, "names": info.features["label"].names,
               "supervised_keys": list(info.supervised_keys), "image_shape": list(info.features["image"].shape),
               "dog": info.features["label"].str2int("dog"), "2": info.features["label"].int2str(2)}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("tfds")
    return data_dir, python_json(TENSORFLOW, str(data_dir), json.dumps(LOADS))


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    array = value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)
    if array.dtype == object:
        return [v.decode() for v in array.reshape(-1)] if array.ndim else array.item().decode()
    return array.tolist()


@pytest.mark.parametrize("key", sorted(LOADS))
def test_each_element_is_the_one_tfds_reads(prepared, key):
    from migrate.runtime import tfdatasets as tfds

    data_dir, want = prepared
    result = tfds.load("tiny", data_dir=str(data_dir), **LOADS[key])
    datasets = result if isinstance(result, list) else [result]
    got = [[_plain(e) for e in d] for d in datasets]
    assert [len(d) for d in got] == [len(d) for d in want[key]]
    assert got == want[key]
    for dataset, elements in zip(datasets, want[key]):  # a second epoch reads the same
        assert [_plain(e) for e in dataset] == elements


def test_the_whole_split_as_one_batch_and_the_info(prepared):
    from migrate.runtime import tfdatasets as tfds

    data_dir, want = prepared
    whole, info = tfds.load("tiny", split="train", data_dir=str(data_dir), batch_size=-1, as_supervised=True,
                            with_info=True)
    assert _plain(whole) == want["whole"]
    images, labels = whole
    assert images.dtype == ms.uint8 and labels.dtype == ms.int64
    assert {k: v.num_examples for k, v in info.splits.items()} == want["info"]["num_examples"]
    assert info.features["label"].num_classes == want["info"]["num_classes"] == 3
    assert info.features["label"].names == want["info"]["names"]
    assert list(info.supervised_keys) == want["info"]["supervised_keys"]
    assert list(info.features["image"].shape) == want["info"]["image_shape"]
    assert info.features["label"].str2int("dog") == want["info"]["dog"]
    assert info.features["label"].int2str(2) == want["info"]["2"]
    assert info.splits["train"].num_shards == 3


def test_a_dataset_not_prepared_is_a_clear_error_and_nothing_is_fetched(tmp_path):
    from migrate.runtime import tfdatasets as tfds

    with pytest.raises(FileNotFoundError, match=r"no prepared dataset at .*mnist.*does not download or prepare"):
        tfds.load("mnist", split="train", data_dir=str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_an_element_changed_in_place_does_not_change_the_next_epoch(prepared):
    from migrate.runtime import tfdatasets as tfds

    data_dir, want = prepared
    dataset = tfds.load("tiny", split="test", data_dir=str(data_dir))
    for element in tfds.as_numpy(dataset):
        element["values"] *= 0
        element["depth"][...] = 0
    assert [_plain(e) for e in dataset] == [_plain(e) for e in tfds.load("tiny", split="test", data_dir=str(data_dir))]


def test_unknown_splits_and_slices_are_tfds_errors(prepared):
    from migrate.runtime import tfdatasets as tfds

    data_dir, _ = prepared
    with pytest.raises(ValueError, match="Unknown split 'validation'"):
        tfds.load("tiny", split="validation", data_dir=str(data_dir))
    with pytest.raises(ValueError, match="incompatible with 7 examples"):
        tfds.load("tiny", split="test[:9]", data_dir=str(data_dir))
    for empty in ("train[:0]", "train[50%:50%]", "test[5:2]"):
        with pytest.raises(ValueError, match="corresponds to no data"):
            tfds.load("tiny", split=empty, data_dir=str(data_dir))


def test_shuffled_files_are_one_order_in_every_process_of_a_launched_run(prepared, monkeypatch):
    import itertools

    from migrate.runtime import orders
    from migrate.runtime import tfdatasets as tfds

    data_dir, want = prepared
    monkeypatch.setenv("MIGRATE_RUN_SEED", "2024")
    monkeypatch.delenv("MS_SCHED_PORT", raising=False)
    monkeypatch.setattr(ms, "get_seed", lambda: None)

    def one_process():  # (a process's first unseeded order: its count of orders starts at 0)
        monkeypatch.setattr(orders, "_made", itertools.count())
        return [_plain(e)["meta"]["id"] for e in tfds.load("tiny", split="train", data_dir=str(data_dir), shuffle_files=True)]

    first, second = one_process(), one_process()
    assert first == second
    assert sorted(first) == sorted(e["meta"]["id"] for e in want["train"][0])
