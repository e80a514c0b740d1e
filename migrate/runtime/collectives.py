"""The one seam between the runtime and MindSpore's communication layer.

Everything that talks to other processes goes through a `Group`: `all_reduce_sum`,
`all_gather` (concatenate along axis 0, rank order), `broadcast`, and the two
entry points that keep ranks in step:

* `agree(description)` checks, with one small all-gather, that every rank is
  about to run the same collective on the same dtypes and shapes; a mismatch
  raises `RankMismatchError` on every rank, naming each rank's call.
* `checked_sum(description, what, plan, run)` sums buffers across ranks. The first
  times a call follows a given previous call it agrees first, like `agree`. Once
  the same call has followed the same predecessor twice (a training loop), every
  rank *predicts* it and goes straight to the sum: a rank whose call differs from
  the prediction contributes NaN buffers of the predicted sizes instead of its
  data, every rank sees the NaN in the result, and all of them fall back to the
  agreement round, which raises the mismatch error. So the check costs nothing in
  a steady loop and a mismatch still cannot desynchronise the ranks. The decision
  to predict depends only on the history every rank agreed on, so all ranks
  always take the same path. (A genuine NaN in the first element of the first
  buffer only costs a repeated round.) Looking at that element is the one host
  synchronisation a checked sum adds; only float buffers (which can hold NaN) are
  predicted, other sums always agree first.

Nothing here hand-builds a transport; the collectives are MindSpore's.

Under `migrate run`, a worker also writes its Python stacks to a file when the
launcher asks (`_enable_stack_dumps`), so that the launcher's report can tell a
rank waiting in one of these collectives from a rank that hung elsewhere.

Backends differ by configuration only: `WIRE_DTYPES` says which dtypes each
backend's kernels accept natively; other dtypes are cast to a carrier dtype on the
way in and back on the way out (or, for float64 sums, gathered and summed on the
host so that no precision is lost).

A collective that fails leaves the ranks out of step: every later collective
would pair with the wrong partner. So the first failure marks the group broken
and every later call raises `CollectiveError` at once instead of hanging.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass

import numpy as np

# Dtypes each backend's kernels carry exactly. Measured on MindSpore 2.10 CPU (2 processes
# under msrun): ops.AllReduce takes only float32/float16; AllGather and Broadcast accept
# int64/float64 but pass them through 32 bits (values change), so those travel as int32 bit
# patterns instead. GPU (NCCL) and Ascend (HCCL) carry the usual numeric types natively.
_ALL_NUMERIC = frozenset({"float16", "float32", "bfloat16", "int8", "int32", "int64", "uint8", "float64"})
WIRE_DTYPES = {
    "CPU": {
        "all_reduce_op": frozenset({"float32", "float16"}),     # ops.AllReduce
        "all_reduce_mint": frozenset({"int32", "bfloat16"}),    # mint.distributed.all_reduce
        "all_gather": frozenset({"float32", "int32"}),
        "broadcast": frozenset({"float32", "int32", "float16"}),
    },
    "GPU": {
        "all_reduce_op": _ALL_NUMERIC,
        "all_reduce_mint": frozenset(),
        "all_gather": _ALL_NUMERIC,
        "broadcast": _ALL_NUMERIC,
    },
    "Ascend": {
        "all_reduce_op": frozenset({"float32", "float16", "bfloat16", "int8", "int32"}),
        "all_reduce_mint": frozenset(),
        "all_gather": frozenset({"float32", "float16", "bfloat16", "int8", "int32", "uint8"}),
        "broadcast": frozenset({"float32", "float16", "bfloat16", "int8", "int32", "uint8"}),
    },
}

_DESCRIPTION_BYTES = 2048
_INLINE_EXTRAS = 7


class CollectiveError(RuntimeError):
    """A collective failed; the ranks can no longer be kept in step."""


class RankMismatchError(ValueError):
    """Ranks called a collective with different structures, dtypes or shapes."""


def launched_by_launcher() -> bool:
    """True when a launcher MindSpore's ``init()`` joins started this process.

    msrun (`migrate run`) and any dynamic cluster set MS_ROLE, MS_SCHED_HOST and MS_WORKER_NUM;
    mpirun sets OMPI_COMM_WORLD_SIZE; an Ascend rank-table launch sets RANK_TABLE_FILE (or the
    older MINDSPORE_HCCL_CONFIG_PATH).
    """
    env = os.environ
    dynamic_cluster = bool(env.get("MS_ROLE")) and bool(env.get("MS_SCHED_HOST")) and bool(env.get("MS_WORKER_NUM"))
    return dynamic_cluster or any(env.get(name) for name in ("OMPI_COMM_WORLD_SIZE", "RANK_TABLE_FILE",
                                                             "MINDSPORE_HCCL_CONFIG_PATH"))


def _dtype_name(tensor) -> str:
    return str(tensor.dtype).lower()


def _host(tensor) -> np.ndarray:
    if isinstance(tensor, np.ndarray):
        return tensor
    from .tensors import contiguous, to_numpy

    return contiguous(to_numpy(tensor))


def _as_words(array: np.ndarray) -> np.ndarray:
    from .tensors import contiguous

    """The bytes of `array` as int32 words (zero-padded), a carrier every backend moves exactly."""
    raw = contiguous(array).tobytes()
    raw += b"\0" * (-len(raw) % 4)
    return np.frombuffer(raw, dtype=np.int32).copy() if raw else np.zeros(1, np.int32)


def _from_words(words: np.ndarray, dtype, shape) -> np.ndarray:
    from .tensors import contiguous

    count = int(np.prod(shape, dtype=np.int64))
    raw = contiguous(words).tobytes()[: count * np.dtype(dtype).itemsize]
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def digest_of(text: str) -> int:
    """A 64-bit digest of a call description (signed, so that it fits an int64)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little", signed=True)


