"""``tf.train.load_checkpoint`` / ``load_variable`` / ``list_variables`` / ``checkpoints_iterator``
without TensorFlow.

A converted program still meets TF checkpoints: pretrained weights to start from, or the
checkpoints its TF original wrote. TF writes a checkpoint ``<prefix>`` as a *tensor bundle*:
``<prefix>.index``, a LevelDB table (sorted keys, prefix-compressed blocks, a footer with
the index block's place) whose values are ``BundleEntryProto`` messages (dtype, shape, shard,
offset and size of each tensor), and ``<prefix>.data-NNNNN-of-MMMMM``, the tensors' bytes.
:class:`CheckpointReader` reads both with the standard library and numpy: numbers and bools
as TF stores them (little-endian), strings as TF's length-prefixed records, a snappy-compressed
block too. Checksums are not verified (TF verifies them when it reads).

The same functions read the checkpoints ``migrate.runtime``'s ``tf.train.Checkpoint`` writes
(MindSpore ``.ckpt`` files): a tracked value's entry ``name/value`` answers to TF's key
``name/.ATTRIBUTES/VARIABLE_VALUE`` as well, so a program that reads back what it saved
(``load_variable(manager.latest_checkpoint, "step/.ATTRIBUTES/VARIABLE_VALUE")``) works.

Values come back as numpy arrays, as TF's reader gives them (strings as bytes objects;
bfloat16 as float32, numpy having no bfloat16); dtypes in ``get_variable_to_dtype_map`` are
MindSpore's, the dtypes of the converted program. A partitioned (sliced) variable is listed,
and reading it is refused with a clear error. A name or a checkpoint that is not there raises
``tferrors.NotFoundError``, as TF's reader does.
"""

from __future__ import annotations

import os
import struct

import numpy as np

from . import _protowire
from .tferrors import NotFoundError

__all__ = ["CheckpointReader", "NewCheckpointReader", "checkpoints_iterator", "list_variables", "load_checkpoint",
           "load_variable", "wait_for_new_checkpoint"]

_MAGIC = 0xDB4775248B80FB57
_OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"
_ATTRIBUTE = "/.ATTRIBUTES/VARIABLE_VALUE"

# TF's DataType enum: numpy's dtype and MindSpore's name for each stored kind.
_DTYPES = {1: ("float32", "float32"), 2: ("float64", "float64"), 3: ("int32", "int32"), 4: ("uint8", "uint8"),
           5: ("int16", "int16"), 6: ("int8", "int8"), 7: (None, "string"), 8: ("complex64", "complex64"),
           9: ("int64", "int64"), 10: ("bool", "bool_"), 14: ("bfloat16", "bfloat16"), 17: ("uint16", "uint16"),
           18: ("complex128", "complex128"), 19: ("float16", "float16"), 22: ("uint32", "uint32"),
           23: ("uint64", "uint64")}
# TF's names of those kinds, as `debug_string` prints them (by numpy's name; None: strings).
_TF_NAMES = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "int32": "DT_INT32", "uint8": "DT_UINT8",
             "int16": "DT_INT16", "int8": "DT_INT8", None: "DT_STRING", "complex64": "DT_COMPLEX64",
             "int64": "DT_INT64", "bool": "DT_BOOL", "bfloat16": "DT_BFLOAT16", "uint16": "DT_UINT16",
             "complex128": "DT_COMPLEX128", "float16": "DT_HALF", "uint32": "DT_UINT32", "uint64": "DT_UINT64"}


# -- the wire formats: protobuf's (see _protowire), snappy's ------------------------------------

_varint, _fields, _signed = _protowire.varint, _protowire.fields, _protowire.signed


def _unsnappy(data: bytes) -> bytes:
    """Snappy's raw format (a LevelDB block TF compressed)."""
    length, at = _varint(data, 0)
    out = bytearray()
    while at < len(data):
        tag = data[at]
        at += 1
        kind = tag & 3
        if kind == 0:
            size = tag >> 2
            if size >= 60:
                extra = size - 59
                size = int.from_bytes(data[at:at + extra], "little")
                at += extra
            size += 1
            out += data[at:at + size]
            at += size
            continue
        if kind == 1:
            size, offset = ((tag >> 2) & 7) + 4, ((tag >> 5) << 8) | data[at]
            at += 1
        elif kind == 2:
            size, offset = (tag >> 2) + 1, int.from_bytes(data[at:at + 2], "little")
            at += 2
        else:
            size, offset = (tag >> 2) + 1, int.from_bytes(data[at:at + 4], "little")
            at += 4
        for _ in range(size):  # (a copy may overlap what it produces)
            out.append(out[-offset])
    if len(out) != length:
        raise ValueError("corrupt snappy block in the checkpoint index")
    return bytes(out)


# -- the LevelDB table of the .index file -------------------------------------------------------

def _block(data: bytes, handle: bytes) -> bytes:
    offset, at = _varint(handle, 0)
    size, _ = _varint(handle, at)
    contents, kind = data[offset:offset + size], data[offset + size]
    if kind == 1:
        return _unsnappy(contents)
    if kind != 0:
        raise ValueError(f"unsupported block compression {kind} in the checkpoint index")
    return contents


