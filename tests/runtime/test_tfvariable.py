"""`tfvariable.Variable` and `tfmath` give TF's values (checked against real TF in this process)."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
ms = pytest.importorskip("mindspore")

from migrate.runtime import tfmath, tfvariable  # noqa: E402

TF_TO_MS = {tf.int32: ms.int32, tf.int64: ms.int64, tf.float32: ms.float32, tf.float64: ms.float64, tf.bool: ms.bool_}


@pytest.mark.parametrize("value", [0, 7, 2**40, 1.5, True, [1, 2], [1.0, 2], np.zeros(3), np.ones(2, np.int64),
                                   np.float32(3.0), [[1, 2], [3, 4]]])
def test_the_initial_values_dtype_is_inferred_as_tf_does(value):
    ours, theirs = tfvariable.Variable(value), tf.Variable(value)
    assert ours.dtype == TF_TO_MS[theirs.dtype]
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_a_dtype_given_converts_the_value():
    ours, theirs = tfvariable.Variable(3, dtype=ms.float32), tf.Variable(3, dtype=tf.float32)
    assert ours.dtype == ms.float32 and ours.numpy() == theirs.numpy() == 3.0


def test_assignments_update_in_place_and_return_the_variable():
    ours = tfvariable.Variable(np.arange(3, dtype=np.float32))
    theirs = tf.Variable(np.arange(3, dtype=np.float32))
    for v in (ours, theirs):
        returned = v.assign_add([1.0, 1.0, 1.0])
        v.assign_sub(np.array([0.5, 0.5, 0.5], np.float32))
        v.assign(v.read_value() * 2)
        assert returned is v or returned.numpy().tolist() == v.numpy().tolist()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours.assign_add([1.0, 1.0, 1.0], read_value=False) is None


def test_a_step_counter_counts():
    ours = tfvariable.Variable(0, trainable=False, dtype=ms.int64)
    for _ in range(5):
        ours.assign_add(1)
    assert int(ours.numpy()) == 5 and ours.dtype == ms.int64
    assert ours.trainable is False and ours.requires_grad is False


def test_assigning_another_shape_fails_as_in_tf():
    with pytest.raises(ValueError, match=r"shape \(3,\).*shape \(2, 2\)"):
        tfvariable.Variable(np.zeros((2, 2), np.float32)).assign(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="not compatible"):
        tfvariable.Variable(np.zeros(2), shape=(3,))
    with pytest.raises(ValueError, match="initial_value must be specified"):
        tfvariable.Variable(None)


def test_names_are_unique_and_a_callable_is_called():
    a, b = tfvariable.Variable(1.0, name="unique_probe"), tfvariable.Variable(1.0, name="unique_probe:0")
    assert (a.name, b.name) == ("unique_probe", "unique_probe_1")
    assert float(tfvariable.Variable(lambda: 4.0).numpy()) == 4.0


def test_a_variable_is_a_parameter_that_gradients_reach():
    w = tfvariable.Variable(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    x = ms.Tensor(np.array([[1.0, -1.0]], np.float32))
    (grad,) = ms.grad(lambda x: (ms.ops.matmul(x, w.read_value()) ** 2).sum(), None, (w,))(x)
    tw = tf.Variable(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.matmul(np.array([[1.0, -1.0]], np.float32), tw.read_value()) ** 2)
    np.testing.assert_allclose(grad.asnumpy(), tape.gradient(loss, tw).numpy())
    assert isinstance(w, ms.Parameter) and w.trainable and w.requires_grad


@pytest.mark.parametrize("shape, clip, axes", [((3, 4), 0.5, None), ((3, 4), 100.0, None), ((3, 4), 0.5, [1]),
                                               ((2, 3, 4), 1.0, [0, 2]), ((5,), 0.1, None), ((2, 2), 1.0, None)])
def test_clip_by_norm_is_tfs(shape, clip, axes):
    x = np.random.default_rng(len(shape)).normal(size=shape).astype(np.float32)
    if clip == 1.0 and shape == (2, 2):
        x[:] = 0.0  # an all-zero tensor stays zero (no 0/0)
    np.testing.assert_allclose(tfmath.clip_by_norm(ms.Tensor(x), clip, axes).asnumpy(),
                               tf.clip_by_norm(x, clip, axes=axes).numpy(), rtol=1e-6, atol=1e-7)


def test_clip_by_global_norm_is_tfs():
    rng = np.random.default_rng(3)
    xs = [rng.normal(size=(3,)).astype(np.float32), None, rng.normal(size=(2, 2)).astype(np.float32)]
    ours, norm = tfmath.clip_by_global_norm([None if v is None else ms.Tensor(v) for v in xs], 0.7)
    theirs, tf_norm = tf.clip_by_global_norm(xs, 0.7)
    assert ours[1] is None and theirs[1] is None
    np.testing.assert_allclose(float(norm.asnumpy()), float(tf_norm), rtol=1e-6)
    for a, b in zip(ours[::2], theirs[::2]):
        np.testing.assert_allclose(a.asnumpy(), b.numpy(), rtol=1e-6)
    np.testing.assert_allclose(float(tfmath.global_norm([ms.Tensor(v) for v in xs if v is not None]).asnumpy()),
                               float(tf.linalg.global_norm([v for v in xs if v is not None])), rtol=1e-6)
    inf = [ms.Tensor(np.array([np.inf, 1.0], np.float32))]
    assert np.isnan(tfmath.clip_by_global_norm(inf, 1.0)[0][0].asnumpy()).all()


MODULES = '''
import tensorflow as tf


class Leaf(tf.Module):
    def __init__(self, base, name=None):
        super().__init__(name=name)
        self.z = tf.Variable(base + 1.0)
        self.a = tf.Variable(base + 2.0, trainable=False)


class Tree(tf.Module):
    def __init__(self):
        super().__init__()
        self.layers = [Leaf(10.0, name="first"), Leaf(20.0)]
        self.table = {"b": tf.Variable(3.0), "a": (tf.Variable(4.0), Leaf(30.0))}
        self.bias = tf.Variable(5.0)
        self.again = self.bias


class NoInit(tf.Module):
    def __call__(self, x):
        return x


tree = Tree()
values = [float(v.numpy()) for v in tree.variables]
trainable = [float(v.numpy()) for v in tree.trainable_variables]
frozen = [float(v.numpy()) for v in tree.non_trainable_variables]
names = [m.name for m in tree.submodules]
own = (tree.name, NoInit().name, Leaf(0.0, name="leaf_1").name)
'''


def test_a_modules_variables_and_submodules_are_found_in_tfs_order():
    from tests.helpers import convert

    theirs: dict = {}
    exec(MODULES, theirs)  # noqa: S102 - the test's own program
    code, findings = convert(MODULES)
    assert "class Tree(tfvariable.Module):" in code and "tensorflow" not in code
    ours: dict = {}
    exec(code, ours)  # noqa: S102
    for key in ("values", "trainable", "frozen", "names", "own"):
        assert ours[key] == theirs[key], key
    with pytest.raises(ValueError, match="not a valid module name"):
        tfvariable.Module(name="a b")


def test_the_global_step_is_one_counter_as_in_tf():
    from tests.helpers import convert

    program = ("import tensorflow as tf\n\nbefore = tf.compat.v1.train.get_global_step()\n"
               "a = tf.compat.v1.train.get_or_create_global_step()\nb = tf.compat.v1.train.get_or_create_global_step()\n"
               "b.assign_add(1)\nresult = (before is None, a is b, int(a.numpy()), a.trainable, "
               "tf.compat.v1.train.get_global_step() is a)\n")
    code, _ = convert(program)
    assert "tensorflow" not in code
    ours: dict = {}
    exec(code, ours)  # noqa: S102 - the test's own program
    assert ours["result"] == (True, True, 1, False, True) and ours["a"].dtype == ms.int64


def test_a_first_replica_counter_keeps_its_policy_and_counts():
    step = tfvariable.Variable(0, trainable=False, dtype=ms.int64,
                               aggregation=tfvariable.VariableAggregation.ONLY_FIRST_REPLICA,
                               synchronization=tfvariable.VariableSynchronization.ON_WRITE)
    for _ in range(3):
        step.assign_add(1)
    assert int(step.numpy()) == 3 and step.dtype == ms.int64
    assert (step.aggregation, step.synchronization) == (tfvariable.VariableAggregation.ONLY_FIRST_REPLICA,
                                                        tfvariable.VariableSynchronization.ON_WRITE)


@pytest.mark.parametrize("policy", [{"aggregation": tfvariable.VariableAggregation.SUM},
                                    {"aggregation": tfvariable.VariableAggregation.MEAN},
                                    {"synchronization": tfvariable.VariableSynchronization.ON_READ}])
def test_a_variable_tf_aggregates_across_replicas_is_refused(policy):
    with pytest.raises(NotImplementedError, match="per process here"):
        tfvariable.Variable(0.0, **policy)
