"""TF 2.1-2.3's `keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale)`: Keras 2's API
(`get_scaled_loss`, `get_unscaled_gradients`, `apply_gradients` of unscaled gradients, `loss_scale`) and
its rules (halve on overflow, never below 1, and skip; double after the growth steps; a fixed scale
applies every step). TF 2.21 no longer has it, so its rules are checked as TF 2.3's source states them."""

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402


def _setup(loss_scale="dynamic"):
    variable = ms.Parameter(ms.Tensor(np.array([1.0, 2.0], np.float32)), name="w")
    optimizer = mk.mixed_precision.experimental.LossScaleOptimizer(mk.optimizers.SGD(0.5), loss_scale)
    return variable, optimizer


def _step(optimizer, variable, gradient):
    scaled = [ms.Tensor(np.asarray(gradient, np.float32)) * optimizer.loss_scale]
    optimizer.apply_gradients(zip(optimizer.get_unscaled_gradients(scaled), [variable]))


def test_a_custom_loop_in_keras_2s_style_steps_and_skips_with_keras_2s_scale():
    variable, optimizer = _setup()
    assert float(optimizer.loss_scale.asnumpy()) == 2.0 ** 15
    assert float(optimizer.get_scaled_loss(ms.Tensor(np.float32(3.0))).asnumpy()) == 3.0 * 2 ** 15
    _step(optimizer, variable, [0.2, -0.4])
    np.testing.assert_allclose(variable.asnumpy(), [0.9, 2.2], rtol=1e-6)  # unscaled once, not twice
    _step(optimizer, variable, [np.inf, 0.0])
    np.testing.assert_allclose(variable.asnumpy(), [0.9, 2.2], rtol=1e-6)  # skipped
    assert float(optimizer.loss_scale.asnumpy()) == 2.0 ** 14
    assert int(optimizer.iterations.asnumpy()) == 1


def test_the_scale_halves_to_one_at_least_and_doubles_after_the_growth_steps():
    variable, optimizer = _setup()
    scales = []
    for _ in range(17):
        _step(optimizer, variable, [np.nan, 0.0])
        scales.append(float(optimizer.loss_scale.asnumpy()))
    assert scales[:3] == [2.0 ** 14, 2.0 ** 13, 2.0 ** 12] and scales[-2:] == [1.0, 1.0]
    optimizer.dynamic_growth_steps = 3
    for _ in range(6):
        _step(optimizer, variable, [0.1, 0.1])
    assert float(optimizer.loss_scale.asnumpy()) == 4.0


def test_a_fixed_scale_never_changes_and_every_step_applies():
    variable, optimizer = _setup(128)
    assert float(optimizer.get_scaled_loss(lambda: ms.Tensor(np.float32(1.0)))().asnumpy()) == 128.0
    _step(optimizer, variable, [0.2, 0.2])
    assert float(optimizer.loss_scale.asnumpy()) == 128.0
    np.testing.assert_allclose(variable.asnumpy(), [0.9, 1.9], rtol=1e-6)
    with pytest.raises(ValueError, match="Invalid loss scale"):
        _setup("static")


def test_under_fit_the_scaled_gradients_are_unscaled_first():
    """`fit` scales the loss with `scale_loss` and hands `apply` the scaled gradients."""
    variable, optimizer = _setup()
    optimizer.apply([ms.Tensor(np.array([0.2, -0.4], np.float32)) * 2.0 ** 15], [variable])
    np.testing.assert_allclose(variable.asnumpy(), [0.9, 2.2], rtol=1e-6)


def test_the_keras_3_wrapper_takes_a_keras_2_style_loop_too():
    """TF 2.4-2.15 programs call `get_scaled_loss`/`get_unscaled_gradients` on `LossScaleOptimizer`: the
    gradients handed back are unscaled once."""
    variable = ms.Parameter(ms.Tensor(np.array([1.0, 2.0], np.float32)), name="w")
    optimizer = mk.mixed_precision.LossScaleOptimizer(mk.optimizers.SGD(0.5))
    _step(optimizer, variable, [0.2, -0.4])
    np.testing.assert_allclose(variable.asnumpy(), [0.9, 2.2], rtol=1e-6)
    optimizer.apply([ms.Tensor(np.array([0.2, -0.4], np.float32)) * optimizer.loss_scale], [variable])
    np.testing.assert_allclose(variable.asnumpy(), [0.8, 2.4], rtol=1e-6)
