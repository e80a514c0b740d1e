"""The training step's fast paths give the numbers of the plain formulas they replace, bit for bit.

The shim's per-step path uses fused kernels (MindSpore's ApplyMomentum for SGD with momentum,
MatMul with BiasAdd in Dense, a gathered crossentropy) and reads no value back to the host.
Each is checked here against the operation-by-operation formula Keras writes, which the
equivalence suites check against TensorFlow.
"""

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")

from mindspore import ops  # noqa: E402

from migrate.runtime import keras as mk  # noqa: E402
from migrate.runtime.keras import losses  # noqa: E402
from migrate.runtime.keras.layers.base import _requires_grad  # noqa: E402
from migrate.runtime.keras.optimizers.base import Optimizer  # noqa: E402


def _parameters(seed, shapes=((7, 5), (5,), (3, 2, 4))):
    rng = np.random.default_rng(seed)
    return [ms.Parameter(ms.Tensor(rng.normal(size=s).astype(np.float32)), name=f"p{seed}_{i}")
            for i, s in enumerate(shapes)]


def _train(optimizer, variables, fused: bool, steps=6, rates=(None, None, 0.05, None, 0.2, None)):
    rng = np.random.default_rng(42)
    for step in range(steps):
        if rates[step] is not None:  # a rate set between steps is read on the device
            optimizer.learning_rate = rates[step]
        grads = [ms.Tensor(rng.normal(size=tuple(v.shape)).astype(np.float32)) for v in variables]
        if not fused:  # the per-variable Keras formula (`update_step`), as the base class runs it
            optimizer._update_variables = lambda g, v, lr, o=optimizer: Optimizer._update_variables(o, g, v, lr)
        optimizer.apply_gradients(zip(grads, variables))
    return [v.asnumpy() for v in variables], [m.asnumpy() for m in optimizer.momentums]


@pytest.mark.parametrize("momentum", [0.9, 0.5])
def test_sgd_momentum_in_one_kernel_equals_keras_formula_bit_for_bit(momentum):
    fused = _train(mk.optimizers.SGD(0.01, momentum=momentum), _parameters(1), fused=True)
    plain = _train(mk.optimizers.SGD(0.01, momentum=momentum), _parameters(1), fused=False)
    for a, b in zip(fused[0] + fused[1], plain[0] + plain[1]):
        assert np.array_equal(a, b)
    assert not np.array_equal(fused[0][0], _parameters(1)[0].asnumpy())


def test_sgd_without_momentum_or_with_nesterov_keeps_the_formula():
    for kwargs in ({"momentum": 0.0}, {"momentum": 0.9, "nesterov": True}):
        variables = _parameters(2)
        optimizer = mk.optimizers.SGD(0.1, **kwargs)
        grads = [ops.ones_like(v) for v in variables]
        before = [v.asnumpy().copy() for v in variables]
        optimizer.apply_gradients(zip(grads, variables))
        step = 0.1 if kwargs["momentum"] == 0 else 0.1 * (1 + 0.9)  # nesterov: m = -lr g; var += mom m - lr g
        for b, v in zip(before, variables):
            np.testing.assert_allclose(v.asnumpy(), b - step, rtol=1e-6)


def test_a_fixed_rate_is_the_parameter_itself_and_a_schedule_is_evaluated():
    optimizer = mk.optimizers.SGD(0.25, momentum=0.9)
    assert optimizer._step_learning_rate() is optimizer._learning_rate
    schedule = mk.optimizers.SGD(mk.optimizers.schedules.ExponentialDecay(0.1, 1, 0.5))
    assert float(schedule._step_learning_rate().asnumpy()) == pytest.approx(0.1)


def _generic_sparse_crossentropy(labels, logits):
    """Keras's formula written with a one-hot product (the path the gather replaces)."""
    log_probs = losses._log_softmax(logits, -1)
    one_hot = ops.one_hot(labels, logits.shape[-1], ms.Tensor(1.0), ms.Tensor(0.0))
    return -ops.sum(one_hot * log_probs, -1)


@pytest.mark.parametrize("shape", [(9, 5), (3, 4, 6)])
def test_sparse_crossentropy_gathers_the_same_values_and_gradients(shape):
    rng = np.random.default_rng(3)
    logits = ms.Tensor((rng.normal(size=shape) * 4).astype(np.float32))
    labels = ms.Tensor(rng.integers(0, shape[-1], size=shape[:-1]).astype(np.int32))

    def fast(x):
        return ops.sum(losses.sparse_categorical_crossentropy(labels, x, from_logits=True))

    def generic(x):
        return ops.sum(_generic_sparse_crossentropy(labels, x))

    np.testing.assert_allclose(losses.sparse_categorical_crossentropy(labels, logits, from_logits=True).asnumpy(),
                               _generic_sparse_crossentropy(labels, logits).asnumpy(), rtol=0, atol=0)
    np.testing.assert_allclose(ms.grad(fast)(logits).asnumpy(), ms.grad(generic)(logits).asnumpy(), rtol=0, atol=0)


