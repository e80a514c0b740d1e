"""``tf.io`` for input pipelines, without TensorFlow: TFRecord files and ``tf.train.Example``.

:func:`records` reads TFRecord files (plain, GZIP or ZLIB) record by record;
``tfdata.TFRecordDataset`` is built on it; :class:`TFRecordWriter` writes them.
:class:`Example` and its parts (``Features``, ``Feature``, ``BytesList``, ...) are the
protocol-buffer messages TF's are (see ``_example_proto``). :func:`parse_single_example` and
:func:`parse_example` decode ``tf.train.Example`` protocol buffers by their wire format,
for :class:`FixedLenFeature`, :class:`VarLenFeature` and :class:`RaggedFeature` specs, with
TF's rules: a missing feature takes its ``default_value`` or fails, a feature holding the
wrong number of values fails, ``int64`` and ``float32`` come as MindSpore tensors of the
spec's shape, ``string`` as NumPy arrays of ``bytes`` (MindSpore has no string tensor); a
``VarLenFeature`` gives a :class:`SparseTensor`, laid out as TF's. :func:`decode_raw`, :func:`decode_png`,
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
import re
import struct
import zlib
from typing import Iterator

import numpy as np

# Numbers as a MindSpore tensor; bytes stay NumPy (MindSpore has no string tensor), as in tfdata.
from . import _protowire
from .tensors import to_numpy
from .tferrors import InvalidArgumentError
from .tfdata import _to_tensor as _tensor

from ._example_proto import (  # noqa: F401 - tf.train.Example and its parts, re-exported
    BytesList, Example, Feature, FeatureList, FeatureLists, Features, FloatList, Int64List, SequenceExample)

__all__ = ["BytesList", "Example", "Feature", "FeatureList", "FeatureLists", "Features", "FixedLenFeature",
           "FloatList", "Int64List", "RaggedFeature", "SequenceExample", "SparseTensor", "TFRecordOptions",
           "TFRecordWriter", "VarLenFeature", "decode_image", "decode_jpeg", "decode_png", "decode_raw", "lines",
           "parse_example", "parse_single_example", "read_file", "records", "sparse_to_dense", "string", "batch_sparse"]

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


# The masked CRC-32C of TFRecord frames (Castagnoli polynomial, reflected; TF's crc32c::Mask).
def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC_TABLE = _crc_table()


def _masked_crc(data: bytes) -> bytes:
    crc, table = 0xFFFFFFFF, _CRC_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return struct.pack("<I", (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF)


class TFRecordOptions:
    """``tf.io.TFRecordOptions``: the compression (``""``, ``"GZIP"`` or ``"ZLIB"``) and its level."""

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None, compression_method=None, mem_level=None,
                 compression_strategy=None) -> None:
        self.compression_type = _compression(compression_type)
        self.compression_level = compression_level

    @classmethod
    def get_compression_type_string(cls, options) -> str:
        return options.compression_type if isinstance(options, TFRecordOptions) else _compression(options)


def _compression(kind) -> str:
    name = (kind or "").upper() if isinstance(kind, str) or kind is None else None
    if name not in ("", "GZIP", "ZLIB"):
        raise ValueError(f"compression_type must be '', 'ZLIB' or 'GZIP', not {kind!r}")
    return name


class TFRecordWriter:
    """``tf.io.TFRecordWriter(path, options=None)``: writes records in TF's framing (length, masked
    CRC-32C of the length, data, masked CRC-32C of the data), plain, GZIP or ZLIB, which TF reads back.

    The records go to a temporary file beside ``path`` that :meth:`close` (or leaving the ``with``
    block) moves into place at once: processes started by ``migrate run -n N`` that each write the
    same file never interleave their records, and a reader sees the whole file or none of it. So
    nothing is at ``path`` before ``close``, where TF's file fills as it is written. The CRCs are
    computed in Python (about 7 MB/s).
    """

    def __init__(self, path, options=None) -> None:
        if isinstance(options, TFRecordOptions):
            kind, level = options.compression_type, options.compression_level
        else:
            kind, level = _compression(options), None
        self._path = os.fspath(path)
        directory, base = os.path.split(self._path)
        self._partial = os.path.join(directory, f".{base}.{os.getpid()}.{id(self):x}.partial")
        self._file = open(self._partial, "wb")  # noqa: SIM115 - closed by close()
        self._level = 6 if level is None or level < 0 else int(level)
        self._stream = self._file
        self._zlib = None
        if kind == "GZIP":
            self._stream = gzip.GzipFile(fileobj=self._file, mode="wb", compresslevel=self._level, mtime=0)
        elif kind == "ZLIB":
            self._zlib = zlib.compressobj(self._level)

    def write(self, record) -> None:
        """Append one record (``bytes``; a ``str`` is written as its UTF-8 bytes)."""
        if self._file is None:
            raise ValueError("Writer is closed.")
        data = record.encode("utf-8") if isinstance(record, str) else bytes(record)
        length = struct.pack("<Q", len(data))
        frame = b"".join((length, _masked_crc(length), data, _masked_crc(data)))
        self._stream.write(self._zlib.compress(frame) if self._zlib is not None else frame)

    def flush(self) -> None:
        if self._file is not None:
            self._stream.flush()

    def close(self) -> None:
        """Finish the file and move it to ``path`` (a second call does nothing)."""
        if self._file is None:
            return
        if self._zlib is not None:
            self._file.write(self._zlib.flush())
        if self._stream is not self._file:
            self._stream.close()
        self._file.close()
        self._file = None
        os.replace(self._partial, self._path)

    def __enter__(self) -> "TFRecordWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:  # TF's writer also finishes its file when it is collected
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing can be reported from a finalizer
            pass


# -- tf.train.Example by its wire format ---------------------------------------------------------

_varint, _fields, _signed = _protowire.varint, _protowire.fields, _protowire.signed


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


class VarLenFeature:
    """``tf.io.VarLenFeature(dtype)``: every value of the feature, however many, as a :class:`SparseTensor`."""

    def __init__(self, dtype) -> None:
        self.dtype = dtype
        self.kind = _kind(dtype)

    def __repr__(self) -> str:
        return f"VarLenFeature(dtype={self.dtype})"


class RaggedFeature:
    """``tf.io.RaggedFeature(dtype, value_key=None)`` without ``partitions``: one example's values as a
    1-D tensor (TF gives a ragged tensor only for a batch, which MindSpore has no counterpart for)."""

    def __init__(self, dtype, value_key=None, partitions=(), row_splits_dtype=None, validate=False) -> None:
        if partitions:
            raise ValueError("RaggedFeature with partitions makes a nested ragged tensor, which MindSpore has no "
                             "counterpart for; parse the values and row lengths as VarLenFeatures instead")
        self.dtype = dtype
        self.value_key = value_key
        self.kind = _kind(dtype)

    def __repr__(self) -> str:
        return f"RaggedFeature(dtype={self.dtype}, value_key={self.value_key!r})"


class SparseTensor:
    """What ``tf.io.VarLenFeature`` parses to, as ``tf.sparse.SparseTensor``: ``indices`` (int64,
    ``[n, rank]``), ``values`` (``[n]``) and ``dense_shape`` (int64, ``[rank]``). Numbers are MindSpore
    tensors, bytes NumPy arrays; :func:`sparse_to_dense` gives the dense tensor."""

    def __init__(self, indices, values, dense_shape) -> None:
        self.indices = indices
        self.values = values
        self.dense_shape = dense_shape

    @property
    def shape(self) -> tuple:
        return tuple(int(d) for d in to_numpy(self.dense_shape))

    @property
    def dtype(self):
        return self.values.dtype

    def __repr__(self) -> str:
        return f"SparseTensor(indices={self.indices!r}, values={self.values!r}, dense_shape={self.dense_shape!r})"


def _sparse(values: np.ndarray) -> SparseTensor:
    """One example's values as TF lays them out: indices ``[[0], [1], ...]``, dense shape ``[n]``."""
    count = len(values)
    return SparseTensor(_tensor(np.arange(count, dtype=np.int64).reshape(-1, 1)), _tensor(values),
                        _tensor(np.array([count], np.int64)))


