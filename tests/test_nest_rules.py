"""TFN101: ``tf.nest`` -> ``migrate.runtime.tfnest``, the same walks without TensorFlow.

Each case is a ``tf.nest`` expression over small structures. TF evaluates it in a
subprocess (TF and MindSpore are not loaded into one process); the expression
converted by ``migrate`` runs here. The results (their ``repr``: values, container
types, key order) or the class of the exception raised must be the same.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.helpers import convert, python_json

REPO = Path(__file__).resolve().parent.parent

if importlib.util.find_spec("tensorflow") is None:
    pytest.skip("TensorFlow is not installed", allow_module_level=True)
pytest.importorskip("attr")

PRELUDE = """\
import collections
import attr
import numpy as np

Point = collections.namedtuple("Point", "x y")
Same = collections.namedtuple("Point", "x y")
OD = collections.OrderedDict


@attr.s
class A:
    a = attr.ib()
    b = attr.ib()


class MyList(list):
    pass


class MyTuple(tuple):
    pass


def dd(**kw):
    d = collections.defaultdict(list)
    d.update(kw)
    return d
"""

CASES = {
    # flatten: leaves in TF's order
    "flatten_leaf": "tf.nest.flatten(1)",
    "flatten_none": "tf.nest.flatten(None)",
    "flatten_mixed": "tf.nest.flatten([1, (2, 3), {'b': 4, 'a': 5}])",
    "flatten_namedtuple": "tf.nest.flatten({'b': [1, 2], 'a': Point(3, 4)})",
    "flatten_strings": "tf.nest.flatten(['abc', b'x', ('d',)])",
    "flatten_set_is_a_leaf": "tf.nest.flatten([{1, 2}])",
    "flatten_empty": "tf.nest.flatten([[], (), {}])",
    "flatten_ordereddict": "tf.nest.flatten(OD([('z', 1), ('a', 2)]))",
    "flatten_attrs": "tf.nest.flatten(A(1, [2, 3]))",
    "flatten_array_is_a_leaf": "len(tf.nest.flatten([np.arange(3), np.zeros((2, 2))]))",
    "flatten_unsortable_keys": "tf.nest.flatten({1: 'a', 'b': 2})",
    "flatten_other_sequences": "tf.nest.flatten([range(3), collections.deque([1, [2]]), bytearray(b'ab')])",
    "flatten_views": "tf.nest.flatten([{'b': 1, 'a': 2}.values(), {'b': 1, 'a': 2}.keys(), {'b': 1, 'a': [2]}.items()])",
    "pack_range_and_view": "tf.nest.pack_sequence_as([range(2), {'b': 1, 'a': 2}.values()], [5, 6, 7, 8])",
    "pack_deque": "tf.nest.pack_sequence_as(collections.deque([1, 2]), [5, 6])",
    "pack_list_subclass": "type(tf.nest.pack_sequence_as(MyList([1, 2]), [3, 4])).__name__",
    # pack_sequence_as: container types and key order kept
    "pack_mixed": "tf.nest.pack_sequence_as([1, (2, 3)], [7, 8, 9])",
    "pack_dict_order": "tf.nest.pack_sequence_as({'b': 1, 'a': 2}, [10, 20])",
    "pack_ordereddict": "tf.nest.pack_sequence_as(OD([('z', 1), ('a', 2)]), [5, 6])",
    "pack_defaultdict": "dict(tf.nest.pack_sequence_as(dd(b=1, a=2), [5, 6]))",
    "pack_namedtuple": "tf.nest.pack_sequence_as(Point(1, (2, 3)), [4, 5, 6])",
    "pack_attrs": "tf.nest.pack_sequence_as(A(1, 2), [3, 4])",
    "pack_leaf": "tf.nest.pack_sequence_as(1, [5])",
    "pack_too_few": "tf.nest.pack_sequence_as([1, 2], [5])",
    "pack_not_a_sequence": "tf.nest.pack_sequence_as(1, 5)",
    "pack_leaf_from_two": "tf.nest.pack_sequence_as(1, [5, 6])",
    # map_structure: one or more structures
    "map_one": "tf.nest.map_structure(lambda x: x * 2, [1, (2, 3), {'b': 4, 'a': 5}])",
    "map_two": "tf.nest.map_structure(lambda x, y: x + y, (1, [2]), (10, [20]))",
    "map_none": "tf.nest.map_structure(lambda x: x, None)",
    "map_list_vs_tuple": "tf.nest.map_structure(lambda x, y: x, (1, 2), [1, 2])",
    "map_list_vs_tuple_unchecked": "tf.nest.map_structure(lambda x, y: y, (1, 2), [3, 4], check_types=False)",
    "map_length": "tf.nest.map_structure(lambda x, y: x, [1, 2], [1, 2, 3])",
    "map_keys": "tf.nest.map_structure(lambda x, y: x, {'a': 1}, {'b': 1})",
    "map_namedtuple_vs_tuple": "tf.nest.map_structure(lambda x, y: x, Point(1, 2), (1, 2))",
    "map_same_named_tuples": "tf.nest.map_structure(lambda x, y: x + y, Point(1, 2), Same(3, 4))",
    "map_dict_vs_ordereddict": "tf.nest.map_structure(lambda x, y: x + y, {'a': 1, 'b': 2}, OD([('b', 3), ('a', 4)]))",
    "map_nothing": "tf.nest.map_structure(lambda: 1)",
    "map_not_callable": "tf.nest.map_structure(3, [1])",
    "map_leaf_vs_list": "tf.nest.map_structure(lambda x, y: x, 1, [1])",
    "map_list_subclass_vs_list": "tf.nest.map_structure(lambda x, y: x + y, MyList([1]), [2])",
    "map_tuple_subclass_vs_tuple": "tf.nest.map_structure(lambda x, y: x + y, MyTuple((1,)), (2,))",
    "map_keys_unchecked": "tf.nest.map_structure(lambda x, y: x + y, {'a': 1, 'b': 2}, {'a': 10, 'c': 20}, check_types=False)",
    "same_key_count_unchecked": "tf.nest.assert_same_structure({'a': 1, 'b': 2}, {'a': 1}, check_types=False)",
    # assert_same_structure / is_nested
    "same_ok": "tf.nest.assert_same_structure([1, [2]], [3, [4]])",
    "same_nesting": "tf.nest.assert_same_structure([1, [2]], [3, 4])",
    "same_types": "tf.nest.assert_same_structure((1,), [1])",
    "same_types_unchecked": "tf.nest.assert_same_structure((1,), [1], check_types=False)",
    "same_keys": "tf.nest.assert_same_structure({'a': 1}, {'b': 1})",
    "same_strings": "tf.nest.assert_same_structure('ab', 'cd')",
    "is_nested": "[tf.nest.is_nested(v) for v in ([], (), {}, 's', b'b', None, 1, np.zeros(2), A(1, 2), {1}, range(1), {}.keys())]",
}

RUN = PRELUDE + """
import json, sys
out = {}
for name, expr in json.loads(open(sys.argv[1]).read()).items():
    try:
        out[name] = repr(eval(expr))
    except Exception as exc:
        out[name] = "raised " + type(exc).__name__
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def tf_results(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("tf_nest")
    (work / "cases.json").write_text(json.dumps(CASES))
    return python_json("import tensorflow as tf\n" + RUN, str(work / "cases.json"))


@pytest.fixture(scope="module")
def converted_results(tmp_path_factory) -> dict:
    codes = {}
    for name, expr in CASES.items():
        code, findings = convert(f"import tensorflow as tf\n\nresult = {expr}\n")
        assert "tensorflow" not in code and "tf.nest" not in code, code
        assert {f.rule for f in findings} == {"TFN101"}, findings
        codes[name] = code.split("result = ", 1)[1].strip()
        assert code.startswith("from migrate.runtime import tfnest\n"), code
    work = tmp_path_factory.mktemp("converted_nest")
    (work / "cases.json").write_text(json.dumps(codes))
    return python_json("from migrate.runtime import tfnest\n" + RUN, str(work / "cases.json"), timeout=120, PYTHONPATH=str(REPO))


@pytest.mark.parametrize("name", sorted(CASES))
def test_tfnest_matches_tf_nest(name, tf_results, converted_results):
    assert converted_results[name] == tf_results[name]
