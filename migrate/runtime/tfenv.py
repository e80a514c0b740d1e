"""TF's process-level queries, answered for a converted MindSpore program.

``tf.get_logger()`` is Python's ``logging`` logger named ``"tensorflow"`` with TF's own
handler, so what a program logs through it appears as it did. ``tf.executing_eagerly()``
says whether MindSpore runs in PyNative (eager) mode. ``TF_VERSION`` stands for
``tf.__version__``: the TensorFlow release whose behaviour ``migrate.runtime`` reproduces.
"""

from __future__ import annotations

import collections as _collections
import logging as _logging
import sys as _sys
import threading as _threading

# `tf.__version__` in a converted program: the TensorFlow release migrate.runtime reproduces and is
# tested against, so version checks written for TF (`tf.__version__.startswith("2.")`) still hold.
TF_VERSION = "2.21.0"
# `tf.version.GIT_VERSION`: that release's source revision, as its wheel reports it.
TF_GIT_VERSION = "v2.21.0-rc1-5-ga481b10260d"

_lock = _threading.Lock()
_logger: _logging.Logger | None = None


def get_logger() -> _logging.Logger:
    """TF's ``tf.get_logger()``: the ``"tensorflow"`` logger, with a stream handler in
    ``logging.BASIC_FORMAT`` added once when the root logger has none (to stdout at INFO in an
    interactive session, else to stderr), as TensorFlow does."""
    global _logger
    with _lock:
        if _logger is not None:
            return _logger
        logger = _logging.getLogger("tensorflow")
        if not _logging.getLogger().handlers:
            interactive = bool(getattr(_sys, "ps1", None) or _sys.flags.interactive)
            if interactive:
                logger.setLevel(_logging.INFO)
            handler = _logging.StreamHandler(_sys.stdout if interactive else _sys.stderr)
            handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT, None))
            logger.addHandler(handler)
        _logger = logger
        return logger


def executing_eagerly() -> bool:
    """``tf.executing_eagerly()``: True in MindSpore's PyNative mode, False in GRAPH_MODE."""
    import mindspore as ms

    return ms.get_context("mode") == ms.PYNATIVE_MODE


# --- device lists -------------------------------------------------------------------------------

class PhysicalDevice(_collections.namedtuple("PhysicalDevice", ["name", "device_type"])):
    """TF's ``tf.config.PhysicalDevice``: ``name`` like ``"/physical_device:CPU:0"``, ``device_type``."""


class LogicalDevice(_collections.namedtuple("LogicalDevice", ["name", "device_type"])):
    """TF's ``tf.config.LogicalDevice``: ``name`` like ``"/device:CPU:0"``, ``device_type``."""


# MindSpore's device targets as TF names their devices (Ascend has no TF name of its own; TF's
# Ascend plugin calls it NPU).
_TF_DEVICE_TYPE = {"GPU": "GPU", "Ascend": "NPU"}


def _device_types() -> list[str]:
    """The device types this process has, as TF lists them: the CPU, then the one accelerator the
    launcher gave it, if MindSpore runs on one."""
    import mindspore as ms

    accelerator = _TF_DEVICE_TYPE.get(ms.get_context("device_target"))
    return ["CPU"] + ([accelerator] if accelerator else [])


def list_physical_devices(device_type=None) -> list:
    """``tf.config.list_physical_devices``: this process's devices. Under ``migrate run -n N`` each
    process drives one device, so a GPU process lists one GPU (TF lists every GPU of the machine)."""
    return [PhysicalDevice(f"/physical_device:{kind}:0", kind) for kind in _device_types()
            if device_type is None or kind == device_type]


def list_logical_devices(device_type=None) -> list:
    """``tf.config.list_logical_devices``: one logical device per physical one, as TF has unless
    a program splits a device (which the converted program does not: TFF310)."""
    return [LogicalDevice(f"/device:{kind}:0", kind) for kind in _device_types()
            if device_type is None or kind == device_type]


class DeviceAttributes(_collections.namedtuple(
        "DeviceAttributes", ["name", "device_type", "memory_limit", "incarnation", "physical_device_desc"])):
    """What TF's ``device_lib.list_local_devices()`` lists for a device (its ``DeviceAttributes``
    proto): ``name`` like ``"/device:CPU:0"``, ``device_type``, ``memory_limit`` in bytes (0 where
    unknown), ``incarnation`` and ``physical_device_desc``."""


