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
    np.testing.assert_allclose(ours["fit"]["loss"], theirs["fit"]["loss"], rtol=1e-5)
    np.testing.assert_allclose(ours["fit_in_order"]["loss"], theirs["fit_in_order"]["loss"], rtol=1e-5)
    np.testing.assert_allclose(ours["evaluate"]["loss"], theirs["evaluate"]["loss"], rtol=1e-5)
    np.testing.assert_allclose(ours["predict"]["values"], theirs["predict"]["values"], rtol=1e-5, atol=1e-6)
