"""``tensorflow_datasets`` (``tfds.load``) read without TensorFlow, from the data TFDS prepared.

Converted code imports it as ``tfdatasets`` (``tfds`` stays the name of TFDS itself).

``tfds.load("mnist", split="train", as_supervised=True)`` downloads and prepares a dataset
once, into ``~/tensorflow_datasets/<name>/<version>/`` (``$TFDS_DATA_DIR`` or ``data_dir``
instead): TFRecord shards of ``tf.train.Example`` records, ``dataset_info.json`` (splits,
shard lengths, supervised keys) and ``features.json`` (how each feature is encoded). Here
``load`` reads those files and gives a :class:`migrate.runtime.tfdata.Dataset` of the
same elements, in the same order, decoded as TFDS decodes them:

- ``Image``: the PNG or JPEG bytes decoded to ``uint8 [height, width, channels]``
  (Pillow; PNG is exact, JPEG as libjpeg decodes it);
- ``ClassLabel``: an ``int64`` scalar (names from ``<feature>.labels.txt``);
- ``Tensor`` / ``Scalar``: the stored values in the feature's dtype and shape (raw bytes
  for ``encoding="bytes"``, ``"zlib"`` inflated first);
- ``Text``: bytes; a nested ``FeaturesDict``: a nested dict.

Splits take TFDS's syntax: ``"train"``, ``"train[:80%]"`` (percent boundaries rounded to
the closest example, as TFDS rounds), ``"train[10:20]"``, ``"train[-10%:]"``,
``"train[:50%]+test"``, ``"all"``, or a list of them (a list of datasets). ``batch_size=-1``
gives the whole split as one batch of tensors; ``with_info=True`` adds a
:class:`DatasetInfo` (``features``, ``splits[...].num_examples``, ``supervised_keys``).

What differs: nothing is downloaded or prepared (every worker of a job would): with the
prepared files missing, ``load`` fails naming the directory and how to prepare it once.
Only the TFRecord file format is read (not ``array_record``). ``shuffle_files=True``
shuffles the order of the shards each epoch with numpy's generator (TFDS's own order
differs); the examples within a shard keep their order. A split up to 1 GB of records is
decoded once, on its first epoch, and kept in memory; a larger one is decoded as it is read.
"""

from __future__ import annotations

import json
import math
import os
import re
import zlib
from typing import Any

import numpy as np

from . import orders, tfdata, tfio

__all__ = ["load", "as_numpy", "Split", "DatasetInfo", "ReadConfig"]

_IN_MEMORY = 1 << 30  # a split's records up to this many bytes are decoded once and kept


class Split:
    """``tfds.Split``: the names of the usual splits."""

    TRAIN = "train"
    TEST = "test"
    VALIDATION = "validation"
    ALL = "all"


class ReadConfig:
    """``tfds.ReadConfig``: accepted; its ``shuffle_seed`` seeds ``shuffle_files``."""

    def __init__(self, shuffle_seed=None, **kwargs):
        self.shuffle_seed = shuffle_seed
        self.options = kwargs


# -- where the prepared data is ----------------------------------------------------------------


def _data_dir(data_dir) -> str:
    if data_dir:
        return os.path.expanduser(os.fspath(data_dir))
    return os.environ.get("TFDS_DATA_DIR") or os.path.join(os.path.expanduser("~"), "tensorflow_datasets")


def _version_key(name: str) -> tuple:
    return tuple(int(part) if part.isdigit() else -1 for part in name.split("."))


def _dataset_dir(name: str, data_dir) -> str:
    """``<data_dir>/<name>[/<config>]/<version>`` for ``"name[/config][:version]"`` (the newest
    version prepared when none is given)."""
    root = _data_dir(data_dir)
    spec, _, version = name.partition(":")
    base = os.path.join(root, *spec.split("/"))
    if version and version != "*":
        found = os.path.join(base, version)
    else:
        versions = [v for v in (os.listdir(base) if os.path.isdir(base) else [])
                    if re.fullmatch(r"\d+\.\d+\.\d+", v) and os.path.isfile(os.path.join(base, v, "dataset_info.json"))]
        found = os.path.join(base, max(versions, key=_version_key)) if versions else os.path.join(base, "<version>")
    if not os.path.isfile(os.path.join(found, "dataset_info.json")):
        raise FileNotFoundError(
            f"tfds.load({name!r}): no prepared dataset at {found}, and migrate's tfds does not download or "
            f"prepare datasets (every worker would). Prepare it once with TensorFlow Datasets "
            f"(`tfds build {spec.split('/')[0]} --data_dir {root}`, or `tfds.load({name!r})` with TensorFlow), "
            "or pass `data_dir=` where it is")
    return found


# -- what was prepared: splits and features ------------------------------------------------------


