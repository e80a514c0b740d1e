"""Runtime overhead, measured in one run and printed as ratios.

    python benchmarks/runtime_bench.py                 # launches itself as 2 CPU processes
    python benchmarks/runtime_bench.py --quick         # fewer repetitions (a smoke run)
    python benchmarks/runtime_bench.py --json out.json # also write the table as JSON
                                                       # ({"rows": [...], "summary": {...}})

1. all-reduce throughput through the shim (``migrate.runtime.reduce``) vs raw
   ``ops.AllReduce``, 1/16/64 MB float32 (target >= 0.95x);
2. one training step of a small MLP through the shim (``aggregate_gradients``) vs the
   same step written natively with ``set_auto_parallel_context`` +
   ``nn.DistributedGradReducer`` (target <= 1.05x);
3. bucketed vs per-tensor gradient reduction for a model with 60 parameter tensors
   (target > 1: bucketing helps), the whole step and the reduction alone.

How it measures, because two processes share two cores and single timings swing
by 2x: both variants of a pair run in the same processes, interleaved A B B A A B ...
after warm-up; every timed region starts after a barrier, so both ranks start
together; a trial's time is the slowest rank's (a synchronous job is as fast as its
slowest rank); and each A/B pair gives one ratio. The table shows the median ratio
with its interquartile range and the median time of each variant.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def paired(group, run_a, run_b, repeats, warmup=3):
    """Time `run_a` and `run_b` interleaved (ABBA...); returns per-trial times (slowest rank), A and B."""
    from mindspore import Tensor

    for _ in range(warmup):
        run_a()
        run_b()
    local = np.zeros((repeats, 2), np.float32)
    for trial in range(repeats):
        order = (0, 1) if trial % 2 == 0 else (1, 0)
        for which in order:
            group.barrier()
            start = time.perf_counter()
            (run_a if which == 0 else run_b)()
            local[trial, which] = time.perf_counter() - start
    every_rank = group.all_gather(Tensor(local.reshape(1, -1))).asnumpy().reshape(group.size, repeats, 2)
    slowest = every_rank.max(axis=0)
    return slowest[:, 0], slowest[:, 1]


def summary(ratios):
    q1, median, q3 = np.percentile(ratios, [25, 50, 75])
    return float(median), float(q1), float(q3)


def median_interval(ratios, draws=2000, seed=0):
    """95% bootstrap interval of the median ratio: how far the median itself can be trusted."""
    rng = np.random.default_rng(seed)
    medians = np.median(rng.choice(ratios, size=(draws, len(ratios)), replace=True), axis=1)
    low, high = np.percentile(medians, [2.5, 97.5])
    return float(low), float(high)


def bench_worker(quick: bool):
    import mindspore as ms
    from mindspore import Tensor, nn, ops

    import migrate.runtime as tfd
    from migrate.runtime import collectives

    tfd.initialize()
    group = collectives.world()
    scale = 0.25 if quick else 1.0
    rows = []

    def row(case, metric, ratios, target, ok, detail):
        median, q1, q3 = summary(ratios)
        low, high = median_interval(ratios)
        rows.append({"case": case, "metric": metric, "median": median, "q1": q1, "q3": q3, "ci95": [low, high],
                     "target": target, "pass": bool(ok(median)), "detail": detail, "trials": int(len(ratios))})

    # 1. all-reduce throughput -------------------------------------------------------------
    raw_all_reduce = ops.AllReduce()
    for megabytes, repeats in ((1, 300), (16, 40), (64, 14)):
        x = Tensor(np.ones(megabytes * 2**20 // 4, np.float32))
        shim, raw = paired(group, lambda: tfd.reduce("sum", x).asnumpy(), lambda: raw_all_reduce(x).asnumpy(),
                           max(4, int(repeats * scale)))
        row(f"all-reduce {megabytes} MB float32", "throughput shim/raw", raw / shim, ">= 0.95",
            lambda m: m >= 0.95,
            f"shim {megabytes / np.median(shim):.0f} MB/s, raw {megabytes / np.median(raw):.0f} MB/s")

    # 2. a small MLP step: shim vs native DistributedGradReducer -----------------------------
    rank = group.rank
    features = Tensor(np.random.default_rng(rank).normal(size=(32, 64)).astype(np.float32))
    labels = Tensor(np.random.default_rng(rank).integers(0, 10, size=(32,)).astype(np.int32))
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    def make_step(model_fn, reduce_grads):
        ms.set_seed(0)
        model = model_fn()
        optimizer = nn.SGD(model.trainable_params(), learning_rate=0.01)
        grad_fn = ms.value_and_grad(lambda f, l: loss_fn(model(f), l), None, optimizer.parameters)
        native = nn.DistributedGradReducer(optimizer.parameters, mean=False)

        def step():
            loss, grads = grad_fn(features, labels)
            optimizer(reduce_grads(grads, native))
            return loss.asnumpy()
        return step

    def mlp():
        return nn.SequentialCell([nn.Dense(64, 256), nn.ReLU(), nn.Dense(256, 256), nn.ReLU(), nn.Dense(256, 10)])

    shim, native = paired(group, make_step(mlp, lambda g, _: tfd.aggregate_gradients(g)),
                          make_step(mlp, lambda g, reducer: reducer(g)), max(10, int(150 * scale)))
    row("MLP train step (64-256-256-10)", "time shim/native", shim / native, "<= 1.05", lambda m: m <= 1.05,
        f"shim {np.median(shim) * 1e3:.2f} ms, native {np.median(native) * 1e3:.2f} ms")

    # 3. 60 parameter tensors: bucketed vs one collective per tensor --------------------------
    def deep():
        layers = [nn.Dense(64, 32), nn.ReLU()]
        for _ in range(28):
            layers += [nn.Dense(32, 32), nn.ReLU()]
        return nn.SequentialCell(layers + [nn.Dense(32, 10)])

    count = len(deep().trainable_params())
    bucketed, per_tensor = paired(group, make_step(deep, lambda g, _: tfd.aggregate_gradients(g)),
                                  make_step(deep, lambda g, _: tfd.aggregate_gradients(g, bucket_bytes=0)),
                                  max(10, int(80 * scale)))
    row(f"train step, {count} parameter tensors", "time per-tensor/bucketed", per_tensor / bucketed, "> 1",
        lambda m: m > 1, f"bucketed {np.median(bucketed) * 1e3:.2f} ms, per-tensor {np.median(per_tensor) * 1e3:.2f} ms")
    shim, native = paired(group, make_step(deep, lambda g, _: tfd.aggregate_gradients(g)),
                          make_step(deep, lambda g, reducer: reducer(g)), max(10, int(60 * scale)))
    row(f"train step, {count} parameter tensors", "time shim/native", shim / native, "(info)", lambda m: True,
        f"shim (bucketed) {np.median(shim) * 1e3:.2f} ms, native DistributedGradReducer {np.median(native) * 1e3:.2f} ms")

    ms.set_seed(0)
    grads = tuple(p.value() * 1.0 for p in deep().trainable_params())

    def reduce_only(bucket_bytes):
        return lambda: [g.asnumpy() for g in tfd.aggregate_gradients(grads, bucket_bytes=bucket_bytes)]

    bucketed, per_tensor = paired(group, reduce_only("auto"), reduce_only(0),
                                  max(10, int(80 * scale)))
    row(f"reduce {count} gradient tensors", "time per-tensor/bucketed", per_tensor / bucketed, "> 1",
        lambda m: m > 1, f"bucketed {np.median(bucketed) * 1e3:.2f} ms, per-tensor {np.median(per_tensor) * 1e3:.2f} ms")
    return rows


def python_overhead_us(calls=2000) -> float:
    """Microseconds of Python the shim adds to one steady-state `reduce` call (no communication:
    a one-process group whose collectives return their input), a noise-free number to read the
    all-reduce ratios against."""
    from mindspore import Tensor

    from migrate.runtime import collectives, reductions

    group = collectives.WorldGroup(0, 1, "CPU")
    group._all_reduce = group._all_gather = lambda tensor: tensor
    x = Tensor(np.ones(256, np.float32))
    for _ in range(10):
        reductions.reduce_values(group, "sum", x)
    start = time.perf_counter()
    for _ in range(calls):
        reductions.reduce_values(group, "sum", x)
    return (time.perf_counter() - start) / calls * 1e6


def render(rows) -> str:
    ok = lambda r: "-" if r["target"] == "(info)" else ("yes" if r["pass"] else "NO")
    lines = [f"{'case':36} {'ratio':26} {'median':>7}  {'IQR':>13}  {'95% CI of median':>16}  {'target':8} {'ok':4}  "
             "detail"]
    for r in rows:
        low, high = r["ci95"]
        lines.append(f"{r['case']:36} {r['metric']:26} {r['median']:7.3f}  {r['q1']:6.3f}-{r['q3']:<6.3f}  "
                     f"{low:7.3f}-{high:<8.3f}  {r['target']:8} {ok(r):4}  {r['detail']} "
                     f"({r['trials']} pairs)")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: a quarter of the timed repetitions (at least 4-10 pairs per case), so "
                             "wider intervals")
    parser.add_argument("--json", metavar="FILE",
                        help="also write the results to FILE (written by rank 0): {'rows': one dict per table row "
                             "(median, IQR, 95%% CI, target, pass), 'summary': the shim's Python overhead per "
                             "call, process count, load average}")
    parser.add_argument("--timeout", type=float, default=900,
                        help="end the whole job (both worker processes) after this many seconds (default 900)")
    args = parser.parse_args(argv)
    if os.environ.get("MS_ROLE"):
        rows = bench_worker(args.quick)
        from migrate.runtime import collectives

        if collectives.world().rank == 0:
            print(render(rows), flush=True)
            overhead = python_overhead_us()
            print(f"shim Python per steady-state reduce call: {overhead:.0f} us (no communication)", flush=True)
            load = os.getloadavg()[0]
            print(f"(load average {load:.1f} on {os.cpu_count()} cores)", flush=True)
            if args.json:
                summary = {"python_overhead_us": overhead, "processes": collectives.world().size,
                           "quick": args.quick, "load_average": load}
                Path(args.json).write_text(json.dumps({"rows": rows, "summary": summary}, indent=2))
        return 0
    forwarded = (["--quick"] if args.quick else []) + (["--json", str(Path(args.json).resolve())] if args.json else [])
    return subprocess.call([sys.executable, "-m", "migrate.runtime.launch", "-n", "2", "--device", "CPU",
                            "--timeout", str(args.timeout), __file__, *forwarded], cwd=REPO,
                           env={**os.environ, "PYTHONPATH": str(REPO)})


if __name__ == "__main__":
    sys.exit(main())
