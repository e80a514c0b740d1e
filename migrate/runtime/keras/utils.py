"""`tf.keras.utils`: seeding, one-hot labels, downloads to Keras's cache, and small helpers."""

from __future__ import annotations

import hashlib
import itertools
import os
import random
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zipfile

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock between processes
    fcntl = None

import numpy as np

from . import initializers
from .directory_datasets import (  # noqa: F401
    audio_dataset_from_directory, image_dataset_from_directory, text_dataset_from_directory,
    timeseries_dataset_from_array)
from .image_utils import array_to_img, img_to_array, load_img, save_img  # noqa: F401


def set_random_seed(seed: int) -> None:
    """Seed Python, numpy, MindSpore and the generator unseeded Keras initializers draw from.

    TF's own random streams cannot be reproduced: equal seeds give equal runs here, not
    TF's numbers.
    """
    import mindspore as ms

    random.seed(seed)
    np.random.seed(seed)
    ms.set_seed(seed)
    initializers.set_global_seed(seed)


def to_categorical(y, num_classes=None, dtype="float32"):
    y = np.asarray(y, dtype="int64")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.reshape(-1)
    num_classes = int(num_classes or y.max() + 1)
    out = np.zeros((y.shape[0], num_classes), dtype=dtype)
    out[np.arange(y.shape[0]), y] = 1
    return out.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    x = np.asarray(x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


# --- the registry of custom objects (Keras's serialization names) -----------------------

_CUSTOM_OBJECTS: dict[str, object] = {}
_NAMES: dict[object, str] = {}


class PyDataset:
    """Keras 3's ``keras.utils.PyDataset`` (``keras.utils.Sequence`` in Keras 2): batches by index.

    A subclass gives ``__getitem__(index)`` (a batch: ``x``, ``(x, y)`` or ``(x, y, sample_weight)``)
    and ``__len__`` (or a ``num_batches`` property: ``None`` for an endless dataset). ``fit`` reads
    the batches by index each epoch, in an order ``random.shuffle`` mixes when ``shuffle=True`` (its
    default), as Keras does, and calls ``on_epoch_begin``/``on_epoch_end`` around each epoch. The
    worker arguments are kept: batches are read in the training process, one after the other."""

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self.workers, self.use_multiprocessing, self.max_queue_size = workers, use_multiprocessing, max_queue_size

    def __getitem__(self, index):
        raise NotImplementedError

    @property
    def num_batches(self):
        """How many batches (``len(self)``); ``None``: endless."""
        if hasattr(self, "__len__"):
            return len(self)
        raise NotImplementedError("You need to implement the `num_batches` property:\n\n"
                                  "@property\ndef num_batches(self):\n  return ...")

    def __iter__(self):
        try:
            count = self.num_batches
        except NotImplementedError:
            count = None
        indices = range(count) if count is not None else itertools.count()
        for index in indices:
            yield self[index]

    def on_epoch_begin(self):
        """Called at the beginning of every epoch."""

    def on_epoch_end(self):
        """Called at the end of every epoch."""


Sequence = PyDataset  # (Keras 2's name; `tf.keras.utils.Sequence` is PyDataset in TF 2.21)


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """``keras.utils.pad_sequences``: the sequences as one NumPy array ``(len(sequences), maxlen,
    *sample_shape)``, each cut to ``maxlen`` (from the front with ``truncating="pre"``) and
    padded with ``value`` (in front with ``padding="pre"``), Keras's algorithm and errors."""
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    lengths, sample_shape, first = [], (), True
    for x in sequences:
        try:
            lengths.append(len(x))
            if first and len(x):
                sample_shape, first = np.asarray(x).shape[1:], False
        except TypeError as error:
            raise ValueError(f"`sequences` must be a list of iterables. Found non-iterable: {x}") from error
    if maxlen is None:
        maxlen = np.max(lengths)
    text_dtype = np.issubdtype(dtype, np.str_) or np.issubdtype(dtype, np.bytes_)
    if isinstance(value, str) and dtype is not object and not text_dtype:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: {type(value)}\nYou should set "
                         "`dtype=object` for variable length strings.")
    out = np.full((len(sequences), maxlen) + sample_shape, value, dtype=dtype)
    for index, sequence in enumerate(sequences):
        if not len(sequence):
            continue
        if truncating == "pre":
            kept = sequence[-maxlen:]
        elif truncating == "post":
            kept = sequence[:maxlen]
        else:
            raise ValueError(f'Truncating type "{truncating}" not understood')
        kept = np.asarray(kept, dtype=dtype)
        if kept.shape[1:] != sample_shape:
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {index} is different from "
                             f"expected shape {sample_shape}")
        if padding == "post":
            out[index, :len(kept)] = kept
        elif padding == "pre":
            out[index, -len(kept):] = kept
        else:
            raise ValueError(f'Padding type "{padding}" not understood')
    return out


