"""Two-replica cases: TF's Keras under a MirroredStrategy vs migrate's Keras on 2 launched processes.

    python tests/equivalence/tf_replicas.py --replicas 2 distributed_cases.py tf OUT_DIR
    python -m migrate.runtime.launch -n 2 ... distributed_cases.py mk OUT_DIR

Writes OUT_DIR/<side>-<rank>.json (TF has one process: rank 0). The data sizes leave
partial last batches: 21 examples in batches of 8 (the last one splits 3/2) and of 4
(the last one splits 1/0: a replica without examples). TF 2.21's Keras under a
MirroredStrategy fails ("AddN ... must have the same size") when the *first* global
batch splits unevenly, so every case starts with an even split.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from backends import make, tolist  # noqa: E402
from single_cases import build_classifier, fit_data  # noqa: E402

GLOBAL_BATCH = 8


def history_of(history):
    return {k: [float(v) for v in vs] for k, vs in history.history.items()}


def fit_cases(B, scope):
    K = B.keras
    out = {}
    x, y, xv, yv = fit_data()
    with scope():
        model = build_classifier(B)
        model.compile(optimizer=K.optimizers.SGD(0.1, momentum=0.5),
                      loss=K.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy", K.metrics.SparseCategoricalCrossentropy(name="xent", from_logits=True)])
    history = model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=2, shuffle=False, verbose=0,
                        validation_data=(xv, yv))
    out["fit_sgd"] = {"history": history_of(history), "weights": [tolist(w) for w in model.get_weights()],
                      "evaluate": [float(v) for v in model.evaluate(x, y, batch_size=GLOBAL_BATCH, verbose=0)]}
    with scope():
        model = build_classifier(B, softmax=True)
        model.compile(optimizer=K.optimizers.Adam(0.02), loss="sparse_categorical_crossentropy",
                      metrics=["accuracy"])
    history = model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    out["fit_adam_last_batch_of_one"] = {"history": history_of(history),
                                         "weights": [tolist(w) for w in model.get_weights()]}
    return out, model


def fit_callbacks(B, scope, directory):
    """ReduceLROnPlateau, CSVLogger (one file, rank 0) and a fit interrupted then resumed by BackupAndRestore."""
    import csv

    K = B.keras
    x, y, xv, yv = fit_data()

    class Interrupt(K.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                raise KeyboardInterrupt("preempted")

    def make():
        with scope():
            model = build_classifier(B)
            model.compile(optimizer=K.optimizers.SGD(0.2, momentum=0.5),
                          loss=K.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
        return model

    backup, log = os.path.join(directory, "backup"), os.path.join(directory, "log.csv")
    plateau = dict(monitor="val_accuracy", factor=0.5, patience=1, min_lr=0.05)
    try:
        make().fit(x, y, batch_size=GLOBAL_BATCH, epochs=4, shuffle=False, verbose=0, validation_data=(xv, yv),
                   callbacks=[K.callbacks.BackupAndRestore(backup), Interrupt()])
    except KeyboardInterrupt:
        pass
    model = make()
    model(x[:1])
    history = model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=4, shuffle=False, verbose=0, validation_data=(xv, yv),
                        callbacks=[K.callbacks.BackupAndRestore(backup), K.callbacks.CSVLogger(log),
                                   K.callbacks.ReduceLROnPlateau(**plateau)])
    with open(log, newline="") as handle:
        rows = list(csv.reader(handle))
    return {"history": history_of(history), "epochs": list(history.epoch), "weights": [tolist(w) for w in model.get_weights()],
            "csv_header": rows[0], "csv": [[float(v) for v in row] for row in rows[1:]],
            "backup_deleted": not os.path.exists(backup)}


def custom_loop_tf(B, strategy):
    tf, K = B.tf, B.keras
    x, y, _, _ = fit_data()
    with strategy.scope():
        model = build_classifier(B)
        optimizer = K.optimizers.Adam(0.01)
        loss_object = K.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
        accuracy = K.metrics.SparseCategoricalAccuracy()
        mean_loss = K.metrics.Mean()
        # Slots made inside the tf.function break its retrace for the partial last batch (TF 2.21).
        optimizer.build(model.trainable_variables)
    dataset = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH))

    def step(inputs):
        features, labels = inputs
        with tf.GradientTape() as tape:
            logits = model(features, training=True)
            per_example = loss_object(labels, logits)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        accuracy.update_state(labels, logits)
        mean_loss.update_state(per_example)
        return loss

    @tf.function
    def distributed_step(inputs):
        return strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(step, args=(inputs,)), axis=None)

    losses, results = [], []
    for _ in range(2):
        for batch in dataset:
            losses.append(float(distributed_step(batch)))
        results.append([float(accuracy.result()), float(mean_loss.result())])
        accuracy.reset_state()
        mean_loss.reset_state()
    return {"losses": losses, "metrics": results, "weights": [tolist(w) for w in model.get_weights()],
            "iterations": int(optimizer.iterations.numpy())}


def custom_loop_mk(B):
    import mindspore as ms

    from migrate.runtime import spmd

    K = B.keras
    x, y, _, _ = fit_data()
    model = build_classifier(B)
    optimizer = K.optimizers.Adam(0.01)
    loss_object = K.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    accuracy = K.metrics.SparseCategoricalAccuracy()
    mean_loss = K.metrics.Mean()
    optimizer.build(model.trainable_variables)
    batches = [(x[i:i + GLOBAL_BATCH], y[i:i + GLOBAL_BATCH]) for i in range(0, len(x), GLOBAL_BATCH)]

    def forward(features, labels):
        logits = model(features, training=True)
        per_example = loss_object(labels, logits)
        return K.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH), (logits, per_example)

    grad_fn = ms.value_and_grad(forward, None, model.trainable_variables, has_aux=True)
    losses, results = [], []
    for _ in range(2):
        for features, labels in spmd.distribute_dataset(batches):
            features, labels = ms.Tensor(features), ms.Tensor(labels.astype(np.int32))
            (loss, (logits, per_example)), grads = grad_fn(features, labels)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            accuracy.update_state(labels, logits)
            mean_loss.update_state(per_example)
            losses.append(float(spmd.reduce("sum", loss, axis=None).asnumpy()))
        results.append([float(accuracy.result().asnumpy()), float(mean_loss.result().asnumpy())])
        accuracy.reset_state()
        mean_loss.reset_state()
    return {"losses": losses, "metrics": results, "weights": [tolist(w) for w in model.get_weights()],
            "iterations": int(optimizer.iterations.asnumpy())}


def stats_metric(B):
    """A program's own metric whose weights TF aggregates across replicas when it is read: a
    sum, a count (SUM), an average of per-replica values (MEAN) and the first replica's count."""
    K = B.keras

    def total_and_rows(column):
        if B.name == "tf":
            return B.tf.reduce_sum(column), B.tf.cast(B.tf.shape(column)[0], "float32")
        return column.sum(), float(column.shape[0])

    class Stats(K.metrics.Metric):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.total = B.metric_weight(self, "total", "SUM")
            self.count = B.metric_weight(self, "count", "SUM")
            self.spread = B.metric_weight(self, "spread", "MEAN")
            self.first = B.metric_weight(self, "first", "ONLY_FIRST_REPLICA")

        def update_state(self, features):
            total, rows = total_and_rows(features[:, 0])
            self.total.assign_add(total)
            self.count.assign_add(rows)
            self.spread.assign_add(total / (rows + 1.0))
            self.first.assign_add(rows)

        def result(self):
            return [self.total + 0.0, self.count + 0.0, self.spread + 0.0, self.first + 0.0]

    return Stats()