class SplitInfo:
    def __init__(self, name: str, shard_lengths: list[int], num_bytes: int, template: str):
        self.name, self.shard_lengths, self.num_bytes = name, shard_lengths, num_bytes
        self.filepath_template = template

    @property
    def num_examples(self) -> int:
        return sum(self.shard_lengths)

    @property
    def num_shards(self) -> int:
        return len(self.shard_lengths)

    def __repr__(self) -> str:
        return f"<SplitInfo num_examples={self.num_examples}, num_shards={self.num_shards}>"


class Feature:
    """One feature of ``features.json``: ``dtype``, ``shape`` and, by kind, ``num_classes``/``names``."""

    def __init__(self, kind: str, spec: dict, key: str, directory: str):
        self.kind, self.key = kind, key
        # (class labels and text have their own, below)
        dtype = spec.get("dtype", "uint8" if kind == "image" else "float32")
        self.dtype = np.dtype(object if dtype == "string" else dtype)
        dims = spec.get("shape", {}).get("dimensions", [])
        self.shape = tuple(None if int(d) < 0 else int(d) for d in dims)
        self.encoding = spec.get("encoding", "none")
        self.names: list[str] | None = None
        if kind == "class_label":
            self.shape, self.dtype = (), np.dtype(np.int64)
            names = os.path.join(directory, f"{key.replace('/', '-')}.labels.txt")
            if os.path.isfile(names):
                with open(names, encoding="utf-8") as handle:
                    self.names = [line.strip() for line in handle if line.strip()]
            self.num_classes = int(spec.get("numClasses", len(self.names or [])))
        elif kind == "text":
            self.shape, self.dtype = (), np.dtype(object)

    def int2str(self, value: int) -> str:
        return self.names[int(value)] if self.names else str(int(value))

    def str2int(self, name: str) -> int:
        return (self.names or []).index(name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.kind}, shape={self.shape}, dtype={self.dtype})"


class FeaturesDict(dict):
    """``info.features``: feature name -> :class:`Feature` (or a nested FeaturesDict)."""


_KINDS = {"image": "image", "classLabel": "class_label", "text": "text", "tensor": "tensor"}


def _features(spec: dict, directory: str, prefix: str = "") -> FeaturesDict:
    out = FeaturesDict()
    for name, feature in spec["featuresDict"]["features"].items():
        key = f"{prefix}{name}"
        if "featuresDict" in feature:
            out[name] = _features(feature, directory, key + "/")
            continue
        kind = next((k for k in _KINDS if k in feature), None)
        if kind is None:
            raise NotImplementedError(
                f"tfds.load: the feature {key!r} is a {feature.get('pythonClassName', '?').rsplit('.', 1)[-1]}, "
                "which migrate's tfds does not decode (Image, ClassLabel, Tensor, Scalar, Text and nested "
                "FeaturesDict are)")
        out[name] = Feature(_KINDS[kind], feature[kind], key, directory)
    return out


class DatasetInfo:
    """``tfds.core.DatasetInfo``, as far as training scripts read it."""

    def __init__(self, directory: str):
        with open(os.path.join(directory, "dataset_info.json"), encoding="utf-8") as handle:
            meta = json.load(handle)
        self.directory = directory
        self.name = meta.get("name", "")
        self.version = meta.get("version", "")
        self.description = meta.get("description", "")
        self.citation = meta.get("citation", "")
        self.file_format = meta.get("fileFormat", "tfrecord")
        self.splits = {s["name"]: SplitInfo(s["name"], [int(n) for n in s.get("shardLengths", [])],
                                            int(s.get("numBytes", 0)),
                                            s.get("filepathTemplate", "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"))
                       for s in meta.get("splits", [])}
        keys = meta.get("supervisedKeys", {})
        items = keys.get("tuple", {}).get("items", [])
        self.supervised_keys = tuple(item["featureKey"] for item in items) if items else \
            ((keys["input"], keys["output"]) if "input" in keys else None)
        with open(os.path.join(directory, "features.json"), encoding="utf-8") as handle:
            self.features = _features(json.load(handle), directory)

    def __repr__(self) -> str:
        return f"tfds.core.DatasetInfo(name={self.name!r}, version={self.version!r}, splits={self.splits})"


# -- splits -------------------------------------------------------------------------------------

_SPEC = re.compile(r"^(?P<name>[\w-]+)(\[(?P<selector>[\d\w%:.-]+)\])?$")
_BOUND = re.compile(r"^((?P<value>-?[\d_.]+)(?P<unit>%|shard)?)?$")


