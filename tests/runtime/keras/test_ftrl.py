"""`mk.optimizers.Ftrl` against Keras 3's `Ftrl`, step by step on the same weights and gradients.

The trajectories are written once (`CASES`) and run by both sides through the backends of
`programs/backends.py`. TF's own FTRL kernels (`ResourceApplyFtrl`/`ResourceApplyFtrlV2`, what
Keras 2's `legacy.Ftrl` runs for dense gradients) are compared too, since `legacy.Ftrl` converts
to the same class; and an embedding's gradient, which TF hands over as `IndexedSlices`, since a
wide model's tables are what Ftrl usually trains.
"""

import importlib.util
import json

import numpy as np
import pytest
from keras_helpers import PROGRAMS

from tests.helpers import python_json

pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402

pytestmark = pytest.mark.tf

CASES = r'''
import numpy as np

SHAPES = [(4, 3), (3,)]
STEPS = 6
# name: Ftrl's arguments; "schedule" stands for ExponentialDecay(*arguments)
SPECS = {
    "defaults": {},
    "learning_rate": {"learning_rate": 0.1},
    "l1": {"learning_rate": 0.5, "l1_regularization_strength": 0.3},
    "l2": {"learning_rate": 0.2, "l2_regularization_strength": 0.4},
    "l2_shrinkage": {"learning_rate": 0.2, "l2_shrinkage_regularization_strength": 0.3},
    "beta": {"learning_rate": 0.2, "beta": 0.5},
    "power_zero": {"learning_rate": 0.05, "learning_rate_power": 0.0},
    "power_one": {"learning_rate": 0.3, "learning_rate_power": -1.0, "initial_accumulator_value": 0.5},
    "all": {"learning_rate": 0.3, "learning_rate_power": -0.7, "initial_accumulator_value": 0.2,
            "l1_regularization_strength": 0.05, "l2_regularization_strength": 0.1,
            "l2_shrinkage_regularization_strength": 0.05, "beta": 0.2},
    "schedule": {"schedule": [0.3, 2, 0.5], "l1_regularization_strength": 0.1, "beta": 0.3},
    "weight_decay": {"learning_rate": 0.2, "weight_decay": 0.1},
    "clipnorm": {"learning_rate": 0.2, "clipnorm": 0.5, "l2_regularization_strength": 0.1},
    "global_clipnorm": {"learning_rate": 0.2, "global_clipnorm": 0.7},
}
# what TF's kernels take (a fixed rate, no weight decay or clipping)
KERNEL_SPECS = ["defaults", "learning_rate", "l1", "l2", "l2_shrinkage", "beta", "power_zero", "power_one", "all"]
EMBEDDING_SPEC = {"learning_rate": 0.2, "l2_shrinkage_regularization_strength": 0.3, "l1_regularization_strength": 0.05}
# where TF 2.10's sparse kernel (only the rows looked up) and Keras 3 (every row) agree: a table from zeros,
# no shrinkage, a fixed rate
ZERO_TABLE_SPEC = {"learning_rate": 0.2, "l1_regularization_strength": 0.05, "l2_regularization_strength": 0.1,
                   "beta": 0.2}


def ftrl(K, spec):
    spec = dict(spec)
    if "schedule" in spec:
        spec["learning_rate"] = K.optimizers.schedules.ExponentialDecay(*spec.pop("schedule"))
    return K.optimizers.Ftrl(**spec)


def gradients():
    rng = np.random.default_rng(5)
    grads = [[rng.normal(size=shape).astype(np.float32) for shape in SHAPES] for _ in range(STEPS)]
    for step, (table, _) in enumerate(grads):
        table[step % 4] = 0.0  # a row the step's batch does not look up
    return grads


def initial():
    rng = np.random.default_rng(9)
    return [rng.normal(size=shape).astype(np.float32) for shape in SHAPES]


def trajectories(B, spec, sliced=False, start=None):
    """The weights after each step (from `start`, else `initial()`); `sliced`: the table's gradient as TF gives
    an embedding's (its rows)."""
    variables = [B.variable(value, f"v{i}") for i, value in enumerate(start or initial())]
    optimizer = ftrl(B.keras, spec)
    steps = []
    for grads in gradients():
        tensors = [B.tensor(g) for g in grads]
        if sliced:
            rows = np.flatnonzero(np.abs(grads[0]).sum(axis=1))
            tensors[0] = B.tf.IndexedSlices(B.tf.constant(grads[0][rows]), B.tf.constant(rows),
                                            B.tf.constant(grads[0].shape))
        optimizer.apply_gradients(zip(tensors, variables))
        steps.append([B.numpy(v).tolist() for v in variables])
    return {"steps": steps, "iterations": int(B.numpy(optimizer.iterations))}


def every_trajectory(B):
    out = {name: trajectories(B, spec) for name, spec in SPECS.items()}
    out["embedding"] = trajectories(B, EMBEDDING_SPEC, sliced=B.name == "tf")
    out["zero_table"] = trajectories(B, ZERO_TABLE_SPEC, start=[np.zeros(shape, np.float32) for shape in SHAPES])
    return out
'''

