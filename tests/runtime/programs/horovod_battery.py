"""`migrate.runtime.horovod` on every rank: `horovod_battery.py OUT_DIR` writes OUT_DIR/<rank>.json.

Each rank's inputs are functions of its rank, so the test computes what Horovod's documented
semantics give with numpy and compares.
"""

import json
import sys
from pathlib import Path

import numpy as np

from migrate.runtime import horovod as hvd
from migrate.runtime import keras as mk
from migrate.runtime.horovod import callbacks as hvd_callbacks

out = Path(sys.argv[1])
results = {}

hvd.init()
r, n = hvd.rank(), hvd.size()
results["ids"] = [r, n, hvd.local_rank(), hvd.local_size(), hvd.is_initialized()]


def arr(t):
    return np.asarray(t.asnumpy() if hasattr(t, "asnumpy") else t).tolist()


import mindspore as ms  # noqa: E402

base = ms.Tensor(np.array([1.0, -2.0, 3.5], np.float32) * (r + 1))
results["average"] = arr(hvd.allreduce(base))
results["sum"] = arr(hvd.allreduce(base, op=hvd.Sum))
results["average_false"] = arr(hvd.allreduce(base, average=False))
results["scaled"] = arr(hvd.allreduce(base, prescale_factor=0.5, postscale_factor=3.0))
results["min"] = arr(hvd.allreduce(base, op=hvd.Min))
results["max"] = arr(hvd.allreduce(base, op=hvd.Max))
results["product"] = arr(hvd.allreduce(base, op=hvd.Product))
results["int_average"] = arr(hvd.allreduce(ms.Tensor(np.array([3, 8], np.int32) + r)))
numpy_in = hvd.allreduce(np.array([2.0, 4.0], np.float64) * (r + 1))
results["numpy_kind"] = type(numpy_in).__name__
results["numpy_average"] = arr(numpy_in)
results["grouped"] = [arr(t) for t in hvd.grouped_allreduce([base, base * 2], op=hvd.Sum)]
results["allgather"] = arr(hvd.allgather(ms.Tensor(np.full((r + 1, 2), r, np.float32))))
results["broadcast"] = arr(hvd.broadcast(base, root_rank=n - 1))
results["broadcast_object"] = hvd.broadcast_object({"rank": r, "text": "x" * (r + 3)}, root_rank=0)
results["allgather_object"] = hvd.allgather_object(("r", r, [r] * r))
results["run"] = hvd.run(lambda a, b=0: a * 10 + hvd.rank() + b, args=(3,), kwargs={"b": 1}, np=n)
try:
    hvd.run(print, np=n + 1)
except RuntimeError as exc:
    results["run_np"] = str(exc)
try:
    hvd.allreduce(base, op=hvd.Adasum)
except NotImplementedError as exc:
    results["adasum"] = str(exc)

# broadcast_variables: each rank starts from its own weights; rank 0's win
np.random.seed(100 + r)
layer = mk.layers.Dense(3, kernel_initializer=mk.initializers.Constant(float(r + 1)))
layer.build((None, 2))
hvd.broadcast_variables(layer.variables, root_rank=0)
results["broadcast_variables"] = [arr(v) for v in layer.variables]

# optimizers: a plain one updates from this process's gradient only (no strategy: one replica per process);
# DistributedOptimizer averages first; backward_passes_per_step sums locally
w_plain = ms.Parameter(ms.Tensor(np.array([1.0, 1.0], np.float32)), name="w_plain")
mk.optimizers.SGD(0.5).apply_gradients([(ms.Tensor(np.array([r + 1.0, -1.0], np.float32)), w_plain)])
results["plain_sgd"] = arr(w_plain)
w_dist = ms.Parameter(ms.Tensor(np.array([1.0, 1.0], np.float32)), name="w_dist")
opt = hvd.DistributedOptimizer(mk.optimizers.SGD(0.5))
opt.apply_gradients([(ms.Tensor(np.array([r + 1.0, -1.0], np.float32)), w_dist)])
results["distributed_sgd"] = arr(w_dist)
results["optimizer_variables_callable"] = len(opt.variables()) == len(opt.variables)
w_min = ms.Parameter(ms.Tensor(np.array([1.0], np.float32)), name="w_min")
hvd.DistributedOptimizer(mk.optimizers.SGD(0.5)).minimize(lambda: (w_min * float(r + 1)).sum(), [w_min])
results["distributed_minimize"] = arr(w_min)  # d/dw of (r + 1) w, averaged
w_pass = ms.Parameter(ms.Tensor(np.array([1.0], np.float32)), name="w_pass")
passes = hvd.DistributedOptimizer(mk.optimizers.SGD(0.5), backward_passes_per_step=2,
                                  average_aggregated_gradients=True)
