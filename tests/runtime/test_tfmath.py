"""`tfmath`'s refusals are TF's, and its selections pass gradients (the values themselves are
compared with TF's in tests/test_math_rules.py)."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
ms = pytest.importorskip("mindspore")

from mindspore import ops  # noqa: E402

from migrate.runtime import tfmath  # noqa: E402

IMAGE = np.arange(5 * 6 * 3, dtype=np.float32).reshape(5, 6, 3)


@pytest.mark.parametrize("call", [
    lambda m, x: m.crop_to_bounding_box(x, 3, 0, 3, 2),      # taller than the image
    lambda m, x: m.crop_to_bounding_box(x, 0, 5, 2, 2),      # wider than the image
    lambda m, x: m.crop_to_bounding_box(x, -1, 0, 2, 2),     # a negative offset
    lambda m, x: m.pad_to_bounding_box(x, 1, 0, 5, 6),       # smaller than image + offset
    lambda m, x: m.resize_with_crop_or_pad(x, 0, 3),         # an empty target
    lambda m, x: m.crop_to_bounding_box(x[0, 0], 0, 0, 1, 1),  # not an image
])
def test_image_geometry_refuses_what_tf_refuses(call):
    with pytest.raises(ValueError):
        call(tf.image, tf.constant(IMAGE))
    with pytest.raises(ValueError):
        call(tfmath, ms.Tensor(IMAGE))


def test_boolean_mask_refusals_and_gradient():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for mask in (np.array([True, False]), np.array(True)):
        with pytest.raises(ValueError):
            tf.boolean_mask(tf.constant(x), mask)
        with pytest.raises(ValueError):
            tfmath.boolean_mask(ms.Tensor(x), mask)
    mask = np.array([[True, False, True, False], [False, False, True, True], [True, True, True, False]])
    grad = ms.grad(lambda t: ops.sum(tfmath.boolean_mask(t, ms.Tensor(mask)) ** 2))(ms.Tensor(x))
    with tf.GradientTape() as tape:
        t = tf.constant(x)
        tape.watch(t)
        loss = tf.reduce_sum(tf.boolean_mask(t, mask) ** 2)
    np.testing.assert_array_equal(grad.asnumpy(), tape.gradient(loss, t).numpy())


def test_norm_refuses_unsupported_ords():
    x = np.ones((2, 3), np.float32)
    for kwargs in (dict(ord="fro", axis=1), dict(ord="fro"), dict(ord=-1), dict(axis=(0, 1, 1))):
        with pytest.raises(ValueError):
            tf.norm(tf.constant(x), **kwargs)
        with pytest.raises(ValueError):
            tfmath.norm(ms.Tensor(x), **kwargs)
    with pytest.raises(ValueError, match="supported matrix norm"):  # TF's spectral norm: not provided
        tfmath.norm(ms.Tensor(x), ord=2, axis=(0, 1))


def test_python_functions_check_what_they_return():
    x = ms.Tensor(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="returned 1 values, 2 declared"):
        tfmath.numpy_function(lambda a: a, [x], [ms.float32, ms.float32])
    with pytest.raises(TypeError, match="not the declared"):
        tfmath.numpy_function(lambda a: a.astype(np.float64), [x], ms.int32)
    assert tfmath.numpy_function(lambda a: None, [x], None) == []
    text = tfmath.numpy_function(lambda a: np.array([b"a", b"bc"]), [x], "string")
    assert list(text) == [b"a", b"bc"]
    ints = tfmath.py_function(lambda a: ops.cast(a, ms.int32) * 2, [x], ms.int64)
    assert ints.dtype == ms.int64 and ints.asnumpy().tolist() == [2, 2, 2]


def test_python_functions_take_text_as_tf_hands_it_over():
    from migrate.runtime import tfdata

    lengths = tfdata.Dataset.from_tensor_slices(np.array([b"ab", b"cde"], dtype=object)).map(
        lambda p: tfmath.numpy_function(lambda q: np.int64(len(q.decode())), [p], ms.int64))
    assert [int(v) for v in lengths.as_numpy_iterator()] == [2, 3]
    assert tfmath.py_function(lambda q: np.int64(len(q.item())), [np.array(b"abcd", dtype=object)], ms.int64) == 4
    with pytest.raises(ValueError, match="three-dimensional"):
        tfmath.flip_left_right(ms.Tensor(np.ones((2, 2), np.float32)))


def test_keras_backend_int_shape_of_a_symbolic_input():
    from migrate.runtime import keras as mk

    assert mk.backend.int_shape(mk.Input((3,))) == tf.keras.backend.int_shape(tf.keras.Input((3,))) == (None, 3)
    x = np.array([np.nan, -1.0, 4.0], np.float32)
    np.testing.assert_array_equal(mk.backend.sqrt(ms.Tensor(x)).asnumpy(), tf.keras.backend.sqrt(x).numpy())
    assert float(mk.backend.mean(np.array([True, False, True, True]))) == 0.75


@pytest.mark.parametrize("equation,shapes", [
    ("BTNH,BFNH->BNFT", [(2, 3, 4, 5), (2, 6, 4, 5)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("ijk,ik->ijk", [(2, 3, 4), (2, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    # `...` aligned from the right, as numpy broadcasts
    ("...i,...i->...i", [(3, 4), (3, 3, 4)]),
    ("a...b,b...->a...", [(2, 3, 4), (4, 1, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 5)]),
])
def test_einsum_values_and_gradients_are_tfs(equation, shapes):
    rng = np.random.default_rng(5)
    arrays = [rng.normal(size=s).astype(np.float32) for s in shapes]
    with tf.GradientTape() as tape:
        tensors = [tf.constant(a) for a in arrays]
        for t in tensors:
            tape.watch(t)
        want = tf.einsum(equation, *tensors)
        loss = tf.reduce_sum(want ** 2)
    want_grads = tape.gradient(loss, tensors)
    got = tfmath.einsum(equation, *[ms.Tensor(a) for a in arrays])
    np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    grads = ms.grad(lambda *xs: ops.sum(tfmath.einsum(equation, *xs) ** 2), grad_position=(0, 1))(
        *[ms.Tensor(a) for a in arrays])
    for g, w in zip(grads, want_grads):
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-4, atol=1e-4)


def test_einsum_refuses_what_it_does_not_compute():
    x = ms.Tensor(np.ones((3, 3), np.float32))
    with pytest.raises(ValueError, match="a diagonal"):
        tfmath.einsum("ii->i", x)
    with pytest.raises(ValueError, match="one or two operands"):
        tfmath.einsum("ij,jk,kl->il", x, x, x)
    with pytest.raises(ValueError, match="index 'j' has sizes 1 and 3"):  # only `...` broadcasts, as in TF
        tfmath.einsum("ij,jk", ms.Tensor(np.ones((2, 1), np.float32)), x)


def test_roll_takes_shifts_and_axes_as_tensors_and_arrays():
    x = np.arange(12).reshape(3, 4)
    got = tfmath.roll(ms.Tensor(x), ms.Tensor(np.array([1, -1])), np.array([0, 1]))
    np.testing.assert_array_equal(got.asnumpy(), tf.roll(tf.constant(x), [1, -1], [0, 1]).numpy())


@pytest.mark.parametrize("kwargs", [
    {},
    {"num_classes": 6},
    {"weights": [0.5, 2.0, 1.5, 3.0, 1.0, 2.5, 0.25, 4.0]},  # cast to int32 before the sum, as TF does
    {"weights": [0.5, 2.0, 1.5, 3.0, 1.0, 2.5, 0.25, 4.0], "dtype": "float32"},
    {"dtype": "int64"},
])
def test_confusion_matrix_is_tfs(kwargs):
    labels = np.array([0, 2, 1, 2, 4, 0, 2, 1])
    predictions = np.array([0, 1, 1, 2, 3, 0, 2, 2])
    want = tf.math.confusion_matrix(labels, predictions, **{k: (getattr(tf, v) if k == "dtype" else v)
                                                            for k, v in kwargs.items()})
    got = tfmath.confusion_matrix(ms.Tensor(labels), ms.Tensor(predictions),
                                  **{k: (getattr(ms, v) if k == "dtype" else v) for k, v in kwargs.items()})
    assert got.shape == tuple(want.shape) and str(got.dtype).lower() == want.dtype.name
    np.testing.assert_array_equal(got.asnumpy(), want.numpy())
    # a column of labels, (n, 1), reads as (n,) on both sides
    column = tfmath.confusion_matrix(labels[:, None], predictions, **{k: (getattr(ms, v) if k == "dtype" else v)
                                                                      for k, v in kwargs.items()})
    np.testing.assert_array_equal(column.asnumpy(), want.numpy())


def test_confusion_matrix_refuses_what_tf_refuses():
    for labels, kwargs in (([0, -1], {}), ([0, 3], {"num_classes": 3})):
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.math.confusion_matrix(labels, [0, 1], **kwargs)
        with pytest.raises(ValueError):
            tfmath.confusion_matrix(labels, [0, 1], **kwargs)


def test_dynamic_stitch_refuses_what_tf_refuses():
    from migrate.runtime import tferrors, tfmath

    with pytest.raises(tferrors.InvalidArgumentError, match=r"data shape \[1\] does not start with indices shape \[2\]"):
        tfmath.dynamic_stitch([[0, 1]], [[5.0]])
    with pytest.raises(tferrors.InvalidArgumentError, match="non-negative"):
        tfmath.dynamic_stitch([[0, -1]], [[5.0, 6.0]])
    with pytest.raises(ValueError, match="as many data tensors as index tensors"):
        tfmath.dynamic_stitch([[0], [1]], [[5.0]])


def test_tf_errors_are_caught_as_tf_catches_them(tmp_path):
    """`except tf.errors.InvalidArgumentError` converted: what the runtime raises where TF raises it."""
    from migrate.runtime import tfdata, tferrors, tfmath

    with pytest.raises(tferrors.InvalidArgumentError, match="No files matched pattern"):
        tfdata.Dataset.list_files(str(tmp_path / "*.jpg"))
    with pytest.raises(tferrors.OpError, match="None of conditions evaluated as True"):
        tfmath.case([(False, lambda: 1)])
    assert issubclass(tferrors.InvalidArgumentError, ValueError)  # (MindSpore's own argument errors)


def test_abs_of_a_complex_tensor_is_its_real_magnitude():
    import mindspore as ms

    from migrate.runtime import tfmath

    spectrum = tfmath.rfft(np.arange(8, dtype=np.float32))
    magnitude = tfmath.abs(spectrum)
    assert magnitude.dtype == ms.float32
    np.testing.assert_allclose(magnitude.asnumpy(), np.abs(np.fft.rfft(np.arange(8.0))), rtol=1e-5)
    assert tfmath.abs(ms.Tensor(np.array([-2, 3], np.int32))).asnumpy().tolist() == [2, 3]
