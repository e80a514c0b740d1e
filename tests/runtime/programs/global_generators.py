"""numpy's and Python's global generators on every rank: `global_generators.py MODE OUT_DIR` writes
OUT_DIR/<rank>.json with three draws of each after the program's set-up for MODE:
untouched (nothing before `init()`), seeded (`np.random.seed(42)` and `random.seed(42)` first),
drawn (an unseeded draw first), horovod (`hvd.init()`, not `init()`)."""

import json
import random
import sys
from pathlib import Path

import numpy as np

mode, out_dir = sys.argv[1], Path(sys.argv[2])
from migrate.runtime.spmd import init  # noqa: E402  (the package is imported before the set-up)

if mode == "seeded":
    np.random.seed(42)
    random.seed(42)
elif mode == "drawn":
    np.random.rand()
if mode == "horovod":
    from migrate.runtime import horovod as hvd

    hvd.init()
    rank = hvd.rank()
else:
    init()
    from mindspore.communication import get_rank

    rank = get_rank()
out = {"numpy": np.random.rand(3).tolist(), "python": [random.random() for _ in range(3)]}
out_dir.mkdir(parents=True, exist_ok=True)
(out_dir / f"{rank}.json").write_text(json.dumps(out))