KERAS_SIDE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import tensorflow as tf
from backends import make
exec(sys.argv[2])


def kernel(spec):
    # TF 2.10's Ftrl (Keras 2's `legacy.Ftrl`): beta folded into l2, then TF's FTRL kernel
    lr = np.float32(spec.get("learning_rate", 0.001))
    power = spec.get("learning_rate_power", -0.5)
    l1 = spec.get("l1_regularization_strength", 0.0)
    l2 = tf.constant(spec.get("l2_regularization_strength", 0.0), tf.float32) + \
        tf.constant(spec.get("beta", 0.0), tf.float32) / (2.0 * tf.constant(lr))
    shrinkage = spec.get("l2_shrinkage_regularization_strength", 0.0)
    variables = [tf.Variable(value) for value in initial()]
    slots = [(tf.Variable(tf.fill(v.shape, np.float32(spec.get("initial_accumulator_value", 0.1)))),
              tf.Variable(tf.zeros(v.shape))) for v in variables]
    steps = []
    for grads in gradients():
        for variable, (accum, linear), grad in zip(variables, slots, grads):
            args = dict(var=variable.handle, accum=accum.handle, linear=linear.handle, grad=tf.constant(grad), lr=lr,
                        l1=np.float32(l1), l2=l2, lr_power=np.float32(power))
            if shrinkage > 0:
                tf.raw_ops.ResourceApplyFtrlV2(l2_shrinkage=np.float32(shrinkage), **args)
            else:
                tf.raw_ops.ResourceApplyFtrl(**args)
        steps.append([v.numpy().tolist() for v in variables])
    return {"steps": steps}


def sparse_kernel(spec):
    # TF 2.10's Ftrl on an embedding's gradient: the kernel updates the rows looked up, no others
    lr = np.float32(spec["learning_rate"])
    l2 = tf.constant(spec["l2_regularization_strength"], tf.float32) + \
        tf.constant(spec["beta"], tf.float32) / (2.0 * tf.constant(lr))
    table = tf.Variable(tf.zeros(SHAPES[0]))
    accum, linear = tf.Variable(tf.fill(SHAPES[0], np.float32(0.1))), tf.Variable(tf.zeros(SHAPES[0]))
    steps = []
    for grads in gradients():
        rows = np.flatnonzero(np.abs(grads[0]).sum(axis=1))
        tf.raw_ops.ResourceSparseApplyFtrl(var=table.handle, accum=accum.handle, linear=linear.handle,
                                           grad=tf.constant(grads[0][rows]), indices=tf.constant(rows), lr=lr,
                                           l1=np.float32(spec["l1_regularization_strength"]), l2=l2,
                                           lr_power=np.float32(-0.5))
        steps.append(table.numpy().tolist())
    return steps


