"""The native loop (migrate.runtime.training over nn cells) against the shim's Keras `fit`
(itself checked against TF's): the same histories, evaluations and predictions.

Run as one process or under the launcher; writes ``{out}/native_fit-{rank}.json``. With
``graph`` after the output directory, only the native loop runs, in GRAPH_MODE.
Cases: SGD with momentum on 17 training examples in batches of 16 (the last batch holds
one example, so on 2 processes one replica is empty) with a validation split, and Adam
with Keras's shuffling over 3 epochs; then evaluate and predict; Keras's built-in
callbacks (a changing learning rate, early stopping, a checkpoint read back).
"""

import json
import os
import sys

import numpy as np
import mindspore as ms
from mindspore import nn

from migrate.runtime import keras as mk
from migrate.runtime import training
from migrate.runtime.spmd import init

out = sys.argv[1]
graph = len(sys.argv) > 2 and sys.argv[2] == "graph"
if graph:
    ms.set_context(mode=ms.GRAPH_MODE)
init()
ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True, parameter_broadcast=True)
rank = int(os.environ.get("RANK_ID", "0"))

rng = np.random.default_rng(3)
x = rng.normal(size=(22, 5)).astype(np.float32)
y = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1).astype(np.int64)
w1 = rng.normal(scale=0.5, size=(5, 8)).astype(np.float32)
w2 = rng.normal(scale=0.5, size=(8, 3)).astype(np.float32)


def shim_model():
    return mk.Sequential([mk.layers.Dense(8, activation="tanh", input_shape=(5,), kernel_initializer=mk.constant_initializer(w1)),
                          mk.layers.Dense(3, kernel_initializer=mk.constant_initializer(w2))])


def native_model():
    return nn.SequentialCell([nn.Dense(5, 8, weight_init=ms.Tensor(w1).T, bias_init="zeros", activation="tanh"),
                              nn.Dense(8, 3, weight_init=ms.Tensor(w2).T, bias_init="zeros")])