def register_keras_serializable(package: str = "Custom", name: str | None = None):
    """The decorator Keras puts on custom layers, losses and functions: ``obj`` is
    registered as ``"package>name"`` (its own name by default) and returned unchanged.
    Registering a name again replaces the earlier object, as Keras 3 does."""

    def decorator(obj):
        registered = f"{package}>{name or obj.__name__}"
        _CUSTOM_OBJECTS[registered] = obj
        _NAMES[obj] = registered
        return obj

    return decorator


def get_registered_name(obj) -> str:
    """``"package>name"`` of a registered object, else its own name."""
    return _NAMES.get(obj, getattr(obj, "__name__", type(obj).__name__))


def get_registered_object(name: str, custom_objects=None, module_objects=None):
    """The object registered, or passed, under ``name`` (the registry first, then
    ``custom_objects``, then ``module_objects``, as Keras looks); None when there is none."""
    for table in (_CUSTOM_OBJECTS, custom_objects, module_objects):
        if table and name in table:
            return table[name]
    return None


# --- get_file: Keras's download cache, one download per machine -------------------------------------

def keras_home() -> str:
    """Keras's home (its ``keras_home()``): ``$KERAS_HOME``, else ``~/.keras`` (``/tmp/.keras`` when the
    home directory cannot be written); its ``datasets`` folder is the download cache."""
    if "KERAS_HOME" in os.environ:
        return os.environ["KERAS_HOME"]
    base = os.path.expanduser("~")
    return os.path.join(base if os.access(base, os.W_OK) else "/tmp", ".keras")


def _hasher(algorithm: str, file_hash):
    if algorithm == "sha256" or (algorithm == "auto" and file_hash is not None and len(file_hash) == 64):
        return hashlib.sha256()
    return hashlib.md5()  # Keras's legacy default


def file_digest(path: str, hasher) -> str:
    """The hex digest of the file at `path` by `hasher` (a `hashlib` object), read in blocks."""
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def _valid(path: str, file_hash, algorithm: str) -> bool:
    return file_digest(path, _hasher(algorithm, file_hash)) == str(file_hash)


def _inside(base: str, relative: str) -> bool:
    path = os.path.realpath(os.path.join(base, relative))
    try:
        return os.path.commonpath([path, base]) == base
    except ValueError:
        return False


def _safe_members(archive, base: str):
    """Keras's filter: members (and link targets) that stay inside the extraction directory."""
    base = os.path.realpath(base)
    for member in archive.infolist() if isinstance(archive, zipfile.ZipFile) else archive:
        name = member.filename if isinstance(archive, zipfile.ZipFile) else member.name
        ok = _inside(base, name)
        if ok and not isinstance(archive, zipfile.ZipFile) and (member.issym() or member.islnk()):
            target = member.linkname if member.islnk() else os.path.join(os.path.dirname(name), member.linkname)
            ok = _inside(base, target)
        if ok:
            yield member
        else:
            warnings.warn(f"Skipping invalid path during archive extraction: '{name}'.", stacklevel=2)


def _extract(path: str, into: str, archive_format) -> bool:
    """Keras's ``extract_archive``: the first of ``archive_format``'s kinds the file is, extracted."""
    if archive_format is None:
        return False
    kinds = ["tar", "zip"] if archive_format == "auto" else (
        [archive_format] if isinstance(archive_format, str) else list(archive_format))
    for kind in kinds:
        if kind not in ("tar", "zip"):
            raise NotImplementedError(kind)
        if not (tarfile.is_tarfile(path) if kind == "tar" else zipfile.is_zipfile(path)):
            continue
        with (tarfile.open(path) if kind == "tar" else zipfile.ZipFile(path)) as archive:
            try:
                extra = {"filter": "data"} if kind == "tar" and hasattr(tarfile, "data_filter") else {}
                archive.extractall(into, members=_safe_members(archive, into), **extra)
            except (tarfile.TarError, RuntimeError, KeyboardInterrupt):
                if os.path.isfile(into):
                    os.remove(into)
                elif os.path.exists(into):
                    shutil.rmtree(into)
                raise
        return True
    return False


