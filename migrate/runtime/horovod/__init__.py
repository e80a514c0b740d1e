"""Horovod's TensorFlow and Keras API (`horovod.tensorflow`, `horovod.tensorflow.keras`, `horovod.keras`) on MindSpore collectives.

A Horovod program is already MindSpore's model of data parallelism: one process per
device, started by a launcher (`horovodrun -np N` there, `migrate run -n N` here), each
process training its own replica on its own data, with the collectives it names
(`allreduce`, `broadcast_variables`, a `DistributedGradientTape` or
`DistributedOptimizer` that averages gradients) crossing processes. `migrate convert`
maps `import horovod.tensorflow as hvd` here; the rank queries become MindSpore's own
(`mindspore.communication.get_rank`, ...).

- `init()` joins the job (MindSpore's `init()` under a launcher; started plainly the
  program is one process of a job of one) and makes every process its own replica for
  what tf.distribute would do implicitly (see `collectives.replicas`): a
  `migrate.runtime.keras` optimizer then sums nothing across processes unless wrapped in
  `DistributedOptimizer`, `fit` trains on this process's own batches, and a metric's
  result is this process's, as under Horovod.
- Reductions run over every process of the job (Horovod's global process set; other
  process sets are refused). `Average` is the sum times ``1 / size()``, after
  ``prescale_factor`` and with ``postscale_factor``, as Horovod computes it.
- The Keras API is the same module: its `DistributedOptimizer` wraps a
  `migrate.runtime.keras` optimizer for `compile` and its callbacks are `callbacks`
  (`hvd.load_model` is Keras's `load_model`: TFK184). (Horovod's Keras functions
  name their second parameter `name` where the TensorFlow ones have `average` or
  `use_locking`; neither changes the numbers here.)
- `Compression.fp16` is accepted and does not compress: the sum is exact in the
  gradients' own dtype (Horovod's would round to float16 on the wire).
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np

from .. import collectives
from ..tensors import from_numpy, to_numpy

__all__ = [
    "init", "shutdown", "is_initialized", "rank", "size", "local_rank", "local_size", "cross_rank", "cross_size",
    "is_homogeneous", "mpi_threads_supported", "mpi_enabled", "mpi_built", "gloo_enabled", "gloo_built",
    "nccl_built", "ddl_built", "ccl_built", "cuda_built", "rocm_built",
    "Average", "Sum", "Adasum", "Min", "Max", "Product", "Compression", "ReduceOp",
    "allreduce", "grouped_allreduce", "allgather", "broadcast", "broadcast_variables", "broadcast_object",
    "allgather_object", "allreduce_gradients", "DistributedOptimizer", "DistributedGradientTape",
    "broadcast_global_variables", "join", "barrier", "global_process_set", "callbacks", "run", "load_model",
]


def __getattr__(name):
    if name == "callbacks":  # Horovod's Keras callbacks (imported when first used: they load the Keras shim)
        import importlib

        return importlib.import_module(f"{__name__}.callbacks")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ReduceOp(str):
    """A reduction of Horovod's: `Average`, `Sum`, `Min`, `Max`, `Product` (`Adasum` refused)."""

    def __repr__(self) -> str:
        return f"hvd.{self}"


Average, Sum, Adasum, Min, Max, Product = (ReduceOp(n) for n in ("Average", "Sum", "Adasum", "Min", "Max", "Product"))


class _Compressor:
    def __init__(self, name: str):
        self.name = name

    def compress(self, tensor):
        return tensor, None

    def decompress(self, tensor, ctx):
        return tensor

    def __repr__(self) -> str:
        return f"hvd.Compression.{self.name}"


class Compression:
    """`hvd.Compression.none` / `.fp16`: both send the values as they are (see the module's notes)."""

    none = _Compressor("none")
    fp16 = _Compressor("fp16")


class _GlobalProcessSet:
    process_set_id = 0

    def size(self) -> int:
        return size()

    def rank(self) -> int:
        return rank()

    def included(self) -> bool:
        return True


global_process_set = _GlobalProcessSet()


# --- the job ---------------------------------------------------------------------------------

_initialized = False


def init(comm=None, process_sets=None) -> None:
    """Join the job's processes (MindSpore's `init()` under a launcher) as independent replicas."""
    global _initialized
    if comm is not None:
        raise ValueError("hvd.init(comm=...): an MPI communicator cannot be used here; the launcher "
                         "(`migrate run -n N`) forms the job")
    _check_process_set(process_sets, "init")
    collectives.set_independent(True)
    collectives.world()
    _initialized = True


