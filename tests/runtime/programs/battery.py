"""Semantic checks run on every rank under `migrate run -n 2`; writes results/<rank>.json.

Each key has a twin in tf_reference.py, computed by TensorFlow on a 2-replica MirroredStrategy.
"""

import json
import sys
from pathlib import Path

import numpy as np

import migrate.runtime as tfd

OUT = Path(sys.argv[1])
results = {}
strategy = tfd.MirroredStrategy()
r, R = tfd.rank(), strategy.num_replicas_in_sync


def tolist(v):
    if isinstance(v, dict):
        return {k: tolist(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [tolist(x) for x in v]
    if hasattr(v, "asnumpy"):
        v = v.asnumpy()
    return np.asarray(v).tolist()


def error_of(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the message is the result
        return f"{type(exc).__name__}: {exc}"
    return "no error"


# --- reduce across replicas ---------------------------------------------------------------
value = np.array([[r + 1, 2 * (r + 1)], [0.5 * r, 3.0]], np.float32)
results["sum_none"] = tolist(strategy.reduce(tfd.ReduceOp.SUM, value, axis=None))
results["mean_none"] = tolist(strategy.reduce(tfd.ReduceOp.MEAN, value, axis=None))
results["strings"] = [tolist(strategy.reduce(op, np.float32(r + 1.5), axis=None)) for op in ("sum", "Sum", "MEAN", "mean")]
from mindspore import Tensor, ops  # noqa: E402

results["ms_reduce_op_sum"] = tolist(tfd.reduce(ops.ReduceOp.SUM, Tensor(value), axis=None))
results["ms_tensor_kind"] = type(tfd.reduce("sum", Tensor(value))).__name__
results["int_mean"] = tolist(strategy.reduce("MEAN", np.int32(r + 2), axis=None))
results["unknown_op_err"] = error_of(lambda: strategy.reduce("max", value, axis=None))
results["bs_err"] = error_of(lambda: tfd.InputContext(1, 0, 2).get_per_replica_batch_size(7))

# --- datasets -----------------------------------------------------------------------------
def global_batches(n, b):
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2) * 0.5
    return [x[i:i + b] for i in range(0, n, b)]


for n, b in [(14, 8), (5, 4), (1, 4), (9, 7)]:
    results[f"split_{n}_{b}"] = [tolist(batch[:, 0] * 2) for batch in strategy.experimental_distribute_dataset(global_batches(n, b))]
    sums, means = [], []
    for batch in tfd.distribute_dataset(global_batches(n, b)):
        sums.append(tolist(strategy.reduce("SUM", batch, axis=0)))
        means.append(tolist(strategy.reduce("MEAN", batch, axis=0)))
    results[f"sum_axis0_{n}_{b}"], results[f"mean_axis0_{n}_{b}"] = sums, means

dict_batches = [{"x": np.arange(i, i + 5, dtype=np.int64), "y": (np.arange(i, i + 5) * 10).astype(np.float32)} for i in (0, 5)]
results["split_dict"] = [tolist(b) for b in strategy.experimental_distribute_dataset(dict_batches)]
tuple_batches = [(np.arange(3), np.arange(3) + 100)]
results["split_tuple"] = [tolist(b) for b in tfd.distribute_dataset(tuple_batches)]

contexts = []
def ranged(n, b):
    def fn(ctx):
        contexts.append([ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync,
                         ctx.get_per_replica_batch_size(4 * ctx.num_replicas_in_sync)])
        return [np.arange(i, min(i + b, n)) for i in range(0, n, b)]
    return fn
results["fromfn_11_2"] = [tolist(b) for b in strategy.distribute_datasets_from_function(ranged(11, 2))]
results["fromfn_9_2"] = [tolist(b) for b in tfd.distribute_datasets_from_function(ranged(9, 2))]
results["fromfn_ctx"] = contexts[0]

# --- contexts -------------------------------------------------------------------------------
def table():
    rc = tfd.get_replica_context()
    return dict(has=tfd.has_strategy(), cross=tfd.in_cross_replica_context(),
                strat_is_s=tfd.get_strategy() is strategy, rc_none=rc is None,
                rc_id=None if rc is None else rc.replica_id_in_sync_group,
                rc_n=None if rc is None else rc.num_replicas_in_sync)
results["ctx_outside"] = table()
with strategy.scope():
    results["ctx_scope"] = table()
    results["ctx_run_in_scope"] = strategy.run(table)
results["ctx_run"] = strategy.run(table)
results["merge_call"] = strategy.run(lambda: tfd.get_replica_context().merge_call(
    lambda s, x: type(s).__name__ + str(tfd.in_cross_replica_context()), args=(1,)))
results["reduce_in_run_err"] = error_of(lambda: strategy.run(lambda: strategy.reduce("SUM", 1.0, axis=None)))

# --- replica-context all_reduce, gather, values --------------------------------------------
def nested():
    rc = tfd.get_replica_context()
    v = {"a": np.full(2, r + 1, np.float32), "b": (np.float32(r), np.float32(2.0 * r))}
    return {"sum": rc.all_reduce("SUM", v), "mean": rc.all_reduce(tfd.ReduceOp.MEAN, v)}
results["all_reduce_nested"] = tolist(strategy.run(nested))
results["spmd_all_reduce"] = tolist(tfd.all_reduce("sum", [np.float32(r), (np.full(3, r, np.float32),)]))
results["gather0"] = tolist(strategy.gather(np.arange(2 * (r + 1), dtype=np.float32).reshape(r + 1, 2), axis=0))
results["gather1"] = tolist(tfd.gather(np.arange(2 * (r + 1), dtype=np.float32).reshape(2, r + 1) + 10 * r, axis=1))
results["values_fn"] = tolist(strategy.experimental_local_results(
    strategy.experimental_distribute_values_from_function(lambda c: c.replica_id_in_sync_group * 10 + c.num_replicas_in_sync)))

# --- bad use gets a clear message, and the job stays in step --------------------------------
results["shape_mismatch_err"] = error_of(lambda: tfd.reduce("sum", np.ones(3 + r, np.float32)))
results["after_mismatch"] = tolist(tfd.reduce("sum", np.float32(1.0)))
results["unsupported_err"] = error_of(lambda: tfd.reduce("sum", object()))
results["after_unsupported"] = tolist(tfd.reduce("sum", np.float32(2.0)))
def rank_dependent_dataset():
    for batch in tfd.distribute_dataset([np.arange(4)] * (2 + r)):
        tfd.reduce("sum", batch, axis=0)
results["uneven_steps_err"] = error_of(rank_dependent_dataset)
results["after_uneven"] = tolist(tfd.reduce("sum", np.float32(3.0)))

# --- repeated calls: the check rides in-band, and still catches a rank that deviates -------
group = tfd.collectives.world()
rounds = group.agreement_rounds
for _ in range(10):
    tfd.reduce("sum", np.ones(3, np.float32))
results["rounds_in_loop"] = group.agreement_rounds - rounds
results["predicted_change_all"] = tolist(tfd.reduce("sum", np.ones(5, np.float32)))  # every rank changes
for _ in range(3):
    tfd.reduce("sum", np.ones(3, np.float32))
results["predicted_mismatch_err"] = error_of(lambda: tfd.reduce("sum", np.ones(3 + r, np.float32)))
results["after_predicted_mismatch"] = tolist(tfd.reduce("sum", np.float32(4.0)))
for _ in range(3):
    tfd.reduce("sum", np.ones(2, np.float32))
results["predicted_then_gather"] = tolist(tfd.gather(np.full((1, 2), r, np.float32), axis=0))  # all change kind
for _ in range(3):
    tfd.reduce("sum", np.ones(2, np.float32))
results["predicted_vs_gather_err"] = error_of(
    lambda: tfd.gather(np.ones((1, 2), np.float32), axis=0) if r == 1 else tfd.reduce("sum", np.ones(2, np.float32)))
results["after_predicted_vs_gather"] = tolist(tfd.reduce("sum", np.float32(6.0)))
steady = (Tensor(np.ones((2, 3), np.float32)), Tensor(np.ones(4, np.float32)))
rounds = group.agreement_rounds
for _ in range(10):
    summed_steady = tfd.aggregate_gradients(steady)
results["grad_rounds_in_loop"] = group.agreement_rounds - rounds
results["grad_steady"] = [tolist(g) for g in summed_steady]
deviating = (Tensor(np.ones((2, 3 + r), np.float32)), Tensor(np.ones(4, np.float32)))

results["grad_mismatch_err"] = error_of(lambda: tfd.aggregate_gradients(deviating))
results["after_grad_mismatch"] = tolist(tfd.reduce("sum", np.float32(5.0)))
results["float64_sum"] = tolist(tfd.reduce("sum", np.array([0.1 + r, 1e-12], np.float64)))
results["float64_kind"] = str(np.asarray(tfd.reduce("sum", np.array([1.0], np.float64))).dtype)

# --- gradients and parameters -----------------------------------------------------------------
shapes = [(i % 7 + 1, i % 3 + 2) for i in range(60)]
grads = tuple(Tensor(np.full(s, (r + 1) * (i + 1), np.float32)) for i, s in enumerate(shapes))
grads = grads + (None, Tensor(np.full((3,), r + 1, np.float16)))
summed = tfd.aggregate_gradients(grads, bucket_bytes=4096)
meaned = tfd.aggregate_gradients(grads, op="mean")
results["grad_sum"] = [None if g is None else float(g.asnumpy().ravel()[0]) for g in summed]
results["grad_mean"] = [None if g is None else float(g.asnumpy().ravel()[0]) for g in meaned]
results["grad_shapes_ok"] = all(g is None and o is None or tuple(g.shape) == tuple(o.shape) for g, o in zip(summed, grads))

import mindspore as ms  # noqa: E402
from mindspore import nn  # noqa: E402

ms.set_seed(100 + r)  # different initial weights on every rank
with strategy.scope():
    dense = nn.Dense(4, 3)
results["scope_weights"] = tolist(dense.weight.value().asnumpy().sum() + dense.bias.value().asnumpy().sum())
other = nn.Dense(5, 2)
results["before_broadcast"] = float(other.weight.value().asnumpy().sum())
tfd.broadcast_parameters(other)
results["after_broadcast"] = float(other.weight.value().asnumpy().sum())

# --- the worked example: a training loop through the shim ------------------------------------
GLOBAL_BATCH = 8
rng = np.random.default_rng(7)
x = rng.normal(size=(32, 4)).astype(np.float32)
y = (x @ rng.normal(size=(4, 1))).astype(np.float32)
w1 = rng.normal(scale=0.5, size=(4, 8)).astype(np.float32)
w2 = rng.normal(scale=0.5, size=(8, 1)).astype(np.float32)
with strategy.scope():
    model = nn.SequentialCell([nn.Dense(4, 8, weight_init=Tensor(w1.T), bias_init="zeros", activation="tanh"),
                               nn.Dense(8, 1, weight_init=Tensor(w2.T), bias_init="zeros")])
    optimizer = nn.SGD(model.trainable_params(), learning_rate=0.05)


def forward(features, targets):
    per_example = ((model(features) - targets) ** 2).sum(axis=1)
    return per_example.sum() / GLOBAL_BATCH


grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)


def train_step(inputs):
    features, targets = inputs
    loss, grads = grad_fn(features, targets)
    optimizer(tfd.aggregate_gradients(grads))
    return loss


dist_ds = strategy.experimental_distribute_dataset(
    [(Tensor(x[i:i + GLOBAL_BATCH]), Tensor(y[i:i + GLOBAL_BATCH])) for i in range(0, 32, GLOBAL_BATCH)])
losses = []
for epoch in range(2):
    for batch in dist_ds:
        losses.append(float(strategy.reduce(tfd.ReduceOp.SUM, strategy.run(train_step, args=(batch,)), axis=None).asnumpy()))
results["losses"] = losses

# --- tf.Tensor values come back as tf.Tensor -------------------------------------------------
if len(sys.argv) > 2 and sys.argv[2] == "with-tf":
    import tensorflow as tf

    out = tfd.reduce("sum", tf.constant([1.0, 2.0]) * (r + 1))
    results["tf_value"] = [type(out).__module__.split(".")[0], out.numpy().tolist()]

OUT.mkdir(parents=True, exist_ok=True)
(OUT / f"{r}.json").write_text(json.dumps(results))
print("battery done on rank", r)