def _download(origin: str, target: str) -> None:
    print(f"Downloading data from {origin}", flush=True)
    partial = f"{target}.{os.getpid()}.partial"
    try:
        try:
            urllib.request.urlretrieve(origin, partial)
        except urllib.error.HTTPError as e:
            raise Exception(f"URL fetch failure on {origin}: {e.code} -- {e.msg}") from e  # Keras's text
        except urllib.error.URLError as e:
            raise Exception(f"URL fetch failure on {origin}: {e.errno} -- {e.reason}") from e
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None, cache_subdir="datasets",
             hash_algorithm="auto", extract=False, archive_format="auto", cache_dir=None, force_download=False):
    """``keras.utils.get_file``: Keras 3's cache rules, paths and messages, and one download per machine.

    The file lands where Keras puts it (``~/.keras/datasets/<fname>``, ``$KERAS_HOME``,
    ``cache_dir``/``cache_subdir``; an archive extracted beside it under Keras's names), a cached
    file is checked against ``file_hash`` (sha256, or md5 for 32 hex digits) and downloaded again
    when it differs, and a downloaded one that differs is an error. Processes that ask for the
    same file at once (``migrate run -n N``) take turns on a lock file beside it, so one downloads
    and the others find it in the cache; the download goes to a temporary name first, so a
    killed download never leaves a partial file under the cached name.
    """
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    if cache_dir is None:
        cache_dir = keras_home()
        try:  # Keras makes its home when it is imported
            os.makedirs(cache_dir, exist_ok=True)
        except OSError:
            pass
    base = os.path.expanduser(cache_dir)
    if not os.access(base, os.W_OK):
        base = os.path.join("/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir(), ".keras")
    datadir = os.path.join(base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    provided = fname
    fname = os.fspath(fname) if isinstance(fname, os.PathLike) else fname
    if not fname:
        fname = os.path.basename(urllib.parse.urlsplit(origin).path)
        if not fname:
            raise ValueError(f"Can't parse the file name from the origin provided: '{origin}'."
                             "Please specify the `fname` argument.")
    elif os.sep in fname:
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify the file's parent "
                         f"directory, use the `cache_dir` argument. Received: fname={fname}")
    if extract or untar:
        if provided and "." in fname:
            target = os.path.join(datadir, fname)
            extraction = os.path.join(datadir, f"{fname[:fname.find('.')]}_extracted")
        else:
            extraction = os.path.join(datadir, fname)
            target = os.path.join(datadir, f"{fname}_archive")
    else:
        target = os.path.join(datadir, fname)

    with open(f"{target}.lock", "a") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        download = force_download or not os.path.exists(target)
        if not download and file_hash is not None and not _valid(target, file_hash, hash_algorithm):
            print(f"A local file was found, but it seems to be incomplete or outdated because the {hash_algorithm} "
                  f"file hash does not match the original value of {file_hash} so we will re-download the data.")
            download = True
        if download:
            _download(origin, target)
            if file_hash is not None and not _valid(target, file_hash, hash_algorithm):
                raise ValueError(f"Incomplete or corrupted file detected. The {hash_algorithm} file hash does not "
                                 f"match the provided value of {file_hash}.")
        if not (extract or untar):
            return target
        if not _extract(target, extraction, "tar" if untar else archive_format):
            warnings.warn("Could not extract archive.", stacklevel=2)
        return extraction


from .progbar import Progbar  # noqa: E402 - keras.utils.Progbar


# --- plot_model: the model's graph as Graphviz draws it ---------------------------------------------

_GRAPHVIZ_MISSING = ("You must install graphviz (see instructions at https://graphviz.gitlab.io/download/) for "
                     "`plot_model` to work.")


def _dot_text(text) -> str:
    return str(text).replace("\\", "\\\\").replace('"', '\\"')


def _shape_text(layer, which: str) -> str:
    try:
        shape = getattr(layer, which)
    except (AttributeError, ValueError):
        return "?"
    return str(shape)


def model_to_dot_source(model, show_shapes=False, show_dtype=False, show_layer_names=False, rankdir="TB",
                        dpi=200, show_layer_activations=False, show_trainable=False) -> str:
    """The model as Graphviz's DOT source: a node per layer (class, and as asked its name, shapes,
    dtype, activation, trainability), an edge per tensor a layer passes on."""
    from .models.sequential import Sequential

    def label(layer) -> str:
        title = f"{layer.name} ({type(layer).__name__})" if show_layer_names else type(layer).__name__
        rows = [title]
        if show_layer_activations and getattr(layer, "activation", None) is not None:
            from . import activations

            rows.append(f"Activation: {activations.serialize(layer.activation)}")
        if show_dtype:
            rows.append(f"dtype: {layer.dtype}")
        if show_shapes:
            rows.append(f"Input shape: {_shape_text(layer, 'input_shape')}")
            rows.append(f"Output shape: {_shape_text(layer, 'output_shape')}")
        if show_trainable:
            rows.append(f"Trainable: {'Y' if layer.trainable else 'N'}")
        return "\\n".join(_dot_text(row) for row in rows)

    if isinstance(model, Sequential):
        layers = ([model._input_layer] if model._input_layer is not None else []) + list(model.layers)
        edges = list(zip(layers, layers[1:]))
    elif getattr(model, "_graph_inputs", None) is not None:
        layers = list(model._functional_layers)
        edges = []
        for node in model._nodes:
            for tensor in node.inputs:
                edge = (tensor.node.layer, node.layer)
                if edge not in edges:
                    edges.append(edge)
    else:  # a subclassed model: its structure is code, one node (as Keras draws it)
        layers, edges = [model], []
    ids = {id(layer): f"n{index}" for index, layer in enumerate(layers)}
    lines = ["digraph G {", f"  rankdir={rankdir};", "  concentrate=true;", f"  dpi={int(dpi)};",
             "  node [shape=record];"]
    lines += [f'  {ids[id(layer)]} [label="{label(layer)}"];' for layer in layers]
    lines += [f"  {ids[id(a)]} -> {ids[id(b)]};" for a, b in edges if id(a) in ids and id(b) in ids]
    lines.append("}")
    return "\n".join(lines) + "\n"


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False, show_layer_names=False,
               rankdir="TB", expand_nested=False, dpi=200, show_layer_activations=False, show_trainable=False,
               **kwargs):
    """Keras's `plot_model`: the model's graph drawn by Graphviz's `dot` into `to_file` (its suffix is
    the format: png, svg, pdf, ...; `.dot` writes the DOT source, with no Graphviz needed). Written
    by the first process only. Without Graphviz: Keras's message (printed in a notebook, an
    ImportError elsewhere). In a notebook, returns the image to show, as Keras does."""
    import subprocess
    import sys

    from .. import collectives

    source = model_to_dot_source(model, show_shapes, show_dtype, show_layer_names, rankdir, dpi,
                                 show_layer_activations, show_trainable)
    to_file = os.fspath(to_file)
    extension = os.path.splitext(to_file)[1][1:] or "png"
    dot = shutil.which("dot")
    if extension != "dot" and dot is None:
        if "IPython.core.magics.namespace" in sys.modules:
            print(_GRAPHVIZ_MISSING)
            return None
        raise ImportError(_GRAPHVIZ_MISSING)
    group = collectives.replicas()
    if group.rank == 0:
        directory = os.path.dirname(os.path.abspath(to_file))
        handle, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=f".{extension}", dir=directory)
        os.close(handle)
        try:
            if extension == "dot":
                with open(temporary, "w", encoding="utf-8") as stream:
                    stream.write(source)
            else:
                subprocess.run([dot, f"-T{extension}", "-o", temporary], input=source, text=True, check=True,
                               capture_output=True, timeout=120)
            os.replace(temporary, to_file)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
    group.barrier()
    if extension not in ("pdf", "dot"):
        try:
            from IPython import display
        except ImportError:
            return None
        return display.Image(filename=to_file)
    return None
