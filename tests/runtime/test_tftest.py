"""`tftest.TestCase`'s assertions pass and fail where `tf.test.TestCase`'s do, on the same values
(TF's on tf tensors, ours on MindSpore's), and a converted test module runs as its original does."""

import collections
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
ms = pytest.importorskip("mindspore")

from migrate.runtime import tftest  # noqa: E402

from tests.cli_helpers import run_migrate  # noqa: E402

Point = collections.namedtuple("Point", "x y")
NAN = float("nan")


def _as(value, tensor):
    """``value`` with its NumPy arrays made tensors by ``tensor``, through dicts, namedtuples,
    lists and tuples."""
    if isinstance(value, np.ndarray):
        return tensor(value)
    if isinstance(value, dict):
        return {k: _as(v, tensor) for k, v in value.items()}
    if isinstance(value, Point):
        return Point(*(_as(v, tensor) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_as(v, tensor) for v in value)
    return value


def _tf(value):
    return _as(value, tf.constant)


def _ms(value):
    return _as(value, ms.Tensor)


F32 = np.array([1.0, 2.0, 3.0], np.float32)
CASES = [
    ("assertAllClose", (F32, F32 + 1e-7), {}),
    ("assertAllClose", (F32, F32 + 1e-5), {}),
    ("assertAllClose", (F32, F32 + 1e-5), {"atol": 1e-4}),
    ("assertAllClose", (F32, F32 * (1 + 1e-5)), {"rtol": 2e-5, "atol": 0}),
    ("assertAllClose", (F32, F32[:2]), {}),
    ("assertAllClose", (np.array([NAN, 1.0]), np.array([NAN, 1.0])), {}),
    ("assertAllClose", (np.array([NAN, 1.0]), np.array([0.0, 1.0])), {}),
    ("assertAllClose", ({"a": F32, "b": [F32, 2.0]}, {"a": F32, "b": [F32, 2.0]}), {}),
    ("assertAllClose", ({"a": F32, "b": [F32, 2.0]}, {"a": F32, "b": [F32, 2.5]}), {}),
    ("assertAllClose", ({"a": F32}, {"b": F32}), {}),
    ("assertAllClose", (Point(F32, 1.0), Point(F32, 1.0)), {}),
    ("assertAllClose", ([F32, F32[:2]], [F32, F32[:2]]), {}),
    ("assertAllClose", ([F32, F32[:2]], [F32, F32[:1]]), {}),
    ("assertAllClose", (3.0, 3.0000001), {}),
    ("assertNotAllClose", (F32, F32 + 1e-7), {}),
    ("assertNotAllClose", (F32, F32 + 1.0), {}),
    ("assertAllCloseAccordingToType", (F32.astype(np.float16), F32.astype(np.float16) + 5e-4), {}),
    ("assertAllCloseAccordingToType", (F32, F32 + 5e-4), {}),
    ("assertAllEqual", (F32, F32.copy()), {}),
    ("assertAllEqual", (F32, F32 + 1), {}),
    ("assertAllEqual", (np.array([NAN, 1.0]), np.array([NAN, 1.0])), {}),
    ("assertAllEqual", (np.arange(6).reshape(2, 3), np.arange(6).reshape(3, 2)), {}),
    ("assertAllEqual", (np.arange(3), [0, 1, 2]), {}),
    ("assertNotAllEqual", (F32, F32 + 1), {}),
    ("assertNotAllEqual", (F32, F32.copy()), {}),
    ("assertAllGreater", (F32, 0.5), {}),
    ("assertAllGreater", (F32, 1.0), {}),
    ("assertAllLess", (F32, 3.0), {}),
    ("assertAllGreaterEqual", (F32, 1.0), {}),
    ("assertAllLessEqual", (F32, 3.0), {}),
    ("assertAllInRange", (F32, 1.0, 3.0), {}),
    ("assertAllInRange", (F32, 1.0, 3.0), {"open_lower_bound": True}),
    ("assertAllInRange", (F32, 1.0, 3.0), {"open_upper_bound": True}),
    ("assertAllInRange", (np.array([1.0, NAN], np.float32), 0.0, 3.0), {}),
    ("assertAllInSet", (np.array([1, 2, 2]), {1, 2}), {}),
    ("assertAllInSet", (np.array([1, 2, 3]), {1, 2}), {}),
    ("assertShapeEqual", (np.zeros((2, 3)), np.zeros((2, 3), np.float32)), {}),
    ("assertShapeEqual", (np.zeros((2, 3)), np.zeros((3, 2), np.float32)), {}),
    ("assertNear", (1.0, 1.05, 0.1), {}),
    ("assertNear", (1.0, 1.2, 0.1), {}),
    ("assertArrayNear", ([1.0, 2.0], [1.01, 2.0], 0.1), {}),
    ("assertArrayNear", ([1.0, 2.0], [1.01, 2.5], 0.1), {}),
    ("assertAllEqual", ([b"a", b"b"], np.array(["a", "b"])), {}),  # bytes against text: as UTF-8
    ("assertAllEqual", ([b"a", b"b"], np.array(["a", "c"])), {}),
    ("assertAllEqual", ([[1, 2], [3]], [[1, 2], [3]]), {}),  # ragged lists
    ("assertNear", (np.array([1.0], np.float32), 1.0, 1e-6), {}),  # a tensor of one element
    ("assertNDArrayNear", (np.array([1.0]), np.array([2.0]), 1.0), {}),  # strictly within
    ("assertNDArrayNear", (np.array([1.0]), np.array([1.5]), 1.0), {}),
    ("assertDTypeEqual", ([1.0, 2], np.float64), {}),  # a list is one array
    ("assertAllInRange", (np.array([1 + 1j]), 0, 2), {}),  # complex values are not ordered
]


def _outcome(case, name, args, kwargs):
    try:
        getattr(case, name)(*args, **kwargs)
    except AssertionError:
        return "AssertionError"
    except ValueError:
        return "ValueError"
    return "passed"


@pytest.mark.parametrize("name,args,kwargs", CASES, ids=[f"{i}-{c[0]}" for i, c in enumerate(CASES)])
def test_assertions_pass_and_fail_where_tfs_do(name, args, kwargs):
    want = _outcome(tf.test.TestCase(), name, _tf(args), kwargs)
    got = _outcome(tftest.TestCase(), name, _ms(args), kwargs)
    assert got == want


def test_shape_assertion_refuses_a_list_as_tfs_does():
    for case, value in ((tf.test.TestCase(), tf.zeros([2])), (tftest.TestCase(), ms.Tensor(np.zeros(2)))):
        with pytest.raises(TypeError, match="must be a Numpy ndarray"):
            case.assertShapeEqual([0.0, 0.0], value)


def test_dtype_assertions_take_mindspore_dtypes():
    ours, theirs = tftest.TestCase(), tf.test.TestCase()
    theirs.assertDTypeEqual(tf.constant(F32), tf.float32)
    ours.assertDTypeEqual(ms.Tensor(F32), ms.float32)
    ours.assertDTypeEqual(F32, np.float32)
    with pytest.raises(AssertionError):
        theirs.assertDTypeEqual(tf.constant(F32), tf.int32)
    with pytest.raises(AssertionError):
        ours.assertDTypeEqual(ms.Tensor(F32), ms.int32)


def test_failure_messages_name_the_elements_as_tfs_do():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 3.0])
    with pytest.raises(AssertionError) as theirs:
        tf.test.TestCase().assertAllClose(tf.constant(a), tf.constant(b))
    with pytest.raises(AssertionError) as ours:
        tftest.TestCase().assertAllClose(ms.Tensor(a), ms.Tensor(b))
    for line in ("not close where = (array([1]),)", "not close lhs = [2.]", "not close rhs = [2.5]"):
        assert line in str(theirs.value) and line in str(ours.value)


