"""`tfragged`: a ragged tensor made dense at once gives TF's dense tensor (TFT135), checked against TF."""

import json

import numpy as np
import pytest

from tests.helpers import python_json

ms = pytest.importorskip("mindspore")

from migrate.runtime import tfragged  # noqa: E402
from migrate.runtime.tensors import tf_inferred  # noqa: E402


def tensors(values, partition):
    """The inputs as the TF side makes them: values with TF's inferred dtype, the partition int64."""
    return ms.Tensor(tf_inferred(values)), ms.Tensor(np.asarray(partition, np.int64))

pytestmark = pytest.mark.tf

VALUES = list(range(1, 11))
MATRIX = np.arange(20, dtype=np.float32).reshape(10, 2).tolist()
# name: (constructor, values, partition, its keyword arguments, to_tensor's keyword arguments)
CASES = {
    "lengths": ("from_row_lengths", VALUES, [3, 0, 4, 3], {}, {}),
    "lengths_default_and_shape": ("from_row_lengths", VALUES, [3, 0, 4, 3], {"validate": False},
                                  {"default_value": -1, "shape": [None, 2]}),
    "lengths_wider_shape": ("from_row_lengths", VALUES, [3, 0, 4, 3], {}, {"default_value": 7, "shape": [5, 6]}),
    "lengths_inner_axis": ("from_row_lengths", MATRIX, [1, 4, 5], {}, {"default_value": 0.5}),
    "rowids": ("from_value_rowids", VALUES, [0, 0, 1, 1, 1, 3, 3, 3, 3, 3], {}, {}),
    "rowids_nrows": ("from_value_rowids", VALUES, [0, 0, 1, 1, 1, 3, 3, 3, 3, 3], {"nrows": 6}, {"shape": [None, 4]}),
    "splits": ("from_row_splits", VALUES, [0, 2, 2, 9, 10], {}, {"default_value": 100}),
    "splits_float": ("from_row_splits", [0.5, 1.5, 2.5], [0, 1, 3], {}, {}),
}
BAD = {
    "lengths_do_not_add_up": ("from_row_lengths", VALUES, [3, 3], {}),
    "rowids_unsorted": ("from_value_rowids", VALUES, [0, 1, 0, 1, 1, 1, 2, 2, 2, 2], {}),
    "splits_not_from_zero": ("from_row_splits", VALUES, [1, 10], {}),
}

TF_SIDE = r"""
import json, sys
import numpy as np
import tensorflow as tf
cases, bad = json.loads(sys.argv[1]), json.loads(sys.argv[2])
out = {}
for name, (make, values, partition, kwargs, dense) in cases.items():
    result = getattr(tf.RaggedTensor, make)(tf.constant(values), tf.constant(partition, tf.int64), **kwargs).to_tensor(**dense)
    out[name] = [result.numpy().tolist(), result.dtype.name, list(result.shape)]
for name, (make, values, partition, kwargs) in bad.items():
    try:
        getattr(tf.RaggedTensor, make)(tf.constant(values), tf.constant(partition, tf.int64), **kwargs).to_tensor()
        out[name] = "no error"
    except (ValueError, tf.errors.InvalidArgumentError) as error:
        out[name] = "error"
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def tf_results():
    return python_json(TF_SIDE, json.dumps(CASES), json.dumps(BAD))


@pytest.mark.parametrize("name", list(CASES))
def test_made_dense_as_tf_makes_it(name, tf_results):
    make, values, partition, kwargs, dense = CASES[name]
    result = getattr(tfragged.RaggedTensor, make)(*tensors(values, partition), **kwargs).to_tensor(**dense)
    want, dtype, shape = tf_results[name]
    assert isinstance(result, ms.Tensor) and list(result.shape) == shape
    assert str(result.asnumpy().dtype) == {"float32": "float32", "int32": "int32", "int64": "int64"}[dtype]
    assert result.asnumpy().tolist() == want


@pytest.mark.parametrize("name", list(BAD))
def test_what_tf_refuses_is_refused(name, tf_results):
    make, values, partition, kwargs = BAD[name]
    assert tf_results[name] == "error"
    with pytest.raises(ValueError, match="do not form a valid RaggedTensor"):
        getattr(tfragged.RaggedTensor, make)(*tensors(values, partition), **kwargs)


def test_the_rows_are_tfs():
    ragged = tfragged.RaggedTensor.from_value_rowids([1, 2, 3], [0, 2, 2], nrows=4)
    assert ragged.row_lengths().asnumpy().tolist() == [1, 0, 2, 0]
    assert ragged.row_splits.asnumpy().tolist() == [0, 1, 1, 3, 3]
    assert int(ragged.nrows().asnumpy()) == 4 and ragged.values.asnumpy().tolist() == [1, 2, 3]
