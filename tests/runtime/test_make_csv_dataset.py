"""`tfdata.experimental.make_csv_dataset` against tf.data's on the same CSV files: inferred column
types, batches in order, labels apart, selected columns, interleaved files, epochs, bad rows."""

import json

import numpy as np
import pytest

from tests.helpers import python_json

pytest.importorskip("mindspore")

from migrate.runtime import tfdata  # noqa: E402

pytestmark = pytest.mark.tf

FIRST = 'id,score,name,big,label\n1,2.5,ann,3000000000,0\n2,,"b, c",4,1\n3,7,dee,5,0\n,1e3,ed,6,1\n5,0.25,,7,0\n'
SECOND = 'id,score,name,big,label\n10,1.5,x,1,1\n11,2,y,2,0\n12,3,z,3,1\n'
BAD = 'id,score,name,big,label\n1,2.5,ann,3,0\n2,oops,b,4,1\n3,7,dee,5,0\n4,8,e\n6,9,f,1,1\n'
# name: (files, keyword arguments)
CASES = {
    "label_in_order": (["first.csv"], {"batch_size": 2, "label_name": "label", "num_epochs": 1, "shuffle": False}),
    "no_label": (["first.csv"], {"batch_size": 3, "num_epochs": 1, "shuffle": False}),
    "select_and_defaults": (["second.csv"], {"batch_size": 2, "select_columns": ["label", "score", "id"],
                                           "column_defaults": ["int32", "float64", "int64"], "num_epochs": 1,
                                           "shuffle": False, "label_name": "label"}),
    "two_files_interleaved": (["*.csv"], {"batch_size": 4, "num_parallel_reads": 2, "num_epochs": 1,
                                          "shuffle": False, "label_name": "label"}),
    "two_epochs": (["second.csv"], {"batch_size": 2, "num_epochs": 2, "shuffle": False}),
    "bad_rows_ignored": (["bad.csv.txt"], {"batch_size": 2, "num_epochs": 1, "shuffle": False, "ignore_errors": True,
                                           "column_defaults": ["int32", "float32", "string", "int32", "int32"]}),
    "names_given_no_header": (["second.csv"], {"batch_size": 2, "num_epochs": 1, "shuffle": False, "header": False,
                                               "column_names": ["a", "b", "c", "d", "e"],
                                               "column_defaults": ["string"] * 5}),
}

TF_SIDE = r"""
import json, os, sys
import tensorflow as tf
folder, cases = sys.argv[1], json.loads(sys.argv[2])
out = {}
for name, (files, kwargs) in cases.items():
    if "column_defaults" in kwargs:
        kwargs["column_defaults"] = [tf.as_dtype(d) for d in kwargs["column_defaults"]]
    pattern = [os.path.join(folder, f) for f in files]
    batches = []
    for element in tf.data.experimental.make_csv_dataset(pattern if len(pattern) > 1 else pattern[0], **kwargs):
        features, label = element if isinstance(element, tuple) else (element, None)
        batch = {k: {"dtype": v.dtype.name, "value": [x.decode() if isinstance(x, bytes) else x
                                                        for x in v.numpy().tolist()]} for k, v in features.items()}
        batch["__order__"] = list(features)
        if label is not None:
            batch["__label__"] = label.numpy().tolist()
        batches.append(batch)
    out[name] = batches
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("csv")
    (folder / "first.csv").write_text(FIRST)
    (folder / "second.csv").write_text(SECOND)
    (folder / "bad.csv.txt").write_text(BAD)
    return folder


@pytest.fixture(scope="module")
def tf_side(files):
    return python_json(TF_SIDE, str(files), json.dumps(CASES))


def _dtype_name(value) -> str:
    if hasattr(value, "asnumpy"):
        value = value.asnumpy()
    value = np.asarray(value)
    return "string" if value.dtype.kind in "OSU" else value.dtype.name


def _values(value) -> list:
    value = np.asarray(value.asnumpy() if hasattr(value, "asnumpy") else value)
    return [x.decode() if isinstance(x, bytes) else x for x in value.tolist()]


def _ours(folder, files, kwargs):
    kwargs = dict(kwargs)
    if "column_defaults" in kwargs:
        kwargs["column_defaults"] = [object if d == "string" else np.dtype(d) for d in kwargs["column_defaults"]]
    pattern = [str(folder / f) for f in files]
    return tfdata.experimental.make_csv_dataset(pattern if len(pattern) > 1 else pattern[0], **kwargs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_batches_are_tfs(name, files, tf_side):
    batches = []
    for element in _ours(files, *CASES[name]):
        features, label = element if isinstance(element, tuple) else (element, None)
        batch = {k: {"dtype": _dtype_name(v), "value": _values(v)} for k, v in features.items()}
        batch["__order__"] = list(features)
        if label is not None:
            batch["__label__"] = _values(label)
        batches.append(batch)
    assert batches == tf_side[name]


def test_shuffled_and_endless_reading(files):
    shuffled = _ours(files, ["first.csv"], {"batch_size": 5, "num_epochs": 1, "shuffle_seed": 3})
    (batch,) = list(shuffled)
    assert sorted(_values(batch["id"])) == [0, 1, 2, 3, 5]
    endless = _ours(files, ["second.csv"], {"batch_size": 2, "shuffle": False})
    assert [_values(b["id"]) for b in endless.take(4)] == [[10, 11], [12, 10], [11, 12], [10, 11]]


@pytest.mark.parametrize("kwargs, message", [
    ({"label_name": "nope"}, "`label_name` provided must be one of the columns"),
    ({"select_columns": ["id", "zzz"]}, "Column zzz specified in `select_columns`"),
    ({"header": False}, "Expected `column_names` or `header` arguments"),
])
def test_bad_arguments_get_tfs_errors(files, kwargs, message):
    with pytest.raises(ValueError, match=message):
        _ours(files, ["first.csv"], {"batch_size": 2, **kwargs})
    with pytest.raises(ValueError, match="No files match"):
        tfdata.experimental.make_csv_dataset(str(files / "none*.csv"), 2)
