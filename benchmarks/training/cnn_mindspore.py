"""The same CNN written by hand in MindSpore, as its data-parallel tutorial writes it: images
channels-first from the start (transposed once, in NumPy), nn.SequentialCell of nn.Conv2d,
nn.BatchNorm2d, nn.ReLU, nn.MaxPool2d and nn.Dense, nn.Momentum,
mindspore.dataset.NumpySlicesDataset sharded by rank, and nn.TrainOneStepCell (which
all-reduces gradients under DATA_PARALLEL).

    python cnn_mindspore.py graph|pynative      # one process; under msrun, one per device
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
EXAMPLES = int(os.environ.get("BENCH_EXAMPLES", "2048"))
GLOBAL_BATCH = 128
rng = np.random.default_rng(0)
x = rng.normal(size=(EXAMPLES, 32, 32, 3)).astype(np.float32)
y = rng.integers(0, 10, size=EXAMPLES).astype(np.int32)
k0 = rng.normal(scale=0.2, size=(3, 3, 3, 16)).astype(np.float32)
k1 = rng.normal(scale=0.1, size=(3, 3, 16, 32)).astype(np.float32)
w2 = rng.normal(scale=0.01, size=(8 * 8 * 32, 10)).astype(np.float32)
x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))  # channels-first, once
# (the head's rows follow TF's flattening, height-width-channels; a channels-first flatten
# reads channels-height-width)
w2 = np.ascontiguousarray(w2.reshape(8, 8, 32, 10).transpose(2, 0, 1, 3).reshape(8 * 8 * 32, 10))

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
    nn.Conv2d(3, 16, 3, pad_mode="same", has_bias=True, weight_init=ms.Tensor(k0.transpose(3, 2, 0, 1)), bias_init="zeros"),
    nn.BatchNorm2d(16, eps=1e-3, momentum=0.99),
    nn.ReLU(),
    nn.MaxPool2d(kernel_size=2, stride=2),
    nn.Conv2d(16, 32, 3, pad_mode="same", has_bias=True, weight_init=ms.Tensor(k1.transpose(3, 2, 0, 1)), bias_init="zeros"),
    nn.BatchNorm2d(32, eps=1e-3, momentum=0.99),
    nn.ReLU(),
    nn.MaxPool2d(kernel_size=2, stride=2),
    nn.Flatten(),
    nn.Dense(8 * 8 * 32, 10, weight_init=ms.Tensor(w2.T), bias_init="zeros"),
)
net.set_train()
train = nn.TrainOneStepCell(nn.WithLossCell(net, Loss()), nn.Momentum(net.trainable_params(), 0.002, 0.9))
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
