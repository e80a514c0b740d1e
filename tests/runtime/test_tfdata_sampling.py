"""`tfdata`'s `choose_from_datasets` and `sample_from_datasets` against tf.data's on the same inputs:
elements in order for given choices, the elements and the stopping rule for drawn ones."""

import json

import numpy as np
import pytest

from tests.helpers import python_json

pytest.importorskip("mindspore")

from migrate.runtime import tfdata  # noqa: E402
from migrate.runtime.tferrors import InvalidArgumentError  # noqa: E402

pytestmark = pytest.mark.tf

CHOICES = [0, 1, 1, 0, 0, 1, 0, 0, 1]
# name: (how the two inputs are made, call, stop_on_empty_dataset or None for the default)
CASES = {
    "choose_default": ("choose", None, "Dataset"),
    "choose_no_stop": ("choose", False, "Dataset"),
    "choose_experimental": ("choose", None, "experimental"),
    "sample_all": ("sample", None, "Dataset"),
    "sample_weight_zero": ("sample_zero", None, "Dataset"),
    "sample_stop": ("sample", True, "Dataset"),
    "sample_experimental": ("sample", None, "experimental"),
}

TF_SIDE = r"""
import json, sys
import tensorflow as tf
cases, choices = json.loads(sys.argv[1]), json.loads(sys.argv[2])
out = {}
for name, (kind, stop, where) in cases.items():
    a, b = tf.data.Dataset.range(3), tf.data.Dataset.range(10, 12 if kind == "choose" else 30)
    owner = tf.data.Dataset if where == "Dataset" else tf.data.experimental
    extra = {} if stop is None else {"stop_on_empty_dataset": stop}
    if kind == "choose":
        ds = owner.choose_from_datasets([a, b], tf.data.Dataset.from_tensor_slices(tf.constant(choices, tf.int64)),
                                        **extra)
    elif kind == "sample_zero":
        ds = owner.sample_from_datasets([a, b], weights=[1.0, 0.0], seed=5, **extra)
    else:
        ds = owner.sample_from_datasets([a, b], weights=[0.3, 0.7], seed=5, **extra)
    out[name] = [int(x) for x in ds.as_numpy_iterator()]
a = tf.data.Dataset.range(3).repeat()
out["cardinality"] = int(tf.data.Dataset.sample_from_datasets([a, a]).cardinality())
try:
    list(tf.data.Dataset.choose_from_datasets([a, a], tf.data.Dataset.from_tensor_slices(tf.constant([0, 2], tf.int64))))
except tf.errors.InvalidArgumentError as error:
    out["out_of_range"] = error.message.split("[Op")[0].split("}}")[-1].strip()
for call in ("tf.data.Dataset.choose_from_datasets([], a)", "tf.data.Dataset.sample_from_datasets([a, a], weights=[1.0])"):
    try:
        eval(call)
    except ValueError as error:
        out[call] = str(error)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def tf_side():
    return python_json(TF_SIDE, json.dumps(CASES), json.dumps(CHOICES))


def _ours(kind, stop, where):
    a, b = tfdata.Dataset.range(3), tfdata.Dataset.range(10, 12 if kind == "choose" else 30)
    owner = tfdata.Dataset if where == "Dataset" else tfdata.experimental
    extra = {} if stop is None else {"stop_on_empty_dataset": stop}
    if kind == "choose":
        return owner.choose_from_datasets([a, b], tfdata.Dataset.from_tensor_slices(np.array(CHOICES, np.int64)),
                                          **extra)
    if kind == "sample_zero":
        return owner.sample_from_datasets([a, b], weights=[1.0, 0.0], seed=5, **extra)
    return owner.sample_from_datasets([a, b], weights=[0.3, 0.7], seed=5, **extra)


@pytest.mark.parametrize("name", sorted(CASES))
def test_interleaving_by_choices_is_tfs(name, tf_side):
    kind, stop, where = CASES[name]
    ours = [int(x) for x in _ours(kind, stop, where)]
    if kind == "sample" and stop is None:
        # drawn choices: NumPy's draws, not TF's; every element of both inputs, each input in its order
        for out in (ours, tf_side[name]):
            assert sorted(out) == [0, 1, 2, *range(10, 30)]
            assert [x for x in out if x < 10] == [0, 1, 2] and [x for x in out if x >= 10] == list(range(10, 30))
    elif kind == "sample":
        # stopping at the first empty input: each input a prefix of itself, one of them whole
        for out in (ours, tf_side[name]):
            firsts, seconds = [x for x in out if x < 10], [x for x in out if x >= 10]
            assert firsts == [0, 1, 2][:len(firsts)] and seconds == list(range(10, 10 + len(seconds)))
            assert len(firsts) == 3 and len(seconds) < 20
    else:
        assert ours == tf_side[name]


def test_cardinality_and_errors_are_tfs(tf_side):
    a = tfdata.Dataset.range(3).repeat()
    assert tfdata.Dataset.sample_from_datasets([a, a]).cardinality() == tf_side["cardinality"]
    with pytest.raises(InvalidArgumentError, match=tf_side["out_of_range"]):
        list(tfdata.Dataset.choose_from_datasets([a, a], tfdata.Dataset.from_tensor_slices(np.array([0, 2], np.int64))))
    with pytest.raises(ValueError) as empty:
        tfdata.Dataset.choose_from_datasets([], a)
    assert str(empty.value) == tf_side["tf.data.Dataset.choose_from_datasets([], a)"]
    with pytest.raises(ValueError) as lengths:
        tfdata.Dataset.sample_from_datasets([a, a], weights=[1.0])
    assert str(lengths.value) == tf_side["tf.data.Dataset.sample_from_datasets([a, a], weights=[1.0])"]
    with pytest.raises(TypeError, match="scalar `tf.int64`"):
        list(tfdata.Dataset.choose_from_datasets([a, a], tfdata.Dataset.from_tensor_slices(np.array([0], np.int32))))


def test_proportions_follow_the_weights_and_a_seed_fixes_the_order():
    a, b = tfdata.Dataset.range(100000).repeat(), tfdata.Dataset.range(-1, 0).repeat()
    first = [int(x) for x in tfdata.Dataset.sample_from_datasets([a, b], weights=[3, 1], seed=7).take(4000)]
    second = [int(x) for x in tfdata.Dataset.sample_from_datasets([a, b], weights=[3, 1], seed=7).take(4000)]
    assert first == second
    assert abs(sum(x == -1 for x in first) / 4000 - 0.25) < 0.03
