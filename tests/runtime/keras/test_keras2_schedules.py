"""Keras 2's `experimental.LinearCosineDecay`/`NoisyLinearCosineDecay` in `mk`, against TF 1's
`train.linear_cosine_decay`/`noisy_linear_cosine_decay` (the same formulas, still in TF 2.21)."""

import json

import numpy as np
import pytest

from tests.helpers import python_json

pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402

pytestmark = pytest.mark.tf

STEPS = [0, 1, 7, 50, 99, 100, 140]
CASES = {
    "defaults": dict(learning_rate=0.1, decay_steps=100),
    "periods_alpha_beta": dict(learning_rate=0.5, decay_steps=100, num_periods=2.0, alpha=0.3, beta=0.01),
}

TF_SIDE = r"""
import json, sys
import tensorflow as tf
cases, steps = json.loads(sys.argv[1]), json.loads(sys.argv[2])
out = {}
for name, kw in cases.items():
    out[name] = [float(tf.compat.v1.train.linear_cosine_decay(global_step=s, **kw)()) for s in steps]
    # without noise, the noisy schedule is the plain one
    out[name + "_noiseless"] = [float(tf.compat.v1.train.noisy_linear_cosine_decay(global_step=s, initial_variance=0.0,
                                                                                  **kw)()) for s in steps]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def tf_rates():
    return python_json(TF_SIDE, json.dumps(CASES), json.dumps(STEPS))


@pytest.mark.parametrize("name", list(CASES))
def test_the_rates_are_tfs(name, tf_rates):
    kw = dict(CASES[name])
    lr = kw.pop("learning_rate")
    plain = mk.optimizers.schedules.LinearCosineDecay(lr, **kw)
    noiseless = mk.optimizers.schedules.NoisyLinearCosineDecay(lr, initial_variance=0.0, **kw)
    np.testing.assert_allclose([float(plain(s).asnumpy()) for s in STEPS], tf_rates[name], rtol=1e-6)
    np.testing.assert_allclose([float(noiseless(s).asnumpy()) for s in STEPS], tf_rates[name + "_noiseless"], rtol=1e-6)


def test_the_noise_has_tfs_decaying_variance_and_a_seed_repeats_it():
    schedule = mk.optimizers.schedules.NoisyLinearCosineDecay(1.0, 1000, initial_variance=1.0, variance_decay=0.55,
                                                              beta=0.0, seed=4)
    plain = mk.optimizers.schedules.LinearCosineDecay(1.0, 1000, beta=0.0)
    for step in (0, 500):
        cosine = float(plain.value(step)) / ((1000 - step) / 1000)  # (alpha 0: rate = linear * cosine)
        noise = np.array([float(schedule.value(step)) for _ in range(4000)]) / cosine - (1000 - step) / 1000
        assert abs(noise.std() - (1.0 / (1 + step) ** 0.55) ** 0.5) < 0.05 * (1.0 / (1 + step) ** 0.55) ** 0.5
    again = mk.optimizers.schedules.NoisyLinearCosineDecay(1.0, 1000, seed=4, beta=0.0)
    first = mk.optimizers.schedules.NoisyLinearCosineDecay(1.0, 1000, seed=4, beta=0.0)
    assert [float(again.value(3)) for _ in range(3)] == [float(first.value(3)) for _ in range(3)]