def shutdown() -> None:
    """Nothing to release: MindSpore's communication lives as long as the process."""


def is_initialized() -> bool:
    return _initialized


def _group():
    if not _initialized:
        raise ValueError("Horovod has not been initialized; use hvd.init().")
    return collectives.world()


def rank() -> int:
    return _group().rank


def size() -> int:
    return _group().size


def local_rank() -> int:
    from mindspore.communication import get_local_rank

    _group()
    return int(get_local_rank()) if collectives.launched_by_launcher() else 0


def local_size() -> int:
    from mindspore.communication import get_local_rank_size

    _group()
    return int(get_local_rank_size()) if collectives.launched_by_launcher() else 1


def cross_rank() -> int:
    return rank() // max(local_size(), 1)


def cross_size() -> int:
    return size() // max(local_size(), 1)


def is_homogeneous() -> bool:
    return True


def mpi_threads_supported() -> bool:
    return False


def mpi_enabled() -> bool:
    return False


def mpi_built() -> bool:
    return False


def gloo_enabled() -> bool:
    return False


def gloo_built() -> bool:
    return False


def nccl_built() -> bool:
    return collectives.world().backend == "GPU"


def ddl_built() -> bool:
    return False


def ccl_built() -> bool:
    return False


def cuda_built() -> bool:
    return collectives.world().backend == "GPU"


def rocm_built() -> bool:
    return False


def _check_process_set(process_set, what: str) -> None:
    if process_set is None or process_set is global_process_set:
        return
    if isinstance(process_set, (list, tuple)) and not process_set:
        return
    raise NotImplementedError(f"hvd.{what}: only the global process set is supported (every process of the job)")


# --- collectives -----------------------------------------------------------------------------

def _resolve_op(op, average, what: str) -> ReduceOp:
    if op is not None and average is not None:
        raise ValueError(f"hvd.{what}: the op parameter supersedes average; pass only one of them")
    if op is None:
        op = Sum if average is False else Average
    if op == Adasum:
        raise NotImplementedError(f"hvd.{what}(op=hvd.Adasum): Adasum is not available on MindSpore's collectives; "
                                  "use hvd.Average")
    if op not in (Average, Sum, Min, Max, Product):
        raise ValueError(f"hvd.{what}: unknown op {op!r}")
    return ReduceOp(op)


def _as_tensor(value):
    """(MindSpore Tensor, how to give the result back) for a tensor, Parameter, array or number."""
    import mindspore as ms

    if isinstance(value, ms.Tensor):
        return value, None
    array = np.asarray(to_numpy(value))
    return ms.Tensor(array), value


def _back(result, original):
    if original is None:
        return result
    return from_numpy(to_numpy(result), original)


def _scale(tensor, factor: float):
    if factor == 1.0:
        return tensor
    if tensor.is_floating_point():
        return tensor * factor
    import mindspore as ms

    host = to_numpy(tensor)
    return ms.Tensor((host * factor).astype(host.dtype))  # Horovod scales integers and truncates


def _allreduce_tensor(group, tensor, op: ReduceOp, prescale: float, postscale: float):
    import mindspore as ms

    if group.size == 1:
        if op in (Average, Sum):
            return _scale(_scale(tensor, prescale), postscale)
        return tensor
    if op in (Min, Max, Product):
        host = to_numpy(tensor)
        stacked = to_numpy(group.all_gather(ms.Tensor(host.reshape((1,) + host.shape))))
        reduce = {Min: np.min, Max: np.max, Product: np.prod}[op]
        return ms.Tensor(reduce(stacked, axis=0).astype(host.dtype))
    factor = postscale / group.size if op == Average else postscale
    total = group.all_reduce_sum(_scale(tensor, prescale))
    return _scale(total, factor)


def allreduce(tensor, average=None, device_dense="", device_sparse="", compression=Compression.none, op=None,
              prescale_factor=1.0, postscale_factor=1.0, name=None, process_set=global_process_set,
              ignore_name_scope=False):
    """Every process's `tensor` reduced elementwise (`Average` unless `op` or `average=False` says otherwise).

    Every process must pass a tensor of the same shape and dtype. Returns a MindSpore
    Tensor (an array or number in, the same kind out).
    """
    _check_process_set(process_set, "allreduce")
    op = _resolve_op(op, average, "allreduce")
    group = _group()
    value, original = _as_tensor(tensor)
    _agree(group, "allreduce", op, [value])
    return _back(_allreduce_tensor(group, value, op, float(prescale_factor), float(postscale_factor)), original)