def _batched(parts: list, kind: str = "float") -> SparseTensor:
    """Elements given as NumPy ``(indices, values, dense_shape)`` batched as tf.data and
    ``parse_example`` lay them out: each element's indices behind its position in the batch, the
    values in order, and a dense shape of the batch size and the largest extents (``kind``: the
    values' kind when there is no element)."""
    rank = len(parts[0][2]) if parts else 1
    if any(len(shape) != rank for _, _, shape in parts):
        raise ValueError("cannot batch sparse elements of different ranks")
    indices = [np.concatenate([np.full((len(index), 1), position, np.int64), index.astype(np.int64)], axis=1)
               for position, (index, _, _) in enumerate(parts)]
    extents = np.max(np.stack([shape for _, _, shape in parts]), axis=0) if parts else np.zeros(rank, np.int64)
    return SparseTensor(
        _tensor(np.concatenate(indices) if parts else np.zeros((0, rank + 1), np.int64)),
        _tensor(np.concatenate([values for _, values, _ in parts]) if parts else _array(kind, [], (0,))),
        _tensor(np.concatenate([[len(parts)], extents]).astype(np.int64)))


def batch_sparse(items) -> SparseTensor:
    """Sparse elements (a ``tfdata`` batch of parsed VarLenFeatures) batched as tf.data batches them."""
    return _batched([(to_numpy(item.indices), to_numpy(item.values), to_numpy(item.dense_shape)) for item in items])