def list_local_devices(session_config=None) -> list:
    """``tensorflow.python.client.device_lib.list_local_devices``: this process's devices, as
    :func:`list_logical_devices` names them, with their attributes. ``memory_limit`` is MindSpore's
    ``max_device_memory`` context setting on an accelerator (0 where it cannot be read) and TF's
    256 MiB on the CPU; ``incarnation`` is 0 (a TF runtime's random id)."""
    import mindspore as ms

    devices = []
    for kind in _device_types():
        limit = 268435456
        if kind != "CPU":
            try:
                limit = _bytes(ms.get_context("max_device_memory"))
            except (ValueError, KeyError, RuntimeError):  # (a MindSpore without that setting)
                limit = 0
        devices.append(DeviceAttributes(f"/device:{kind}:0", kind, limit, 0,
                                        "" if kind == "CPU" else f"device: 0, name: {ms.get_context('device_target')}"))
    return devices


def _bytes(size: str) -> int:
    """``"1024GB"`` (MindSpore's way of giving a memory size) in bytes; 0 where it cannot be read."""
    units = {"GB": 1 << 30, "MB": 1 << 20, "KB": 1 << 10}
    for unit, factor in units.items():
        if isinstance(size, str) and size.upper().endswith(unit):
            try:
                return int(float(size[:-len(unit)]) * factor)
            except ValueError:
                return 0
    return 0


def get_memory_growth(device) -> bool:
    """``tf.config.experimental.get_memory_growth``: ``True``. MindSpore's memory pool takes device
    memory as it needs it (what TF's memory growth turns on), and ``set_memory_growth`` is
    removed (TFF311), so a program that checks the setting finds it on."""
    return True


def get_visible_devices(device_type=None) -> list:
    """``tf.config.get_visible_devices``: every device of this process is visible."""
    return list_physical_devices(device_type)


# --- tf.print -----------------------------------------------------------------------------------

def group(*inputs, **kwargs) -> None:
    """``tf.group``: eagerly its inputs have run already (they were evaluated as its arguments),
    and TF returns ``None``, as here."""
    return None


def tf_print(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):
    """``tf.print``: each input formatted as TF formats it, joined by ``sep``, to ``output_stream``.

    Tensors (MindSpore, NumPy or TF's) print as TF prints them: no dtype, floats with the
    fewest digits that give the value back (6, else 9 for float32), strings quoted, each
    axis longer than ``2 * summarize`` shown as its first and last ``summarize`` entries
    around ``...`` (``summarize=-1``: everything). Lists, tuples and dicts print as Python
    prints them, with the tensors inside formatted so. ``output_stream`` is ``sys.stderr``
    by default (TF's), ``sys.stdout``, a ``"file://path"`` to append to, or a logging
    function such as ``logging.info``; every process prints its own line, as every replica
    of a MirroredStrategy does.
    """
    text = sep.join(_format_input(value, summarize) for value in inputs) + end
    stream = _sys.stderr if output_stream is None else output_stream
    if isinstance(stream, str):
        if not stream.startswith("file://"):
            raise ValueError(f"Unsupported output stream, logging level, or file.{stream}. Supported streams are "
                             "sys.stdout, sys.stderr, tf.logging.info, tf.logging.warning, tf.logging.error. File "
                             "needs to be in the form of 'file://<filepath>'.")
        with open(stream[len("file://"):], "a", encoding="utf-8") as handle:
            handle.write(text)
    elif hasattr(stream, "write"):
        stream.write(text)
        stream.flush()
    elif callable(stream):
        stream(text[:-len(end)] if end and text.endswith(end) else text)
    else:
        raise ValueError(f"Unsupported output stream: {stream!r}")


def _format_input(value, summarize: int) -> str:
    import numpy as np

    if isinstance(value, str):
        return value
    array = _as_array(value)
    if array is not None:
        return _format_array(array, summarize, 0)
    if isinstance(value, (list, tuple)):
        items = ", ".join(_format_nested(v, summarize) for v in value)
        return f"[{items}]" if isinstance(value, list) else f"({items}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_format_nested(v, summarize)}" for k, v in value.items()) + "}"
    if isinstance(value, (bool, int, float, np.generic)):
        return _format_array(np.asarray(value), summarize, 0)
    return str(value)