def grouped_allreduce(tensors, average=None, device_dense="", device_sparse="", compression=Compression.none,
                      op=None, prescale_factor=1.0, postscale_factor=1.0, process_set=global_process_set):
    """`allreduce` of each tensor of a list, as one fused collective (floats of one dtype share a buffer)."""
    _check_process_set(process_set, "grouped_allreduce")
    op = _resolve_op(op, average, "grouped_allreduce")
    group = _group()
    pairs = [_as_tensor(t) for t in tensors]
    values = [v for v, _ in pairs]
    if op in (Average, Sum) and values and all(v.is_floating_point() for v in values):
        from ..fusion import fused_all_reduce_sum

        _agree(group, "grouped_allreduce", op, values)
        scaled = [_scale(v, float(prescale_factor)) for v in values]
        totals = fused_all_reduce_sum(group, scaled, bucket_bytes=None) if group.size > 1 else scaled
        factor = float(postscale_factor) / (group.size if op == Average else 1)
        return [_back(_scale(t, factor), o) for t, (_, o) in zip(totals, pairs)]
    return [allreduce(t, op=op, prescale_factor=prescale_factor, postscale_factor=postscale_factor)
            for t in tensors]


def _agree(group, what: str, op, values) -> None:
    if group.size > 1:
        group.agree(f"hvd.{what}({op}) " + " ".join(f"{str(v.dtype).lower()}{list(v.shape)}" for v in values), what)


def allgather(tensor, name=None, ignore_name_scope=False, process_set=global_process_set):
    """Every process's `tensor` concatenated along the first axis, in rank order.

    The first dimension may differ between processes (Horovod allows it); the others
    must match.
    """
    _check_process_set(process_set, "allgather")
    from ..reductions import gather_values

    value, original = _as_tensor(tensor)
    if value.ndim == 0:
        value = value.reshape((1,))  # Horovod gathers a scalar as a vector of one element per rank
    return _back(gather_values(_group(), value, 0), original)


def broadcast(tensor, root_rank, name=None, ignore_name_scope=False, process_set=global_process_set):
    """`root_rank`'s `tensor` on every process (a new tensor)."""
    _check_process_set(process_set, "broadcast")
    group = _group()
    value, original = _as_tensor(tensor)
    _check_root(group, root_rank, "broadcast")
    if group.size == 1:
        return _back(value, original)
    group.agree(f"hvd.broadcast(root={root_rank}) {str(value.dtype).lower()}{list(value.shape)}", "broadcast")
    return _back(group.broadcast(value, int(root_rank)), original)


def _check_root(group, root_rank, what: str) -> None:
    if not 0 <= int(root_rank) < group.size:
        raise ValueError(f"hvd.{what}: root_rank {root_rank} is not a rank of this job of {group.size}")


def broadcast_variables(variables, root_rank, process_set=global_process_set, inplace=False):
    """Assign `root_rank`'s values to `variables` on every process (one broadcast per dtype)."""
    _check_process_set(process_set, "broadcast_variables")
    from ..parameters import broadcast_parameters

    group = _group()
    _check_root(group, root_rank, "broadcast_variables")
    broadcast_parameters(group, [v for v in _variables_of(variables)], int(root_rank))


def _variables_of(variables):
    if callable(variables) and not hasattr(variables, "__iter__"):
        variables = variables()
    return list(variables)


def broadcast_global_variables(root_rank):
    raise NotImplementedError(
        "hvd.broadcast_global_variables is TF1's (a graph's global variables): pass the variables to "
        "hvd.broadcast_variables(model.variables, root_rank) instead")


def _object_bytes(group, payload: bytes, root=None) -> list[bytes]:
    """Every rank's bytes (root's only when `root` is given), through two collectives."""
    import mindspore as ms

    lengths = group.agree("hvd.object", "object", extras=[len(payload)])[:, 0]
    longest = int(lengths.max())
    buffer = np.zeros(longest, np.uint8)
    buffer[:len(payload)] = np.frombuffer(payload, np.uint8)
    if root is not None:
        received = to_numpy(group.broadcast(ms.Tensor(buffer), root))
        return [received[:int(lengths[root])].tobytes()]
    rows = to_numpy(group.all_gather(ms.Tensor(buffer.reshape(1, -1))))
    return [rows[r, :int(lengths[r])].tobytes() for r in range(group.size)]


