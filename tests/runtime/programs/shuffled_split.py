"""An unseeded tfdata shuffle under `experimental_distribute_dataset`, on every rank:
`shuffled_split.py OUT_DIR` writes OUT_DIR/<rank>.json, each step's slice of two epochs (and of
a second, unseeded pipeline) as lists of example ids."""

import json
import sys
from pathlib import Path

import numpy as np
from mindspore.communication import get_rank

from migrate.runtime import spmd, tfdata
from migrate.runtime.spmd import init

init()
ids = np.arange(20)
out = {}
for name in ("first", "second"):
    dataset = spmd.distribute_dataset(tfdata.Dataset.from_tensor_slices((ids, ids * 10)).shuffle(20).batch(8))
    out[name] = [[[int(i) for i in batch[0].asnumpy()] for batch in dataset] for _epoch in range(2)]
Path(sys.argv[1]).mkdir(parents=True, exist_ok=True)
(Path(sys.argv[1]) / f"{get_rank()}.json").write_text(json.dumps(out))