def _block_entries(block: bytes):
    restarts = struct.unpack_from("<I", block, len(block) - 4)[0]
    end = len(block) - 4 - 4 * restarts
    at, key = 0, b""
    while at < end:
        shared, at = _varint(block, at)
        unshared, at = _varint(block, at)
        size, at = _varint(block, at)
        key = key[:shared] + block[at:at + unshared]
        at += unshared
        yield key, block[at:at + size]
        at += size


def _table(data: bytes) -> dict[bytes, bytes]:
    if len(data) < 48 or struct.unpack_from("<Q", data, len(data) - 8)[0] != _MAGIC:
        raise ValueError("not a TF checkpoint index (no LevelDB table footer)")
    footer = data[-48:]
    after_metaindex = _handle_end(footer, 0)  # (the footer holds the metaindex's handle, then the index's)
    index_handle = footer[after_metaindex:_handle_end(footer, after_metaindex)]
    entries: dict[bytes, bytes] = {}
    for _, handle in _block_entries(_block(data, index_handle)):
        entries.update(_block_entries(_block(data, handle)))
    return entries


def _handle_end(data: bytes, at: int) -> int:
    _, at = _varint(data, at)
    _, at = _varint(data, at)
    return at


# -- the bundle's entries ---------------------------------------------------------------------

class _Entry:
    __slots__ = ("dtype", "shape", "shard", "offset", "size", "sliced")

    def __init__(self, message: bytes):
        self.dtype, self.shape, self.shard, self.offset, self.size, self.sliced = 0, (), 0, 0, 0, False
        for number, _, value in _fields(message):
            if number == 1:
                self.dtype = value
            elif number == 2:
                self.shape = _dims(value)
            elif number == 3:
                self.shard = value
            elif number == 4:
                self.offset = value
            elif number == 5:
                self.size = value
            elif number == 7:
                self.sliced = True


def _dims(shape: bytes) -> tuple:
    """A TensorShapeProto's sizes (a dim of size 0 has no size field)."""
    out = []
    for number, _, dim in _fields(shape):
        if number == 2:
            size = 0
            for m, _, value in _fields(dim):
                if m == 1:
                    size = _signed(value)
            out.append(size)
    return tuple(out)


class CheckpointReader:
    """TF's ``CheckpointReader`` (what ``tf.train.load_checkpoint`` returns) over a TF checkpoint
    or one ``migrate.runtime`` wrote: ``get_tensor``, ``has_tensor``,
    ``get_variable_to_shape_map``, ``get_variable_to_dtype_map``."""

    def __init__(self, path: str):
        path = os.fspath(path)
        self._path = path
        self._entries: dict[str, _Entry] = {}
        self._values: dict[str, np.ndarray] = {}
        if os.path.exists(path + ".index"):
            self._read_bundle(path)
        else:
            from .keras import saving

            file = path if path.endswith(".ckpt") and os.path.exists(path) else path + ".ckpt"
            if not os.path.exists(file):
                raise NotFoundError(f"Unsuccessful TensorSliceReader constructor: Failed to find any matching files "
                                    f"for {path}")
            for key, value in saving.read_entries(file).items():
                self._values[key] = value
                if key.endswith("/value"):  # a tracked value: TF's key for it too
                    self._values.setdefault(key[:-len("/value")] + _ATTRIBUTE, value)
                elif key == "save_counter" or key.endswith("/save_counter"):
                    self._values.setdefault(key + _ATTRIBUTE, value)

    def _read_bundle(self, prefix: str) -> None:
        with open(prefix + ".index", "rb") as f:
            table = _table(f.read())
        shards = 1
        for key, value in table.items():
            if key.startswith(b"\x00"):
                continue  # a slice of a partitioned variable (its full entry says it is sliced)
            if key == b"":
                for number, _, field in _fields(value):
                    if number == 1:
                        shards = field
                    elif number == 2 and field != 0:
                        raise ValueError("the checkpoint is big-endian: only little-endian bundles are read")
                continue
            self._entries[key.decode("utf-8")] = _Entry(value)
        self._shards = shards
        self._data: dict[int, bytes] = {}

    def _shard(self, shard: int) -> bytes:
        if shard not in self._data:
            with open(f"{self._path}.data-{shard:05d}-of-{self._shards:05d}", "rb") as f:
                self._data[shard] = f.read()
        return self._data[shard]

    # -- TF's API ---------------------------------------------------------------------------

    def has_tensor(self, name: str) -> bool:
        return name in self._entries or name in self._values

    def get_tensor(self, name: str) -> np.ndarray:
        if name in self._values:
            value = np.array(self._values[name])
            return value[()] if value.ndim == 0 else value
        entry = self._entries.get(name)
        if entry is None:
            raise NotFoundError(f"Key {name} not found in checkpoint")
        if entry.sliced:
            raise NotImplementedError(f"{name} is a partitioned variable: its slices are not assembled here")
        if entry.dtype not in _DTYPES:
            raise NotImplementedError(f"{name}: TF's dtype {entry.dtype} (a resource or variant) has no numpy value")
        data = self._shard(entry.shard)[entry.offset:entry.offset + entry.size]
        numpy_dtype = _DTYPES[entry.dtype][0]
        count = int(np.prod(entry.shape)) if entry.shape else 1
        if numpy_dtype is None:  # strings: varint64 lengths, a 4-byte checksum, then the bytes
            lengths, at = [], 0
            for _ in range(count):
                length, at = _varint(data, at)
                lengths.append(length)
            at += 4
            values = []
            for length in lengths:
                values.append(data[at:at + length])
                at += length
            if not entry.shape:
                return values[0]  # (a scalar string is bytes, as TF's reader gives it)
            return np.array(values, dtype=object).reshape(entry.shape)
        if numpy_dtype == "bfloat16":
            bits = np.frombuffer(data, "<u2").astype(np.uint32) << 16
            value = bits.view(np.float32).reshape(entry.shape)
        else:
            value = np.frombuffer(data, np.dtype(numpy_dtype).newbyteorder("<")).astype(numpy_dtype).reshape(entry.shape)
        return value[()] if not entry.shape else value  # (a scalar is numpy's scalar, as TF's reader gives it)

    def get_variable_to_shape_map(self) -> dict:
        shapes = {name: list(entry.shape) for name, entry in self._entries.items()}
        shapes.update({name: list(np.shape(value)) for name, value in self._values.items()})
        return shapes

    def get_variable_to_dtype_map(self) -> dict:
        import mindspore as ms

        dtypes = {name: getattr(ms, _DTYPES[entry.dtype][1]) for name, entry in self._entries.items()
                  if entry.dtype in _DTYPES}
        for name, value in self._values.items():
            dtypes[name] = ms.Tensor(np.asarray(value)).dtype if np.asarray(value).dtype != object else ms.string
        return dtypes

    def debug_string(self) -> bytes:
        """TF's listing: ``name (DT_FLOAT) [3,2]`` per tensor, sorted by name."""
        kinds = {name: _DTYPES.get(entry.dtype, ("?",))[0] for name, entry in self._entries.items()}
        for name, value in self._values.items():
            kinds[name] = None if np.asarray(value).dtype == object else np.asarray(value).dtype.name
        lines = [f"{name} ({_TF_NAMES.get(kinds.get(name), 'DT_INVALID')}) [{','.join(map(str, shape))}]"
                 for name, shape in sorted(self.get_variable_to_shape_map().items())]
        return "".join(line + "\n" for line in lines).encode()


