"""Unseeded random orders on every rank: `shuffled_split.py OUT_DIR` writes OUT_DIR/<rank>.json with,
as lists of example ids, each step's slice of two epochs of a tfdata shuffle under
`experimental_distribute_dataset` (and of a second such pipeline), of a shuffled
`text_dataset_from_directory` under it, and each batch of an unseeded `ImageDataGenerator.flow`."""

import json
import sys
from pathlib import Path

import numpy as np
from mindspore.communication import get_rank

from migrate.runtime import keras as mk
from migrate.runtime import spmd, tfdata
from migrate.runtime.spmd import init

init()
out_dir = Path(sys.argv[1])
ids = np.arange(20)
out = {}
for name in ("first", "second"):
    dataset = spmd.distribute_dataset(tfdata.Dataset.from_tensor_slices((ids, ids * 10)).shuffle(20).batch(8))
    out[name] = [[[int(i) for i in batch[0].asnumpy()] for batch in dataset] for _epoch in range(2)]

texts = out_dir / f"texts-{get_rank()}"  # (each rank its own copy of the same files)
for i in range(12):
    (texts / f"class_{i % 2}").mkdir(parents=True, exist_ok=True)
    (texts / f"class_{i % 2}" / f"{i:02d}.txt").write_text(str(i))
files = spmd.distribute_dataset(mk.utils.text_dataset_from_directory(str(texts), batch_size=4))
out["files"] = [[[int(t) for t in np.asarray(batch[0]).tolist()] for batch in files] for _epoch in range(2)]

flow = mk.preprocessing.image.ImageDataGenerator().flow(ids.reshape(20, 1, 1, 1).astype(np.float32), batch_size=8, shuffle=True)
out["flow"] = [[int(v) for v in flow[i].reshape(-1)] for i in range(len(flow))]

out_dir.mkdir(parents=True, exist_ok=True)
(out_dir / f"{get_rank()}.json").write_text(json.dumps(out))