@dataclass(frozen=True)
class Signature:
    """What one rank is about to do: a digest of its call, and for checked sums the wire plan."""

    digest: int
    plan: tuple | None = None   # ((dtype, element count), ...) of the buffers a checked sum reduces


def _is_poisoned(total, host: bool) -> bool:
    """True when the first element of a summed buffer is NaN (some rank contributed poison)."""
    if isinstance(total, np.ndarray):
        first = total.reshape(-1)[:1]
    elif host and str(total.dtype).lower() != "bfloat16":
        first = total.asnumpy().reshape(-1)[:1]  # a view of the result on CPU: no copy
    else:
        first = total.reshape(-1)[:1].float().asnumpy()  # one element to the host
    return bool(first.size) and bool(np.isnan(first[0]))


class Group:
    """Collectives over a set of processes, one replica each."""

    rank: int = 0
    size: int = 1
    backend: str = "CPU"

    @property
    def host_packing(self) -> bool:
        """Whether buffers are packed in host memory (CPU: host memory is device memory)."""
        return self.backend == "CPU"

    def all_reduce_sum(self, tensor):
        return tensor

    def all_gather(self, tensor):
        return tensor

    def broadcast(self, tensor, root: int = 0):
        return tensor

    def agree(self, description: str, what: str = "collective", extras=()) -> np.ndarray:
        """Raise RankMismatchError on every rank unless all ranks pass the same description.

        Returns the `extras` ints of every rank as a (size, len(extras)) array.
        """
        return np.array([list(extras)], dtype=np.int64).reshape(1, len(extras))

    def checked_sum(self, description: str, what: str, plan: tuple, run) -> list:
        """Run the sum `run()` -> (sums, probe) whose wire buffers are `plan` ((dtype, count), ...),
        on ranks that all make the same call; returns the sums."""
        return run()[0]

    def sum_buffers(self, buffers: list) -> list:
        """Sum buffers over ranks without a check (the caller has agreed already)."""
        return [self.all_reduce_sum(buffer) for buffer in buffers]

    def native_sum(self, dtype: str) -> bool:
        return True

    def barrier(self) -> None:
        pass


