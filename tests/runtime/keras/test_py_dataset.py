"""`keras.utils.Sequence` / `PyDataset` in fit, evaluate and predict: the same calls on the dataset,
in the same order, and the same numbers as tf.keras (TF and MindSpore in processes of their own)."""

import json

import numpy as np
import pytest
from tests.runtime.runtime_helpers import run_python

from keras_helpers import PROGRAMS

pytest.importorskip("tensorflow")


def _run(side):
    done = run_python(str(PROGRAMS / "py_dataset.py"), side, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_a_py_dataset_is_read_as_keras_reads_it():
    ours, theirs = _run("ms"), _run("tf")
    for part in ("fit", "fit_in_order", "evaluate", "predict"):
        assert ours[part]["calls"] == theirs[part]["calls"], part
    # With steps_per_epoch one pass over the batches goes on across epochs (epoch 2 trains on
    # what is left of it): the same batches train each epoch, so the same losses. TF's
    # prefetching reads one batch ahead of training there, across the epoch's end (before the
    # epoch's on_epoch_end); here each batch is read when it trains.
    np.testing.assert_allclose(ours["steps_per_epoch"]["loss"], theirs["steps_per_epoch"]["loss"], rtol=1e-5)
    assert [c for c in ours["steps_per_epoch"]["calls"] if not c.startswith("get")] == \
        [c for c in theirs["steps_per_epoch"]["calls"] if not c.startswith("get")]
    # validation data as a PyDataset (with fit's batch_size, which it ignores): the same losses
    np.testing.assert_allclose([ours["validation"]["loss"], ours["validation"]["val_loss"]],
                               [theirs["validation"]["loss"], theirs["validation"]["val_loss"]], rtol=1e-5)
    np.testing.assert_allclose(ours["fit"]["loss"], theirs["fit"]["loss"], rtol=1e-5)
    np.testing.assert_allclose(ours["fit_in_order"]["loss"], theirs["fit_in_order"]["loss"], rtol=1e-5)
    np.testing.assert_allclose(ours["evaluate"]["loss"], theirs["evaluate"]["loss"], rtol=1e-5)
    np.testing.assert_allclose(ours["predict"]["values"], theirs["predict"]["values"], rtol=1e-5, atol=1e-6)