def test_sparse_crossentropy_with_an_ignored_class_zeroes_its_examples_only():
    rng = np.random.default_rng(8)
    logits = ms.Tensor((rng.normal(size=(10, 4)) * 3).astype(np.float32))
    labels_np = np.array([0, 1, 2, 3, 2, 2, 1, 0, 3, 2], np.int32)
    labels = ms.Tensor(labels_np)
    kept = labels_np != 2

    def fast(x):
        return losses.sparse_categorical_crossentropy(labels, x, from_logits=True, ignore_class=2)

    def generic(x):
        return ops.where(ms.Tensor(kept), _generic_sparse_crossentropy(labels, x), ops.zeros(10, ms.float32))

    got, want = fast(logits).asnumpy(), generic(logits).asnumpy()
    assert (got[~kept] == 0).all() and (got[kept] > 0).all()
    np.testing.assert_allclose(got, want, rtol=0, atol=0)
    np.testing.assert_allclose(ms.grad(lambda x: ops.sum(fast(x)))(logits).asnumpy(),
                               ms.grad(lambda x: ops.sum(generic(x)))(logits).asnumpy(), rtol=0, atol=0)


def test_dense_and_conv_compute_the_plain_formula():
    rng = np.random.default_rng(4)
    dense = mk.layers.Dense(6, activation="relu", bias_initializer=mk.initializers.RandomNormal(seed=1))
    x = rng.normal(size=(5, 3, 4)).astype(np.float32)  # rank 3: applied on the last axis
    out = dense(x).asnumpy()
    expected = np.maximum(x @ dense.kernel.asnumpy() + dense.bias.asnumpy(), 0)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    conv = mk.layers.Conv2D(3, 2, bias_initializer=mk.initializers.RandomNormal(seed=2))
    images = rng.normal(size=(2, 5, 5, 2)).astype(np.float32)
    got = conv(images).asnumpy()
    kernel, bias = conv.kernel.asnumpy(), conv.bias.asnumpy()
    want = np.zeros((2, 4, 4, 3), np.float32)
    for i in range(4):
        for j in range(4):
            want[:, i, j, :] = np.einsum("nhwc,hwcf->nf", images[:, i:i + 2, j:j + 2, :], kernel) + bias
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_trainable_weights_follow_the_flags_without_waiting():
    model = mk.Sequential([mk.Input(shape=(4,)), mk.layers.Dense(3), mk.layers.Dense(2)])
    assert len(model.trainable_variables) == 4
    model.layers[0].trainable = False
    assert [_requires_grad(p) for p in model.layers[0].weights] == [False, False]
    assert len(model.trainable_variables) == 2
    model.layers[1].kernel.requires_grad = False
    assert [p.name for p in model.trainable_variables] == [model.layers[1].bias.name]


