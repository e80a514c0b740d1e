"""``tf.summary`` without TensorFlow: TensorBoard event files written by tensorboardX.

The records are TF 2's own: a ``scalar`` is a float32 tensor summary of the ``scalars``
plugin, a ``histogram`` the ``[buckets, 3]`` float64 tensor TF's bucketing computes, an
``image`` the ``[width, height, png, ...]`` string tensor of the ``images`` plugin, a
``text`` a string tensor; each with the plugin metadata TF writes, so TensorBoard reads
and shows them as it shows TF's. tensorboardX writes the event file (its records and CRCs, synchronously; ``flush``
puts every summary so far on disk); it needs neither TensorFlow nor PyTorch.

Under data parallelism only rank 0 writes, as TF's multi-worker guides advise: every other
process gets a writer that records nothing, so the program runs the same code everywhere
and the log directory holds one event file, not one per process.

The default writer, the default step and ``record_if`` are per thread, as in TF.
"""

from __future__ import annotations

import contextlib
import os
import struct
import threading
import time
import zlib

import numpy as np

DEFAULT_BUCKET_COUNT = 30

# The SummaryMetadata bytes TF 2.21 writes for each plugin (plugin name, data class).
_METADATA = {
    "scalars": b"\n\t\n\x07scalars \x01",
    "histograms": b"\n\x0c\n\nhistograms \x02",
    "images": b"\n\x08\n\x06images \x03",
    "text": b"\n\x06\n\x04text \x02",
}


class _State(threading.local):
    def __init__(self) -> None:
        self.writer: SummaryWriter | None = None
        self.step = None
        self.record_if = True


_state = _State()


def _is_chief() -> bool:
    from migrate.runtime import collectives

    return collectives.replicas().rank == 0


def _numpy(value) -> np.ndarray:
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    if hasattr(value, "numpy"):
        return np.asarray(value.numpy())
    return np.asarray(value)


class SummaryWriter:
    """``tf.summary.SummaryWriter``: where summaries go; a no-op on every rank but 0."""

    def __init__(self, logdir=None, max_queue=None, flush_millis=None, filename_suffix=None) -> None:
        self._file = None
        self._closed = False
        if logdir is None or not _is_chief():
            return
        from tensorboardX.event_file_writer import EventsWriter

        logdir = os.fspath(logdir)
        os.makedirs(logdir, exist_ok=True)
        suffix = ".v2" if filename_suffix is None else filename_suffix
        # TF names the file events.out.tfevents.<time>.<host>.<pid>.<n><suffix>; tensorboardX
        # writes what follows the host from this suffix. Its writer is synchronous: what TF's
        # queue holds back (`max_queue` summaries, `flush_millis`) is flushed here by the same
        # rule, and `flush()` means every summary so far is on disk.
        self._file = EventsWriter(os.path.join(logdir, "events"), f".{os.getpid()}.0{suffix}")
        self._max_queue = 10 if max_queue is None else max(int(max_queue), 1)
        self._flush_secs = 120.0 if flush_millis is None else max(float(flush_millis), 0.0) / 1000.0
        self._pending = 0
        self._flushed_at = time.monotonic()

    # -- TF's writer methods --------------------------------------------------------------

    def set_as_default(self, step=None) -> None:
        """Make this the default writer (and ``step`` the default step) for this thread."""
        _state.writer = self
        if step is not None:
            _state.step = step

    @contextlib.contextmanager
    def as_default(self, step=None):
        """A context in which this is the default writer; it is flushed on the way out."""
        saved = (_state.writer, _state.step)
        self.set_as_default(step)
        try:
            yield self
        finally:
            _state.writer, _state.step = saved
            self.flush()

    def init(self) -> None:
        """Nothing to do: the event file is opened when the writer is made."""

    def flush(self) -> None:
        if self._file is not None and not self._closed:
            self._file.flush()
            self._pending, self._flushed_at = 0, time.monotonic()

    def close(self) -> None:
        if self._file is not None and not self._closed:
            self._file.close()
        self._closed = True

    # -- what the summary functions call ------------------------------------------------

    def _write(self, tag: str, plugin: str, tensor, step: int, description: str | None) -> None:
        if self._file is None or self._closed:
            return
        from tensorboardX.proto import summary_pb2

        metadata = summary_pb2.SummaryMetadata.FromString(_METADATA[plugin])
        if description:
            metadata.summary_description = description
        from tensorboardX.proto import event_pb2

        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, metadata=metadata, tensor=tensor)])
        self._file.write_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary))
        self._pending += 1
        if self._pending >= self._max_queue or time.monotonic() - self._flushed_at >= self._flush_secs:
            self.flush()


class _NoopWriter(SummaryWriter):
    def __init__(self) -> None:
        super().__init__(None)


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None,
                       experimental_trackable=False, experimental_mesh=None) -> SummaryWriter:
    """``tf.summary.create_file_writer``: an event file under ``logdir`` (on rank 0)."""
    return SummaryWriter(logdir, max_queue, flush_millis, filename_suffix)


def create_noop_writer() -> SummaryWriter:
    return _NoopWriter()


# -- the default step and recording condition ---------------------------------------------

def set_step(step) -> None:
    """``tf.summary.experimental.set_step``."""
    _state.step = step


def get_step():
    """``tf.summary.experimental.get_step``."""
    return _state.step


@contextlib.contextmanager
def record_if(condition):
    """``tf.summary.record_if``: summaries are written only while ``condition`` (a bool, or a
    callable returning one, asked at each summary) holds."""
    saved = _state.record_if
    _state.record_if = condition
    try:
        yield
    finally:
        _state.record_if = saved