def custom_metric_tf(B, strategy):
    tf = B.tf
    x, _, _, _ = fit_data()
    with strategy.scope():
        metric = stats_metric(B)
    dataset = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(x).batch(GLOBAL_BATCH))

    @tf.function
    def step(features):
        strategy.run(metric.update_state, args=(features,))

    results = []
    for _ in range(2):
        for features in dataset:
            step(features)
            results.append([float(v) for v in metric.result()])
    return results


def custom_metric_mk(B):
    from migrate.runtime import spmd

    x, _, _, _ = fit_data()
    metric = stats_metric(B)
    batches = [x[i:i + GLOBAL_BATCH] for i in range(0, len(x), GLOBAL_BATCH)]
    results = []
    for _ in range(2):
        for features in spmd.distribute_dataset(batches):
            metric.update_state(B.ms.Tensor(features))
            results.append([float(B.numpy(v)) for v in metric.result()])
    return results


def checkpoint_checks(B, model):
    """mk only: rank 0 writes once, atomically; everyone can load right after; the manager keeps max_to_keep."""
    from migrate.runtime import spmd

    K = B.keras
    out = {}
    directory = os.environ["KERAS_TEST_SHARED_DIR"]
    x, _, _, _ = fit_data()
    path = os.path.join(directory, "model.weights.h5")
    model.save_weights(path)
    twin = build_classifier(B, softmax=True)
    twin.load_weights(path)
    out["load_weights_max_error"] = float(np.max(np.abs(twin.predict(x, verbose=0) - model.predict(x, verbose=0))))
    optimizer = model.optimizer
    checkpoint = K.train.Checkpoint(model=model, optimizer=optimizer)
    manager = K.train.CheckpointManager(checkpoint, os.path.join(directory, "ckpts"), max_to_keep=2)
    saved = [manager.save() for _ in range(3)]
    out["manager_checkpoints"] = [os.path.basename(p) for p in manager.checkpoints]
    out["latest"] = os.path.basename(K.train.latest_checkpoint(os.path.join(directory, "ckpts")))
    out["saved"] = [os.path.basename(p) for p in saved]
    out["files"] = sorted(os.listdir(os.path.join(directory, "ckpts")))
    restored_model = build_classifier(B, softmax=True)
    restored_optimizer = K.optimizers.Adam(0.02)
    K.train.Checkpoint(model=restored_model, optimizer=restored_optimizer).restore(manager.latest_checkpoint)
    grads = [np.full(w.shape, 0.1, np.float32) for w in model.get_weights()]
    for m, opt in ((model, optimizer), (restored_model, restored_optimizer)):
        opt.apply_gradients(zip([B.tensor(g) for g in grads], m.trainable_variables))
    out["restored_step_max_error"] = float(max(np.max(np.abs(a - b)) for a, b in
                                               zip(model.get_weights(), restored_model.get_weights())))
    out["restored_iterations"] = [int(B.numpy(optimizer.iterations)), int(B.numpy(restored_optimizer.iterations))]
    out["rank"] = spmd.rank()
    return out