class LocalGroup(Group):
    """One replica: every collective is the identity (TF's default and OneDevice strategies)."""


_STABLE = 2          # a successor agreed this many times in a row is predicted
_MAX_HISTORY = 4096  # distinct predecessors remembered (a program with more is not a loop)


class WorldGroup(Group):
    """All processes of the job, through MindSpore's world communication group."""

    def __init__(self, rank: int, size: int, backend: str):
        self.rank, self.size, self.backend = rank, size, backend
        self._wire = WIRE_DTYPES.get(backend, WIRE_DTYPES["CPU"])
        self._broken: str | None = None
        self._all_reduce = self._all_gather = None
        # Agreed history, identical on every rank: the last agreed call, and for each call
        # the call that followed it (with how many times in a row).
        self._last: int | None = None
        self._next: dict = {}
        self.agreement_rounds = 0  # how many agreement all-gathers ran (for tests and benchmarks)

    # --- failure handling ------------------------------------------------------------

    @contextlib.contextmanager
    def _guarded(self, name: str):
        if self._broken:
            raise CollectiveError(
                f"rank {self.rank}: cannot run {name}: an earlier collective failed ({self._broken}); "
                "the ranks are out of step and the job has to stop")
        try:
            yield
        except (RankMismatchError, CollectiveError):
            raise
        except Exception as exc:  # any MindSpore failure inside a collective is fatal for the job
            raise self._failed(name, exc) from exc

    def _failed(self, name: str, exc: Exception) -> CollectiveError:
        """Mark the group broken and describe the failure."""
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        self._broken = f"{name}: {type(exc).__name__}: {first_line}"
        return CollectiveError(
            f"rank {self.rank}: collective {name} failed ({type(exc).__name__}: {first_line}). "
            "A failed collective leaves the ranks out of step, so the job cannot continue. "
            "(Usually another rank failed, exited or hung: see its log.)")

    # --- primitives ------------------------------------------------------------------

    def _ops(self):
        if self._all_reduce is None:
            from mindspore import ops

            self._all_reduce, self._all_gather = ops.AllReduce(), ops.AllGather()
        return self._all_reduce, self._all_gather

    def all_reduce_sum(self, tensor):
        """Elementwise sum over ranks of a MindSpore Tensor; returns a new Tensor."""
        dtype = _dtype_name(tensor)
        if dtype in self._wire["all_reduce_op"] and not self._broken and self._all_reduce is not None:
            try:  # the hot path, without the context manager's cost
                return self._all_reduce(tensor)
            except Exception as exc:  # noqa: BLE001 - any failure inside a collective is fatal for the job
                raise self._failed("all_reduce", exc) from exc
        if dtype in self._wire["all_reduce_op"]:
            all_reduce, _ = self._ops()
            with self._guarded("all_reduce"):
                return all_reduce(tensor)
        with self._guarded(f"all_reduce(sum, {dtype}{list(tensor.shape)})"):
            if dtype in self._wire["all_reduce_mint"]:
                from mindspore.mint import distributed

                out = tensor.copy()
                distributed.all_reduce(out)
                return out
        # float64, int64, bool, ...: gather every rank's exact copy and add on the host in rank
        # order (exact for float64, which the CPU kernels cannot carry).
        import mindspore as ms

        host = _host(tensor)
        stacked = _host(self.all_gather(ms.Tensor(host.reshape((1,) + host.shape))))
        total = stacked.sum(axis=0, dtype=host.dtype if host.dtype.kind in "fc" else np.int64)
        return ms.Tensor(total.astype(host.dtype))

    def all_gather(self, tensor):
        """Concatenate every rank's Tensor along axis 0, in rank order (bit-exact for every dtype)."""
        dtype = _dtype_name(tensor)
        if dtype in self._wire["all_gather"] and tensor.ndim > 0:
            with self._guarded(f"all_gather({dtype}{list(tensor.shape)})"):
                _, all_gather = self._ops()
                return all_gather(tensor)
        import mindspore as ms

        host = _host(tensor)
        with self._guarded(f"all_gather({dtype}{list(tensor.shape)})"):
            _, all_gather = self._ops()
            words = all_gather(ms.Tensor(_as_words(host))).asnumpy()
        rows = words.reshape(self.size, -1)
        parts = [_from_words(row, host.dtype, host.shape) for row in rows]
        return ms.Tensor(np.concatenate([p.reshape((-1,) + host.shape[1:]) if host.ndim else p.reshape(1)
                                         for p in parts]))

    def broadcast(self, tensor, root: int = 0):
        """Every rank receives root's Tensor (a new Tensor; the input is not modified)."""
        dtype = _dtype_name(tensor)
        from mindspore.mint import distributed

        if dtype in self._wire["broadcast"]:
            with self._guarded(f"broadcast({dtype}{list(tensor.shape)}, root={root})"):
                out = tensor.copy()
                distributed.broadcast(out, src=root)
                return out
        import mindspore as ms

        host = _host(tensor)
        with self._guarded(f"broadcast({dtype}{list(tensor.shape)}, root={root})"):
            words = ms.Tensor(_as_words(host))
            distributed.broadcast(words, src=root)
            received = words.asnumpy()
        return ms.Tensor(_from_words(received, host.dtype, host.shape))

    def barrier(self) -> None:
        """Return once every rank got here (a one-element all-reduce, waited for)."""
        import mindspore as ms

        all_reduce, _ = self._ops()
        with self._guarded("barrier"):
            all_reduce(ms.Tensor(np.zeros(1, np.float32))).asnumpy()

    # --- staying in step ---------------------------------------------------------------

    def native_sum(self, dtype: str) -> bool:
        """Whether `ops.AllReduce` sums this dtype natively on this backend."""
        return dtype in self._wire["all_reduce_op"]

    def checkable(self, plan: tuple) -> bool:
        """Whether a sum with this wire plan can carry the in-band check (NaN-capable native dtypes)."""
        return bool(plan) and all(self.native_sum(dtype) and "float" in dtype for dtype, _ in plan)

    def _predicted(self) -> Signature | None:
        entry = self._next.get(self._last)
        if entry is None or entry[1] < _STABLE or entry[0].plan is None:
            return None
        return entry[0]

    def _agreed(self, signature: Signature) -> None:
        """Every rank agreed on `signature` through the agreement round: extend the history."""
        entry = self._next.get(self._last)
        count = entry[1] + 1 if entry is not None and entry[0] == signature else 1
        if len(self._next) >= _MAX_HISTORY and self._last not in self._next:
            self._next.clear()
        self._next[self._last] = (signature, count)
        self._last = signature.digest

    def _join_prediction(self, signature: Signature | None) -> bool:
        """When every rank expects a checked sum, take part in it.

        Returns True when the predicted sum ran with every rank's real data (only possible
        when `signature` is the prediction); False when no sum was predicted or some rank
        contributed poison, in which case every rank goes on to the agreement round.
        """
        predicted = self._predicted()
        if predicted is None:
            return False
        if signature == predicted:
            return True  # the caller runs the sum with its data and checks the result
        import mindspore as ms

        poison = [ms.Tensor.from_numpy(np.full(count, np.nan, dtype=np.dtype(dtype)))
                  for dtype, count in predicted.plan]
        self.sum_buffers(poison)
        self._next.pop(self._last, None)  # everyone sees the poison and forgets the prediction
        return False

    def agree(self, description: str, what: str = "collective", extras=()) -> np.ndarray:
        """Check (one small all-gather) that every rank runs the same thing; see the module notes.

        Runs before a collective whose shapes must match, so that a mismatch becomes a clear
        error on every rank instead of a desynchronised or hung job. All ranks see the same
        gathered digests, so they all take the same branch and stay in step. `extras` (a few
        ints per rank, e.g. local batch sizes) ride along; returns them as a (size, n) array.
        """
        signature = Signature(digest_of(f"{description} #extras={len(extras)}"))
        self._join_prediction(signature)
        rows = self._exchange(signature.digest, description, what, extras)
        self._agreed(signature)
        return rows

    def checked_sum(self, description: str, what: str, plan: tuple, run) -> list:
        """Run the sum `run()` -> (sums, probe), whose wire buffers are `plan`, making sure first (or
        in-band, see the module notes) that every rank sums the same; returns the sums.

        `probe` is a tensor whose first element is the first element of the first summed buffer.
        """
        signature = Signature(digest_of(f"{description} #plan={plan}"),
                              plan if self.checkable(plan) else None)
        predecessor = self._last
        if self._join_prediction(signature):
            totals, probe = run()
            if not _is_poisoned(probe, self.host_packing):
                self._last = signature.digest
                return totals
            self._next.pop(predecessor, None)  # some rank differs: every rank checks in full
        self._exchange(signature.digest, description, what, ())
        self._agreed(signature)
        return run()[0]

    def _exchange(self, digest: int, description: str, what: str, extras) -> np.ndarray:
        import mindspore as ms

        self.agreement_rounds += 1
        extras = [int(e) for e in extras]
        inline = (extras[:_INLINE_EXTRAS] + [0] * _INLINE_EXTRAS)[:_INLINE_EXTRAS]
        words = np.array([digest] + inline, dtype=np.int64).view(np.int32)  # int32 travels natively
        with self._guarded("agree"):
            _, all_gather = self._ops()
            gathered = all_gather(ms.Tensor.from_numpy(words)).asnumpy()
        rows = np.ascontiguousarray(gathered).view(np.int64).reshape(self.size, 1 + _INLINE_EXTRAS)
        if not (rows[:, 0] == rows[0, 0]).all():
            self._report_mismatch(description, what)
        if len(extras) <= _INLINE_EXTRAS:
            return rows[:, 1:1 + len(extras)]
        # Same length on every rank: agreed above.
        full = _host(self.all_gather(ms.Tensor(np.array(extras, dtype=np.int64))))
        return full.reshape(self.size, len(extras))

    def _report_mismatch(self, description: str, what: str):
        import mindspore as ms

        self._last = None  # every rank raises here: the agreed history starts again
        # Second round, taken by every rank: exchange the readable descriptions for the message.
        raw = description.encode()[:_DESCRIPTION_BYTES].ljust(_DESCRIPTION_BYTES, b"\0")
        rows = _host(self.all_gather(ms.Tensor(np.frombuffer(raw, dtype=np.int32).copy())))
        texts = [row.tobytes().rstrip(b"\0").decode(errors="replace") for row in rows.reshape(self.size, -1)]
        lines = "\n".join(f"  rank {r}: {text}" for r, text in enumerate(texts))
        raise RankMismatchError(
            f"ranks disagree on {what}; every rank must make the same call with the same structure, "
            f"dtypes and shapes (raised on rank {self.rank}):\n{lines}")


