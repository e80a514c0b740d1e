"""Training throughput: a converted program against its TF original and hand-written MindSpore.

    python benchmarks/training_bench.py                # 3 interleaved rounds, 1 and 2 processes
    python benchmarks/training_bench.py --quick        # 1 round, fewer examples (a smoke run)
    python benchmarks/training_bench.py --workload cnn --json out.json

Three workloads (``--workload mlp|cnn|fit|all``, all by default), each a TF program trained
under a MirroredStrategy with SGD and momentum:

- **mlp**: an MLP 784-512-512-10, 16,384 examples, global batch 256
  (``benchmarks/training/mlp_tf.py``);
- **cnn**: Conv2D-BatchNormalization-ReLU-MaxPooling2D twice (16, then 32 filters) and a
  Dense head on channels-last 32x32x3 images, 2,048 examples, global batch 128
  (``benchmarks/training/cnn_tf.py``);
- **fit**: the MLP compiled and trained by Keras's ``model.fit`` (one call per epoch, so each
  is timed) instead of a custom loop (``benchmarks/training/mlp_fit_tf.py``); its epoch
  loss is Keras's epoch mean, not the last step's. The hand-written programs are the MLP's.

Programs, each run on 1 process and on 2:

- **TF**: the original under a MirroredStrategy over 1 or 2 logical CPU devices;
- **converted, native tier** (the default: MindSpore's cells, ``nn.SGD``,
  ``nn.CrossEntropyLoss``, ``ms.value_and_grad``, the step a Cell compiled in GRAPH_MODE) and
  **converted, shim tier** (``--tier shim``: ``migrate.runtime``): ``migrate convert`` of that
  file, run by ``migrate run -n 2`` (plainly, ``python``, on 1 process);
- **MindSpore GRAPH** and **MindSpore PyNative**: the same model written by hand
  (``benchmarks/training/*_mindspore.py``: nn.SequentialCell, nn.Momentum,
  NumpySlicesDataset sharded by rank, nn.TrainOneStepCell; the CNN's images channels-first
  from the start), under msrun for 2.

Every program times its own epochs and prints its last step's loss summed over the
replicas (the TF and converted programs reduce it every step, the hand-written ones once
at the end); the first epoch (compilation, warm-up) is left out
and a run's examples/s is the examples of an epoch over the median of the others.
Rounds interleave the programs (TF, converted, GRAPH, PyNative, then again) so that a
slow spell of the machine falls on all of them; the table gives the median over rounds
and each tier's ratio to each other program. Targets (issue 19): native tier >= 0.9x
hand-written GRAPH, shim tier >= 0.9x hand-written PyNative.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROGRAMS = Path(__file__).resolve().parent / "training"
TF_REPLICAS = REPO / "tests" / "equivalence" / "tf_replicas.py"


# workload -> (TF program, hand-written MindSpore program, examples, what it trains)
WORKLOADS = {
    "mlp": ("mlp_tf.py", "mlp_mindspore.py", 16384, "MLP 784-512-512-10, global batch 256"),
    "cnn": ("cnn_tf.py", "cnn_mindspore.py", 2048, "CNN (Conv2D-BN-ReLU-pool x2, Dense) on 32x32x3, global batch 128"),
    "fit": ("mlp_fit_tf.py", "mlp_mindspore.py", 16384, "the MLP trained by Keras `fit` (one call per epoch)"),
}
NATIVE, SHIM = "converted, native tier", "converted, shim tier (--tier shim)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env(**extra) -> dict:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("MS_", "OMPI_", "RANK_")) and k != "TF_CONFIG"}
    out.update(PYTHONPATH=str(REPO), TF_CPP_MIN_LOG_LEVEL="2", GLOG_v="3", **extra)
    return out


def launched(script: Path, nproc: int, args: list[str], work: Path) -> list[str]:
    if nproc == 1:
        return [sys.executable, str(script), *args]
    return [sys.executable, "-m", "migrate", "run", "-n", str(nproc), "--master-port", str(free_port()),
            "--log-dir", str(work / f"logs-{free_port()}"), "--timeout", "1500", str(script), *args]


def run(command: list[str], extra_env: dict, cwd: Path) -> dict:
    done = subprocess.run(command, capture_output=True, text=True, env=env(**extra_env), cwd=cwd, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-1500:]}\n"
                           f"{done.stderr[-3000:]}")
    line = next(l for l in reversed(done.stdout.splitlines()) if l.strip().startswith("{"))
    result = json.loads(line)
    steady = result["epoch_seconds"][1:] or result["epoch_seconds"]
    result["examples_per_s"] = result["examples"] / statistics.median(steady)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 round, a quarter of the examples")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--nproc", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--workload", choices=[*WORKLOADS, "all"], default="all")
    parser.add_argument("--json", type=Path, help="also write the results here")
    opts = parser.parse_args()
    rounds = opts.rounds or (1 if opts.quick else 3)
    rows = []
    for workload in (WORKLOADS if opts.workload == "all" else [opts.workload]):
        rows += bench(workload, rounds, opts.nproc, opts.quick)
    if opts.json:
        opts.json.write_text(json.dumps({"rows": rows, "rounds": rounds}, indent=1))
    return 0


def bench(workload: str, rounds: int, nprocs: list[int], quick: bool) -> list[dict]:
    tf_program, ms_program, examples, title = WORKLOADS[workload]
    sizes = {"BENCH_EXAMPLES": str(examples // 4 if quick else examples), "BENCH_EPOCHS": "3"}
    work = Path(tempfile.mkdtemp(prefix="migrate-train-bench-"))
    try:
        scripts = {}
        for tier in ("native", "shim"):
            subprocess.run([sys.executable, "-m", "migrate", "convert", str(PROGRAMS / tf_program), "--out",
                            str(work / tier), "--no-cache", "--tier", tier], check=True, capture_output=True, env=env(), cwd=work)
            scripts[tier] = work / tier / tf_program
        programs = {
            "TF (MirroredStrategy)": lambda n: [sys.executable, str(TF_REPLICAS), "--replicas", str(n),
                                                str(PROGRAMS / tf_program)],
            NATIVE: lambda n: launched(scripts["native"], n, [], work),
            SHIM: lambda n: launched(scripts["shim"], n, [], work),
            "MindSpore GRAPH, by hand": lambda n: launched(PROGRAMS / ms_program, n, ["graph"], work),
            "MindSpore PyNative, by hand": lambda n: launched(PROGRAMS / ms_program, n, ["pynative"], work),
        }
        results: dict = {n: {name: [] for name in programs} for n in nprocs}
        for round_ in range(rounds):
            for n in nprocs:
                for name, command in programs.items():
                    result = run(command(n), sizes, work)
                    results[n][name].append(result)
                    print(f"{workload}, round {round_ + 1}/{rounds}, {n} process(es), {name}: "
                          f"{result['examples_per_s']:,.0f} examples/s, final loss {result['final_loss']:.4f}",
                          file=sys.stderr, flush=True)
        rows = []
        for n in nprocs:
            medians = {name: statistics.median(r["examples_per_s"] for r in runs) for name, runs in results[n].items()}
            for name, value in medians.items():
                rows.append({"workload": workload, "processes": n, "program": name, "examples_per_s": value,
                             "native_over_it": medians[NATIVE] / value, "shim_over_it": medians[SHIM] / value,
                             "final_loss": results[n][name][-1]["final_loss"], **sizes})
        print(f"\nTraining throughput: {title}, {sizes['BENCH_EXAMPLES']} examples, median of {rounds} round(s)")
        print("| processes | program | examples/s | native tier / it | shim tier / it | final loss |")
        print("|---|---|---|---|---|---|")
        for row in rows:
            print(f"| {row['processes']} | {row['program']} | {row['examples_per_s']:,.0f} | "
                  f"{row['native_over_it']:.2f} | {row['shim_over_it']:.2f} | {row['final_loss']:.4f} |", flush=True)
        print(same_model(workload, rows), flush=True)
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


def same_model(workload: str, rows: list[dict]) -> str:
    """Whether each program ends at TF's final loss (rtol 1e-4) with as many processes: all of
    them train one model from one set of weights. (With ``fit`` TF's loss is Keras's epoch
    mean, which the hand-written custom loops do not print.)"""
    apart = []
    for row in rows:
        tf_loss = next(r["final_loss"] for r in rows if r["processes"] == row["processes"] and r["program"].startswith("TF"))
        if workload == "fit" and "by hand" in row["program"]:
            continue
        if abs(row["final_loss"] - tf_loss) > 1e-4 * abs(tf_loss):
            apart.append(f"{row['program']} on {row['processes']} ({row['final_loss']:.6f}, TF {tf_loss:.6f})")
    return "final losses: " + ("every program ends at TF's (rtol 1e-4)" if not apart else "apart from TF's: " + "; ".join(apart))


if __name__ == "__main__":
    sys.exit(main())