def sparse_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """``tf.sparse.to_dense``: the dense tensor, ``default_value`` (0, or ``b""`` for bytes) elsewhere."""
    if not isinstance(sp_input, SparseTensor) and hasattr(sp_input, "to_dense"):  # a MindSpore COOTensor
        return sp_input.to_dense()
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"sparse_to_dense takes the SparseTensor a VarLenFeature parses to, not {type(sp_input).__name__}")
    values = to_numpy(sp_input.values)
    if default_value is None:
        default_value = b"" if values.dtype.kind == "O" else 0
    dense = np.full(sp_input.shape, default_value, dtype=values.dtype)
    indices = to_numpy(sp_input.indices)
    if validate_indices and len(indices) > 1:
        flat = np.ravel_multi_index(indices.T, sp_input.shape)
        if np.any(np.diff(flat) <= 0):
            raise ValueError("indices are not in lexicographic order, or repeat: reorder them first")
    dense[tuple(indices.T)] = values
    return _tensor(dense)


def _array(kind: str, values: list, shape: tuple) -> np.ndarray:
    if kind == "string":
        array = np.empty(len(values), dtype=object)
        array[:] = [bytes(v) for v in values]
    else:
        array = np.asarray(values, dtype=np.float32 if kind == "float" else np.int64)
    return array.reshape(shape)


def _parse_one(serialized, features: dict) -> dict[str, np.ndarray]:
    """Each spec's values: in the spec's shape for a FixedLenFeature, as one row for the others."""
    data = _as_bytes(serialized)
    found = _features(data)
    out = {}
    for key, spec in features.items():
        if not isinstance(spec, (FixedLenFeature, VarLenFeature, RaggedFeature)):
            raise TypeError(f"feature {key!r}: FixedLenFeature, VarLenFeature and RaggedFeature specs are read "
                            f"here, not {type(spec).__name__}")
        got = found.get(key if getattr(spec, "value_key", None) is None else spec.value_key)
        absent = got is None or (got[0] == "none" and not got[1])
        if not isinstance(spec, FixedLenFeature):
            if not absent and got[0] != "none" and got[0] != spec.kind:
                raise InvalidArgumentError(f"Feature: {key}. Data types don't match. Expected type: {spec.kind}, "
                                 f"Actual type: {got[0]}")
            values = [] if absent else got[1]
            out[key] = _array(spec.kind, values, (len(values),))
            continue
        size = int(np.prod(spec.shape)) if spec.shape else 1
        if absent:
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
            raise InvalidArgumentError(f"Feature: {key}. Data types don't match. Expected type: {spec.kind}, Actual type: {kind}")
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
    """``tf.io.parse_single_example``: one ``Example`` → ``{key: tensor}`` per spec (a
    :class:`SparseTensor` for a ``VarLenFeature``)."""
    out = {}
    for key, value in _parse_one(serialized, features).items():
        spec = features[key]
        out[key] = _sparse(value) if isinstance(spec, VarLenFeature) else _tensor(value)
    return out