LOSS_SCALE_STEPS = 8
LOSS_SCALE_BAD = {2: np.inf, 5: np.nan}  # step -> a value both replicas' gradients hold


def loss_scale_gradients(step: int, replica: int, scale: float) -> list:
    """Replica `replica`'s (scaled) gradients at `step`: different on each replica; both overflow at BAD steps."""
    grads = [(np.random.default_rng(700 + 10 * step + replica + i).normal(size=shape) * scale).astype(np.float32)
             for i, shape in enumerate([(3, 2), (2,)])]
    if step in LOSS_SCALE_BAD:
        grads[replica % 2].flat[0] = LOSS_SCALE_BAD[step]
    return grads


def loss_scale_start():
    return [np.random.default_rng(710 + i).normal(size=shape).astype(np.float32) for i, shape in
            enumerate([(3, 2), (2,)])]


def loss_scale_tf(B, strategy):
    """LossScaleOptimizer(SGD(momentum)) applied in replica context under the MirroredStrategy."""
    tf, K = B.tf, B.keras
    with strategy.scope():
        variables = [tf.Variable(v) for v in loss_scale_start()]
        optimizer = K.mixed_precision.LossScaleOptimizer(K.optimizers.SGD(0.05, momentum=0.9),
                                                         dynamic_growth_steps=2)
        optimizer.build(variables)
    steps = []
    for step in range(LOSS_SCALE_STEPS):
        scale = float(optimizer.scale_loss(1.0))
        table = [loss_scale_gradients(step, replica, scale) for replica in range(2)]

        def apply():
            replica = tf.distribute.get_replica_context().replica_id_in_sync_group
            grads = [tf.gather(tf.constant(np.stack([t[i] for t in table])), replica) for i in range(2)]
            optimizer.apply_gradients(zip(grads, variables))

        strategy.run(apply)
        steps.append({"scale": float(optimizer.dynamic_scale.numpy()), "iterations": int(optimizer.iterations.numpy()),
                      "variables": [tolist(v.numpy()) for v in variables]})
    return steps