def should_record_summaries() -> bool:
    """``tf.summary.should_record_summaries``: a default writer is set and ``record_if`` holds."""
    condition = _state.record_if
    if callable(condition):
        condition = condition()
    return _state.writer is not None and bool(_numpy(condition))


def flush(writer=None, name=None) -> None:
    """``tf.summary.flush``: flush ``writer``, or the default writer."""
    target = writer if writer is not None else _state.writer
    if target is not None:
        target.flush()


def _step(step) -> int:
    if step is None:
        step = _state.step
    if step is None:
        raise ValueError("No step set. Please specify one either through the `step` argument or through "
                         "tf.summary.experimental.set_step()")
    return int(_numpy(step))


def _emit(name: str, plugin: str, make_tensor, step, description) -> bool:
    """Write one summary to the default writer; False when there is none (or recording is off)."""
    if not should_record_summaries():
        return False
    writer = _state.writer
    at = _step(step)
    if writer._file is not None:
        writer._write(name, plugin, make_tensor(), at, description)
    return True


# -- the summaries ------------------------------------------------------------------------

def _tensor_proto(array: np.ndarray):
    from tensorboardX.proto import tensor_pb2, tensor_shape_pb2, types_pb2

    shape = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=d) for d in array.shape])
    if array.dtype.kind in "SUO":
        values = [v if isinstance(v, bytes) else str(v).encode("utf-8") for v in array.reshape(-1).tolist()]
        return tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING, tensor_shape=shape, string_val=values)
    dtype = {np.dtype(np.float32): types_pb2.DT_FLOAT, np.dtype(np.float64): types_pb2.DT_DOUBLE}[array.dtype]
    return tensor_pb2.TensorProto(dtype=dtype, tensor_shape=shape, tensor_content=np.ascontiguousarray(array).tobytes())


def scalar(name, data, step=None, description=None) -> bool:
    """``tf.summary.scalar``: ``data`` as a float32 scalar of the ``scalars`` plugin."""
    return _emit(name, "scalars", lambda: _tensor_proto(np.asarray(_numpy(data), dtype=np.float32).reshape(())),
                 step, description)


def histogram_buckets(data, buckets=None) -> np.ndarray:
    """TF's histogram bucketing: ``[buckets, 3]`` rows of (left edge, right edge, count), float64."""
    count = DEFAULT_BUCKET_COUNT if buckets is None else max(0, int(buckets))
    values = np.asarray(_numpy(data), dtype=np.float64).reshape(-1)
    if values.size == 0 or count == 0:
        return np.zeros((count, 3), dtype=np.float64)
    low, high = values.min(), values.max()
    span = high - low
    if span == 0:
        edges = np.full(count, high)
        counts = np.zeros(count)
        counts[-1] = values.size
        return np.stack([edges, edges, counts]).T.astype(np.float64)
    width = span / count
    index = np.minimum(np.floor((values - low) / width).astype(np.int32), count - 1)
    counts = np.bincount(index, minlength=count).astype(np.float64)
    edges = np.linspace(low, high, count + 1)
    edges[-1] = high
    return np.stack([edges[:-1], edges[1:], counts]).T.astype(np.float64)


def histogram(name, data, step=None, buckets=None, description=None) -> bool:
    """``tf.summary.histogram``: TF's buckets of every element of ``data``."""
    return _emit(name, "histograms", lambda: _tensor_proto(histogram_buckets(data, buckets)), step, description)


def _png(image: np.ndarray) -> bytes:
    """``image`` ([height, width, channels] uint8, 1–4 channels) as a PNG file."""
    height, width, channels = image.shape
    color = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    rows = b"".join(b"\x00" + image[y].tobytes() for y in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _as_uint8(images: np.ndarray) -> np.ndarray:
    """TF's ``convert_image_dtype(images, uint8, saturate=True)`` for float, bool and uint8 images."""
    if images.dtype == np.uint8:
        return images
    if images.dtype.kind == "f":
        return np.clip(images.astype(np.float64) * 255.5, 0, 255).astype(np.uint8)
    if images.dtype == np.bool_:
        return images.astype(np.uint8) * 255
    raise TypeError(f"tf.summary.image: images of dtype {images.dtype} are not supported here; "
                    "give float images in [0, 1] or uint8")


def image(name, data, step=None, max_outputs=3, description=None) -> bool:
    """``tf.summary.image``: the first ``max_outputs`` images of ``[k, h, w, c]`` ``data`` as PNGs."""
    def make():
        images = np.asarray(_numpy(data))
        if images.ndim != 4:
            raise ValueError(f"tf.summary.image: `data` must have rank 4, got shape {images.shape}")
        if int(max_outputs) < 0:
            raise ValueError("tf.summary.image: `max_outputs` must be non-negative")
        kept = _as_uint8(images[:int(max_outputs)])
        _, height, width, _ = images.shape
        encoded = [str(width).encode(), str(height).encode(), *(_png(frame) for frame in kept)]
        return _tensor_proto(np.array(encoded, dtype=object))

    return _emit(name, "images", make, step, description)


def text(name, data, step=None, description=None) -> bool:
    """``tf.summary.text``: a string tensor of the ``text`` plugin (markdown in TensorBoard)."""
    def make():
        value = data if isinstance(data, (str, bytes)) else _numpy(data)
        array = np.array(value, dtype=object)
        return _tensor_proto(array)

    return _emit(name, "text", make, step, description)
