"""TensorFlow's own answers for battery.py, on a 2-replica MirroredStrategy over logical CPUs."""

import json
import sys

import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
d = tf.distribute
results = {}


def per_replica(fn):
    return strategy.experimental_distribute_values_from_function(lambda ctx: fn(ctx.replica_id_in_sync_group))


def replicas(v):
    return [np.asarray(t).tolist() for t in strategy.experimental_local_results(v)]


def error_of(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"
    return "no error"


value = per_replica(lambda r: tf.constant([[r + 1, 2 * (r + 1)], [0.5 * r, 3.0]], tf.float32))
results["sum_none"] = strategy.reduce(d.ReduceOp.SUM, value, axis=None).numpy().tolist()
results["mean_none"] = strategy.reduce(d.ReduceOp.MEAN, value, axis=None).numpy().tolist()
scalar = per_replica(lambda r: tf.constant(r + 1.5, tf.float32))
results["strings"] = [float(strategy.reduce(op, scalar, axis=None)) for op in ("sum", "Sum", "MEAN", "mean")]
results["int_mean"] = float(strategy.reduce("MEAN", per_replica(lambda r: tf.constant(r + 2)), axis=None))
results["unknown_op_err"] = error_of(lambda: strategy.reduce("max", value, axis=None))
results["bs_err"] = error_of(lambda: d.InputContext(1, 0, 2).get_per_replica_batch_size(7))

for n, b in [(14, 8), (5, 4), (1, 4), (9, 7)]:
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2) * 0.5
    ds = tf.data.Dataset.from_tensor_slices(x).batch(b)
    splits, sums, means = [], [], []
    for batch in strategy.experimental_distribute_dataset(ds):
        splits.append([(np.asarray(t)[:, 0] * 2).tolist() for t in strategy.experimental_local_results(batch)])
        sums.append(strategy.reduce("SUM", batch, axis=0).numpy().tolist())
        means.append(strategy.reduce("MEAN", batch, axis=0).numpy().tolist())
    results[f"split_{n}_{b}"], results[f"sum_axis0_{n}_{b}"], results[f"mean_axis0_{n}_{b}"] = splits, sums, means

ds = tf.data.Dataset.from_tensor_slices({"x": np.arange(10, dtype=np.int64),
                                         "y": (np.arange(10) * 10).astype(np.float32)}).batch(5)
results["split_dict"] = [[{k: np.asarray(v).tolist() for k, v in rep.items()}
                          for rep in strategy.experimental_local_results(b)] for b in strategy.experimental_distribute_dataset(ds)]
ds = tf.data.Dataset.from_tensor_slices((np.arange(3), np.arange(3) + 100)).batch(3)
results["split_tuple"] = [[[np.asarray(t).tolist() for t in rep] for rep in strategy.experimental_local_results(b)]
                          for b in strategy.experimental_distribute_dataset(ds)]

contexts = []
def ranged(n, b):
    def fn(ctx):
        contexts.append([ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync,
                         ctx.get_per_replica_batch_size(4 * ctx.num_replicas_in_sync)])
        return tf.data.Dataset.range(n).batch(b)
    return fn
results["fromfn_11_2"] = [replicas(b) for b in strategy.distribute_datasets_from_function(ranged(11, 2))]
results["fromfn_9_2"] = [replicas(b) for b in strategy.distribute_datasets_from_function(ranged(9, 2))]
results["fromfn_ctx"] = contexts[0]


def table():
    rc = d.get_replica_context()
    rid = None
    if rc is not None:
        rid = tf.get_static_value(rc.replica_id_in_sync_group)
        rid = None if rid is None else int(rid)
    return dict(has=d.has_strategy(), cross=d.in_cross_replica_context(),
                strat_is_s=d.get_strategy() is strategy, rc_none=rc is None,
                rc_id=rid, rc_n=None if rc is None else rc.num_replicas_in_sync)


def run_table():
    tables = []
    strategy.run(lambda: tables.append(table()) or tf.constant(0))
    return tables


results["ctx_outside"] = table()
with strategy.scope():
    results["ctx_scope"] = table()
    results["ctx_run_in_scope"] = run_table()
results["ctx_run"] = run_table()
results["merge_call"] = [v.decode() for v in replicas(strategy.run(lambda: tf.constant(
    d.get_replica_context().merge_call(lambda s, x: type(s).__name__ + str(d.in_cross_replica_context()),
                                       args=(1,)))))]
results["reduce_in_run_err"] = error_of(lambda: strategy.run(lambda: strategy.reduce("SUM", tf.constant(1.0), axis=None)))


def nested():
    rc = d.get_replica_context()
    r = tf.cast(rc.replica_id_in_sync_group, tf.float32)
    v = {"a": tf.fill([2], r + 1), "b": (r, 2.0 * r)}
    return {"sum": rc.all_reduce("SUM", v), "mean": rc.all_reduce(d.ReduceOp.MEAN, v)}
out = strategy.run(nested)
results["all_reduce_nested"] = tf.nest.map_structure(lambda v: np.asarray(strategy.experimental_local_results(v)[0]).tolist(), out)
results["gather0"] = strategy.gather(per_replica(lambda r: tf.reshape(tf.range(2 * (r + 1), dtype=tf.float32), (r + 1, 2))), axis=0).numpy().tolist()
results["gather1"] = strategy.gather(per_replica(lambda r: tf.reshape(tf.range(2 * (r + 1), dtype=tf.float32), (2, r + 1)) + 10.0 * r), axis=1).numpy().tolist()
results["values_fn"] = replicas(strategy.experimental_distribute_values_from_function(
    lambda c: c.replica_id_in_sync_group * 10 + c.num_replicas_in_sync))

# The worked example (EXAMPLE.md), TF side.
GLOBAL_BATCH = 8
rng = np.random.default_rng(7)
x = rng.normal(size=(32, 4)).astype(np.float32)
y = (x @ rng.normal(size=(4, 1))).astype(np.float32)
w1 = rng.normal(scale=0.5, size=(4, 8)).astype(np.float32)
w2 = rng.normal(scale=0.5, size=(8, 1)).astype(np.float32)
with strategy.scope():
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(4,)),
        tf.keras.layers.Dense(8, activation="tanh", kernel_initializer=tf.constant_initializer(w1)),
        tf.keras.layers.Dense(1, kernel_initializer=tf.constant_initializer(w2)),
    ])
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.05)
dist_ds = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH))


def train_step(inputs):
    features, targets = inputs
    with tf.GradientTape() as tape:
        per_example = tf.reduce_sum(tf.square(model(features, training=True) - targets), axis=1)
        loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


@tf.function
def distributed_step(inputs):
    return strategy.reduce(d.ReduceOp.SUM, strategy.run(train_step, args=(inputs,)), axis=None)


results["losses"] = [float(distributed_step(batch)) for _ in range(2) for batch in dist_ds]
json.dump(results, open(sys.argv[1], "w"))