def broadcast_object(obj, root_rank=0, session=None, name=None, process_set=global_process_set):
    """`root_rank`'s picklable object on every process."""
    _check_process_set(process_set, "broadcast_object")
    group = _group()
    _check_root(group, root_rank, "broadcast_object")
    if group.size == 1:
        return obj
    payload = pickle.dumps(obj) if group.rank == root_rank else b""
    return pickle.loads(_object_bytes(group, payload, int(root_rank))[0])


def allgather_object(obj, session=None, name=None, process_set=global_process_set):
    """Every process's picklable object, in a list in rank order."""
    _check_process_set(process_set, "allgather_object")
    group = _group()
    if group.size == 1:
        return [obj]
    return [pickle.loads(b) for b in _object_bytes(group, pickle.dumps(obj))]


def barrier(process_set=global_process_set) -> None:
    _check_process_set(process_set, "barrier")
    _group().barrier()


def join(device=-1) -> int:
    """Wait for every process; returns the last rank (every process joins here at once)."""
    group = _group()
    group.barrier()
    return group.size - 1


# --- gradients -------------------------------------------------------------------------------

def allreduce_gradients(grads, compression=Compression.none, op=Average, gradient_predivide_factor=1.0,
                        sparse_as_dense=False, device_dense="", device_sparse="", num_groups=0, groups=None,
                        process_set=global_process_set, scale_local_gradients=True):
    """What `hvd.DistributedGradientTape(tape).gradient(...)` returns: the gradients reduced across processes.

    `Average` (the default) divides by ``size()`` after a ``1 / gradient_predivide_factor``
    prescale and a ``gradient_predivide_factor`` postscale, as Horovod splits it; `Sum`
    adds. All gradients go in fused buckets (`spmd.aggregate_gradients`); `None` stays
    None. Keeps the container: a list in, a list out.
    """
    _check_process_set(process_set, "DistributedGradientTape")
    op = _resolve_op(op, None, "DistributedGradientTape")
    if op not in (Average, Sum):
        raise ValueError("hvd.DistributedGradientTape: op must be hvd.Average or hvd.Sum")
    group = _group()
    if gradient_predivide_factor != 1.0 and op != Average:
        raise ValueError("gradient_predivide_factor not supported with op != Average")
    as_list = isinstance(grads, list)
    grads = tuple(grads)
    if group.size > 1:
        from .. import spmd

        predivide = float(gradient_predivide_factor)
        scaled = [None if g is None else _scale(g, 1.0 / predivide) for g in grads]
        summed = spmd.aggregate_gradients(scaled, op="sum")
        factor = predivide / group.size if op == Average else 1.0
        grads = tuple(None if g is None else _scale(g, factor) for g in summed)
    return list(grads) if as_list else grads


def DistributedGradientTape(gradtape, *args, **kwargs):  # noqa: N802 - Horovod's name
    raise NotImplementedError(
        "hvd.DistributedGradientTape wraps a tf.GradientTape, which MindSpore has no counterpart of: "
        "`migrate convert` rewrites `tape = hvd.DistributedGradientTape(tape)` next to the tape it wraps "
        "(the gradients then go through hvd.allreduce_gradients); convert other uses by hand")


class _Distributed:
    """Mixed into a copy of the optimizer's class: gradients are reduced across processes where
    Horovod's Keras optimizer reduces them, in `minimize` and in `fit`'s step (its gradient
    computation), not in a direct `apply_gradients` (as Horovod's, which reduces in
    `_compute_gradients`: a custom loop averages with `DistributedGradientTape`).

    The wrapped optimizer and the wrapper share one state (`__dict__`): slots, iterations
    and learning rate are the same objects, as Horovod's wrapper made from the optimizer's
    config starts from the same settings.
    """

    @property
    def _config_class(self):
        """The optimizer's own class, which a saved model names (`load_model` wraps it again)."""
        return type(self).__mro__[2]


    _hvd_settings: tuple

    def hvd_reduce_gradients(self, grads):
        """The gradients averaged (or summed) across processes, as Horovod's optimizer computes them."""
        op, predivide, _, _ = self._hvd_settings
        return allreduce_gradients(list(grads), op=op, gradient_predivide_factor=predivide)

    def minimize(self, loss, var_list, tape=None):
        import mindspore as ms

        from ..keras.autodiff import reset_on_error

        if callable(var_list):
            var_list = var_list()
        var_list = list(var_list)
        with reset_on_error():
            grads = ms.grad(loss, None, var_list)()
        return self.apply_gradients(zip(self.hvd_reduce_gradients(grads), var_list))

    def apply(self, grads, trainable_variables=None, aggregate=True):
        _, _, passes, average_passes = self._hvd_settings
        grads = list(grads)
        if passes > 1:
            # Horovod's local aggregation: N calls' gradients summed, applied on the N-th; every
            # call counts as a step of `iterations`
            pending = self.__dict__.get("_hvd_pending")
            pending = grads if pending is None else [None if a is None else a + b for a, b in zip(pending, grads)]
            count = self.__dict__.get("_hvd_count", 0) + 1
            if count < passes:
                self.__dict__["_hvd_pending"], self.__dict__["_hvd_count"] = pending, count
                from mindspore import ops

                from ..keras._tensors import as_tensor

                ops.assign_add(self._iterations, as_tensor(np.array(1, dtype=np.int64), "int64"))
                return
            grads = [None if g is None else g / float(passes) for g in pending] if average_passes else pending
            self.__dict__["_hvd_pending"], self.__dict__["_hvd_count"] = None, 0
        super().apply(grads, trainable_variables, aggregate=False)