def loss_scale_mk(B, one_replica_overflows=False):
    """The same on launched processes; with `one_replica_overflows` only rank 1 gets an inf at step 1."""
    import mindspore as ms

    from migrate.runtime import spmd

    K = B.keras
    variables = [ms.Parameter(ms.Tensor(v), name=f"ls{one_replica_overflows}_{i}")
                 for i, v in enumerate(loss_scale_start())]
    optimizer = K.mixed_precision.LossScaleOptimizer(K.optimizers.SGD(0.05, momentum=0.9), dynamic_growth_steps=2)
    steps = []
    for step in range(LOSS_SCALE_STEPS):
        scale = float(B.numpy(optimizer.scale_loss(1.0)))
        grads = loss_scale_gradients(step, spmd.rank(), scale)
        if one_replica_overflows and step == 1 and spmd.rank() == 1:
            grads[1].flat[0] = np.inf
        optimizer.apply_gradients(zip([ms.Tensor(g) for g in grads], variables))
        steps.append({"scale": float(B.numpy(optimizer.dynamic_scale)), "iterations": int(B.numpy(optimizer.iterations)),
                      "variables": [tolist(B.numpy(v)) for v in variables]})
    return steps


def main():
    side, out_dir = sys.argv[1], sys.argv[2]
    B = make(side)
    results = {}
    if side == "tf":
        strategy = B.tf.distribute.MirroredStrategy()
        results["replicas"] = strategy.num_replicas_in_sync
        fits, _ = fit_cases(B, strategy.scope)
        results.update(fits)
        results["custom_loop"] = custom_loop_tf(B, strategy)
        results["custom_metric"] = custom_metric_tf(B, strategy)
        results["loss_scale"] = loss_scale_tf(B, strategy)
        results["fit_callbacks"] = fit_callbacks(B, strategy.scope, os.path.join(out_dir, "callbacks-tf"))
        rank = 0
    else:
        import contextlib

        from migrate.runtime import spmd

        results["replicas"] = spmd.group_size()
        fits, model = fit_cases(B, contextlib.nullcontext)
        results.update(fits)
        results["custom_loop"] = custom_loop_mk(B)
        results["custom_metric"] = custom_metric_mk(B)
        results["loss_scale"] = loss_scale_mk(B)
        results["loss_scale_one_replica_overflows"] = loss_scale_mk(B, one_replica_overflows=True)
        results["fit_callbacks"] = fit_callbacks(B, contextlib.nullcontext, os.path.join(out_dir, "callbacks-mk"))
        results["checkpoints"] = checkpoint_checks(B, model)
        rank = spmd.rank()
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, f"{side}-{rank}.json"), "w") as handle:
        json.dump(results, handle)
    print(f"distributed cases done on rank {rank}", flush=True)


if __name__ == "__main__":
    main()