def parse_example(serialized, features, example_names=None, name=None) -> dict:
    """``tf.io.parse_example``: a vector of ``Example``s → ``{key: [batch, *shape] tensor}`` (a batched
    :class:`SparseTensor` for a ``VarLenFeature``)."""
    ragged = [key for key, spec in features.items() if isinstance(spec, RaggedFeature)]
    if ragged:
        raise ValueError(f"parse_example: RaggedFeature {ragged[0]!r} makes a tf.RaggedTensor for a batch, which "
                         "MindSpore has no counterpart for; use a VarLenFeature (a SparseTensor) or parse "
                         "each example with parse_single_example")
    if hasattr(serialized, "asnumpy"):
        serialized = serialized.asnumpy()
    batch = [_parse_one(item, features) for item in np.asarray(serialized, dtype=object).reshape(-1)]
    out = {}
    for key, spec in features.items():
        parts = [row[key] for row in batch]
        if isinstance(spec, VarLenFeature):
            out[key] = _batched([(np.arange(len(v)).reshape(-1, 1), v, np.array([len(v)])) for v in parts], spec.kind)
            continue
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


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """``tf.audio.decode_wav``: a 16-bit PCM WAV file as ``(audio, sample_rate)``, ``audio`` float32
    ``[samples, channels]`` in [-1, 1) (each value / 32768) and ``sample_rate`` int32. With
    ``desired_channels`` a mono file is repeated and extra channels dropped; ``desired_samples``
    cuts or pads with zeros."""
    import wave

    try:
        with wave.open(io.BytesIO(_as_bytes(contents)), "rb") as reader:
            channels, width, rate = reader.getnchannels(), reader.getsampwidth(), reader.getframerate()
            frames = reader.readframes(reader.getnframes())
    except (wave.Error, EOFError) as error:
        raise ValueError(f"decode_wav: not a WAV file TF reads ({error})") from None
    if width != 2:
        raise ValueError(f"Can only read 16-bit WAV files, but received {8 * width}")
    audio = np.frombuffer(frames, dtype="<i2").reshape(-1, channels).astype(np.float32) / np.float32(32768.0)
    wanted = int(desired_channels)
    if wanted > 0 and wanted != channels:
        if channels == 1:
            audio = np.repeat(audio, wanted, axis=1)
        elif wanted < channels:
            audio = audio[:, :wanted]
        else:
            raise ValueError(f"Bad desired_channels {wanted} for a file of {channels} channels")
    samples = int(desired_samples)
    if samples >= 0:
        audio = audio[:samples] if len(audio) >= samples else np.concatenate(
            [audio, np.zeros((samples - len(audio), audio.shape[1]), np.float32)])
    return _tensor(np.ascontiguousarray(audio)), _tensor(np.array(rate, dtype=np.int32))


def read_file(filename, name=None):
    """``tf.io.read_file``: the whole file as bytes (a NumPy bytes scalar, as a string tensor would be)."""
    with open(_as_bytes(filename).decode("utf-8") if not isinstance(filename, (str, os.PathLike)) else filename,
              "rb") as handle:
        return np.array(handle.read(), dtype=object)


# -- CSV (tf.io.decode_csv, tf.data.experimental.CsvDataset) -----------------------------------------

_CSV_KINDS = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64, "string": object}
# TF's number syntax (its safe_strto* functions, after the surrounding whitespace): CSV fields and `tf.strings.to_number`
_INT_TEXT = re.compile(rb"[+-]?[0-9]+")
_FLOAT_TEXT = re.compile(rb"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)", re.I)


def parse_number(text: bytes, kind: str):
    """``text`` read as TF reads a number of ``kind`` ("float32", "float64", "int32", "int64"):
    surrounding whitespace allowed, ``inf``/``nan`` for floats, an integer within the type's
    range; None when it is not one."""
    stripped = text.strip()
    if kind.startswith("int"):
        if not _INT_TEXT.fullmatch(stripped):
            return None
        value, info = int(stripped), np.iinfo(_CSV_KINDS[kind])
        return _CSV_KINDS[kind](value) if info.min <= value <= info.max else None
    return _CSV_KINDS[kind](float(stripped)) if _FLOAT_TEXT.fullmatch(stripped) else None


def dtype_kind(dtype) -> str | None:
    """The column kind ("float32", ..., "string") of a dtype (MindSpore's, NumPy's, a name or
    ``tfio.string``), as a CSV record default or `to_number`'s ``out_type`` gives one; else None."""
    if dtype is string or dtype in (str, bytes):
        return "string"
    if isinstance(dtype, str):
        name = dtype
    elif isinstance(dtype, type) and issubclass(dtype, np.generic):
        name = np.dtype(dtype).name
    elif isinstance(dtype, np.dtype):
        name = dtype.name
    elif type(dtype).__module__.startswith("mindspore") and not hasattr(dtype, "asnumpy"):
        name = str(dtype).lower()
    else:
        return None
    name = {"float": "float32", "str": "string", "bytes": "string"}.get(name, name)
    return name if name in _CSV_KINDS else None


