"""Runtime overhead, measured in one run and printed as ratios.

    python benchmarks/runtime_bench.py            # launches itself with 2 CPU processes

1. all-reduce throughput through the shim (migrate.runtime.reduce) vs raw ops.AllReduce,
   1/16/64 MB float32 (target >= 0.95x);
2. one training step of a small MLP through the shim (aggregate_gradients) vs the same step
   written natively with set_auto_parallel_context + nn.DistributedGradReducer (target <= 1.05x);
3. bucketed vs per-tensor gradient reduction for a model with 60 parameter tensors.
Each pair is timed interleaved (A, B, A, B, ...) and compared by median, since two
processes share two cores and timings are noisy.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def median_pair(run_a, run_b, repeats):
    times_a, times_b = [], []  # every timed function ends in .asnumpy(), which waits for the device
    for fn in (run_a, run_b):
        fn()
    for _ in range(repeats):
        for fn, times in ((run_a, times_a), (run_b, times_b)):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return float(np.median(times_a)), float(np.median(times_b))


def bench_worker():
    import mindspore as ms
    from mindspore import Tensor, nn, ops

    import migrate.runtime as tfd

    tfd.initialize()
    rank = tfd.rank()
    rows = []
    raw_all_reduce = ops.AllReduce()
    for megabytes in (1, 16, 64):
        x = Tensor(np.ones(megabytes * 2**20 // 4, np.float32))
        repeats = 30 if megabytes == 1 else 10 if megabytes == 16 else 5
        shim, raw = median_pair(lambda: tfd.reduce("sum", x).asnumpy(), lambda: raw_all_reduce(x).asnumpy(), repeats)
        rows.append((f"all-reduce {megabytes} MB float32", "throughput shim/raw", raw / shim, ">= 0.95",
                     f"shim {megabytes / shim:.0f} MB/s, raw {megabytes / raw:.0f} MB/s"))

    # A small MLP step: shim vs native DistributedGradReducer.
    def mlp():
        ms.set_seed(0)
        return nn.SequentialCell([nn.Dense(64, 256), nn.ReLU(), nn.Dense(256, 256), nn.ReLU(), nn.Dense(256, 10)])

    features = Tensor(np.random.default_rng(rank).normal(size=(32, 64)).astype(np.float32))
    labels = Tensor(np.random.default_rng(rank).integers(0, 10, size=(32,)).astype(np.int32))
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    def make_step(use_shim):
        model = mlp()
        optimizer = nn.SGD(model.trainable_params(), learning_rate=0.01)
        grad_fn = ms.value_and_grad(lambda f, l: loss_fn(model(f), l), None, optimizer.parameters)
        reducer = None if use_shim else nn.DistributedGradReducer(optimizer.parameters, mean=False)

        def step():
            loss, grads = grad_fn(features, labels)
            optimizer(tfd.aggregate_gradients(grads) if use_shim else reducer(grads))
            return loss.asnumpy()
        return step

    shim_step, native_step = make_step(True), make_step(False)
    shim, native = median_pair(shim_step, native_step, 30)
    rows.append(("MLP train step (64-256-256-10)", "time shim/native", shim / native, "<= 1.05",
                 f"shim {shim * 1e3:.2f} ms, native {native * 1e3:.2f} ms"))

    grads = tuple(Tensor(np.ones((i % 7 + 2, 16), np.float32)) for i in range(60))
    bucketed, per_tensor = median_pair(lambda: [g.asnumpy() for g in tfd.aggregate_gradients(grads)],
                                       lambda: [g.asnumpy() for g in tfd.aggregate_gradients(grads, bucket_bytes=1)],
                                       15)
    rows.append(("60 gradient tensors", "time per-tensor/bucketed", per_tensor / bucketed, "> 1",
                 f"bucketed {bucketed * 1e3:.2f} ms, per-tensor {per_tensor * 1e3:.2f} ms"))
    if rank == 0:
        print(f"{'case':34} {'ratio':26} {'value':>7}  {'target':8}  detail")
        for case, what, value, target, detail in rows:
            print(f"{case:34} {what:26} {value:7.3f}  {target:8}  {detail}")


def main():
    if os.environ.get("MS_ROLE"):
        bench_worker()
        return 0
    return subprocess.call([sys.executable, "-m", "migrate.runtime.launch", "-n", "2", "--device", "CPU",
                            "--timeout", "600", __file__], cwd=REPO,
                           env={**os.environ, "PYTHONPATH": str(REPO)})


if __name__ == "__main__":
    sys.exit(main())
