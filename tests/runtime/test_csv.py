"""`tfio.decode_csv` and `tfdata.experimental.CsvDataset` against TF's on the same records and
files: values and dtypes column by column, defaults, required fields, quotes, `na_value`,
column selection, headers, blank lines, quoted line breaks, and TF's errors."""

import json

import numpy as np
import pytest

from tests.helpers import PLAIN_JSON, plain, python_json

ms = pytest.importorskip("mindspore")

from migrate.runtime import tfdata, tfio  # noqa: E402

pytestmark = pytest.mark.tf

FILES = {
    "header.csv": '"h1",h2,h3\n1,"x,y",2.5\n3,z,\n4,"w""q",7\n',
    "lines.csv": '1,"multi\nline",2\n3,a,4',
    "crlf.csv": "1,2\r\n3,4\r\n",
    "blank.csv": "1,2\n\n3,4\n",
    "short.csv": "1,2,3\n4,5\n",
    "long.csv": "1,2,3\n",
}
# name: (records, defaults as code, keyword arguments)
DECODE = {
    "basic": (["1,2,a,3", "4,,b,", ' 5 , 6 ,"c,d", 7.5'], "[tf.constant([], tf.float32), [0], [''], [1.5]]", {}),
    "escaped_quote": (['1,"a""b"'], "[[0], ['']]", {}),
    "no_quote_delim": (['1,"ab"'], "[[0], ['']]", {"use_quote_delim": False}),
    "na_value": (["NA,2,x,NA"], "[[9.0], [0], [''], [1.5]]", {"na_value": "NA"}),
    "scalar_record": ("1;2", "[[0], [0]]", {"field_delim": ";"}),
    "select_cols": (["1,2,3"], "[[0], [0]]", {"select_cols": [0, 2]}),
    "int64": (["12345678901"], "[tf.constant([], tf.int64)]", {}),
    "float64": (["1.25,-3e-2"], "[tf.constant([0.0], tf.float64), [0.0]]", {}),
    "numbers": (["+3,-2.5e-1, 7 ,inf,nan"], "[[0], [0.0], [0], [0.0], [0.0]]", {}),
    "two_dims": ([["1,2"], ["3,4"]], "[[0], [0]]", {}),
    "quoted": (['"12","a\nb",""'], "[[0], [''], [5]]", {}),
    "trailing_delim": (["1,"], "[[0], [8]]", {}),
    "big_int_default": (["1"], "[[2 ** 40]]", {}),
    "text_defaults": ([","], "[['x'], [b'y']]", {}),
    "err_required": ([",2"], "[tf.constant([], tf.float32), [0]]", {}),
    "err_too_few": (["1,2"], "[[0], [0], [0]]", {}),
    "err_quote_inside": (['1,a"b'], "[[0], ['']]", {}),
    "err_unescaped": (['"ab"c'], "[['']]", {}),
    "err_not_int": (["1.5"], "[[0]]", {}),
    "err_int32_range": (["12345678901"], "[[0]]", {}),
    "err_not_float": (["1.5x"], "[[0.0]]", {}),
    "err_space": ([" "], "[[3]]", {}),
    "err_empty_record": ([""], "[[0.0]]", {}),
    "err_delim": (["1::2"], "[[0], [0]]", {"field_delim": "::"}),
}
# name: (file, defaults as code, keyword arguments)
DATASETS = {
    "header": ("header.csv", "[tf.int32, tf.string, [0.5]]", {"header": True}),
    "multiline": ("lines.csv", "[tf.int32, tf.string, tf.int32]", {}),
    "crlf": ("crlf.csv", "[float(), float()]", {}),
    "select": ("long.csv", "[[0], [0]]", {"select_cols": [0, 2]}),
    "exclude": ("long.csv", "[[0], [0]]", {"exclude_cols": [1]}),
    "na": ("long.csv", "[[0], [7], [0]]", {"na_value": "2"}),
    "err_blank_defaults": ("blank.csv", "[[0], [9]]", {}),
    "err_blank_required": ("blank.csv", "[tf.int32, tf.int32]", {}),
    "err_short": ("short.csv", "[[0], [0], [0]]", {}),
    "err_long": ("long.csv", "[[0], [0]]", {}),
    "err_header_as_data": ("header.csv", "[tf.int32, tf.string, [0.5]]", {}),
}

TF_SIDE = r"""
import json, os, sys
import numpy as np
import tensorflow as tf
""" + PLAIN_JSON + r"""

folder, decode, datasets = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])

out = {}
for name, (records, defaults, kwargs) in decode.items():
    try:
        out["decode/" + name] = [plain(c.numpy()) for c in tf.io.decode_csv(records, eval(defaults), **kwargs)]
    except Exception as error:
        out["decode/" + name] = {"error": type(error).__name__, "message": str(error)}
for name, (file, defaults, kwargs) in datasets.items():
    try:
        ds = tf.data.experimental.CsvDataset(os.path.join(folder, file), eval(defaults), **kwargs)
        out["dataset/" + name] = [[plain(v) for v in element] for element in ds.as_numpy_iterator()]
    except Exception as error:
        out["dataset/" + name] = {"error": type(error).__name__, "message": str(error)}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("csv")
    for name, text in FILES.items():
        (path / name).write_bytes(text.encode())
    return path


@pytest.fixture(scope="module")
def tf_results(folder):
    return python_json(TF_SIDE, str(folder), json.dumps(DECODE), json.dumps(DATASETS))


class _TF:  # what the converted defaults read: dtypes and empty tensors as converted code spells them
    float32, float64, int32, int64, string = ms.float32, ms.float64, ms.int32, ms.int64, tfio.string

    @staticmethod
    def constant(value, dtype):
        return np.asarray(value, dtype=object) if dtype is tfio.string else ms.Tensor(np.asarray(value), dtype)


def _message(text: str) -> str:
    """TF's message without its op's decoration."""
    return text.split("}} ")[-1].split(" [Op:")[0]


@pytest.mark.parametrize("name", sorted(DECODE))
def test_decode_csv_is_tfs(name, tf_results):
    records, defaults, kwargs = DECODE[name]
    want = tf_results["decode/" + name]
    try:
        got = [plain(c) for c in tfio.decode_csv(records, eval(defaults, {"tf": _TF}), **kwargs)]
    except tfio.InvalidArgumentError as error:
        assert isinstance(want, dict), f"TF gave {want}, we raised {error}"
        assert want["error"] == "InvalidArgumentError" and _message(want["message"]) == str(error)
        return
    assert got == want


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_csv_dataset_is_tfs(name, tf_results, folder):
    file, defaults, kwargs = DATASETS[name]
    want = tf_results["dataset/" + name]
    try:
        dataset = tfdata.experimental.CsvDataset(str(folder / file), eval(defaults, {"tf": _TF}), **kwargs)
        got = [[plain(v) for v in element] for element in dataset.as_numpy_iterator()]
    except tfio.InvalidArgumentError as error:
        assert isinstance(want, dict), f"TF gave {want}, we raised {error}"
        assert want["error"] == "InvalidArgumentError" and _message(want["message"]) == str(error)
        return
    assert got == want
