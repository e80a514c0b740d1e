"""`migrate run`: start a converted program as N processes (one per device) under msrun.

    migrate run -n 2 train.py --epochs 3
    python -m migrate.runtime.launch -n 2 train.py

msrun starts a scheduler and the workers and writes each worker's output to
``<log-dir>/worker_<rank>.log``. This launcher supervises it: rank 0's output is
streamed to the terminal unprefixed (``--all-ranks``: every local rank, prefixed
``[rank k]``); when a rank exits non-zero the whole job is ended within seconds
(msrun itself would wait for its scheduler to time out); ``--timeout`` bounds the
job, naming the ranks still running. The exit code is 0 only if every rank exited 0.

The closing report names each failed rank with its exit code and the exception it
died of, and says where the ranks that were still running were: migrate.runtime's
workers dump their Python stacks when asked (see `collectives._enable_stack_dumps`),
so a rank that hung outside any collective is told apart from the ranks waiting for
it in one. (MindSpore's CPU collectives give up after MS_CPU_COMM_OP_TIMEOUT, 30 s by
default: then the waiting rank fails with a CollectiveError, and the report names the
rank that did not fail as the likely cause.)

Standard input goes to rank 0 only, as with torchrun; every other rank and the
scheduler read /dev/null. msrun's own standard input is /dev/null, and it passes only
that on; rank 0 opens the launcher's anew (``/proc/<launcher pid>/fd/0``, see
`launch_child`), or /dev/null if it cannot (a socket). A program that cannot be compiled is refused before anything starts
(exit 2, ``migrate run: train.py:LINE:COL: SyntaxError: ...``).

Signals: SIGINT, SIGTERM and SIGHUP (unless ignored when the launcher started, as under
``nohup``) are passed on to the job. msrun is paused first (it would kill every worker as
soon as one exits), the signal goes to each worker's process group, the workers get a few
seconds to exit (a program may save a checkpoint on SIGTERM), then msrun and its scheduler
get the signal, and whatever still runs is killed. The launcher then prints
``migrate run: received SIGTERM; all ranks stopped`` and exits 128 + the signal's number
(130 for SIGINT).

Nothing outlives the launcher, even when it is killed outright (SIGKILL): msrun, its
scheduler and its workers are started through `launch_child`, which arms a parent-death
signal (``PR_SET_PDEATHSIG``, SIGKILL) before it execs the interpreter. The launcher's
death kills msrun, and msrun's kills the scheduler and the workers. (The kernel sends it
when the parent *thread* that forked the child ends; the launcher and msrun start their
children from their main thread, so it comes only when they exit.) msrun starts
``python <script>`` from PATH; a ``python`` shim first on the workers' PATH goes through
`launch_child` the same way.

Multi-node: ``--nnodes/--node-rank/--master-addr/--master-port`` describe the
cluster; a TF_CONFIG in the environment is translated (chief/workers -> nodes, task
index -> node rank, first worker -> master). Node 0 runs msrun, which starts the
scheduler on the master address and this node's workers. Every other node starts its
workers itself, with MindSpore's dynamic-cluster variables (``MS_SCHED_HOST``,
``MS_SCHED_PORT``, ``MS_WORKER_NUM``, ``MS_ROLE=MS_WORKER``, ``MS_NODE_ID``,
``RANK_ID``, ``DEVICE_ID``), and no scheduler: msrun 2.10 starts a scheduler whenever
the master address is local, so two nodes on one host (loopback) would each start
one and never form a cluster; it has no option to prevent that.

This module does not import MindSpore; a missing MindSpore is reported clearly.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import math
import os
import random
import re
import shlex
import shutil
import signal
import socket
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .cluster import nodes_from_tf_config, tf_config_from_env

EXIT_TIMEOUT = 124
EXIT_LAUNCH_ERROR = 2
_POLL_SECONDS = 0.1
_FAILURE_GRACE_SECONDS = 2.0     # after a rank fails: time for its last output to land
_SCHEDULER_GRACE_SECONDS = 8.0   # after all ranks finished: time for msrun to wind down
# On a one-node job nobody else needs the scheduler once every rank has exited 0; msrun would take
# a second or two more (its 1 s poll, the scheduler's wind-down), which a short job feels.
_ONE_NODE_GRACE_SECONDS = 0.3
_STACK_WAIT_SECONDS = 2.0        # for the ranks' stack dumps before they are stopped
_ERROR_WINDOW_LINES = 300        # a failed rank's traceback is looked for in its log's last lines
# Asks a migrate.runtime worker for its Python stacks (a real-time signal: programs do not use
# those, so it cannot trigger a program's own handler). None where there are none (not Linux).
_STACK_SIGNAL = signal.SIGRTMIN + 6 if hasattr(signal, "SIGRTMIN") else None
_DEVICES = ("auto", "Ascend", "GPU", "CPU")
_CHILD_SCRIPT = Path(__file__).resolve().with_name("launch_child.py")
# Passed on to the job: its ranks act on them (a preemption handler saving a checkpoint on SIGTERM).
_FORWARDED_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
_SIGNAL_GRACE_SECONDS = 5.0      # for the ranks to act on a forwarded signal before they are killed
_MSRUN_GRACE_SECONDS = 1.0       # then for msrun and its scheduler


def _count(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def _index(text: str) -> int:
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text!r}")
    return value


def _port(text: str) -> int:
    value = _integer(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 1 to 65535, got {text!r}")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


_EPILOG = ("Standard input goes to rank 0; the other ranks read /dev/null. SIGINT, SIGTERM and SIGHUP are "
           "passed on to every rank, which get a few seconds to exit before they are killed; the exit code is "
           "then 128 + the signal's number.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `migrate run`'s options to `parser`."""
    parser.add_argument("-n", "--nproc-per-node", "--nproc", dest="nproc", type=_count, default=1,
                        help="processes (replicas) on this node, one per device (default 1)")
    parser.add_argument("--device", choices=_DEVICES, default="auto",
                        help="device for every process; auto picks Ascend, then GPU, then CPU")
    parser.add_argument("--nnodes", type=_count, default=None, help="number of nodes (default 1, or from TF_CONFIG)")
    parser.add_argument("--node-rank", type=_index, default=None, help="rank of this node (default 0)")
    parser.add_argument("--master-addr", default=None, help="address of node 0, which runs the scheduler")
    parser.add_argument("--master-port", type=_port, default=None, help="scheduler port (default: a free port)")
    parser.add_argument("--log-dir", default=None, help="directory for per-rank logs (default: a new temp dir)")
    parser.add_argument("--all-ranks", action="store_true",
                        help="stream every local rank's output, prefixed with [rank k]")
    parser.add_argument("--timeout", type=_seconds, default=None,
                        help="end the job if it runs longer than this many seconds")
    parser.add_argument("script", help="the Python program to run")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments for the program")
    if parser.epilog is None:
        parser.epilog = _EPILOG