def _ranges(split: str, info: DatasetInfo) -> list[tuple[str, int, int]]:
    """``"train[:10%]+test"`` -> ``[(split, start, stop), ...]``, TFDS's arithmetic."""
    out = []
    for part in re.split(r"\s*\+\s*", str(split).strip()):
        match = _SPEC.match(part)
        if not match:
            raise ValueError(f"Unrecognized split format: {part!r}. See format at https://www.tensorflow.org/datasets/splits")
        name, selector = match["name"], match["selector"]
        if name == "all":
            if selector:
                raise NotImplementedError(f"{name!r} does not support slice.")
            out.extend((s, 0, info.splits[s].num_examples) for s in info.splits)
            continue
        if name not in info.splits:
            raise ValueError(f"Unknown split {name!r}. Should be one of {list(info.splits)}.")
        count = info.splits[name].num_examples
        start, stop = 0, count
        if selector is not None:
            bounds = [_BOUND.match(b) for b in selector.split(":")]
            if len(bounds) not in (1, 2) or not all(bounds) or not any(b.group(0) for b in bounds):
                raise ValueError(f"Unrecognized split format: {part!r}")
            lengths = info.splits[name].shard_lengths
            if len(bounds) == 1:  # `train[3shard]`: one shard
                if bounds[0]["unit"] != "shard":
                    raise ValueError("Absolute or percent only support slice syntax.")
                at = int(bounds[0]["value"])
                bounds = [bounds[0], _BOUND.match(f"{at + 1}shard")]
            unit = bounds[0]["unit"] or bounds[1]["unit"] or "abs"

            def absolute(bound, default, end: bool):
                if bound["value"] is None:
                    return default
                if unit == "%":
                    return int(round(float(bound["value"]) * count / 100.0))
                if unit == "shard":
                    at = int(bound["value"])
                    if end and at <= 0:  # (TFDS: a shard end of 0 or less counts from the last shard)
                        at += len(lengths)
                    return sum(lengths[:at])
                return int(bound["value"])

            start, stop = absolute(bounds[0], 0, False), absolute(bounds[1], count, True)
            if abs(start) > count or abs(stop) > count:
                raise ValueError(f"Requested slice [{start}:{stop}] incompatible with {count} examples.")
            start, stop = start + count if start < 0 else start, stop + count if stop < 0 else stop
        if stop <= start:
            raise ValueError(f"Instruction {part!r} corresponds to no data!")
        out.append((name, start, stop))
    return out


# -- reading and decoding -----------------------------------------------------------------------


def _shard_files(info: DatasetInfo, split: str) -> list[tuple[str, int]]:
    record = info.splits[split]
    if info.file_format != "tfrecord":
        raise NotImplementedError(f"tfds.load: {info.name} is stored as {info.file_format}; migrate's tfds reads tfrecord")
    count = record.num_shards
    files = []
    for shard, length in enumerate(record.shard_lengths):
        name = (record.filepath_template.replace("{DATASET}", info.name).replace("{SPLIT}", split)
                .replace("{FILEFORMAT}", info.file_format).replace("{SHARD_X_OF_Y}", f"{shard:05d}-of-{count:05d}")
                .replace("{SHARD_INDEX}", f"{shard:05d}").replace("{NUM_SHARDS}", f"{count:05d}"))
        path = os.path.join(info.directory, name)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"tfds.load: {path} ({split}, shard {shard + 1} of {count}) is missing")
        files.append((path, length))
    return files


def _decode(feature: Feature, kind: str, values: list) -> Any:
    if feature.kind == "image":
        if feature.dtype == np.uint16:  # (16-bit PNG: Pillow's "I;16")
            import io

            from PIL import Image

            with Image.open(io.BytesIO(values[0])) as image:
                array = np.asarray(image, dtype=np.uint16)
            return array[:, :, None] if array.ndim == 2 else array
        return tfio._decode(values[0], feature.shape[-1] if feature.shape and feature.shape[-1] else 0, "image").asnumpy()
    if feature.kind == "class_label":
        return np.array(values[0], dtype=np.int64)
    if feature.kind == "text":
        return np.array(values[0], dtype=object)
    if feature.dtype == object:
        array = np.empty(len(values), dtype=object)
        array[:] = values
        return array.reshape(feature.shape) if None not in feature.shape else array
    if feature.encoding in ("bytes", "zlib"):
        array = _from_bytes(feature, values[0])
    else:
        array = np.asarray(values, dtype=feature.dtype)
    if None in feature.shape:
        known = math.prod(d for d in feature.shape if d is not None)
        return array.reshape(tuple(-1 if d is None else d for d in feature.shape)) if known else array
    return array.reshape(feature.shape)


def _from_bytes(feature: Feature, value: bytes) -> np.ndarray:
    """A tensor TFDS stored as its bytes (``encoding="bytes"``, or ``"zlib"`` compressed), writable."""
    raw = zlib.decompress(value) if feature.encoding == "zlib" else value
    return np.frombuffer(raw, dtype=feature.dtype).copy()


