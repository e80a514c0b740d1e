"""Random orders of examples that every process of a launched run draws alike (tfdata's
shuffle and sampling, tfds's shuffled files).

Under ``experimental_distribute_dataset``, Keras's ``fit`` and the other data-parallel
paths, each process reads the whole input and keeps its slice of every global batch, as
TF splits its one pipeline's batches across replicas. A random order that decides which
examples form a batch (a shuffle, a sampling between datasets, a shuffled file list) must
then be one order in every process: drawn apart, the processes' slices come from
different batches, and an epoch sees some examples twice and others never.

An order drawn without a seed of its own takes, in this order:

- MindSpore's global seed (``ms.set_seed``, what ``tf.random.set_seed`` converts to), as
  TF derives an unseeded op's seed from its global one: the order repeats from run to run;
- else the run's seed, the same in every process: ``MIGRATE_RUN_SEED``, which ``migrate
  run`` sets (random on one node, new each run; on several, derived from the scheduler's
  address, which every node's launcher must spell alike); under mpirun, its job id; under
  msrun started by hand, the scheduler's address (the same each run on the same port: set
  ``MIGRATE_RUN_SEED`` for orders new each run);
- else (one process, not launched) fresh entropy, as before.

Each unseeded order also takes the count of the unseeded orders the process made before
it: the processes build their pipelines alike, so the n-th order is the same everywhere
while two pipelines still draw different orders. A program that builds a shuffled pipeline
on some processes only (``if rank == 0: preview = ds.shuffle(10)``) shifts the count there:
give such a pipeline a seed.

Orders drawn from Python's and numpy's *global* generators (Keras's `PyDataset` shuffle, an
unseeded `ImageDataGenerator` or `*_dataset_from_directory`, a program's own
`np.random.permutation`) are the program's: where it seeds them, every process does alike.
Where it does not, :func:`align_global_generators` (run where a tf.distribute strategy is
created: ``init()``, a strategy object) seeds them with the run's seed, so that the
processes draw the one stream TF's one process draws, but only while the program has not
touched them since this package was imported (a program that seeded them keeps its seed;
one that already drew from them unseeded drew apart, and stays so; so does one that imports
a module drawing from them, TensorFlow among them, between this package and ``init()``).
Horovod's ``init`` does not: a Horovod program's processes are TF's processes, each with its
own stream. With one stream, numpy draws a replica's step makes are alike on every process,
where TF's one process would draw on for each replica in turn: a step drawing its own noise
should draw it from ``tf.random`` (MindSpore's generator).
"""

from __future__ import annotations

import itertools
import os
import random
import sys
import zlib

import numpy as np

_made = itertools.count()


def _global_states():
    return np.random.get_state(), random.getstate()


_UNTOUCHED = _global_states()  # (the global generators as this package's import found them)
_aligned = False


def _same(a, b) -> bool:
    (np_a, py_a), (np_b, py_b) = a, b
    return py_a == py_b and np_a[0] == np_b[0] and np.array_equal(np_a[1], np_b[1]) and np_a[2:] == np_b[2:]


def align_global_generators() -> bool:
    """Seed numpy's and Python's global generators with the run's seed, once, in a launched run
    where the program has not touched them (see the module docstring). Whether it did."""
    global _aligned
    seed = run_seed()
    if _aligned or seed is None or not _same(_global_states(), _UNTOUCHED):
        return False
    np.random.seed(seed % (1 << 32))
    random.seed(seed)
    _aligned = True
    return True


def run_seed() -> int | None:
    """The seed every process of this launched run shares, or None outside a launched run."""
    shared = os.environ.get("MIGRATE_RUN_SEED")
    if shared is not None:
        return int(shared) & ((1 << 63) - 1)
    job = os.environ.get("OMPI_MCA_ess_base_jobid") or os.environ.get("PMIX_NAMESPACE")
    if job and os.environ.get("OMPI_COMM_WORLD_SIZE"):  # mpirun: its job's id
        return zlib.crc32(job.encode())
    if os.environ.get("MS_SCHED_PORT"):  # launched by msrun itself
        return zlib.crc32(f"{os.environ.get('MS_SCHED_HOST', '')}:{os.environ['MS_SCHED_PORT']}".encode())
    return None


def _global_seed() -> int | None:
    ms = sys.modules.get("mindspore")  # (set only by a program that imported it)
    seed = ms.get_seed() if ms is not None and hasattr(ms, "get_seed") else None
    return None if seed is None else int(seed)


def order_seed(seed=None):
    """``seed``, or what an unseeded order draws from (see the module docstring): a seed for
    ``np.random.default_rng``, None for fresh entropy."""
    if seed is not None:
        return seed
    shared = _global_seed()
    if shared is None:
        shared = run_seed()
    if shared is None:
        return None
    return [shared, next(_made)]