@dataclass
class LaunchPlan:
    """Everything needed to start msrun on this node."""

    nproc: int
    nnodes: int
    node_rank: int
    master_addr: str
    master_port: int
    log_dir: Path
    device: str
    script: str
    script_args: list = field(default_factory=list)

    @property
    def world_size(self) -> int:
        return self.nproc * self.nnodes

    def global_rank(self, local_rank: int) -> int:
        return self.node_rank * self.nproc + local_rank


class LaunchError(Exception):
    """A problem found before anything was started."""


def _ephemeral_ports() -> tuple[int, int]:
    """The range the kernel picks ports from for outgoing connections and binds to port 0."""
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def _scheduler_ports() -> range:
    """Where :func:`free_port` picks from: below the ephemeral range (above it if little is
    below; empty if the kernel uses every port)."""
    low, high = _ephemeral_ports()
    return range(10000, low) if low > 11000 else range(high + 1, 65536)


def free_port(taken=()) -> int:
    """A TCP port free on this host now (and not in ``taken``), for a job's scheduler.

    Chosen at random below the kernel's ephemeral range: a port from that range (a bind to
    port 0) can be handed to any other process's connection or port-0 bind, another job's
    workers among them, before msrun's scheduler binds it, and two jobs started at once
    then share a scheduler. Falls back to the kernel's choice if nothing there is free.
    """
    candidates = _scheduler_ports()
    pick = random.SystemRandom()
    for _ in range(100 if candidates else 0):
        port = pick.choice(candidates)
        if port in taken:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_plan(args: argparse.Namespace, environ=None) -> LaunchPlan:
    """Resolve options, TF_CONFIG and defaults into a LaunchPlan."""
    environ = os.environ if environ is None else environ
    if args.nproc < 1:
        raise LaunchError("-n must be at least 1")
    nnodes, node_rank, master_addr, master_port = args.nnodes, args.node_rank, args.master_addr, args.master_port
    tf_config = tf_config_from_env(environ)
    if tf_config and nnodes is None and node_rank is None:
        try:
            plan = nodes_from_tf_config(tf_config)
        except ValueError as exc:
            raise LaunchError(str(exc)) from exc
        nnodes, node_rank = plan.nnodes, plan.node_rank
        master_addr = master_addr or plan.master_addr
        master_port = master_port or plan.master_port
    nnodes = nnodes or 1
    node_rank = node_rank or 0
    if not 0 <= node_rank < nnodes:
        raise LaunchError(f"--node-rank {node_rank} is out of range for --nnodes {nnodes}")
    if nnodes > 1 and master_port is None:
        raise LaunchError("a multi-node job needs --master-port (the same on every node)")
    if master_port is not None and not 1 <= master_port <= 65535:
        raise LaunchError(f"scheduler port {master_port} is out of range (1 to 65535)")
    script = args.script
    if not Path(script).is_file():
        raise LaunchError(f"no such program: {script}")
    check_syntax(script)
    log_dir = Path(args.log_dir) if args.log_dir else Path(tempfile.mkdtemp(prefix="migrate-run-"))
    return LaunchPlan(
        nproc=args.nproc, nnodes=nnodes, node_rank=node_rank, master_addr=master_addr or "127.0.0.1",
        master_port=master_port or free_port(), log_dir=log_dir.resolve(), device=args.device,
        script=str(Path(script).resolve()), script_args=list(args.script_args or []))


