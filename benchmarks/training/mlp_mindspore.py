"""The same MLP written by hand in MindSpore, as its data-parallel tutorial writes it:
nn.SequentialCell of nn.Dense, nn.Momentum, mindspore.dataset.NumpySlicesDataset sharded by
rank, and nn.TrainOneStepCell (which all-reduces gradients under DATA_PARALLEL).

    python mlp_mindspore.py graph|pynative      # one process; under msrun, one per device
"""

import json
import os
import sys
import time

import numpy as np

import mindspore as ms
import mindspore.dataset as ds
from mindspore import nn, ops

EPOCHS = int(os.environ.get("BENCH_EPOCHS", "3"))
EXAMPLES = int(os.environ.get("BENCH_EXAMPLES", "16384"))
GLOBAL_BATCH = 256
rng = np.random.default_rng(0)
x = rng.normal(size=(EXAMPLES, 784)).astype(np.float32)
y = rng.integers(0, 10, size=EXAMPLES).astype(np.int32)
w0 = rng.normal(scale=0.05, size=(784, 512)).astype(np.float32)
w1 = rng.normal(scale=0.05, size=(512, 512)).astype(np.float32)
w2 = rng.normal(scale=0.05, size=(512, 10)).astype(np.float32)

ms.set_context(mode=ms.GRAPH_MODE if sys.argv[1] == "graph" else ms.PYNATIVE_MODE)
ms.set_device("CPU")
rank, size = 0, 1
if os.environ.get("MS_WORKER_NUM"):
    from mindspore.communication import get_group_size, get_rank, init

    init()
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=False)
    rank, size = get_rank(), get_group_size()


class Loss(nn.Cell):
    """Sparse softmax cross-entropy summed over this replica's examples, divided by the global batch."""

    def __init__(self):
        super().__init__()
        self.xent = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="none")

    def construct(self, logits, labels):
        return ops.sum(self.xent(logits, labels)) / GLOBAL_BATCH


net = nn.SequentialCell(
    nn.Dense(784, 512, weight_init=ms.Tensor(w0.T), bias_init="zeros", activation="relu"),
    nn.Dense(512, 512, weight_init=ms.Tensor(w1.T), bias_init="zeros", activation="relu"),
    nn.Dense(512, 10, weight_init=ms.Tensor(w2.T), bias_init="zeros"),
)
train = nn.TrainOneStepCell(nn.WithLossCell(net, Loss()), nn.Momentum(net.trainable_params(), 0.01, 0.9))
data = ds.NumpySlicesDataset((x, y), column_names=["x", "y"], shuffle=False, num_shards=size, shard_id=rank)
data = data.batch(GLOBAL_BATCH // size)

seconds, loss = [], 0.0
for epoch in range(EPOCHS):
    start = time.perf_counter()
    for features, labels in data.create_tuple_iterator():
        loss = float(train(features, labels).asnumpy())
    seconds.append(time.perf_counter() - start)
if size > 1:  # each process holds its share of the last step's loss: print the whole, as the TF program does
    loss = float(ops.AllReduce()(ms.Tensor(np.array([loss], np.float32))).asnumpy()[0])
print(json.dumps({"epoch_seconds": seconds, "examples": EXAMPLES, "final_loss": loss}))