def _example(serialized: bytes, features: FeaturesDict) -> dict:
    stored = tfio._features(serialized)

    def walk(spec: FeaturesDict) -> dict:
        out = {}
        for name, feature in spec.items():
            if isinstance(feature, FeaturesDict):
                out[name] = walk(feature)
                continue
            if feature.key not in stored and f"{feature.key}/value" in stored:
                # (an encoded tensor of unknown dimensions: its bytes beside its shape)
                _, values = stored[f"{feature.key}/value"]
                _, shape = stored[f"{feature.key}/shape"]
                out[name] = _from_bytes(feature, values[0]).reshape([int(d) for d in shape])
                continue
            kind, values = stored.get(feature.key, ("", []))
            if not values and feature.kind in ("image", "class_label", "text") or (
                    not values and feature.encoding != "none"):
                raise ValueError(f"tfds.load: the record has no value for the feature {feature.key!r}")
            out[name] = _decode(feature, kind, values)
        return out

    return walk(features)


def _copied(element):
    return tfdata._pack(element, [leaf.copy() for leaf in tfdata._flatten(element)])


def _structure(element: dict, supervised: tuple | None, as_supervised: bool):
    return tuple(element[key] for key in supervised) if as_supervised and supervised else element


def _dataset(info: DatasetInfo, split: str, as_supervised: bool, shuffle_files: bool, seed) -> "tfdata.Dataset":
    if as_supervised and not info.supervised_keys:
        raise ValueError(f"as_supervised=True but {info.name} does not support a supervised structure.")
    ranges = _ranges(split, info)
    pieces = []  # (path, first, stop) of the records to read, in order
    for name, start, stop in ranges:
        at = 0
        for path, length in _shard_files(info, name):
            first, last = max(start, at), min(stop, at + length)
            if first < last:
                pieces.append((path, first - at, last - at))
            at += length
    count = sum(stop - first for _, first, stop in pieces)
    total = sum(info.splits[name].num_bytes * (stop - start) / max(1, info.splits[name].num_examples)
                for name, start, stop in ranges)
    rng = np.random.default_rng(orders.order_seed(seed))  # (alike in every process of a launched run)

    def read():
        order = list(pieces)
        if shuffle_files:
            order = [order[i] for i in rng.permutation(len(order))]
        for path, first, stop in order:
            for i, record in enumerate(tfio.records(path)):
                if i >= stop:
                    break
                if i >= first:
                    yield _structure(_example(record, info.features), info.supervised_keys, as_supervised)

    if total <= _IN_MEMORY and not shuffle_files:
        kept: list = []

        def elements():  # (a fresh copy each epoch: an element changed in place must not change the next)
            if not kept:
                kept.append(list(read()))
            return (_copied(element) for element in kept[0])

        return tfdata.Dataset(elements, count)
    return tfdata.Dataset(read, count)


def load(name, split=None, data_dir=None, batch_size=None, shuffle_files=False, download=True, as_supervised=False,
         decoders=None, read_config=None, with_info=False, builder_kwargs=None, download_and_prepare_kwargs=None,
         as_dataset_kwargs=None, try_gcs=False):
    """``tfds.load``: the prepared dataset ``name`` (``"name[/config][:version]"``) as tf.data-like
    datasets, one per split asked for (a dict of every split when ``split`` is None)."""
    if decoders is not None:
        raise NotImplementedError("tfds.load: `decoders` is not supported by migrate's tfds")
    info = DatasetInfo(_dataset_dir(str(name), data_dir))
    seed = getattr(read_config, "shuffle_seed", None)

    def one(which):
        dataset = _dataset(info, which, as_supervised, bool(shuffle_files), seed)
        if batch_size == -1:  # the whole split, one batch of tensors
            return next(iter(dataset.batch(max(1, dataset._cardinality))))
        return dataset.batch(int(batch_size)) if batch_size else dataset

    if split is None:
        result = {which: one(which) for which in info.splits}
    elif isinstance(split, (list, tuple)):
        result = [one(which) for which in split]
    else:
        result = one(split)
    return (result, info) if with_info else result


def as_numpy(dataset):
    """``tfds.as_numpy``: a dataset's elements as numpy (an iterable), or a structure of tensors as numpy."""
    if isinstance(dataset, tfdata.Dataset):
        return dataset.as_numpy_iterator()
    if isinstance(dataset, dict):
        return {k: as_numpy(v) for k, v in dataset.items()}
    if isinstance(dataset, (list, tuple)):
        return type(dataset)(as_numpy(v) for v in dataset)
    return dataset.asnumpy() if hasattr(dataset, "asnumpy") else np.asarray(dataset)
