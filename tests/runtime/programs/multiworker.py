"""The shim's multi-worker input split: run as two nodes (`migrate run --nnodes 2 -n 1`).

Writes <out>/<rank>.json with the same keys as tf_multiworker.py, plus what the cluster
resolver and the launcher report.
"""

import json
import os
import sys
from pathlib import Path

import numpy as np

import migrate.runtime as tfd
from multiworker_cases import FROMFN_CASES, SPLIT_CASES

out = Path(sys.argv[1])
strategy = tfd.MultiWorkerMirroredStrategy()
rank = tfd.rank()
results = {"replicas": strategy.num_replicas_in_sync}


def batches(values, b):
    return [values[i:i + b] for i in range(0, len(values), b)]


def seen(distributed):
    return [np.asarray(batch).tolist() for batch in distributed]


for n, b in SPLIT_CASES:
    dist = strategy.experimental_distribute_dataset(batches(np.arange(n, dtype=np.int64), b))
    results[f"split_{n}_{b}"] = seen(dist)
    results[f"sum_{n}_{b}"] = [int(strategy.reduce("SUM", batch, axis=0)) for batch in dist]

contexts = []


def make_fn(n, b, shard):
    def fn(ctx):
        contexts.append([ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync])
        values = np.arange(n, dtype=np.int64)
        if shard:
            values = values[ctx.input_pipeline_id::ctx.num_input_pipelines]
        return batches(values, b)
    return fn


for n, b, shard in FROMFN_CASES:
    results[f"fromfn_{n}_{b}_{shard}"] = seen(strategy.distribute_datasets_from_function(make_fn(n, b, shard)))
results["ctx"] = contexts[0]
per_replica = strategy.experimental_distribute_values_from_function(
    lambda ctx: np.array([1.0, 2.0, 3.0], np.float32) * (ctx.replica_id_in_sync_group + 1))
results["all_reduce"] = np.asarray(strategy.reduce("SUM", per_replica, axis=None)).tolist()
resolver = strategy.cluster_resolver
results["resolver"] = None if resolver is None else [resolver.task_type, resolver.task_id]
results["node"] = [os.environ.get("MIGRATE_NNODES"), os.environ.get("MIGRATE_NODE_RANK")]
out.mkdir(parents=True, exist_ok=True)
(out / f"{rank}.json").write_text(json.dumps(results))
print("shim rank", rank, "done")