def _format_nested(value, summarize: int) -> str:
    return repr(value) if isinstance(value, str) else _format_input(value, summarize)


def _as_array(value):
    import numpy as np

    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    if hasattr(value, "numpy") and hasattr(value, "dtype") and not isinstance(value, np.generic):
        return np.asarray(value.numpy())
    return None


def _format_scalar(item) -> str:
    import numpy as np

    if isinstance(item, (bytes, np.bytes_)):
        return '"' + bytes(item).decode("utf-8", "backslashreplace") + '"'
    if isinstance(item, str):
        return f'"{item}"'
    if isinstance(item, (bool, np.bool_)):
        return "1" if item else "0"
    if isinstance(item, (np.floating, float)):
        kind = type(item) if isinstance(item, np.floating) else np.float64
        if kind in (np.float16, np.float32):  # TF prints a half as the float32 it widens to
            kind, item = np.float32, np.float32(item)
        digits = (6, 9) if kind is np.float32 else (15, 17)
        if not np.isfinite(item):
            return "nan" if np.isnan(item) else ("inf" if item > 0 else "-inf")
        text = "%.*g" % (digits[0], item)
        if kind(float(text)) != item:
            text = "%.*g" % (digits[1], item)
        return text
    return str(item)


def _format_array(array, summarize: int, depth: int) -> str:
    if array.ndim == 0:
        return _format_scalar(array[()])
    n = array.shape[0]
    if 0 <= summarize and n > 2 * summarize:
        indices = list(range(summarize)) + [None] + list(range(n - summarize, n))
    else:
        indices = list(range(n))
    parts = ["..." if i is None else _format_array(array[i], summarize, depth + 1) for i in indices]
    if array.ndim == 1:
        return "[" + " ".join(parts) + "]"
    # Rows on their own lines; blocks of higher rank apart by a blank line per extra dimension, as numpy.
    return "[" + ("\n" * (array.ndim - 1) + " " * (depth + 1)).join(parts) + "]"


class _Options:
    """A record of session options: any field can be set and read back; a field not set yet reads as a
    nested record (`config.gpu_options.allow_growth = True` works on a fresh one)."""

    def __init__(self, **fields) -> None:
        self.__dict__.update(fields)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        nested = _Options()
        self.__dict__[name] = nested
        return nested

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"


class ConfigProto(_Options):
    """``tf.ConfigProto``: TF 1's session options, recorded and read by nothing (a MindSpore process runs on
    the device the launcher gave it; memory and threads are ``ms.runtime``'s)."""


class GPUOptions(_Options):
    """``tf.GPUOptions``: recorded and read by nothing, as ``ConfigProto``."""


class GraphKeys:
    """``tf.compat.v1.GraphKeys``: TF 1's names of graph collections, plain strings (a program
    keys its own dicts with them: ``eval_results[GraphKeys.GLOBAL_STEP]``, an Estimator's
    ``"global_step"``). The collections themselves belong to TF 1's graphs, which a converted
    program does not have."""

    ACTIVATIONS = "activations"
    ASSET_FILEPATHS = "asset_filepaths"
    BIASES = "biases"
    CONCATENATED_VARIABLES = "concatenated_variables"
    COND_CONTEXT = "cond_context"
    EVAL_STEP = "eval_step"
    GLOBAL_STEP = "global_step"
    GLOBAL_VARIABLES = "variables"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    LOCAL_RESOURCES = "local_resources"
    LOCAL_VARIABLES = "local_variables"
    LOSSES = "losses"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    QUEUE_RUNNERS = "queue_runners"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    READY_OP = "ready_op"
    REGULARIZATION_LOSSES = "regularization_losses"
    RESOURCES = "resources"
    SAVEABLE_OBJECTS = "saveable_objects"
    SAVERS = "savers"
    SUMMARIES = "summaries"
    SUMMARY_OP = "summary_op"
    TABLE_INITIALIZERS = "table_initializer"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    TRAIN_OP = "train_op"
    UPDATE_OPS = "update_ops"
    VARIABLES = "variables"
    WEIGHTS = "weights"
    WHILE_CONTEXT = "while_context"