def test_evaluate_gives_numpy_values_of_a_structure():
    got = tftest.TestCase().evaluate({"w": ms.Tensor(F32), "pair": (ms.Tensor(2), None), "f": lambda: ms.Tensor(F32)})
    assert isinstance(got["w"], np.ndarray) and got["w"].tolist() == F32.tolist()
    assert got["pair"][0] == 2 and got["pair"][1] is None
    assert got["f"].tolist() == F32.tolist()
    with pytest.raises(ValueError, match="Unsupported type"):
        tftest.TestCase().evaluate(object())
    with tftest.TestCase().session() as sess:
        assert sess.run(ms.Tensor(F32)).tolist() == F32.tolist()


def test_set_up_seeds_numpy_and_python_as_tfs_does():
    import random

    draws = []
    for case in (tf.test.TestCase(), tftest.TestCase()):
        case.setUp()
        draws.append((np.random.rand(3).tolist(), random.random()))
    assert draws[0] == draws[1]


def test_temp_dir_is_one_per_test_and_removed_after_it(tmp_path):
    case = tftest.TestCase()
    first = case.get_temp_dir()
    assert case.get_temp_dir() == first
    assert os.path.isdir(first)
    case.doCleanups()
    assert not os.path.exists(first)


TEST_MODULE = textwrap.dedent('''\
    import os

    import numpy as np
    import tensorflow as tf
    from absl.testing import parameterized
    from tensorflow.python.keras import keras_parameterized


    class MathTest(tf.test.TestCase):
        def test_sum(self):
            x = tf.constant([1.0, 2.0, 3.0])
            self.assertAllClose(tf.reduce_sum(x), 6.0)
            self.assertAllEqual(tf.shape(tf.reshape(x, [3, 1])), [3, 1])
            self.assertEqual(self.evaluate(tf.reduce_max(x)), 3.0)

        def test_fails_when_it_should(self):
            if os.environ.get("BROKEN"):
                self.assertAllClose(tf.constant([1.0]), [1.5])


    @keras_parameterized.run_all_keras_modes
    class WidthTest(keras_parameterized.TestCase):
        @parameterized.parameters(1, 3)
        def test_width(self, width):
            model = tf.keras.Sequential([tf.keras.layers.Dense(width)])
            y = model(np.ones((2, 4), np.float32))
            self.assertAllEqual(y.shape, (2, width))


    class Timing(tf.test.Benchmark):
        def benchmark_sum(self):
            self.report_benchmark(iters=1, wall_time=0.5, name="sum")


    if __name__ == "__main__":
        tf.test.main()
''')


