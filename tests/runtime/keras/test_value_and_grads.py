"""``mk.value_and_grads``: several gradients of one forward pass, as TF's tapes give them.

TF records the forward pass once on two tapes (a GAN's generator and discriminator) or on one
persistent tape asked several times. Here each target's gradient runs the forward pass again;
the passes after the first must compute what the first did: the same random draws (dropout
masks, ``tf.random`` values), no second update of moving statistics or metrics.
"""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from tests.helpers import python_json

ms = pytest.importorskip("mindspore")

rng = np.random.default_rng(11)
NOISE = rng.normal(size=(8, 3)).astype(np.float32)
REAL = rng.normal(loc=1.0, size=(8, 2)).astype(np.float32)
GEN = [rng.normal(scale=0.5, size=(3, 6)).astype(np.float32), np.zeros(6, np.float32),
       np.ones(6, np.float32), np.zeros(6, np.float32), np.zeros(6, np.float32), np.ones(6, np.float32),
       rng.normal(scale=0.5, size=(6, 2)).astype(np.float32), np.zeros(2, np.float32)]
DISC = [rng.normal(scale=0.5, size=(2, 5)).astype(np.float32), np.zeros(5, np.float32),
        rng.normal(scale=0.5, size=(5, 1)).astype(np.float32), np.zeros(1, np.float32)]

# A GAN's step (TF's DCGAN tutorial's shape): two tapes over one forward pass that holds a
# BatchNormalization, each differentiating its own loss with respect to its own model.
TENSORFLOW = r"""
import json, sys
import numpy as np
import tensorflow as tf

noise, real, gen_w, disc_w = (json.loads(sys.argv[1])[k] for k in ("noise", "real", "gen", "disc"))
generator = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(6),
                                 tf.keras.layers.BatchNormalization(), tf.keras.layers.ReLU(), tf.keras.layers.Dense(2)])
discriminator = tf.keras.Sequential([tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(5, activation="tanh"),
                                     tf.keras.layers.Dense(1)])
generator.set_weights([np.array(w, np.float32) for w in gen_w])
discriminator.set_weights([np.array(w, np.float32) for w in disc_w])
bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)
with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
    fake = generator(tf.constant(noise), training=True)
    real_out = discriminator(tf.constant(real), training=True)
    fake_out = discriminator(fake, training=True)
    gen_loss = bce(tf.ones_like(fake_out), fake_out)
    disc_loss = bce(tf.ones_like(real_out), real_out) + bce(tf.zeros_like(fake_out), fake_out)
gen_grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
disc_grads = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
print(json.dumps({
    "losses": [float(gen_loss), float(disc_loss)],
    "gen_grads": [g.numpy().tolist() for g in gen_grads],
    "disc_grads": [g.numpy().tolist() for g in disc_grads],
    "moving_mean": generator.layers[1].moving_mean.numpy().tolist(),
}))
"""


def _models():
    from migrate.runtime import keras as mk

    generator = mk.Sequential([mk.Input(shape=(3,)), mk.layers.Dense(6), mk.layers.BatchNormalization(),
                               mk.layers.ReLU(), mk.layers.Dense(2)])
    discriminator = mk.Sequential([mk.Input(shape=(2,)), mk.layers.Dense(5, activation="tanh"), mk.layers.Dense(1)])
    generator.set_weights(GEN)
    discriminator.set_weights(DISC)
    return generator, discriminator


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="TensorFlow is not installed")
def test_a_gans_two_tapes_give_tensorflows_gradients_and_moving_statistics():
    from migrate.runtime import keras as mk

    want = python_json(TENSORFLOW, json.dumps({"noise": NOISE.tolist(), "real": REAL.tolist(),
                                               "gen": [w.tolist() for w in GEN], "disc": [w.tolist() for w in DISC]}))
    generator, discriminator = _models()
    bce = mk.losses.BinaryCrossentropy(from_logits=True)
    calls = []

    def forward():
        calls.append(1)
        fake = generator(ms.Tensor(NOISE), training=True)
        real_out = discriminator(ms.Tensor(REAL), training=True)
        fake_out = discriminator(fake, training=True)
        gen_loss = bce(ms.ops.ones_like(fake_out), fake_out)
        disc_loss = bce(ms.ops.ones_like(real_out), real_out) + bce(ms.ops.zeros_like(fake_out), fake_out)
        return gen_loss, disc_loss

    (gen_loss, disc_loss), (gen_grads, disc_grads) = mk.value_and_grads(
        forward, [generator.trainable_variables, discriminator.trainable_variables])()
    assert len(calls) == 2  # one pass per target
    np.testing.assert_allclose([float(gen_loss), float(disc_loss)], want["losses"], rtol=1e-5)
    assert isinstance(gen_grads, list) and len(gen_grads) == len(want["gen_grads"])
    for got, expected in zip([*gen_grads, *disc_grads], [*want["gen_grads"], *want["disc_grads"]]):
        np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-4, atol=1e-6)
    # the moving statistics moved once, as in TF's one forward pass (twice they would be 0.99**2-weighted)
    np.testing.assert_allclose(generator.layers[1].moving_mean.asnumpy(), want["moving_mean"], rtol=1e-5, atol=1e-7)