def _conv_same_reference(images, kernel, bias):
    """TF's "same" convolution at stride 1: pad (k - 1) // 2 before and the rest after, then slide."""
    kh, kw = kernel.shape[:2]
    padded = np.pad(images, ((0, 0), ((kh - 1) // 2, kh // 2), ((kw - 1) // 2, kw // 2), (0, 0)))
    n, h, w, _ = images.shape
    out = np.zeros((n, h, w, kernel.shape[3]), np.float32)
    for i in range(h):
        for j in range(w):
            out[:, i, j, :] = np.einsum("nhwc,hwcf->nf", padded[:, i:i + kh, j:j + kw, :], kernel) + bias
    return out


@pytest.mark.parametrize("kernel_size", [3, (3, 1), 2, (2, 3)])
def test_same_convolution_pads_as_tf_whether_the_padding_is_even_or_not(kernel_size):
    rng = np.random.default_rng(5)
    conv = mk.layers.Conv2D(3, kernel_size, padding="same", bias_initializer=mk.initializers.RandomNormal(seed=3))
    images = rng.normal(size=(2, 6, 5, 2)).astype(np.float32)
    got = conv(images).asnumpy()
    want = _conv_same_reference(images, conv.kernel.asnumpy(), conv.bias.asnumpy())
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # The kernel's gradient is the one of an explicitly padded input and a "valid" convolution.
    x = ms.Tensor(images.transpose(0, 3, 1, 2))
    kh, kw = conv.kernel.shape[:2]
    padded = ops.pad(x, ((kw - 1) // 2, kw // 2, (kh - 1) // 2, kh // 2))
    target = ms.Tensor(rng.normal(size=got.shape).astype(np.float32))

    def layer_loss():
        return ops.sum(conv(ms.Tensor(images)) * target)

    def explicit_loss():
        y = ops.conv2d(padded, conv.kernel.transpose(3, 2, 0, 1), None, stride=1, pad_mode="valid")
        return ops.sum((y.transpose(0, 2, 3, 1) + conv.bias) * target)

    got_grad = ms.grad(layer_loss, None, [conv.kernel])()[0].asnumpy()
    want_grad = ms.grad(explicit_loss, None, [conv.kernel])()[0].asnumpy()
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-5, atol=1e-5)


def _batch_norm_step(layer, x, target, fused: bool):
    """One training call of `layer` on `x`: output, gradients (x, gamma, beta), moving statistics."""
    if not fused:
        layer._fused_training_step = lambda inputs: None  # Keras's formula, operation by operation

    def loss(inputs):
        return ops.sum(layer(inputs, training=True) * target)

    grad_x, (grad_gamma, grad_beta) = ms.grad(loss, 0, [layer.gamma, layer.beta])(x)
    out = layer(x, training=True).asnumpy()  # a second step moves the statistics again
    return [out, grad_x.asnumpy(), grad_gamma.asnumpy(), grad_beta.asnumpy(),
            layer.moving_mean.asnumpy(), layer.moving_variance.asnumpy()]


@pytest.mark.parametrize("shape, axis", [((6, 5, 4, 3), -1), ((40, 7), -1), ((6, 3, 5, 4), 1)])
def test_batch_norm_training_in_the_fused_kernel_matches_keras_formula(shape, axis):
    rng = np.random.default_rng(6)
    x = ms.Tensor((rng.normal(size=shape) * 3 + 2).astype(np.float32))
    target = ms.Tensor(rng.normal(size=shape).astype(np.float32))
    probe = mk.layers.BatchNormalization(axis=axis)
    probe.build(shape)
    assert probe._fused_training_step(x) is not None  # the kernel applies to this layout
    results = []
    for fused in (True, False):
        layer = mk.layers.BatchNormalization(axis=axis, momentum=0.8,
                                             gamma_initializer=mk.initializers.RandomNormal(1.0, 0.2, seed=1),
                                             beta_initializer=mk.initializers.RandomNormal(seed=2))
        layer.build(shape)
        results.append(_batch_norm_step(layer, x, target, fused))
    names = ["output", "grad x", "grad gamma", "grad beta", "moving mean", "moving variance"]
    for name, a, b in zip(names, *results):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5, err_msg=name)
    # The moving variance moved by Keras's rule: the biased batch variance, not MindSpore's unbiased one.
    x_np = x.asnumpy()
    axes = tuple(i for i in range(len(shape)) if i != axis % len(shape))
    biased = x_np.var(axis=axes)
    expected = (1.0 * 0.8 + biased * 0.2) * 0.8 + biased * 0.2
    np.testing.assert_allclose(results[0][5], expected, rtol=1e-5)


def test_batch_norm_keeps_the_formula_where_the_kernel_does_not_apply():
    x = np.random.default_rng(7).normal(size=(4, 3)).astype(np.float32)
    for layer in (mk.layers.BatchNormalization(scale=False), mk.layers.BatchNormalization(center=False),
                  mk.layers.BatchNormalization(axis=0)):
        layer.build(x.shape)
        assert layer._fused_training_step(ms.Tensor(x)) is None
        assert np.isfinite(layer(x, training=True).asnumpy()).all()
    layer = mk.layers.BatchNormalization()
    layer.build((0, 3))
    assert layer._fused_training_step(ms.Tensor(np.zeros((0, 3), np.float32))) is None


def test_batch_norm_on_a_batch_of_one_row_keeps_finite_moving_statistics():
    layer = mk.layers.BatchNormalization(momentum=0.5)
    x = np.array([[1.0, -2.0, 4.0]], np.float32)
    out = layer(x, training=True).asnumpy()
    np.testing.assert_allclose(out, np.zeros_like(x), atol=1e-6)  # variance 0: the output is beta
    np.testing.assert_allclose(layer.moving_mean.asnumpy(), x[0] * 0.5, rtol=1e-6)
    np.testing.assert_allclose(layer.moving_variance.asnumpy(), np.full(3, 0.5, np.float32), rtol=1e-6)