results = {}
mk.utils.set_random_seed(5)
shim = None if graph else shim_model()
if shim is not None:
    shim.compile(optimizer=mk.optimizers.SGD(learning_rate=0.2, momentum=0.9),
                 loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    results["shim_sgd"] = shim.fit(x, y, batch_size=16, epochs=3, shuffle=False, validation_split=0.2, verbose=0).history
    results["shim_sgd_eval"] = shim.evaluate(x, y, batch_size=8, verbose=0)

mk.utils.set_random_seed(5)
native = native_model()
training.compile(native, optimizer=nn.SGD(native.trainable_params(), learning_rate=0.2, momentum=0.9),
                 loss=nn.CrossEntropyLoss(reduction="mean"), metrics=["accuracy"])
results["native_sgd"] = training.fit(native, x, y, batch_size=16, epochs=3, shuffle=False, validation_split=0.2,
                                     verbose=0).history
results["native_sgd_eval"] = training.evaluate(native, x, y, batch_size=8, verbose=0)

mk.utils.set_random_seed(9)
shim = None if graph else shim_model()
if shim is not None:
    shim.compile(optimizer="adam", loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    results["shim_adam"] = shim.fit(x, y, batch_size=6, epochs=3, verbose=0).history
    results["shim_adam_predict"] = shim.predict(x, batch_size=7, verbose=0).tolist()

mk.utils.set_random_seed(9)
native = native_model()
training.compile(native, optimizer=nn.Adam(native.trainable_params(), eps=1e-07),
                 loss=nn.CrossEntropyLoss(reduction="mean"))
results["native_adam"] = training.fit(native, x, y, batch_size=6, epochs=3, verbose=0).history
results["native_adam_predict"] = training.predict(native, x, batch_size=7, verbose=0).tolist()

targets = (x[:, :1] * 2 - x[:, 1:2]).reshape(-1)  # (batch,) against the model's (batch, 1), as Keras aligns them
mk.utils.set_random_seed(2)
if not graph:
    shim = mk.Sequential([mk.layers.Dense(4, activation="relu", input_shape=(5,), kernel_initializer=mk.constant_initializer(w1[:, :4])),
                          mk.layers.Dense(1, kernel_initializer=mk.constant_initializer(w2[:4, :1]))])
    shim.compile(loss="mse", optimizer=mk.optimizers.SGD(learning_rate=0.05), metrics=["mae"])
    results["shim_mse"] = shim.fit(x, targets, batch_size=8, epochs=2, verbose=0).history
mk.utils.set_random_seed(2)
native = nn.SequentialCell([nn.Dense(5, 4, weight_init=ms.Tensor(w1[:, :4]).T, bias_init="zeros", activation="relu"),
                           nn.Dense(4, 1, weight_init=ms.Tensor(w2[:4, :1]).T, bias_init="zeros")])
training.compile(native, loss=nn.MSELoss(reduction="mean"), optimizer=nn.SGD(native.trainable_params(), learning_rate=0.05),
                 metrics=["mae"])
results["native_mse"] = training.fit(native, x, targets, batch_size=8, epochs=2, verbose=0).history

mk.utils.set_random_seed(4)  # a softmax output and Keras's crossentropy on probabilities: it reads the logits
if not graph:
    shim = mk.Sequential([mk.layers.Dense(8, activation="tanh", input_shape=(5,), kernel_initializer=mk.constant_initializer(w1)),
                          mk.layers.Dense(3, activation="softmax", kernel_initializer=mk.constant_initializer(w2 * 4))])
    shim.compile(loss="sparse_categorical_crossentropy", optimizer=mk.optimizers.SGD(learning_rate=0.3), metrics=["accuracy"])
    results["shim_softmax"] = shim.fit(x, y, batch_size=16, epochs=3, verbose=0).history
mk.utils.set_random_seed(4)
native = nn.SequentialCell([nn.Dense(5, 8, weight_init=ms.Tensor(w1).T, bias_init="zeros", activation="tanh"),
                           nn.Dense(8, 3, weight_init=ms.Tensor(w2 * 4).T, bias_init="zeros"), nn.Softmax()])
training.compile(native, loss=nn.CrossEntropyLoss(reduction="mean"), loss_on_logits=True,
                 optimizer=nn.SGD(native.trainable_params(), learning_rate=0.3), metrics=["accuracy"])
results["native_softmax"] = training.fit(native, x, y, batch_size=16, epochs=3, verbose=0).history

column = y.reshape(-1, 1).astype(np.float32)  # class indices as a float column, as keras.datasets gives some
mk.utils.set_random_seed(6)
if not graph:
    shim = shim_model()
    shim.compile(loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer="sgd", metrics=["accuracy"])
    results["shim_column"] = shim.fit(x, column, batch_size=8, epochs=2, verbose=0).history
mk.utils.set_random_seed(6)
native = native_model()
training.compile(native, loss=nn.CrossEntropyLoss(reduction="mean"), optimizer=nn.SGD(native.trainable_params(), learning_rate=0.01),
                 metrics=["accuracy"])
results["native_column"] = training.fit(native, x, column, batch_size=8, epochs=2, verbose=0).history


# each process starts from its own weights, calls the cell (in GRAPH_MODE it compiles), then
# compile() broadcasts rank 0's: the cell's next call must compute with them
native = nn.SequentialCell([nn.Dense(5, 3, weight_init=ms.Tensor(w1[:, :3] * (rank + 1)).T, bias_init="zeros")])
native(ms.Tensor(x))
training.compile(native, loss=nn.CrossEntropyLoss(reduction="mean"))
results["broadcast"] = native(ms.Tensor(x)).asnumpy().tolist()


def with_callbacks(model, fit, evaluate, load_weights, optimizer, path):
    """Keras's built-in callbacks on the loop: the rate set by a schedule and cut on a plateau
    (under a Nesterov SGD, whose velocity remembers the old rate), early stopping that restores
    the best weights, a checkpoint of them read back, and per-batch logs."""
    batches = []
    callbacks = [
        mk.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5 if epoch >= 1 else lr),
        mk.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=0, min_delta=10),
        mk.callbacks.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True),
        mk.callbacks.ModelCheckpoint(path, monitor="val_loss", save_best_only=True, save_weights_only=True),
        mk.callbacks.TerminateOnNaN(),
        mk.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: batches.append(logs["loss"])),
    ]
    history = fit(x, y, batch_size=8, epochs=6, shuffle=False, validation_data=(x[:9], y[:9]),
                  callbacks=callbacks, verbose=0).history
    restored = evaluate(x, y, batch_size=8, verbose=0)
    load_weights(path)
    return {"history": history, "batches": batches, "restored": restored,
            "reloaded": evaluate(x, y, batch_size=8, verbose=0)}


os.makedirs(out, exist_ok=True)
if not graph:
    shim = shim_model()
    shim.compile(optimizer=mk.optimizers.SGD(learning_rate=0.05, momentum=0.9, nesterov=True),
                 loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    results["shim_callbacks"] = with_callbacks(shim, shim.fit, shim.evaluate, shim.load_weights, shim.optimizer,
                                               os.path.join(out, "shim.weights.h5"))
native = native_model()
training.compile(native, optimizer=nn.SGD(native.trainable_params(), learning_rate=0.05, momentum=0.9, nesterov=True),
                 loss=nn.CrossEntropyLoss(reduction="mean"), metrics=["accuracy"])
results["native_callbacks"] = with_callbacks(
    native, lambda *a, **k: training.fit(native, *a, **k), lambda *a, **k: training.evaluate(native, *a, **k),
    lambda path: training.load_weights(native, path), None, os.path.join(out, "native.weights.h5"))

with open(os.path.join(out, f"native_fit-{rank}.json"), "w") as handle:
    json.dump(results, handle)
print(f"native fit done on rank {rank}", flush=True)
