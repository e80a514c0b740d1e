"""`tf.<dtype>.min/max/limits` converted (TFT102) give TF's numbers, types and errors."""

import json

import pytest

from tests.helpers import convert, python_json

NAMES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"]

SIDE = r"""
import json, sys
{imports}
out = {{}}
for name in json.loads(sys.argv[1]):
    dtype = {module}
    row = [repr(dtype.min), type(dtype.min).__name__, repr(dtype.max)]
    try:
        row.append(repr(dtype.limits))
    except ValueError as error:
        row.append("ValueError: " + str(error))
    out[name] = row
print(json.dumps(out))
"""


def test_the_converted_range_is_tfs():
    pytest.importorskip("tensorflow")
    converted, _ = convert("import tensorflow as tf\n\nvalue = tf.int32.limits\n")
    assert "tfdtypes.int32.limits" in converted and "tensorflow" not in converted
    theirs = python_json(SIDE.format(imports="import tensorflow as tf", module="getattr(tf, name)"), json.dumps(NAMES))
    ours = python_json(SIDE.format(imports="from migrate.runtime import tfdtypes", module="getattr(tfdtypes, name)"),
                       json.dumps(NAMES))
    assert ours == theirs