def check_syntax(script: str) -> None:
    """A program that cannot be compiled is refused before any process starts (every rank, and msrun's
    scheduler, which runs the program too, would fail the same way at once)."""
    try:
        source = Path(script).read_bytes()
    except OSError as exc:
        raise LaunchError(f"cannot read {script}: {exc.strerror or exc}") from exc
    try:
        compile(source, script, "exec", dont_inherit=True)
    except SyntaxError as exc:  # IndentationError and TabError too
        where = ":".join(str(part) for part in (script, exc.lineno, exc.offset) if part is not None)
        raise LaunchError(f"{where}: {type(exc).__name__}: {exc.msg}") from exc
    except ValueError as exc:  # a NUL byte in the source
        raise LaunchError(f"{script}: SyntaxError: {exc}") from exc


def msrun_command(plan: LaunchPlan) -> list[str]:
    """msrun through this interpreter (the `msrun` script may belong to another Python)."""
    return [
        *child_command("--leader"),
        "-c", "import sys; from mindspore.parallel.cluster.run import main; sys.exit(main())",
        f"--worker_num={plan.world_size}", f"--local_worker_num={plan.nproc}",
        f"--master_addr={plan.master_addr}", f"--master_port={plan.master_port}",
        f"--node_rank={plan.node_rank}", f"--log_dir={plan.log_dir}", "--join=True",
        # Keep msrun from echoing worker logs itself: this launcher streams them.
        "--tail_worker_log=99999",
        plan.script, *plan.script_args,
    ]


def child_command(*args: str) -> list[str]:
    """This interpreter, started through launch_child (parent-death signal, standard input; see there)."""
    return [sys.executable, "-I", "-S", str(_CHILD_SCRIPT), *args]


def uses_msrun(plan: LaunchPlan) -> bool:
    """Node 0 runs msrun (scheduler + its workers); other nodes start their workers directly."""
    return plan.node_rank == 0


def direct_worker_environment(plan: LaunchPlan, local_rank: int, env: dict) -> dict:
    """What msrun would export for one worker, for nodes that start their workers themselves."""
    rank = plan.global_rank(local_rank)
    return {**env, "MS_ROLE": "MS_WORKER", "MS_SCHED_HOST": plan.master_addr,
            "MS_SCHED_PORT": str(plan.master_port), "MS_WORKER_NUM": str(plan.world_size),
            "MS_NODE_ID": str(rank), "RANK_ID": str(rank), "RANK_SIZE": str(plan.world_size),
            "DEVICE_ID": str(local_rank), "MS_TOPO_TIMEOUT": env.get("MS_TOPO_TIMEOUT", "600")}


def worker_environment(plan: LaunchPlan, environ=None) -> dict:
    """Environment for msrun and its processes."""
    env = dict(os.environ if environ is None else environ)
    # msrun starts `python <script>` from PATH: make that this interpreter. (PATH cannot hold
    # a directory whose name contains the path separator.)
    shim_bin = plan.log_dir / ".bin"
    if os.pathsep in str(shim_bin):
        shim_bin = Path(tempfile.mkdtemp(prefix="migrate-bin-"))
    shim_bin.mkdir(parents=True, exist_ok=True)
    python_shim = shim_bin / "python"
    # A script, not a symlink: a venv interpreter finds its site-packages from the path it was started
    # by, which must stay sys.executable (launch_child execs that).
    shim = "#!/bin/sh\nexec " + " ".join(shlex.quote(part) for part in child_command()) + ' "$@"\n'
    if not python_shim.exists() or python_shim.read_text(errors="replace") != shim:
        python_shim.write_text(shim)
        python_shim.chmod(0o755)
    env["PATH"] = f"{shim_bin}{os.pathsep}{env.get('PATH', '')}"
    # For launch_child: msrun and the workers this process starts die with it; rank 0 reads its stdin.
    env["MIGRATE_PARENT_PID"] = str(os.getpid())
    env["MIGRATE_STDIN"] = f"/proc/{os.getpid()}/fd/0"
    env.setdefault("MS_RETRY_INTERVAL_LOWER", "1")   # cluster forms in ~1 s instead of ~3-10 s
    env.setdefault("MS_RETRY_INTERVAL_UPPER", "1")
    env.setdefault("GLOG_v", "3")                     # MindSpore's C++ warnings only with GLOG_v=2
    env.setdefault("PYTHONUNBUFFERED", "1")           # stream output as it is printed
    env["MIGRATE_DEVICE"] = plan.device
    env["MIGRATE_NNODES"] = str(plan.nnodes)
    env["MIGRATE_NODE_RANK"] = str(plan.node_rank)
    if env.get("TF_CONFIG") and env.get("MIGRATE_KEEP_TF_CONFIG") != "1":
        # Hidden from TensorFlow (a converted program may still import it for tf.data), kept
        # for migrate.runtime's cluster resolvers, which report the launched job.
        env["MIGRATE_TF_CONFIG"] = env.pop("TF_CONFIG")
    env["MIGRATE_MASTER_ADDR"] = plan.master_addr
    env["MIGRATE_MASTER_PORT"] = str(plan.master_port)
    env["MIGRATE_NPROC_PER_NODE"] = str(plan.nproc)
    # One seed for the run's unseeded orders of examples (migrate.runtime.orders), the same in every
    # process: random on one node. Several nodes' launchers cannot agree on one; there the workers
    # derive it from the scheduler's address they share (orders.run_seed), unless MIGRATE_RUN_SEED
    # is set on every node.
    if plan.nnodes == 1:
        env.setdefault("MIGRATE_RUN_SEED", str(random.SystemRandom().getrandbits(63)))
    if _STACK_SIGNAL is not None:  # see collectives._enable_stack_dumps
        env["MIGRATE_STACK_DIR"] = str(plan.log_dir)
        env["MIGRATE_STACK_SIGNAL"] = str(int(_STACK_SIGNAL))
    # The package running this launcher must be importable by the program.
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    return env


