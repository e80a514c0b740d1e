"""``tf.io`` for input pipelines, without TensorFlow: TFRecord files and ``tf.train.Example``.

:func:`records` reads TFRecord files (plain, GZIP or ZLIB) record by record;
``tfdata.TFRecordDataset`` is built on it. :func:`parse_single_example` and
:func:`parse_example` decode ``tf.train.Example`` protocol buffers by their wire format,
for :class:`FixedLenFeature` specs, with TF's rules: a missing feature takes its
``default_value`` or fails, a feature holding the wrong number of values fails, ``int64``
and ``float32`` come as MindSpore tensors of the spec's shape, ``string`` as NumPy arrays
of ``bytes`` (MindSpore has no string tensor). :func:`decode_raw`, :func:`decode_png`,
:func:`decode_jpeg` and :func:`decode_image` turn bytes into uint8 (or ``out_type``) tensors;
images are decoded with Pillow, which MindSpore itself depends on.

Pure Python reads a record in microseconds and keeps ``map(parse)`` where the program wrote
it. MindSpore's ``mindspore.dataset.TFRecordDataset`` parses inside the reader from a schema,
which is a different program shape; it is the counterpart for a hand-written pipeline.
"""

from __future__ import annotations

import gzip
import io
import os
import struct
import zlib
from typing import Iterator

import numpy as np

# Numbers as a MindSpore tensor; bytes stay NumPy (MindSpore has no string tensor), as in tfdata.
from .tfdata import _to_tensor as _tensor

string = "string"  # tf.string: the dtype of a feature of bytes


# -- TFRecord files -------------------------------------------------------------------------------

def _open(path, compression_type):
    kind = (compression_type or "").upper()
    raw = open(os.fspath(path), "rb")  # noqa: SIM115 - closed by the reader
    if kind == "":
        return raw
    if kind == "GZIP":
        return gzip.GzipFile(fileobj=raw)
    if kind == "ZLIB":
        data = zlib.decompress(raw.read())
        raw.close()
        return io.BytesIO(data)
    raw.close()
    raise ValueError(f"compression_type must be '', 'ZLIB' or 'GZIP', not {compression_type!r}")


def records(path, compression_type=None) -> Iterator[bytes]:
    """Every record of one TFRecord file, in order (length-prefixed frames; a truncated last
    frame is an error, as TF's ``DataLossError``)."""
    with _open(path, compression_type) as handle:
        while True:
            header = handle.read(12)
            if not header:
                return
            if len(header) < 12:
                raise OSError(f"{os.fspath(path)}: truncated record header")
            (length,) = struct.unpack("<Q", header[:8])
            data = handle.read(length)
            footer = handle.read(4)
            if len(data) < length or len(footer) < 4:
                raise OSError(f"{os.fspath(path)}: truncated record")
            yield data


def lines(path, compression_type=None) -> Iterator[bytes]:
    """``tf.data.TextLineDataset``'s lines: without their ``\\n`` or ``\\r\\n``."""
    with _open(path, compression_type) as handle:
        for line in handle:
            if line.endswith(b"\n"):
                line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
            yield line


# -- tf.train.Example by its wire format ---------------------------------------------------------