def test_a_converted_test_module_runs_as_its_original(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "math_test.py").write_text(TEST_MODULE, encoding="utf-8")
    out = tmp_path / "out"
    done = run_migrate("convert", str(src), "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    converted = (out / "math_test.py").read_text(encoding="utf-8")
    assert "tensorflow" not in converted and "tftest.TestCase" in converted, converted
    # TF runs each Keras test in eager and tf.function modes (2 x 2), the converted module once
    # each; both skip the inherited `test_session` of each class, as TF's own TestCase does.
    for path, ran in ((src / "math_test.py", 8), (out / "math_test.py", 6)):
        done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=240,
                              cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        assert f"Ran {ran} tests" in done.stderr and "OK (skipped=2)" in done.stderr, done.stderr[-3000:]
    broken = subprocess.run([sys.executable, str(out / "math_test.py")], capture_output=True, text=True, timeout=240,
                            cwd=tmp_path, env={**os.environ, "BROKEN": "1"})
    assert broken.returncode == 1 and "FAILED (failures=1, skipped=2)" in broken.stderr, broken.stderr[-3000:]
    assert "not close lhs = [1.]" in broken.stderr
    for path in (src / "math_test.py", out / "math_test.py"):  # TF 2's flag, matched against module.Class.method
        bench = subprocess.run([sys.executable, str(path), "--benchmark_filter=__main__.Timing"], capture_output=True,
                               text=True, timeout=240, cwd=tmp_path)
        assert bench.returncode == 0, bench.stderr[-3000:]
    assert "Benchmark [sum] iters: 1, wall_time: 0.5" in bench.stdout
    none = subprocess.run([sys.executable, str(out / "math_test.py"), "--benchmark_filter=Nothing"],
                          capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert none.returncode != 0 and "No benchmarks matched the pattern: 'Nothing'" in none.stderr