def check_mindspore() -> None:
    if importlib.util.find_spec("mindspore") is None:
        raise LaunchError(
            "MindSpore is not installed for this Python; install it to run converted programs "
            "(pip install 'migrate-tf2ms[runtime]')")
    if shutil.which("ip") is None and sys.platform.startswith("linux"):
        pass  # msrun falls back to routing lookups; nothing to do


# --- supervision ------------------------------------------------------------------------

# MindSpore's own C++ log lines, e.g. "[INFO] DISTRIBUTED(8289,7fa0,python):2026-...".
_MINDSPORE_LOG_LINE = re.compile(r"^\[(DEBUG|INFO|WARNING)\] [A-Z_]+\(\d+,")
_MINDSPORE_ANY_LOG_LINE = re.compile(r"^\[[A-Z]+\] [A-Z_]+\(\d+,")
_FRAME_LINE = re.compile(r'^\s+File "(.*)", line (\d+) in (.*)$')


def _zombie_exit_code(pid: int) -> int | None:
    """The exit status of a worker that has exited but is not reaped yet (Linux: /proc/<pid>/stat
    field 52), as Popen reports it (negative: killed by that signal); None if unknown.

    msrun reaps its workers only once a second, and on a failure at once kills the others;
    reading the code here lets the launcher act first."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if len(fields) < 50 or fields[0] != b"Z":
        return None
    status = int(fields[49])
    return -(status & 0x7F) if status & 0x7F else (status >> 8) & 0xFF


def _catches(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler for `signum` (Linux: SigCgt in /proc/<pid>/status)."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    except (OSError, ValueError, IndexError):
        pass
    return False


def _library_prefixes() -> tuple:
    """Where the standard library and installed packages live (the workers run this interpreter)."""
    paths = sysconfig.get_paths()
    found = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if key in paths:
            found |= {os.path.join(paths[key], ""), os.path.join(str(Path(paths[key]).resolve()), "")}
    return tuple(sorted(found))


def _main_thread_frames(dump: str) -> list:
    """The main thread's frames, most recent first, from a faulthandler dump: [(file, line, function)]."""
    threads, current = [], None
    for line in dump.splitlines():
        if line.endswith("(most recent call first):"):
            current = []
            threads.append(current)
        elif current is not None and (match := _FRAME_LINE.match(line)):
            current.append((match[1], int(match[2]), match[3]))
    # The main thread runs the program (<module>); other Python threads start in threading.
    for frames in threads:
        if any(function == "<module>" for _, _, function in frames) \
                and not (frames and frames[-1][0].endswith("threading.py")):
            return frames
    return threads[0] if threads else []


def whereabouts(dump: str, library_prefixes=None) -> tuple[bool, str] | None:
    """(in a collective?, where) for a rank, from its stack dump; None without a usable dump.

    A rank is in a collective when the innermost frame outside libraries (MindSpore, numpy,
    the standard library) is migrate.runtime's collectives module, through which every
    collective of the runtime goes. `where` names the innermost frame of the program itself.
    """
    frames = _main_thread_frames(dump)
    if not frames:
        return None
    prefixes = _library_prefixes() if library_prefixes is None else library_prefixes

    def runtime(path):
        return "/migrate/runtime/" in path.replace(os.sep, "/")

    def library(path):  # "<frozen ...>", or installed packages and the standard library (not migrate itself)
        return path.startswith("<") or bool(prefixes) and path.startswith(prefixes) and not runtime(path)

    deciding = next((f for f in frames if not library(f[0])), None)
    index = next((i for i, f in enumerate(frames) if not library(f[0]) and not runtime(f[0])), None)
    at = "(no frame of the program)" if index is None else "{}:{} in {}".format(*frames[index])
    if deciding is not None and runtime(deciding[0]) and Path(deciding[0]).name == "collectives.py":
        # Name the runtime function the program called (the outermost runtime frame).
        api = next((f[2] for f in reversed(frames[:index]) if runtime(f[0])), deciding[2]) if index else deciding[2]
        return True, f"{api}, called from {at}"
    return False, at


class _LogStream:
    """Follows one worker log file and writes complete new lines to the terminal.

    MindSpore's INFO/WARNING lines stay in the log file but are not streamed unless
    the user set GLOG_v themselves.
    """

    def __init__(self, path: Path, prefix: str, out, hide_framework_logs: bool = True):
        self.path, self.prefix, self.out = path, prefix, out
        self.hide_framework_logs = hide_framework_logs
        self._offset, self._pending = 0, b""

    def pump(self, final: bool = False) -> None:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self._offset)
                chunk = handle.read()
        except FileNotFoundError:
            return
        self._offset += len(chunk)
        data = self._pending + chunk
        lines = data.split(b"\n")
        self._pending = lines.pop()
        if final and self._pending:
            lines.append(self._pending)
            self._pending = b""
        for line in lines:
            text = line.decode(errors="replace")
            if self.hide_framework_logs and _MINDSPORE_LOG_LINE.match(text):
                continue
            self.out.write(f"{self.prefix}{text}\n")
        if lines:
            self.out.flush()