# --- process-wide state ---------------------------------------------------------------

_world: Group | None = None


def detect_backend() -> str:
    """Device MindSpore should use: MIGRATE_DEVICE if set (by `migrate run --device`), else the
    best available of Ascend, GPU, CPU."""
    requested = os.environ.get("MIGRATE_DEVICE", "auto")
    if requested and requested.lower() != "auto":
        return {"cpu": "CPU", "gpu": "GPU", "ascend": "Ascend", "npu": "Ascend"}.get(requested.lower(),
                                                                                   requested)
    import mindspore as ms

    current = ms.get_context("device_target")
    if current in ("Ascend", "GPU"):
        return current
    try:
        from mindspore import device_context

        for name, probe in (("Ascend", device_context.ascend), ("GPU", device_context.gpu)):
            with contextlib.suppress(Exception):
                if probe.is_available():
                    return name
    except ImportError:
        pass
    return "CPU"


def world(initialize: bool = True) -> Group:
    """The group of all processes; the first call joins the cluster when under a launcher."""
    global _world
    if _world is None and initialize:
        _world = _join_cluster()
    return _world if _world is not None else LocalGroup()


_independent = False


def replicas() -> Group:
    """The replicas tf.distribute's implicit behaviour spans: the world, or this process alone.

    What a TF program does across replicas without naming a collective (an optimizer's
    gradient sum, a Keras metric's result, `fit`'s split of a global batch, the loss's
    ``1 / num_replicas_in_sync``, a checkpoint or event file written by rank 0 only) spans
    every process of the job. A Horovod program has no strategy: every process is a
    replica of its own (``num_replicas_in_sync`` is 1) and only the collectives it names
    cross processes. `migrate.runtime.horovod.init()` sets that mode (`set_independent`).
    """
    return LocalGroup() if _independent else world()


