"""Inputs shared by multiworker.py (the shim) and tf_multiworker.py (TensorFlow)."""

# (examples, global batch): experimental_distribute_dataset of range(n).batch(b)
SPLIT_CASES = [(14, 8), (5, 4), (1, 4), (9, 7), (8, 4), (3, 4)]
# (examples, per-pipeline batch, shard by input pipeline): distribute_datasets_from_function
FROMFN_CASES = [(11, 2, False), (11, 2, True), (9, 2, True), (8, 2, True), (3, 2, True)]