B = make("tf")
keras = every_trajectory(B)
kernels = {name: kernel(SPECS[name]) for name in KERNEL_SPECS}
print(json.dumps({"keras": keras, "kernels": kernels, "sparse_kernel": sparse_kernel(ZERO_TABLE_SPEC)}))
"""

# an Ftrl with every argument of its own set, and clipping
CONFIG = {"learning_rate": 0.05, "learning_rate_power": -0.6, "initial_accumulator_value": 0.2,
          "l1_regularization_strength": 0.01, "l2_regularization_strength": 0.02,
          "l2_shrinkage_regularization_strength": 0.03, "beta": 0.1, "clipnorm": 1.0}


@pytest.fixture(scope="module")
def keras():
    return python_json(KERAS_SIDE, str(PROGRAMS), CASES)


@pytest.fixture(scope="module")
def ours():
    spec = importlib.util.spec_from_file_location("keras_case_backends", PROGRAMS / "backends.py")
    backends = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(backends)
    scope: dict = {}
    exec(CASES, scope)  # noqa: S102 - the test's own trajectories, shared with Keras's side
    return scope["every_trajectory"](backends.make("mk"))


def _assert_same_steps(ours, theirs, name):
    for step, (our_weights, their_weights) in enumerate(zip(ours, theirs)):
        for our, their in zip(our_weights, their_weights):
            np.testing.assert_allclose(np.asarray(our, np.float32), np.asarray(their, np.float32), rtol=1e-6,
                                       atol=1e-7, err_msg=f"{name}, step {step + 1}")


NAMES = ["defaults", "learning_rate", "l1", "l2", "l2_shrinkage", "beta", "power_zero", "power_one", "all",
         "schedule", "weight_decay", "clipnorm", "global_clipnorm", "embedding", "zero_table"]


@pytest.mark.parametrize("name", NAMES)
def test_the_weights_follow_keras_step_by_step(name, ours, keras):
    _assert_same_steps(ours[name]["steps"], keras["keras"][name]["steps"], name)
    assert ours[name]["iterations"] == keras["keras"][name]["iterations"] == 6


def test_every_case_ran_on_both_sides(ours, keras):
    assert sorted(NAMES) == sorted(keras["keras"]) == sorted(ours)


@pytest.mark.parametrize("name", NAMES[:9])  # KERNEL_SPECS
def test_tfs_ftrl_kernels_give_the_same_weights(name, ours, keras):
    # (Keras 2's legacy.Ftrl, for dense gradients: what makes its conversion to this class right)
    _assert_same_steps(ours[name]["steps"], keras["kernels"][name]["steps"], name)


def test_a_table_from_zeros_gets_tf_2_10s_sparse_update(ours, keras):
    # (what the conversion of `legacy.Ftrl` keeps for an embedding: TFK197 says when it differs)
    _assert_same_steps([[table] for table, _ in ours["zero_table"]["steps"]], [[t] for t in keras["sparse_kernel"]],
                       "zero_table")


def test_the_l1_case_zeroes_some_weights_and_not_others(keras):
    # (else it would not reach the clip that makes l1 matter)
    table = np.asarray(keras["keras"]["l1"]["steps"][-1][0])
    assert 0 < np.count_nonzero(table == 0.0) < table.size


def test_config_get_and_errors_are_kerass():
    optimizer = mk.optimizers.Ftrl(**CONFIG)
    config = optimizer.get_config()
    assert {key: config[key] for key in CONFIG} == pytest.approx(CONFIG)
    again = mk.optimizers.deserialize(mk.optimizers.serialize(optimizer))
    assert type(again) is mk.optimizers.Ftrl and again.get_config() == config
    assert isinstance(mk.optimizers.get("ftrl"), mk.optimizers.Ftrl) and isinstance(mk.optimizers.get("Ftrl"),
                                                                                     mk.optimizers.Ftrl)
    with pytest.raises(ValueError, match="`learning_rate_power` needs to be negative or zero"):
        mk.optimizers.Ftrl(learning_rate_power=0.5)
    with pytest.raises(ValueError, match="`initial_accumulator_value` needs to be positive or zero"):
        mk.optimizers.Ftrl(initial_accumulator_value=-0.1)
    with pytest.raises(ValueError, match="`l2_shrinkage_regularization_strength` needs to be positive or zero"):
        mk.optimizers.Ftrl(l2_shrinkage_regularization_strength=-1.0)


def test_slots_are_kerass_accumulator_then_linear_per_variable():
    import mindspore as ms

    variables = [ms.Parameter(ms.Tensor(np.ones((2, 3), np.float32)), name="a"),
                 ms.Parameter(ms.Tensor(np.ones(3, np.float32)), name="b")]
    optimizer = mk.optimizers.Ftrl(initial_accumulator_value=0.25)
    optimizer.build(variables)
    keys = [key for key, _ in optimizer.checkpoint_entries()]
    assert keys == ["iterations", "learning_rate", "slots/00000/accumulator", "slots/00000/linear",
                    "slots/00001/accumulator", "slots/00001/linear"]
    accumulator, linear = optimizer.variables[2:4]
    assert np.all(accumulator.asnumpy() == np.float32(0.25)) and not linear.asnumpy().any()