def set_independent(independent: bool = True) -> None:
    """Make every process its own replica for the implicit behaviour (`replicas()`)."""
    global _independent
    _independent = bool(independent)


def _join_cluster() -> Group:
    if not launched_by_launcher():
        return LocalGroup()
    import mindspore as ms
    from mindspore.communication import get_group_size, get_rank, init

    backend = detect_backend()
    local_device = int(os.environ.get("DEVICE_ID", "0"))
    with contextlib.suppress(RuntimeError):  # the program may have chosen its device already
        # Each process drives its own local device; msrun exports DEVICE_ID = local rank.
        ms.set_device(backend) if backend == "CPU" else ms.set_device(backend, local_device)
    init()  # the scheduler process (MS_ROLE=MS_SCHED) serves the cluster here and exits
    size = get_group_size()
    return WorldGroup(get_rank(), size, backend) if size > 1 else LocalGroup()


def is_initialized() -> bool:
    return _world is not None


# --- where is this rank? (for `migrate run`'s failure and timeout reports) -------------------

_stack_file = None


def _enable_stack_dumps() -> None:
    """Under `migrate run`, let the launcher ask this worker where it is.

    When a job fails or times out, the launcher sends ``MIGRATE_STACK_SIGNAL`` (a real-time
    signal, which programs do not use) to the ranks still running, just before it stops them.
    `faulthandler` then writes every thread's Python stack to
    ``<MIGRATE_STACK_DIR>/stack_<rank>.txt`` from the signal handler itself, so this works
    while the rank is blocked inside a MindSpore collective, and the launcher can tell a rank
    waiting in one of this module's collectives from a rank that hung elsewhere. Nothing runs
    until the signal arrives; a program that handles that signal itself keeps its handler.
    """
    global _stack_file
    env = os.environ
    directory, signum, rank = env.get("MIGRATE_STACK_DIR"), env.get("MIGRATE_STACK_SIGNAL", ""), \
        env.get("MS_NODE_ID", "")
    if (_stack_file is not None or env.get("MS_ROLE") != "MS_WORKER" or not directory
            or not signum.isdigit() or not rank.isdigit()):
        return
    import faulthandler
    import signal

    path = os.path.join(directory, f"stack_{int(rank)}.txt")
    try:
        if signal.getsignal(int(signum)) not in (signal.SIG_DFL, None):
            return
        handle = open(path, "w")  # noqa: SIM115 - kept open: faulthandler writes to its descriptor
    except (OSError, ValueError):
        return
    try:
        faulthandler.register(int(signum), file=handle, all_threads=True)
    except (OSError, ValueError, RuntimeError):
        handle.close()
        with contextlib.suppress(OSError):
            os.remove(path)  # no file: the launcher does not send a signal nobody handles
        return
    _stack_file = handle


_enable_stack_dumps()