def test_one_target_asked_for_two_lists_of_weights_is_one_pass():
    """A persistent tape's ``gradient(z, w1)`` and ``gradient(z, w2)``: one pass over both lists."""
    from migrate.runtime import keras as mk

    w1 = ms.Parameter(ms.Tensor(np.array([1.5, -2.0], np.float32)), name="w1")
    w2 = ms.Parameter(ms.Tensor(np.array(3.0, np.float32)), name="w2")
    calls = []

    def forward():
        calls.append(1)
        z = (w1 * w1).sum() * w2
        return z, z * 2

    (z, doubled), (g1, g2, both) = mk.value_and_grads(forward, [w1, w2, [w1, w2]], targets=[0, 0, 0], has_aux=True)()
    assert len(calls) == 1
    assert float(z) == pytest.approx(18.75) and float(doubled) == pytest.approx(37.5)
    np.testing.assert_allclose(g1.asnumpy(), [9.0, -12.0])  # dz/dw1 = 2 * w1 * w2
    assert float(g2) == pytest.approx(6.25)  # dz/dw2 = sum(w1 ** 2)
    assert isinstance(both, list) and [g.shape for g in both] == [(2,), ()]


def test_a_repeated_pass_sees_the_first_passs_dropout_mask_and_random_draws():
    from migrate.runtime import keras as mk
    from migrate.runtime import tfrandom

    ms.set_seed(3)
    dropout = mk.layers.Dropout(0.5)
    w1 = ms.Parameter(ms.Tensor(np.ones(64, np.float32)), name="w1")
    w2 = ms.Parameter(ms.Tensor(np.full(64, 2.0, np.float32)), name="w2")
    x = ms.Tensor(np.linspace(0.5, 1.5, 64).astype(np.float32))

    def forward():
        noise = tfrandom.normal([64])
        h = dropout(x * w1 * w2, training=True) + noise
        return h.sum(), (h * h).sum(), h, noise

    (first, second, h, noise), (g1, g2) = mk.value_and_grads(forward, [w1, w2], has_aux=True)()
    mask = (h - noise).asnumpy() != 0  # kept units (x * w1 * w2 is never 0)
    assert 10 < mask.sum() < 54
    # d second / d w2 = 2 h * (mask / (1 - rate)) * x * w1, with the first pass's h and mask
    expected = 2 * h.asnumpy() * mask * 2.0 * x.asnumpy() * 1.0
    np.testing.assert_allclose(g2.asnumpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(g1.asnumpy(), mask * 2.0 * x.asnumpy() * 2.0, rtol=1e-6)
    assert float(second) == pytest.approx(float((h * h).sum()), rel=1e-6)


def test_a_metric_updated_in_the_forward_pass_counts_it_once():
    from migrate.runtime import keras as mk

    mean = mk.metrics.Mean()
    w = ms.Parameter(ms.Tensor(np.array([1.0, 2.0], np.float32)), name="w")

    def forward():
        loss = (w * w).sum()
        mean.update_state(loss)
        return loss, loss * 3

    mk.value_and_grads(forward, [w, w])()
    assert float(mean.count) == 1.0 and float(mean.result()) == pytest.approx(5.0)


def test_a_pass_that_draws_otherwise_is_an_error_not_a_wrong_gradient():
    from migrate.runtime import keras as mk
    from migrate.runtime import draws, tfrandom

    w = ms.Parameter(ms.Tensor(np.array([1.0, 2.0], np.float32)), name="w")
    sizes = iter([2, 3])

    def forward():
        extra = tfrandom.uniform([next(sizes)]).sum()
        return (w * w).sum() + extra, w.sum() + extra

    with pytest.raises(draws.NotRepeatable, match=r"drew other random values than the first time \(draw 1: uniform\(3,\)\)"):
        mk.value_and_grads(forward, [w, w])()


def test_sources_and_targets_must_pair_up():
    from migrate.runtime import keras as mk

    with pytest.raises(ValueError, match="2 sources for 1 targets"):
        mk.value_and_grads(lambda: 0, [[], []], targets=[0])


def test_weights_of_models_not_built_yet_stay_live_when_concatenated():
    """``variables = encoder.trainable_variables + decoder.trainable_variables`` before the first
    call (TF reads it after the tape, when the call has built both): the sum is still both models'
    weights once the forward pass builds them, not the empty list it was."""
    from migrate.runtime import keras as mk

    class Tower(mk.Model):
        def __init__(self):
            super().__init__()
            self.dense = mk.layers.Dense(3, kernel_initializer="ones")

        def call(self, x):
            return self.dense(x)

    a, b = Tower(), Tower()
    x = ms.Tensor(np.ones((2, 4), np.float32))
    variables = a.trainable_variables + b.trainable_variables
    assert len(variables) == 0  # nothing built yet
    loss, grads = mk.value_and_grad(lambda: (a(x) * b(x)).sum(), None, variables)()
    assert float(loss) == 96.0
    # d/d kernel_a[i, j] = sum_n x[n, i] * b(x)[n, j] = 2 * 4; d/d bias_a[j] = sum_n b(x)[n, j] = 8
    assert [g.shape for g in grads] == [(4, 3), (3,), (4, 3), (3,)]
    for grad in grads:
        np.testing.assert_allclose(grad.asnumpy(), 8.0)
    both = [1.0] + a.trainable_variables  # (a plain list in front: still live, and in that order)
    assert len(both) == 3 and both[0] == 1.0


def test_weights_extended_in_place_stay_live():
    """`variables = a.trainable_variables; variables += b.trainable_variables` (or `.extend`,
    `.append`) before the models are built: every weight is differentiated once they are."""
    from migrate.runtime import keras as mk

    def tower():
        return mk.Sequential([mk.layers.Dense(3, kernel_initializer="ones")])

    a, b, c = tower(), tower(), tower()
    x = ms.Tensor(np.ones((2, 4), np.float32))
    variables = a.trainable_variables
    variables += b.trainable_variables
    variables.extend(c.trainable_variables)
    extra = ms.Parameter(ms.Tensor(np.array(2.0, np.float32)), name="extra")
    variables.append(extra)
    loss, grads = mk.value_and_grad(lambda: (a(x) + b(x) + c(x)).sum() * extra, None, variables)()
    assert len(grads) == 7 and float(grads[-1]) == pytest.approx(72.0)


@pytest.mark.parametrize("several", [False, True])
def test_a_name_given_to_weights_not_built_yet_holds_them_after_the_first_step(several):
    """``trainable_vars = model.trainable_variables`` before the model's first call, then
    ``apply_gradients(zip(grads, trainable_vars))``: TF reads the list after the forward pass
    built the model, so the name must hold the weights once the first step built them (an empty
    list would make the first step apply nothing)."""
    from migrate.runtime import keras as mk

    model = mk.Sequential([mk.layers.Dense(3, kernel_initializer="ones")])
    x = ms.Tensor(np.ones((2, 4), np.float32))
    trainable_vars = model.trainable_variables
    assert len(trainable_vars) == 0
    if several:
        _, (grads,) = mk.value_and_grads(lambda: model(x).sum(), [trainable_vars])()
    else:
        _, grads = mk.value_and_grad(lambda: model(x).sum(), None, trainable_vars)()
    assert len(trainable_vars) == 2 and [tuple(v.shape) for v in trainable_vars] == [(4, 3), (3,)]
    assert len(list(zip(grads, trainable_vars))) == 2