for step in range(2):
    passes.apply_gradients([(ms.Tensor(np.array([float(r + step)], np.float32)), w_pass)])
    results[f"passes_{step}"] = arr(w_pass)
    results.setdefault("passes_iterations", []).append(int(passes.iterations.asnumpy()))
results["predivide"] = [arr(g) for g in hvd.allreduce_gradients(
    [base, None], gradient_predivide_factor=4.0)[:1]]

# Keras fit: each process fits its own batches (no split), gradients averaged, metrics local
# unless MetricAverageCallback averages them; the first batch's end broadcasts rank 0's weights
x = (np.arange(12, dtype=np.float32).reshape(6, 2) / 10.0) * (r + 1)
y = x.sum(axis=1, keepdims=True) * 0.5 + r
model = mk.Sequential([mk.layers.Dense(1, kernel_initializer=mk.initializers.Constant(0.1 * (r + 1)),
                                       bias_initializer="zeros")])
model.compile(optimizer=hvd.DistributedOptimizer(mk.optimizers.SGD(0.1)), loss="mse")
history = model.fit(x, y, batch_size=3, epochs=2, shuffle=False, verbose=0,
                    callbacks=[hvd_callbacks.BroadcastGlobalVariablesCallback(0),
                               hvd_callbacks.MetricAverageCallback()])
results["fit_loss"] = [float(v) for v in history.history["loss"]]
results["fit_weights"] = [arr(w) for w in model.get_weights()]
# hvd.load_model: what model.save wrote (rank 0), the optimizer distributed again, training on alike
out.mkdir(parents=True, exist_ok=True)
model.save(str(out / "fitted.keras"))
loaded = hvd.load_model(str(out / "fitted.keras"))
results["loaded_optimizer"] = type(loaded.optimizer).__name__
loaded.fit(x, y, batch_size=3, epochs=1, shuffle=False, verbose=0)
model.fit(x, y, batch_size=3, epochs=1, shuffle=False, verbose=0)
results["loaded_trains_as_saved"] = [arr(a) == arr(b) for a, b in zip(loaded.get_weights(), model.get_weights())]
local = mk.Sequential([mk.layers.Dense(1, kernel_initializer="zeros")])
local.compile(optimizer=mk.optimizers.SGD(0.1), loss="mse")
results["local_fit_loss"] = [float(v) for v in local.fit(x, y, batch_size=6, epochs=1, verbose=0).history["loss"]]

# the warmup schedule, read at each epoch's end
warm = mk.Sequential([mk.layers.Dense(1)])
warm.compile(optimizer=hvd.DistributedOptimizer(mk.optimizers.SGD(0.2, momentum=0.9)), loss="mse")
lrs = warm.fit(x, y, batch_size=2, epochs=3, verbose=0,
               callbacks=[hvd_callbacks.LearningRateWarmupCallback(initial_lr=0.2, warmup_epochs=2)]).history["lr"]
results["warmup_lr"] = [float(v) for v in lrs]
results["momentum_after"] = float(warm.optimizer.momentum)

out.mkdir(parents=True, exist_ok=True)
(out / f"{r}.json").write_text(json.dumps(results))
print(f"horovod battery done on rank {r}", flush=True)
