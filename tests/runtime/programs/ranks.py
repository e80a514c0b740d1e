"""Small program for launcher tests: `ranks.py MODE`."""

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
tfd.reduce("sum", np.float32(1.0))  # rank 0 waits here for a failed or hung rank 1
print(f"rank {r} finished", flush=True)