def _varint(data: bytes, at: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[at]
        at += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, at
        shift += 7


def _fields(data: bytes):
    """(field number, wire type, value) of a message: bytes for length-delimited fields."""
    at, end = 0, len(data)
    while at < end:
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
        elif wire == 1:
            value, at = data[at:at + 8], at + 8
        elif wire == 2:
            size, at = _varint(data, at)
            value, at = data[at:at + size], at + size
        elif wire == 5:
            value, at = data[at:at + 4], at + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield number, wire, value


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _feature(data: bytes) -> tuple[str, list]:
    """A ``Feature``: its kind ("string", "float", "int64") and values."""
    for number, _, body in _fields(data):
        if number == 1:
            return "string", [v for n, _, v in _fields(body) if n == 1]
        if number == 2:
            values: list = []
            for n, wire, v in _fields(body):
                if n == 1:
                    values.extend(np.frombuffer(v, "<f4").tolist() if wire == 2 else struct.unpack("<f", v))
            return "float", values
        if number == 3:
            values = []
            for n, wire, v in _fields(body):
                if n != 1:
                    continue
                if wire == 2:
                    at = 0
                    while at < len(v):
                        item, at = _varint(v, at)
                        values.append(_signed(item))
                else:
                    values.append(_signed(v))
            return "int64", values
    return "none", []


def _features(serialized: bytes) -> dict[str, tuple[str, list]]:
    found: dict[str, tuple[str, list]] = {}
    for number, _, features in _fields(serialized):
        if number != 1:
            continue
        for n, _, entry in _fields(features):
            if n != 1:
                continue
            key, value = "", b""
            for m, _, part in _fields(entry):
                if m == 1:
                    key = part.decode("utf-8")
                elif m == 2:
                    value = part
            found[key] = _feature(value)  # a later entry for a key replaces an earlier one
    return found


# -- feature specs ---------------------------------------------------------------------------------

def _kind(dtype) -> str:
    """``float32``/``int64``/``string`` for a TF, MindSpore, NumPy or named dtype."""
    if dtype is string or dtype == "string" or dtype is bytes or dtype is str:
        return "string"
    name = str(dtype).lower()
    if name in ("float32", "float", "<class 'numpy.float32'>"):
        return "float"
    if name in ("int64", "<class 'numpy.int64'>"):
        return "int64"
    raise ValueError(f"feature dtype must be float32, int64 or string, not {dtype}")


class FixedLenFeature:
    """``tf.io.FixedLenFeature(shape, dtype, default_value=None)``."""

    def __init__(self, shape, dtype, default_value=None) -> None:
        self.shape = tuple(int(d) for d in (shape if isinstance(shape, (list, tuple)) else [shape]))
        self.dtype = dtype
        self.default_value = default_value
        self.kind = _kind(dtype)

    def __repr__(self) -> str:
        return f"FixedLenFeature(shape={list(self.shape)}, dtype={self.dtype}, default_value={self.default_value!r})"


def _array(kind: str, values: list, shape: tuple) -> np.ndarray:
    if kind == "string":
        array = np.empty(len(values), dtype=object)
        array[:] = [bytes(v) for v in values]
    else:
        array = np.asarray(values, dtype=np.float32 if kind == "float" else np.int64)
    return array.reshape(shape)


def _parse_one(serialized, features: dict) -> dict[str, np.ndarray]:
    data = _as_bytes(serialized)
    found = _features(data)
    out = {}
    for key, spec in features.items():
        if not isinstance(spec, FixedLenFeature):
            raise TypeError(f"feature {key!r}: only FixedLenFeature specs are read here, not {type(spec).__name__}")
        size = int(np.prod(spec.shape)) if spec.shape else 1
        got = found.get(key)
        if got is None or (got[0] == "none" and not got[1]):
            if spec.default_value is None:
                raise ValueError(f"Feature: {key} (data type: {spec.kind}) is required but could not be found.")
            default = np.asarray(spec.default_value, dtype=object if spec.kind == "string" else None)
            values = np.broadcast_to(default, spec.shape).reshape(-1).tolist()
            if spec.kind == "string":
                values = [v.encode() if isinstance(v, str) else v for v in values]
            out[key] = _array(spec.kind, values, spec.shape)
            continue
        kind, values = got
        if kind != spec.kind:
            raise ValueError(f"Feature: {key}. Data types don't match. Expected type: {spec.kind}, Actual type: {kind}")
        if len(values) != size:
            raise ValueError(f"Key: {key}.  Can't parse serialized Example: expected {size} values, got {len(values)}")
        out[key] = _array(kind, values, spec.shape)
    return out


def _as_bytes(serialized) -> bytes:
    if isinstance(serialized, bytes):
        return serialized
    if hasattr(serialized, "asnumpy"):
        serialized = serialized.asnumpy()
    array = np.asarray(serialized, dtype=object)
    if array.shape != ():
        raise ValueError(f"parse_single_example takes one serialized Example (a scalar), not shape {array.shape}")
    value = array.item()
    return value.encode() if isinstance(value, str) else bytes(value)


def parse_single_example(serialized, features, example_names=None, name=None) -> dict:
    """``tf.io.parse_single_example``: one ``Example`` → ``{key: tensor}`` per spec."""
    return {key: _tensor(value) for key, value in _parse_one(serialized, features).items()}


def parse_example(serialized, features, example_names=None, name=None) -> dict:
    """``tf.io.parse_example``: a vector of ``Example``s → ``{key: [batch, *shape] tensor}``."""
    if hasattr(serialized, "asnumpy"):
        serialized = serialized.asnumpy()
    batch = [_parse_one(item, features) for item in np.asarray(serialized, dtype=object).reshape(-1)]
    out = {}
    for key, spec in features.items():
        parts = [row[key] for row in batch]
        stacked = np.stack(parts) if parts else _array(spec.kind, [], (0, *spec.shape))
        out[key] = _tensor(stacked)
    return out


# -- decoding bytes -----------------------------------------------------------------------------------

_RAW = {"uint8": np.uint8, "int8": np.int8, "uint16": np.uint16, "int16": np.int16, "int32": np.int32,
        "int64": np.int64, "float16": np.float16, "float32": np.float32, "float64": np.float64}


def _numpy_dtype(dtype) -> np.dtype:
    name = str(dtype).lower().replace("<class 'numpy.", "").rstrip("'>")
    if name not in _RAW:
        raise ValueError(f"decode_raw: unsupported out_type {dtype}")
    return np.dtype(_RAW[name])


def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """``tf.io.decode_raw``: each string's bytes as a vector of ``out_type`` (a batch gets one row each)."""
    dtype = _numpy_dtype(out_type).newbyteorder("<" if little_endian else ">")
    if isinstance(input_bytes, bytes):
        return _tensor(np.frombuffer(input_bytes, dtype).astype(dtype.newbyteorder("=")))
    array = np.asarray(input_bytes.asnumpy() if hasattr(input_bytes, "asnumpy") else input_bytes, dtype=object)
    rows = [np.frombuffer(bytes(v), dtype).astype(dtype.newbyteorder("=")) for v in array.reshape(-1)]
    if array.shape == ():
        return _tensor(rows[0])
    return _tensor(np.stack(rows).reshape(*array.shape, -1))


def _decode(contents, channels: int, what: str):
    from PIL import Image

    with Image.open(io.BytesIO(_as_bytes(contents))) as image:
        if what != "image" and image.format.lower() not in {"png": ("png",), "jpeg": ("jpeg", "mpo")}[what]:
            raise ValueError(f"decode_{what}: the bytes are {image.format}, not {what.upper()}")
        if channels == 0:
            mode = {"L": "L", "LA": "LA", "RGB": "RGB", "RGBA": "RGBA", "P": "RGBA" if "transparency" in image.info
                    else "RGB", "1": "L", "I;16": "L", "CMYK": "RGB"}.get(image.mode, "RGB")
        else:
            mode = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[channels]
        array = np.asarray(image.convert(mode), dtype=np.uint8)
    if array.ndim == 2:
        array = array[:, :, None]
    return _tensor(np.ascontiguousarray(array))


def decode_png(contents, channels=0, dtype=None, name=None):
    """``tf.io.decode_png``: ``[height, width, channels]`` uint8."""
    return _decode(contents, int(channels), "png")


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """``tf.io.decode_jpeg``: ``[height, width, channels]`` uint8 (libjpeg through Pillow)."""
    return _decode(contents, int(channels), "jpeg")


def decode_image(contents, channels=None, dtype=None, name=None, expand_animations=True):
    """``tf.io.decode_image`` for PNG and JPEG: ``[height, width, channels]`` uint8."""
    return _decode(contents, int(channels or 0), "image")


def read_file(filename, name=None):
    """``tf.io.read_file``: the whole file as bytes (a NumPy bytes scalar, as a string tensor would be)."""
    with open(_as_bytes(filename).decode("utf-8") if not isinstance(filename, (str, os.PathLike)) else filename,
              "rb") as handle:
        return np.array(handle.read(), dtype=object)
