"""Small program for launcher tests: `ranks.py MODE`."""

import signal
import sys
import time

import numpy as np

import migrate.runtime as tfd

mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
strategy = tfd.MirroredStrategy()
r = tfd.rank()
print(f"rank {r} of {strategy.num_replicas_in_sync} says hello", flush=True)
total = tfd.reduce("sum", np.float32(r + 1))
print(f"rank {r} total {float(total)}", flush=True)
if mode == "exit" and r == 1:
    sys.exit(3)
if mode == "crash" and r == 1:
    raise RuntimeError("boom on rank 1")
if mode == "hang" and r == 1:
    time.sleep(600)
if mode == "sleep":  # until a signal ends the job
    def stop(signum, frame):
        print(f"rank {r} received {signal.Signals(signum).name}", flush=True)
        sys.exit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop)
    print(f"rank {r} sleeping", flush=True)
    time.sleep(600)
if mode == "stdin":
    data = sys.stdin.read()
    print(f"rank {r} read {len(data)} bytes", flush=True)
    for line in data.splitlines():
        print(f"rank {r} got {line!r}", flush=True)
tfd.reduce("sum", np.float32(1.0))  # rank 0 waits here for a failed or hung rank 1
print(f"rank {r} finished", flush=True)