def DistributedOptimizer(optimizer, name=None, use_locking=False, device_dense="", device_sparse="",  # noqa: N802
                         compression=Compression.none, sparse_as_dense=False, backward_passes_per_step=1,
                         op=Average, gradient_predivide_factor=1.0, average_aggregated_gradients=False,
                         num_groups=0, groups=None, process_set=global_process_set, scale_local_gradients=True):
    """Wrap a `migrate.runtime.keras` optimizer: `fit` and `minimize` reduce the gradients across processes.

    `backward_passes_per_step=N` sums N calls' gradients locally and applies on the N-th
    (divided by N with `average_aggregated_gradients=True`), as Horovod's local
    aggregation does.
    """
    _check_process_set(process_set, "DistributedOptimizer")
    op = _resolve_op(op, None, "DistributedOptimizer")
    if op not in (Average, Sum):
        raise ValueError("hvd.DistributedOptimizer: op must be hvd.Average or hvd.Sum")
    if gradient_predivide_factor != 1.0 and op != Average:
        raise ValueError("gradient_predivide_factor not supported with op != Average")
    if int(backward_passes_per_step) < 1:
        raise ValueError("backward_passes_per_step must be >= 1")
    if compression is Compression.fp16:
        warnings.warn("hvd.Compression.fp16: gradients are all-reduced in their own dtype (no float16 rounding)",
                      stacklevel=2)
    if not callable(getattr(optimizer, "apply", None)):
        raise TypeError(f"hvd.DistributedOptimizer: {optimizer!r} is not a Keras optimizer of migrate.runtime.keras")
    base = type(optimizer)
    cls = type(name or f"Distributed{base.__name__}", (_Distributed, base), {
        "_hvd_settings": (op, float(gradient_predivide_factor), int(backward_passes_per_step),
                          bool(average_aggregated_gradients))})
    wrapped = object.__new__(cls)
    wrapped.__dict__ = optimizer.__dict__  # one state: the optimizer's slots, steps and learning rate
    return wrapped


def load_model(filepath, custom_optimizers=None, custom_objects=None, compression=Compression.none):
    """Horovod's `load_model`: Keras's (`migrate.runtime.keras.models.load_model`), its optimizer
    wrapped in `DistributedOptimizer` again, its saved state kept."""
    from ..keras.models import load_model as keras_load_model

    objects = dict(custom_objects or {})
    for optimizer_class in custom_optimizers or []:
        objects.setdefault(optimizer_class.__name__, optimizer_class)
    model = keras_load_model(filepath, custom_objects=objects)
    if model.optimizer is not None:
        model.optimizer = DistributedOptimizer(model.optimizer, compression=compression)
    return model


def run(func, args=(), kwargs=None, np=1, **launcher_options):
    """`horovod.run(func, np=N)`: here the job's processes exist already (`migrate run -n N`).

    Horovod's `run` starts N processes that each call ``func(*args, **kwargs)`` and returns
    their results in rank order. Under `migrate run -n N` every process of the job reaches
    this call: each runs ``func`` once and all get the list of every rank's result
    (exchanged as `allgather_object` does). A job of another size than `np` raises, saying
    how to start it; the launcher's options (`hosts`, `use_gloo`, ...) are the launcher's.
    """
    init()
    group = _group()
    if int(np) != group.size:
        raise RuntimeError(f"horovod.run(np={np}) runs {np} processes, and this job has {group.size}: start the "
                           f"program with `migrate run -n {np} <program>`")
    result = func(*args, **(kwargs or {}))
    return allgather_object(result)
