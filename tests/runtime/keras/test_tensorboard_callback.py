"""`mk.callbacks.TensorBoard` writes the event files Keras's TensorBoard callback writes:
the same directories, tags, steps and values (TF runs in a subprocess, as elsewhere here)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")
pytest.importorskip("tensorflow")
event_file_loader = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader")

from migrate.runtime import keras as mk  # noqa: E402

REPO = Path(__file__).resolve().parents[3]

# One program, run with `keras` bound to tf.keras or to migrate.runtime.keras.
PROGRAM = """
import numpy as np
rng = np.random.default_rng(4)
x = rng.normal(size=(24, 4)).astype(np.float32)
y = rng.integers(0, 3, 24)
w1 = rng.normal(scale=0.4, size=(4, 6)).astype(np.float32)
w2 = rng.normal(scale=0.4, size=(6, 3)).astype(np.float32)
model = keras.Sequential([keras.Input(shape=(4,)),
                          keras.layers.Dense(6, activation="relu", kernel_initializer=keras.initializers.Constant(w1)),
                          keras.layers.Dense(3, kernel_initializer=keras.initializers.Constant(w2))])
model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
board = keras.callbacks.TensorBoard(LOG_DIR, histogram_freq=1, update_freq=2)
model.fit(x, y, batch_size=8, epochs=2, validation_data=(x[:8], y[:8]), callbacks=[board], verbose=0, shuffle=False)
"""


def scalars(log_dir: Path) -> dict:
    found: dict = {}
    for sub in ("train", "validation"):
        files = sorted((log_dir / sub).glob("events.out.tfevents.*"))
        assert len(files) == 1, files
        for event in event_file_loader.EventFileLoader(str(files[0])).Load():
            for value in event.summary.value:
                plugin = value.metadata.plugin_data.plugin_name
                if plugin == "scalars":
                    number = float(np.frombuffer(value.tensor.tensor_content, np.float32)[0])
                    found.setdefault(f"{sub}/{value.tag}", []).append((event.step, number))
                else:
                    found.setdefault(f"{sub}/{plugin}", []).append((event.step, None))
    return found


def test_the_same_tags_steps_and_values_as_keras(tmp_path):
    theirs_dir, ours_dir = tmp_path / "tf", tmp_path / "ms"
    code = f"import os\nos.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'\nimport tensorflow as tf\nkeras = tf.keras\nLOG_DIR = {str(theirs_dir)!r}\n" + PROGRAM
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-3000:]
    exec(compile(PROGRAM, "program", "exec"), {"keras": mk, "LOG_DIR": str(ours_dir)})  # noqa: S102
    theirs, ours = scalars(theirs_dir), scalars(ours_dir)
    # Keras's model graph (train/graph_keras_model) is not written here.
    theirs = {k: v for k, v in theirs.items() if "graph" not in k}
    assert sorted(ours) == sorted(theirs), json.dumps(sorted(set(ours) ^ set(theirs)))
    for tag, events in theirs.items():
        assert [s for s, _ in ours[tag]] == [s for s, _ in events], tag
        for (_, a), (_, b) in zip(ours[tag], events):
            if b is not None:
                assert a == pytest.approx(b, rel=1e-4, abs=1e-6), tag
