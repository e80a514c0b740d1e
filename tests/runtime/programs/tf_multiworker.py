"""TensorFlow's own multi-worker input split: run as two processes with TF_CONFIG (one CPU each).

Writes <out>/<task index>.json: what this worker's replica sees at every step. Its twin is
multiworker.py, run by the shim as two nodes.
"""

import json
import os
import sys
from pathlib import Path

import numpy as np
import tensorflow as tf

from multiworker_cases import FROMFN_CASES, SPLIT_CASES

out = Path(sys.argv[1])
strategy = tf.distribute.MultiWorkerMirroredStrategy()
task = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
results = {"replicas": strategy.num_replicas_in_sync}


def seen(distributed):
    return [[np.asarray(t).tolist() for t in strategy.experimental_local_results(batch)][0] for batch in distributed]


for n, b in SPLIT_CASES:
    dist = strategy.experimental_distribute_dataset(tf.data.Dataset.range(n).batch(b))
    results[f"split_{n}_{b}"] = seen(dist)
    results[f"sum_{n}_{b}"] = [int(strategy.reduce("SUM", batch, axis=0)) for batch in dist]

contexts = []


def make_fn(n, b, shard):
    def fn(ctx):
        contexts.append([ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync])
        ds = tf.data.Dataset.range(n)
        if shard:
            ds = ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
        return ds.batch(b)
    return fn


for n, b, shard in FROMFN_CASES:
    results[f"fromfn_{n}_{b}_{shard}"] = seen(strategy.distribute_datasets_from_function(make_fn(n, b, shard)))
results["ctx"] = contexts[0]
per_replica = strategy.experimental_distribute_values_from_function(
    lambda ctx: tf.constant([1.0, 2.0, 3.0]) * (ctx.replica_id_in_sync_group + 1))
results["all_reduce"] = strategy.reduce("SUM", per_replica, axis=None).numpy().tolist()
out.mkdir(parents=True, exist_ok=True)
(out / f"{task}.json").write_text(json.dumps(results))
print("tf worker", task, "done")