class _Signals:
    """Records SIGINT, SIGTERM and SIGHUP while a job runs, for the supervision loop to act on.

    Only recorded: the loop passes them on to the job (see `Supervisor._stop`). A signal this process
    ignored when it started (``nohup``; a background job's SIGINT) stays ignored, as it would for
    the job. Signals can only be handled in the main thread; elsewhere nothing is installed.
    """

    def __init__(self):
        self.received: list = []
        self._previous: dict = {}

    def __enter__(self) -> "_Signals":
        if threading.current_thread() is threading.main_thread():
            for signum in _FORWARDED_SIGNALS:
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    self._previous[signum] = signal.signal(signum, self._record)
        return self

    def __exit__(self, *exc_info) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)

    def _record(self, signum, frame) -> None:
        self.received.append(signum)


@dataclass
class _Worker:
    rank: int
    pid: int
    exit_code: int | None = None
    finished_at: float | None = None
    process: object = None  # the Popen, for workers this launcher started itself


class Supervisor:
    """Runs msrun for a plan, streams logs, ends the job on failure or timeout."""

    def __init__(self, plan: LaunchPlan, all_ranks: bool, timeout: float | None, out=None, err=None):
        self.plan, self.all_ranks, self.timeout = plan, all_ranks, timeout
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self.workers: dict[int, _Worker] = {}
        self.msrun = None
        self.msrun_log = plan.log_dir / "msrun.log"
        self._stacks_asked: set = set()
        self._running_at_end: list = []

    def _streams(self) -> list[_LogStream]:
        local = [self.plan.global_rank(i) for i in range(self.plan.nproc)]
        hide = "GLOG_v" not in os.environ
        if self.all_ranks:
            return [_LogStream(self._log_of(r), f"[rank {r}] ", self.out, hide) for r in local]
        return [_LogStream(self._log_of(0), "", self.out, hide)] if 0 in local else []

    def _log_of(self, rank: int) -> Path:
        return self.plan.log_dir / f"worker_{rank}.log"

    def _discover_workers(self) -> None:
        import psutil

        if self.msrun is None:
            return
        try:
            # Workers are msrun's direct children; their own helpers inherit the same environment.
            children = psutil.Process(self.msrun.pid).children(recursive=False)
        except psutil.Error:
            return
        for child in children:
            if child.pid in {w.pid for w in self.workers.values()}:
                continue
            try:
                env = child.environ()
            except psutil.Error:
                continue
            if env.get("MS_ROLE") == "MS_WORKER" and env.get("MS_NODE_ID", "").isdigit():
                rank = int(env["MS_NODE_ID"])
                if rank not in self.workers:
                    self.workers[rank] = _Worker(rank, child.pid)

    def _exit_codes_from_msrun_log(self) -> dict[int, int]:
        """msrun reaps the workers and logs the exit code of a failed one; map pid -> code."""
        codes = {}
        try:
            text = self.msrun_log.read_text(errors="replace")
        except FileNotFoundError:
            return codes
        marker = "Worker process "
        for line in text.splitlines():
            if marker in line and "exit with exception. Error code:" in line:
                try:
                    pid = int(line.split(marker, 1)[1].split()[0])
                    code = int(line.rsplit("Error code:", 1)[1].strip().rstrip("."))
                except (ValueError, IndexError):
                    continue
                codes[pid] = code
        return codes

    def _update_workers(self, now: float) -> None:
        import psutil

        codes = self._exit_codes_from_msrun_log() if self.msrun is not None else {}
        for worker in self.workers.values():
            if worker.process is not None:
                if worker.finished_at is None and worker.process.poll() is not None:
                    worker.finished_at, worker.exit_code = now, worker.process.returncode
                continue
            if worker.finished_at is not None:
                if worker.exit_code in (None, 0) and worker.pid in codes:
                    worker.exit_code = codes[worker.pid]
                continue
            try:
                alive = psutil.Process(worker.pid).status() != psutil.STATUS_ZOMBIE
            except psutil.Error:
                alive = False
            if not alive:
                worker.finished_at = now
                code = codes.get(worker.pid)
                worker.exit_code = code if code is not None else _zombie_exit_code(worker.pid)

    def _kill_everything(self) -> None:
        """End msrun, its scheduler and every worker (each worker has its own process group)."""
        import psutil

        victims = []
        if self.msrun is not None:
            try:
                victims = psutil.Process(self.msrun.pid).children(recursive=True)
            except psutil.Error:
                pass
        for worker in self.workers.values():
            if worker.process is not None and worker.process.poll() is not None:
                continue  # reaped: its pid (and group id) may belong to someone else by now
            try:
                os.killpg(os.getpgid(worker.pid), signal.SIGKILL)  # each worker has its own group
            except (ProcessLookupError, PermissionError):
                pass
        if self.msrun is not None:
            try:
                os.killpg(self.msrun.pid, signal.SIGKILL)   # msrun runs in its own session
            except (ProcessLookupError, PermissionError):
                pass
        for proc in victims:
            try:
                proc.kill()
            except psutil.Error:
                pass
        for process in [self.msrun] + [w.process for w in self.workers.values()]:
            try:
                if process is not None:
                    process.wait(timeout=5)
            except Exception:
                pass

    def _last_line(self, rank: int) -> str:
        try:
            lines = [l for l in self._log_of(rank).read_text(errors="replace").splitlines() if l.strip()]
        except FileNotFoundError:
            return "(no output)"
        return lines[-1][:200] if lines else "(no output)"

    def _tail(self, rank: int, count: int = 15) -> str:
        try:
            lines = self._log_of(rank).read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return ""
        lines = [line for line in lines if not _MINDSPORE_LOG_LINE.match(line)]
        return "\n".join(f"    {line}" for line in lines[-count:])

    def _stack_file(self, rank: int) -> Path:
        return self.plan.log_dir / f"stack_{rank}.txt"

    def _dump_stacks(self, ranks) -> None:
        """Ask the given ranks (still running, about to be stopped) for their Python stacks."""
        if _STACK_SIGNAL is None:
            return
        asked = []
        for rank in ranks:
            worker = self.workers.get(rank)
            if worker is None or rank in self._stacks_asked or worker.finished_at is not None:
                continue
            self._stacks_asked.add(rank)
            path = self._stack_file(rank)
            # The worker creates the file when it installs the handler: no file, no handler, no signal
            # (a real-time signal nobody handles would kill the process).
            if not path.exists() or not _catches(worker.pid, int(_STACK_SIGNAL)):
                continue
            try:
                os.kill(worker.pid, _STACK_SIGNAL)
            except OSError:
                continue
            asked.append(path)
        deadline, sizes = time.monotonic() + _STACK_WAIT_SECONDS, None
        while asked and time.monotonic() < deadline:
            time.sleep(0.05)
            now_sizes = []
            for path in asked:
                try:
                    now_sizes.append(path.stat().st_size)
                except OSError:
                    now_sizes.append(0)
            if all(now_sizes) and now_sizes == sizes:
                break  # every dump is there and complete (the sizes stopped changing)
            sizes = now_sizes

    def _whereabouts(self, rank: int) -> tuple[bool, str] | None:
        if rank not in self._stacks_asked:
            return None
        try:
            return whereabouts(self._stack_file(rank).read_text(errors="replace"))
        except OSError:
            return None

    def _error_of(self, rank: int, max_lines: int = 8) -> list[str]:
        """The exception a rank died of (the end of its last traceback), or []."""
        try:
            lines = self._log_of(rank).read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return []
        # Only a traceback near the end: the one the rank died of, not one it printed and went on.
        lines = [line for line in lines if not _MINDSPORE_ANY_LOG_LINE.match(line)][-_ERROR_WINDOW_LINES:]
        starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last):")]
        if not starts:
            return []
        error = []
        for line in lines[starts[-1] + 1:]:
            if not error:
                if line and not line[0].isspace():
                    error.append(line)  # past the frames: the exception's first line
            elif line and line[0].isspace():
                error.append(line)      # a message over several lines (indented)
            else:
                break
        return [line[:500] for line in error[:max_lines]]

    def _clear_stale_logs(self) -> None:
        """A reused log directory must not stream a previous job's output."""
        names = [self._log_of(self.plan.global_rank(i)).name for i in range(self.plan.nproc)]
        names += [self._stack_file(self.plan.global_rank(i)).name for i in range(self.plan.nproc)]
        if uses_msrun(self.plan):
            names += ["scheduler.log", self.msrun_log.name]
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                (self.plan.log_dir / name).unlink()

    def _start_workers(self, env: dict) -> None:
        """Start this node's workers without msrun (nodes other than 0: no scheduler here)."""
        import subprocess

        for local_rank in range(self.plan.nproc):
            rank = self.plan.global_rank(local_rank)
            with open(self._log_of(rank), "wb") as log:
                process = subprocess.Popen([*child_command(), self.plan.script, *self.plan.script_args], stdout=log,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           env=direct_worker_environment(self.plan, local_rank, env),
                                           start_new_session=True, cwd=os.getcwd())
            self.workers[rank] = _Worker(rank, process.pid, process=process)

    def run(self) -> int:
        with _Signals() as signals:
            return self._run(signals)

    def _run(self, signals: _Signals) -> int:
        import subprocess

        env = worker_environment(self.plan)
        self._clear_stale_logs()
        started = time.monotonic()
        if uses_msrun(self.plan):
            with open(self.msrun_log, "wb") as log:
                self.msrun = subprocess.Popen(msrun_command(self.plan), stdout=log, stderr=subprocess.STDOUT,
                                              stdin=subprocess.DEVNULL, env=env, start_new_session=True,
                                              cwd=os.getcwd())
        else:
            self._start_workers(env)
        streams = self._streams()
        failure_seen_at = all_done_at = None
        outcome = None
        try:
            while True:
                now = time.monotonic()
                if signals.received:
                    outcome = "signal"
                    break
                if len(self.workers) < self.plan.nproc:
                    self._discover_workers()
                self._update_workers(now)
                for stream in streams:
                    stream.pump()
                msrun_code = self.msrun.poll() if self.msrun is not None else None
                failed = [w for w in self.workers.values() if w.exit_code not in (None, 0)]
                finished = [w for w in self.workers.values() if w.finished_at is not None]
                if msrun_code is not None:
                    outcome = "msrun-exited"
                    break
                if self.msrun is None and len(finished) == self.plan.nproc and not failed:
                    outcome = "done"  # no scheduler on this node to wait for
                    break
                if failed and failure_seen_at is None:
                    failure_seen_at = now
                    # The job is lost: before msrun stops the others (within a second), ask them where
                    # they are, for the report.
                    self._dump_stacks(w.rank for w in self.workers.values() if w.finished_at is None)
                if failure_seen_at is not None and now - failure_seen_at > _FAILURE_GRACE_SECONDS:
                    outcome = "failed"
                    break
                if len(finished) == self.plan.nproc and all_done_at is None:
                    all_done_at = now
                grace = _ONE_NODE_GRACE_SECONDS if self.plan.nnodes == 1 and not failed else _SCHEDULER_GRACE_SECONDS
                if all_done_at is not None and now - all_done_at > grace:
                    outcome = "done"
                    break
                if self.timeout is not None and now - started > self.timeout:
                    outcome = "timeout"
                    break
                time.sleep(_POLL_SECONDS)
        except KeyboardInterrupt:  # SIGINT met Python's own handler: ours could not be installed
            signals.received.append(signal.SIGINT)
            outcome = "signal"
        # Who was still running when the job ended (before the kill makes everyone "finished").
        self._running_at_end = sorted(w.rank for w in self.workers.values() if w.finished_at is None)
        if outcome in ("timeout", "failed"):
            self._dump_stacks(self._running_at_end)
        if outcome == "signal":
            self._stop(signals, streams)
        self._kill_everything()  # also strays of a node whose msrun already returned
        self._update_workers(time.monotonic())
        for stream in streams:
            stream.pump(final=True)
        if outcome == "signal":
            return self._report_signal(signals.received[0])
        return self._report(outcome, time.monotonic() - started)

    def _stop(self, signals: _Signals, streams) -> None:
        """Pass the signal the launcher received on to the job: first to every worker, which get
        `_SIGNAL_GRACE_SECONDS` to exit (a program may save a checkpoint on SIGTERM), then to msrun and
        its scheduler. What is still running after that is killed by `_kill_everything`. A second
        signal cuts the wait short."""
        signum = signals.received[0]
        if self.msrun is not None:
            # Paused while the workers act on the signal: msrun SIGKILLs every worker as soon as one of
            # them exits, and if it died, so would they (their parent-death signal).
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.msrun.pid, signal.SIGSTOP)
            self._discover_workers()  # the workers it had started by now, all of them
        for worker in self.workers.values():
            if worker.finished_at is not None:
                continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(os.getpgid(worker.pid), signum)  # its group: the worker and what it started
        deadline = time.monotonic() + _SIGNAL_GRACE_SECONDS
        while time.monotonic() < deadline and len(signals.received) == 1:
            self._update_workers(time.monotonic())
            for stream in streams:
                stream.pump()
            if all(w.finished_at is not None for w in self.workers.values()):
                break
            time.sleep(_POLL_SECONDS)
        if self.msrun is None or self.msrun.poll() is not None or len(signals.received) > 1:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.msrun.pid, signum)  # msrun's session: msrun and the scheduler
            os.kill(self.msrun.pid, signal.SIGCONT)
        with contextlib.suppress(Exception):
            self.msrun.wait(timeout=_MSRUN_GRACE_SECONDS)

    def _report_signal(self, signum: int) -> int:
        with contextlib.suppress(OSError):  # after a SIGHUP the terminal may be gone
            self.err.write(f"migrate run: received {signal.Signals(signum).name}; all ranks stopped\n")
            self.err.flush()
        return 128 + signum

    def _failures(self) -> list:
        """The ranks that failed by themselves, the first to fail first. A rank killed (SIGKILL) after
        another one failed was stopped (msrun kills the others at once), it did not fail."""
        failed = [w for w in self.workers.values() if w.exit_code not in (None, 0)]
        own = [w for w in failed if w.exit_code != -signal.SIGKILL]
        if own:
            first = min(w.finished_at or 0.0 for w in own)
            failed = [w for w in failed if w.exit_code != -signal.SIGKILL or (w.finished_at or 0.0) < first]
        return sorted(failed, key=lambda w: (w.finished_at or 0.0, w.rank))

    def _state_of(self, rank: int) -> tuple[bool | None, str]:
        """(in a collective? None if unknown, description) of a rank that was still running."""
        where = self._whereabouts(rank)
        if where is None:
            return None, "hung, or waiting in a collective for a peer"
        return where[0], (f"waiting in a collective: {where[1]}" if where[0] else f"not in a collective, at {where[1]}")

    @staticmethod
    def _ranks(ranks) -> str:
        ranks = list(ranks)
        return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)

    def _failures_never_seen(self) -> list:
        """Ranks that failed before this launcher found them, from their logs: a rank that dies at once
        (an error at import) can be reaped by msrun, which then ends the job, before it was ever seen.

        Such a rank's log ends in the traceback it died of. msrun logs the pid and exit code of the
        first failure only, and the pid of a rank never seen is unknown: the code is msrun's when a
        single rank was never seen, else 1 (Python's exit code for an uncaught exception)."""
        unseen = [rank for rank in (self.plan.global_rank(i) for i in range(self.plan.nproc))
                  if rank not in self.workers]
        seen_pids = {w.pid for w in self.workers.values()}
        codes = [code for pid, code in self._exit_codes_from_msrun_log().items() if pid not in seen_pids]
        known = codes[0] if len(unseen) == 1 and len(codes) == 1 else None
        # Not added to self.workers: reported, never signalled (their pid is unknown, 0 here).
        failed = [_Worker(rank, 0, exit_code=known or 1, finished_at=0.0)
                  for rank in unseen if self._error_of(rank)]
        if not failed and known is not None:
            failed = [_Worker(unseen[0], 0, exit_code=known, finished_at=0.0)]
        return failed

    def _report(self, outcome: str, elapsed: float) -> int:
        msrun_code = self.msrun.returncode if self.msrun is not None else 0
        failed = self._failures()
        if outcome in ("failed", "msrun-exited") and len(self.workers) < self.plan.nproc:
            # Died before anything else happened, so before the failures seen: first.
            failed = self._failures_never_seen() + failed
        if outcome == "timeout":
            running = self._running_at_end
            missing = sorted(set(self.plan.global_rank(i) for i in range(self.plan.nproc)) - set(self.workers))
            lines = [f"migrate run: timed out after {self.timeout:g} s; job ended."]
            states = {rank: self._state_of(rank) for rank in running}
            waiting = [r for r in running if states[r][0] is True]
            elsewhere = [r for r in running if states[r][0] is False]
            if waiting and elsewhere:
                lines.append(f"  {self._ranks(elsewhere)} {'appears' if len(elsewhere) == 1 else 'appear'} hung: "
                             f"not in a collective while {self._ranks(waiting)} waited in one")
            for rank in running:
                lines.append(f"  rank {rank} was still running, {states[rank][1]}; "
                             f"last output: {self._last_line(rank)}")
            for rank in missing:
                lines.append(f"  rank {rank} never started; see {self.msrun_log}")
            for worker in sorted(self.workers.values(), key=lambda w: w.rank):
                if worker.rank not in running:
                    lines.append(f"  rank {worker.rank} had exited with code {worker.exit_code or 0}")
            self.err.write("\n".join(lines) + f"\n  logs: {self.plan.log_dir}\n")
            return EXIT_TIMEOUT
        if failed:
            first = failed[0]
            lines, errors = [], {}
            for worker in failed:
                errors[worker.rank] = error = self._error_of(worker.rank)
                lines.append(f"migrate run: rank {worker.rank} exited with code {worker.exit_code}"
                             + (f": {error[0]}" if error else ""))
                if worker is first:  # the rest of a long message once (ranks often fail alike)
                    lines.extend(f"    {line}" for line in error[1:])
            # Ranks that did not fail but were running when the first one did (stopped by msrun or here).
            stopped = sorted(w.rank for w in self.workers.values() if w not in failed and (
                w.rank in self._running_at_end
                or w.exit_code in (None, -signal.SIGKILL) and (w.finished_at or 0.0) >= (first.finished_at or 0.0)))
            states = {rank: self._state_of(rank) for rank in stopped}
            if all(any("CollectiveError" in line for line in errors[w.rank]) for w in failed):
                # Every failure was a collective giving up on a peer: the peers that did not fail, and were
                # not waiting in a collective themselves, are the likely cause.
                suspects = [r for r in stopped if states[r][0] is not True]
                if suspects:
                    lines.append(
                        f"migrate run: {self._ranks(suspects)} did not fail but "
                        f"{'was' if len(suspects) == 1 else 'were'} still running when the "
                        f"collective of {self._ranks(w.rank for w in failed)} failed waiting for its peers: "
                        f"{self._ranks(suspects)} probably hung or stopped calling collectives (last output: "
                        + "; ".join(f"rank {r}: {self._last_line(r)}" for r in suspects) + ")")
            for rank in stopped:
                if states[rank][0] is not None:
                    lines.append(f"migrate run: rank {rank} was still running, {states[rank][1]}; it was stopped")
            if len(failed) < self.plan.nproc:
                lines.append("migrate run: the other ranks were stopped.")
            if not (self.all_ranks or first.rank == 0 and self.plan.node_rank == 0):
                lines.append(f"  last output of rank {first.rank}:\n{self._tail(first.rank)}")
            lines.append(f"  logs: {self.plan.log_dir}")
            self.err.write("\n".join(lines) + "\n")
            return first.exit_code if 0 < first.exit_code < 256 else 1
        if outcome == "msrun-exited" and msrun_code != 0:
            self.err.write(f"migrate run: msrun failed with exit code {msrun_code}; see {self.msrun_log}\n"
                           + "\n".join(f"    {l}" for l in self.msrun_log.read_text(errors="replace")
                                       .splitlines()[-10:]) + "\n")
            return msrun_code if 0 < msrun_code < 256 else 1
        if len(self.workers) < self.plan.nproc:
            self.err.write(f"migrate run: not every rank started; see {self.msrun_log}\n")
            return 1
        return 0


def run(args: argparse.Namespace) -> int:
    """Launch `args.script` as configured by `add_arguments`; returns the job's exit code."""
    try:
        plan = make_plan(args)
        check_mindspore()
    except LaunchError as exc:
        sys.stderr.write(f"migrate run: {exc}\n")
        return EXIT_LAUNCH_ERROR
    try:
        plan.log_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        sys.stderr.write(f"migrate run: cannot use {plan.log_dir} as the log directory: {exc.strerror or exc}\n")
        return EXIT_LAUNCH_ERROR
    return Supervisor(plan, args.all_ranks, args.timeout).run()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m migrate.runtime.launch",
                                     description="Run a converted program as N processes under msrun.")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