NewCheckpointReader = CheckpointReader


def _resolve(ckpt_dir_or_file) -> str:
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        from .keras.train import latest_checkpoint

        found = latest_checkpoint(path)
        if found is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}")
        return found
    return path


def load_checkpoint(ckpt_dir_or_file) -> CheckpointReader:
    """``tf.train.load_checkpoint``: a reader of the checkpoint file, or of a directory's latest."""
    return CheckpointReader(_resolve(ckpt_dir_or_file))


def load_variable(ckpt_dir_or_file, name: str) -> np.ndarray:
    """``tf.train.load_variable``: one tensor's value (a ``:0`` suffix is dropped, as TF drops it)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file) -> list:
    """``tf.train.list_variables``: ``(name, shape)`` of every tensor, sorted by name."""
    reader = load_checkpoint(ckpt_dir_or_file)
    return [(name, shape) for name, shape in sorted(reader.get_variable_to_shape_map().items())]


def wait_for_new_checkpoint(checkpoint_dir, last_checkpoint=None, seconds_to_sleep=1, timeout=None):
    """TF's: the directory's latest checkpoint once it is not ``last_checkpoint``, polling every
    ``seconds_to_sleep``; None after ``timeout`` seconds."""
    import time

    from .keras.train import latest_checkpoint
    from .tfenv import get_logger

    get_logger().info("Waiting for new checkpoint at %s", checkpoint_dir)
    stop_time = time.time() + timeout if timeout is not None else None
    while True:
        path = latest_checkpoint(checkpoint_dir)
        if path is None or path == last_checkpoint:
            if stop_time is not None and time.time() + seconds_to_sleep > stop_time:
                return None
            time.sleep(seconds_to_sleep)
        else:
            get_logger().info("Found new checkpoint at %s", path)
            return path


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """``tf.train.checkpoints_iterator``: each new checkpoint of the directory as it appears (an
    evaluator beside a trainer), at most one per ``min_interval_secs``; after ``timeout`` seconds
    without one it ends, unless ``timeout_fn()`` says to wait on, as TF's does."""
    import time

    from .tfenv import get_logger

    path = None
    while True:
        new = wait_for_new_checkpoint(checkpoint_dir, path, timeout=timeout)
        if new is None:
            if not timeout_fn:
                get_logger().info("Timed-out waiting for a checkpoint.")
                return
            if timeout_fn():
                return
            continue
        start = time.time()
        path = new
        yield path
        wait = start + min_interval_secs - time.time()
        if wait > 0:
            time.sleep(wait)
