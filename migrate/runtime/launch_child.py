"""Starts one process of a `migrate run` job: ``python -I -S launch_child.py ARGS`` becomes ``python ARGS``.

msrun, its scheduler and its workers (and the workers a node other than 0 starts itself)
are started through this script; msrun reaches it through the ``python`` shim that
`launch.worker_environment` puts first on PATH. Before it hands over to the interpreter
(``os.execv``: same pid, the argv the process was started with) it

* makes the process die with its parent: ``PR_SET_PDEATHSIG`` (SIGKILL), which survives
  the exec. So killing the launcher, even with SIGKILL, kills msrun, and msrun's end kills
  the scheduler and the workers. The kernel sends it when the *thread* that forked the
  process ends; the launcher and msrun start their children from their main thread, which
  lives as long as they do. A parent that died before the signal was armed is caught by
  comparing ``getppid()`` with the pid it left in MIGRATE_PARENT_PID;
* gives rank 0 the launcher's standard input (MIGRATE_STDIN, ``/proc/<launcher>/fd/0``),
  and every other process of the job /dev/null. Opened anew, not inherited: msrun closes
  every other descriptor of its children, and its own standard input is /dev/null.

``--leader`` (msrun): its children are processes of the job too, so it passes its own pid
on as their parent and keeps MIGRATE_STDIN for them. Any other process takes both
variables out of its environment: a program's own ``python`` subprocesses (the shim is on
their PATH too) start as they always would.

Standard library only (it runs with ``-I -S``, before anything of the job is imported).
"""

import os
import signal
import sys

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_parent(expected_parent: int) -> None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return  # not Linux: the launcher's own clean-up is all there is
    if os.getppid() != expected_parent:
        os.kill(os.getpid(), signal.SIGKILL)  # the parent is already gone: what the signal would have done


def _is_rank_zero(env) -> bool:
    return env.get("MS_ROLE") == "MS_WORKER" and env.get("MS_NODE_ID", env.get("RANK_ID")) == "0"


def _open_stdin(path):
    """``path`` for reading, or /dev/null when it cannot be opened (a socket, a launcher gone)."""
    if path:
        try:
            # O_NONBLOCK: opening a named FIFO without a writer would wait for one. O_NOCTTY: a worker
            # leads its own session and must not take the launcher's terminal as its controlling one.
            fd = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
            os.set_blocking(fd, True)
            return fd
        except OSError:
            pass
    return os.open(os.devnull, os.O_RDONLY)


def main(argv) -> None:
    env = os.environ
    parent = env.pop("MIGRATE_PARENT_PID", None)
    # Outside a job (a program's own `python ...`) every argument is the interpreter's.
    leader = parent is not None and argv[:1] == ["--leader"]
    args = argv[1:] if leader else argv
    if parent is not None and parent.isdigit():
        _die_with_parent(int(parent))
        if leader:
            env["MIGRATE_PARENT_PID"] = str(os.getpid())
        else:
            stdin_path = env.pop("MIGRATE_STDIN", None)
            fd = _open_stdin(stdin_path if _is_rank_zero(env) else None)
            if fd == 0:
                os.set_inheritable(0, True)  # descriptor 0 was closed: the new one took its place
            else:
                os.dup2(fd, 0)
                os.close(fd)
    os.execv(sys.executable, [sys.executable, *args])


if __name__ == "__main__":
    main(sys.argv[1:])