def _csv_columns(record_defaults, dtypes_allowed: bool) -> list[tuple[str, object]]:
    """Each column's kind and default (None: required), from TF's ``record_defaults``: a scalar or
    one-element default, an empty tensor or list (required; an empty list is float32), or, for
    ``CsvDataset``, a dtype."""
    from .tensors import tf_inferred

    columns = []
    for i, default in enumerate(record_defaults):
        kind = dtype_kind(default)
        if kind is not None and not isinstance(default, str):
            if not dtypes_allowed:
                raise TypeError(f"Attempt to convert a value ({default}) with an unsupported type to a Tensor.")
            columns.append((kind, None))
            continue
        if hasattr(default, "asnumpy"):
            default = default.asnumpy()
        if isinstance(default, (str, bytes)):
            array = np.array(default.encode() if isinstance(default, str) else default, dtype=object)
        elif isinstance(default, (list, tuple)) and len(default) == 0:
            array = np.zeros((0,), np.float32)
        else:
            array = np.asarray(default, dtype=object) if _texts(default) else tf_inferred(default)
        kind = "string" if array.dtype.kind in "OSU" else array.dtype.name
        if kind not in _CSV_KINDS:
            raise InvalidArgumentError(f"record_defaults[{i}]: a CSV column is float32, float64, int32, int64 or "
                                       f"string, not {kind}")
        if array.size > 1:
            raise InvalidArgumentError(f"record_defaults[{i}] must be a scalar or a vector of at most one element")
        value = None
        if array.size == 1:
            value = array.reshape(-1)[0]
            value = (value.encode() if isinstance(value, str) else value) if kind == "string" else _CSV_KINDS[kind](value)
        columns.append((kind, value))
    return columns


def _texts(value) -> bool:
    items = value if isinstance(value, (list, tuple)) else [value]
    return any(isinstance(item, (str, bytes)) for item in items)


def _csv_split(record: bytes, delim: bytes, quoted: bool) -> list[bytes]:
    """TF's DecodeCSV field split: ``delim`` between fields; with ``quoted``, a field that begins
    with ``"`` runs to a ``"`` followed by the delimiter or the end, ``""`` inside it is a quote."""
    fields, i, n = [], 0, len(record)
    while True:
        if quoted and i < n and record[i:i + 1] == b'"':
            i += 1
            field = bytearray()
            while True:
                if i >= n:
                    raise InvalidArgumentError("Quoted field has to end with quote followed by delim or end")
                if record[i:i + 1] == b'"':
                    if record[i + 1:i + 2] == b'"':
                        field += b'"'
                        i += 2
                        continue
                    if i + 1 < n and record[i + 1:i + 2] != delim:
                        raise InvalidArgumentError("Quote inside a string has to be escaped by another quote")
                    i += 1
                    break
                field += record[i:i + 1]
                i += 1
            fields.append(bytes(field))
        else:
            end = record.find(delim, i)
            end = n if end < 0 else end
            field = record[i:end]
            if quoted and (b'"' in field or b"\n" in field or b"\r" in field):
                raise InvalidArgumentError("Unquoted fields cannot have quotes/CRLFs inside")
            fields.append(field)
            i = end
        if i >= n:
            return fields
        i += 1  # (the delimiter; one after the last makes a last empty field)
        if i == n:
            fields.append(b"")
            return fields


def _csv_value(field: bytes, column: int, kind: str, default, na_value: bytes, where: str):
    if field == b"" or field == na_value:
        if default is None:
            raise InvalidArgumentError(f"Field {column} is required but missing in record{where}!")
        return default
    if kind == "string":
        return field
    value = parse_number(field, kind)
    if value is None:
        raise InvalidArgumentError(f"Field {column} in record{where} is not a valid {'float' if kind == 'float32' else kind}: "
                                   f"{field.decode('utf-8', 'replace')}")
    return value


def _csv_bytes(text) -> bytes:
    return text.encode() if isinstance(text, str) else bytes(text)


def _csv_delim(field_delim) -> bytes:
    delim = _csv_bytes(field_delim)
    if len(delim) != 1:
        raise InvalidArgumentError("field_delim should be only 1 char")
    return delim


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None):
    """``tf.io.decode_csv``: each record (a bytes scalar, or an array of them) split into fields as TF's
    DecodeCSV splits them; a list with one value per column, in the records' shape (numbers as
    MindSpore tensors in the column's dtype, text as NumPy bytes). An empty field, or one equal to ``na_value``, takes
    the column's default; a column whose default is empty is required. Errors are TF's
    ``InvalidArgumentError`` with TF's messages."""
    columns = _csv_columns(record_defaults, dtypes_allowed=False)
    delim, na = _csv_delim(field_delim), _csv_bytes(na_value)
    if select_cols is not None:
        select_cols = [int(c) for c in select_cols]
        if len(select_cols) != len(columns):
            raise InvalidArgumentError("Length of select_cols and record_defaults do not match.")
    if hasattr(records, "asnumpy"):
        records = records.asnumpy()
    array = np.asarray(records, dtype=object)
    flat = array.reshape(-1)
    out = [np.empty(flat.shape, dtype=_CSV_KINDS[kind]) for kind, _ in columns]
    for r, record in enumerate(flat):
        record = _csv_bytes(record)
        where = f" {r}"
        fields = _csv_split(record, delim, bool(use_quote_delim)) if record else []
        if select_cols is not None:
            if fields and max(select_cols) >= len(fields):
                raise InvalidArgumentError(f"Expect {max(select_cols) + 1} fields but have {len(fields)} in record {r}")
            fields = [fields[c] for c in select_cols] if fields else fields
        if len(fields) != len(columns):
            raise InvalidArgumentError(f"Expect {len(columns)} fields but have {len(fields)} in record {r}")
        for c, ((kind, default), field) in enumerate(zip(columns, fields)):
            out[c][r] = _csv_value(field, c, kind, default, na, where)
    return [_tensor(column.reshape(array.shape)) for column in out]


def csv_records(path, compression_type=None, header=False) -> Iterator[bytes]:
    """``CsvDataset``'s records of one file: its lines, a quoted field's line breaks kept inside
    its record; the first record left out with ``header``."""
    pending, first = None, True
    for line in lines(path, compression_type):
        record = line if pending is None else pending + b"\n" + line
        if record.count(b'"') % 2:  # (inside a quoted field: the record goes on on the next line)
            pending = record
            continue
        pending = None
        if first and header:
            first = False
            continue
        first = False
        yield record
    if pending is not None:
        yield pending


def csv_elements(paths, record_defaults, compression_type=None, header=False, field_delim=",", use_quote_delim=True,
                 na_value="", select_cols=None, exclude_cols=None, ignore_errors=False):
    """``CsvDataset``'s elements (its arguments checked now): a function giving, for each record of
    the files, a tuple of NumPy scalars, the fields converted one by one as TF's reader converts
    them (a bad field is reported before a short record). With ``ignore_errors`` a record that
    fails is left out (``dataset.apply(tf.data.experimental.ignore_errors())``)."""
    columns = _csv_columns(record_defaults, dtypes_allowed=True)
    delim, na = _csv_delim(field_delim), _csv_bytes(na_value)
    if select_cols is not None and exclude_cols is not None:
        raise ValueError("Either select_cols or exclude_cols should be empty")
    select = sorted(int(c) for c in select_cols) if select_cols is not None else None
    exclude = {int(c) for c in exclude_cols} if exclude_cols is not None else set()
    if select is not None and len(select) != len(columns):
        raise ValueError("select_cols is not the same length as record_defaults.")

    def elements():
        for path in paths:
            for record in csv_records(path, compression_type, bool(header)):
                try:
                    values = parsed(record)
                except InvalidArgumentError:
                    if ignore_errors:
                        continue
                    raise
                yield values

    def parsed(record: bytes) -> tuple:
        fields = _csv_split(record, delim, bool(use_quote_delim))
        if select is not None:
            if select[-1] >= len(fields):
                raise InvalidArgumentError(f"Expect {select[-1] + 1} fields but have {len(fields)} in record")
            fields = [fields[c] for c in select]
        elif exclude:
            fields = [field for c, field in enumerate(fields) if c not in exclude]
        values = [np.array(_csv_value(field, c, kind, default, na, ""), dtype=_CSV_KINDS[kind])
                  for c, ((kind, default), field) in enumerate(zip(columns, fields))]
        if len(fields) != len(columns):
            have = "more" if len(fields) > len(columns) else str(len(fields))
            raise InvalidArgumentError(f"Expect {len(columns)} fields but have {have} in record")
        return tuple(values)

    return elements
