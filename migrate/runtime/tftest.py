"""``tf.test`` for a converted test file, without TensorFlow.

A test module written against ``tf.test.TestCase`` keeps its tests: :class:`TestCase` has TF's
assertions with TF's tolerances and messages (``assertAllClose`` with rtol = atol = 1e-6 over
nested lists, tuples, dicts and namedtuples, ``assertAllEqual`` with NaN equal to NaN,
``assertAllCloseAccordingToType`` with float16's and bfloat16's looser tolerances, the
``assertAll{Greater,Less}[Equal]``/``InRange``/``InSet`` family, ``assertShapeEqual``,
``assertDTypeEqual``, ``assertNear``, ``assertArrayNear``, ``assertRaisesOpError``), on
MindSpore tensors, parameters, NumPy arrays and Python values alike; ``evaluate`` turns a
structure of tensors into NumPy arrays, as TF's does in eager mode. ``setUp`` seeds Python's,
NumPy's and MindSpore's generators with TF's test seed (87654321), as TF's seeds its own, so a
test's random draws repeat from run to run. ``get_temp_dir`` is one fresh directory per test.

Like TF's, the class is ``absltest.TestCase``'s subclass when absl is installed (it brings
``assertLen``, ``assertEmpty``, ``assertSameElements``, ...; the few a test of the corpora uses
are also defined here for a machine without absl), otherwise ``unittest.TestCase``'s; the
unittest spellings Python 3.12 dropped (``assertEquals``, ``assertRegexpMatches``,
``assertRaisesRegexp``) are kept, as TF's absl base keeps them.

:func:`main` runs the module's tests as ``tf.test.main`` does, and with
``--benchmark_filter=REGEX`` (or TF 1's ``--benchmarks=``) the ``benchmark*`` methods of its
:class:`Benchmark` classes, whose
``report_benchmark`` logs what TF's logs. ``keras_parameterized`` runs a Keras test once:
MindSpore has one eager mode where TF has three (graph, eager, ``tf.function``).
"""

from __future__ import annotations

import collections.abc as _abc
import contextlib as _contextlib
import logging as _logging
import random as _random
import re as _re
import shutil as _shutil
import sys as _sys
import tempfile as _tempfile
import time as _time
import unittest as _unittest

import numpy as _np

from .tensors import host_array as _array

try:  # TF's TestCase is absl's; absl is not a dependency of converted code.
    from absl.testing import absltest as _absltest
    from absl.testing import parameterized as _parameterized
except ImportError:  # pragma: no cover - depends on the machine
    _absltest = _parameterized = None

# TF's default graph seed, with which tf.test.TestCase.setUp seeds every generator.
DEFAULT_SEED = 87654321

_log = _logging.getLogger("tensorflow")


def _evaluate(value):
    if value is None:
        return None
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_evaluate(v) for v in value)
    if hasattr(value, "_fields"):  # a namedtuple
        return type(value)(*(_evaluate(v) for v in value))
    if isinstance(value, _abc.Mapping):
        items = {k: _evaluate(v) for k, v in value.items()}
        try:
            return type(value)(items)
        except TypeError:  # a mapping built otherwise (a defaultdict): a dict of the values
            return items
    if hasattr(value, "asnumpy") or (hasattr(value, "numpy") and callable(value.numpy)):
        return _array(value)
    if callable(value):
        return _evaluate(value())
    if isinstance(value, (_np.ndarray, _np.generic, bool, int, float, complex, str, bytes)):
        return value
    raise ValueError(f"Unsupported type {type(value)!r}.")


def _dtype_of(dtype) -> _np.dtype:
    """A NumPy dtype for a MindSpore dtype (``ms.float32``), a NumPy one or a Python type."""
    if hasattr(dtype, "as_numpy_dtype"):  # a tf.DType
        return _np.dtype(dtype.as_numpy_dtype)
    if type(dtype).__module__.startswith("mindspore"):
        from mindspore import dtype_to_nptype

        return _np.dtype(dtype_to_nptype(dtype))
    return _np.dtype(dtype)


def _is_float(dtype: _np.dtype) -> bool:
    return dtype.kind in "fc" or dtype.name == "bfloat16"


def _where(cond):
    return _np.where(cond)


def _differing(a, b, bad, word: str, msgs: list, show) -> tuple:
    """The elements where ``bad`` holds, added to ``msgs`` as TF's messages name them
    (``not close where/lhs/rhs``, ``not equal ...``); a scalar's whole values."""
    if a.ndim:
        x, y = a[_where(bad)], b[_where(bad)]
        msgs.append(f"not {word} where = {_where(bad)}")
    else:
        x, y = a, b
    msgs.append(f"not {word} lhs = {show(x)}")
    msgs.append(f"not {word} rhs = {show(y)}")
    return x, y


class _Session:
    """What ``self.session()`` yields: ``run`` gives its fetches' values, as ``evaluate`` does
    (everything has run already; there is no graph to feed)."""

    def __init__(self, case: "TestCase"):
        self._case = case

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if feed_dict:
            raise NotImplementedError("feed_dict: the converted test runs eagerly, there are no placeholders to feed")
        return self._case.evaluate(fetches)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_Base = _absltest.TestCase if _absltest is not None else _unittest.TestCase


class TestCase(_Base):
    """``tf.test.TestCase``: TF's assertions, seeds and temporary directory on MindSpore values."""

    def setUp(self):
        super().setUp()
        _random.seed(DEFAULT_SEED)
        _np.random.seed(DEFAULT_SEED)
        try:
            import mindspore as ms
        except ImportError:  # pragma: no cover - converted code runs with MindSpore
            pass
        else:
            ms.set_seed(DEFAULT_SEED)
        if self.id().endswith(".test_session"):
            self.skipTest("Not a test.")

    # --- values ----------------------------------------------------------------------------------

    def evaluate(self, tensors):
        """The value of a tensor, or of a nested structure of tensors, as NumPy arrays."""
        return _evaluate(tensors)

    @_contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        yield _Session(self)

    def cached_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        return self.session(graph, config, use_gpu, force_gpu)

    def test_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        return self.session(graph, config, use_gpu, force_gpu)

    def get_temp_dir(self) -> str:
        """One directory for this test, the same on every call within it, removed after it."""
        found = getattr(self, "_migrate_tempdir", None)
        if found is None:
            found = _tempfile.mkdtemp(prefix=self._testMethodName + "_")
            self._migrate_tempdir = found
            self.addCleanup(_shutil.rmtree, found, True)
        return found

    # --- closeness ---------------------------------------------------------------------------------

    def _assertArrayLikeAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        a, b = _array(a), _array(b)
        if a.shape != b.shape and (b.ndim <= 3 or b.size < 500):
            shape_msg = f"Shape mismatch: expected {a.shape}, got {b.shape} with contents {b}."
        else:
            shape_msg = f"Shape mismatch: expected {a.shape}, got {b.shape}."
        self.assertEqual(a.shape, b.shape, shape_msg)
        msgs = [msg]
        a_dtype = a.dtype
        if a.dtype.name == "bfloat16":
            a = a.astype(_np.float32)
        if b.dtype.name == "bfloat16":
            b = b.astype(_np.float32)
        if not _np.allclose(a, b, rtol=rtol, atol=atol):
            cond = _np.logical_or(_np.abs(a - b) > atol + rtol * _np.abs(b), _np.isnan(a) != _np.isnan(b))
            x, y = _differing(a, b, cond, "close", msgs, str)
            msgs.append(f"not close dif = {_np.abs(x - y)}")
            msgs.append(f"not close tol = {atol + rtol * _np.abs(y)}")
            msgs.append(f"dtype = {a_dtype}, shape = {a.shape}")
            _np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg="\n".join(map(str, msgs)), equal_nan=True)

    def _assertAllCloseRecursive(self, a, b, rtol=1e-6, atol=1e-6, path=None, msg=None):
        path = path or []
        where = ("[" + "][".join(str(p) for p in path) + "]") if path else ""
        msg = msg or ""
        if hasattr(a, "_asdict"):
            a = a._asdict()
        if hasattr(b, "_asdict"):
            b = b._asdict()
        a_is_dict = isinstance(a, _abc.Mapping)
        if a_is_dict != isinstance(b, _abc.Mapping):
            raise ValueError(f"Can't compare dict to non-dict, a{where} vs b{where}. {msg}")
        if a_is_dict:
            self.assertCountEqual(a.keys(), b.keys(),
                                  msg=f"mismatched keys: a{where} has keys {a.keys()}, but b{where} has keys {b.keys()}. {msg}")
            for k in a:
                self._assertAllCloseRecursive(a[k], b[k], rtol, atol, [*path, k], msg)
        elif isinstance(a, (list, tuple)):
            try:  # as arrays first; element by element when they do not make one
                self._assertArrayLikeAllClose(_array(a), _array(b), rtol, atol,
                                              f"Mismatched value: a{where} is different from b{where}. {msg}")
            except (ValueError, TypeError, NotImplementedError):
                if len(a) != len(b):
                    raise ValueError(f"Mismatched length: a{where} has {len(a)} items, but b{where} has "
                                     f"{len(b)} items. {msg}") from None
                for index, (x, y) in enumerate(zip(a, b)):
                    self._assertAllCloseRecursive(x, y, rtol, atol, [*path, str(index)], msg)
        else:
            try:
                self._assertArrayLikeAllClose(a, b, rtol, atol,
                                              f"Mismatched value: a{where} is different from b{where}. {msg}")
            except TypeError as e:
                e.args = (f"{e.args[0]} : Error: a{where} has {type(a)}, but b{where} has {type(b)}. {msg}",
                          *e.args[1:])
                raise

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        """``a`` and ``b`` (arrays, tensors, or nested lists/tuples/dicts/namedtuples of them) are
        elementwise within ``atol + rtol * |b|``, NaN matching NaN."""
        self._assertAllCloseRecursive(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6, float_atol=1e-6,
                                      half_rtol=1e-3, half_atol=1e-3, bfloat16_rtol=1e-2, bfloat16_atol=1e-2,
                                      msg=None):
        a, b = _array(a), _array(b)
        kinds = {a.dtype.name, b.dtype.name}
        if kinds & {"float32", "complex64"}:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if "float16" in kinds:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        if "bfloat16" in kinds:
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)
        except AssertionError:
            return
        raise AssertionError(f"The two values are close at all elements. {msg or ''}")

    def assertNear(self, f1, f2, err, msg=None):
        f1, f2 = (float(_np.squeeze(_array(f))) if not isinstance(f, (int, float)) else f for f in (f1, f2))
        if not (f1 == f2 or abs(f1 - f2) <= err):
            self.fail(f"{f1:f} != {f2:f} +/- {err:f}{' (' + msg + ')' if msg is not None else ''}")

    def assertArrayNear(self, farray1, farray2, err, msg=None):
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg=msg)

    def assertNDArrayNear(self, ndarray1, ndarray2, err, msg=None):
        a, b = _array(ndarray1), _array(ndarray2)
        self.assertTrue(_np.linalg.norm(a - b) < err, msg=msg)

    # --- equality and order -------------------------------------------------------------------------

    def assertAllEqual(self, a, b, msg=None):
        """Same shape and same elements (NaN equal to NaN in floating arrays)."""
        msg = msg or ""
        a, b = _array(a), _array(b)
        if b.ndim <= 3 or b.size < 500:
            self.assertEqual(a.shape, b.shape, f"Shape mismatch: expected {a.shape}, got {b.shape}. Contents: {b!r}. \n{msg}.")
        else:
            self.assertEqual(a.shape, b.shape, f"Shape mismatch: expected {a.shape}, got {b.shape}. {msg}")
        same = a == b
        if _is_float(a.dtype):
            same = _np.logical_or(same, _np.logical_and(_np.isnan(a), _np.isnan(b)))
        if not _np.all(same):
            msgs = [msg]
            _differing(a, b, _np.logical_not(same), "equal", msgs, repr)
            if a.dtype.kind != b.dtype.kind and {a.dtype.kind, b.dtype.kind} <= {"U", "S", "O"}:
                # text against bytes: TF compares them as UTF-8 bytes
                a, b = (_np.array([x.encode("utf-8") if isinstance(x, str) else x for x in arr.flat]).reshape(arr.shape)
                        for arr in (a, b))
            _np.testing.assert_array_equal(a, b, err_msg="\n".join(msgs))

    def assertNotAllEqual(self, a, b, msg=None):
        try:
            self.assertAllEqual(a, b)
        except AssertionError:
            return
        raise AssertionError(f"The two values are equal at all elements. {msg or ''}")

    def assertAllGreater(self, a, comparison_target):
        self.assertGreater(_np.min(_array(a)), comparison_target)

    def assertAllLess(self, a, comparison_target):
        self.assertLess(_np.max(_array(a)), comparison_target)

    def assertAllGreaterEqual(self, a, comparison_target):
        self.assertGreaterEqual(_np.min(_array(a)), comparison_target)

    def assertAllLessEqual(self, a, comparison_target):
        self.assertLessEqual(_np.max(_array(a)), comparison_target)

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False, open_upper_bound=False):
        target = _array(target)
        if not (_np.issubdtype(target.dtype, _np.floating) or _np.issubdtype(target.dtype, _np.integer)):
            raise AssertionError(f"The value of {target} does not have an ordered numeric type, instead it has "
                                 f"type: {target.dtype}")
        nan = _np.isnan(target) if _np.issubdtype(target.dtype, _np.floating) else _np.zeros(target.shape, bool)
        low = target <= lower_bound if open_lower_bound else target < lower_bound
        high = target >= upper_bound if open_upper_bound else target > upper_bound
        bad = _np.logical_or(nan, _np.logical_or(low, high))
        if _np.any(bad):
            interval = (f"{'(' if open_lower_bound else '['}{lower_bound}, {upper_bound}"
                        f"{')' if open_upper_bound else ']'}")
            raise AssertionError(f"{target[bad].tolist()} at index(es) {_np.argwhere(bad).tolist()} not in "
                                 f"interval {interval}")

    def assertAllInSet(self, target, expected_set):
        target = _array(target)
        diff = set(_np.unique(target.ravel()).tolist()) - set(expected_set)
        if diff:
            raise AssertionError(f"{diff} unexpected values in {target}.")

    def assertDTypeEqual(self, target, expected_dtype):
        want = _dtype_of(expected_dtype)
        self.assertEqual(_array(target).dtype, want)

    def assertShapeEqual(self, input_a, input_b, msg=None):
        """Same shape: each a NumPy array or scalar, or a tensor (a list is a TypeError, as in TF)."""
        for which, value in (("input_a", input_a), ("input_b", input_b)):
            if not (isinstance(value, (_np.ndarray, _np.generic)) or hasattr(value, "asnumpy")
                    or (hasattr(value, "numpy") and hasattr(value, "shape"))):
                raise TypeError(f"{which} must be a Numpy ndarray, Numpy scalar, or a Tensor."
                                f"Instead received {type(value)}")
        self.assertEqual(tuple(_array(input_a).shape), tuple(_array(input_b).shape),
                         msg=f"Shape mismatch{': ' + msg if msg else ''}")

    def assertStartsWith(self, actual, expected_start, msg=None):
        if not actual.startswith(expected_start):
            fail = f"{actual!r} does not start with {expected_start!r}"
            self.fail(fail + (f" : {msg}" if msg else ""))

    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):
        """A ``with`` block raising ``exception_type`` whose message matches the regular expression
        (or for which the predicate holds)."""
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(e):
                return _re.search(expected_err_re_or_predicate, str(e)) is not None
        return _raising(self, exception_type, predicate)

    def assertRaisesOpError(self, expected_err_re_or_predicate):
        """TF's op errors are what MindSpore raises from its operations: RuntimeError, ValueError,
        TypeError, IndexError."""
        return self.assertRaisesWithPredicateMatch((RuntimeError, ValueError, TypeError, IndexError),
                                                   expected_err_re_or_predicate)

    def assertDeviceEqual(self, device1, device2, msg=None):
        self.assertEqual(str(device1).lower(), str(device2).lower(), msg=msg)

    # --- absl's, and the spellings Python 3.12 dropped -------------------------------------------

    def assertItemsEqual(self, expected_seq, actual_seq, msg=None):
        self.assertCountEqual(expected_seq, actual_seq, msg)

    def assertEmpty(self, container, msg=None):
        if len(container):
            self.fail(msg or f"{container!r} has length of {len(container)}.")

    def assertNotEmpty(self, container, msg=None):
        if not len(container):
            self.fail(msg or f"{container!r} has length of 0.")

    def assertLen(self, container, expected_len, msg=None):
        if len(container) != expected_len:
            self.fail(msg or f"{container!r} has length of {len(container)}, expected {expected_len}.")

    def assertEquals(self, first, second, msg=None):
        self.assertEqual(first, second, msg)

    def assertRegexpMatches(self, text, expected_regex, msg=None):
        self.assertRegex(text, expected_regex, msg)

    def assertRaisesRegexp(self, expected_exception, expected_regex, *args, **kwargs):
        return self.assertRaisesRegex(expected_exception, expected_regex, *args, **kwargs)


@_contextlib.contextmanager
def _raising(case, exception_type, predicate):
    try:
        yield
    except exception_type as e:
        if not predicate(e):
            raise AssertionError(f"Exception of type {type(e)}: {e}") from e
    else:
        case.fail(f"{getattr(exception_type, '__name__', exception_type)} not raised")


# --- benchmarks -----------------------------------------------------------------------------------

class Benchmark:
    """``tf.test.Benchmark``: ``benchmark*`` methods run by ``main([..., "--benchmark_filter=REGEX"])``;
    ``report_benchmark`` logs the figures as TF's does."""

    def evaluate(self, tensors):
        return _evaluate(tensors)

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None, extras=None,
                         name=None, metrics=None) -> None:
        name = name or f"{type(self).__name__}.{_sys._getframe(1).f_code.co_name}"
        _log.info("Benchmark [%s] iters: %d, wall_time: %g, cpu_time: %g,throughput: %g, extras: %s, metrics: %s",
                  name, iters or -1, wall_time or -1, cpu_time or -1, throughput or -1, extras or {}, metrics or [])
        print(f"Benchmark [{name}] iters: {iters or -1}, wall_time: {wall_time or -1:g}, cpu_time: {cpu_time or -1:g}, "
              f"throughput: {throughput or -1:g}, extras: {extras or {}}, metrics: {metrics or []}", flush=True)

    def run_op_benchmark(self, *args, **kwargs):
        raise NotImplementedError(
            "tf.test.Benchmark.run_op_benchmark times a graph op in a session; a converted benchmark runs "
            "eagerly: time the call itself (time.perf_counter around it) and pass the figures to report_benchmark")


def _run_benchmarks(module, pattern: str) -> None:
    """Each ``benchmark*`` method of the module's Benchmark classes whose ``module.Class.method``
    name the regular expression finds (as TF's runner matches them); none is an error."""
    regex = _re.compile(pattern)
    ran = 0
    for name in sorted(dir(module)):
        cls = getattr(module, name)
        if not (isinstance(cls, type) and issubclass(cls, Benchmark) and cls is not Benchmark):
            continue
        for method in sorted(dir(cls)):
            full = f"{module.__name__}.{cls.__name__}.{method}"
            if method.startswith("benchmark") and callable(getattr(cls, method)) and regex.search(full):
                start = _time.perf_counter()
                getattr(cls(), method)()
                ran += 1
                _log.info("%s took %.3fs", full, _time.perf_counter() - start)
    if not ran:
        raise ValueError(f"No benchmarks matched the pattern: {pattern!r}")


_BENCHMARK_FLAGS = ("--benchmark_filter=", "--benchmarks=")


def main(argv=None) -> None:
    """``tf.test.main``: run the ``__main__`` module's tests (unittest's command line), or with
    ``--benchmark_filter=REGEX`` (TF 2's flag; TF 1's ``--benchmarks=`` too) its benchmarks."""
    argv = list(_sys.argv if argv is None else argv)
    wanted = [a.split("=", 1)[1] for a in argv[1:] if a.startswith(_BENCHMARK_FLAGS)]
    if wanted:
        module = _sys.modules["__main__"]
        for pattern in wanted:
            _run_benchmarks(module, "." if pattern == "all" else pattern)
        return
    _unittest.main(module="__main__", argv=argv)


# --- the rest of tf.test ---------------------------------------------------------------------------

def _device_target() -> str:
    try:
        import mindspore as ms
    except ImportError:  # pragma: no cover
        return "CPU"
    return ms.get_context("device_target")


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None) -> bool:
    """Whether this process computes on a GPU (MindSpore's device target)."""
    return _device_target() == "GPU"


def gpu_device_name() -> str:
    return "/device:GPU:0" if is_gpu_available() else ""


def is_built_with_cuda() -> bool:
    return is_gpu_available()


def is_built_with_gpu_support() -> bool:
    return is_gpu_available()


def is_built_with_rocm() -> bool:
    return False


def is_built_with_xla() -> bool:
    return False


def get_temp_dir() -> str:
    """``tf.test.get_temp_dir``: one temporary directory for the whole run."""
    global _temp_dir
    if _temp_dir is None:
        _temp_dir = _tempfile.mkdtemp(prefix="tftest_")
    return _temp_dir


_temp_dir: str | None = None


# --- Keras's test helpers ----------------------------------------------------------------------------

if _parameterized is not None:
    class _KerasTestCase(TestCase, _parameterized.TestCase):
        """``keras_parameterized.TestCase``: absl's parameterized ``TestCase`` with TF's assertions."""
else:  # pragma: no cover - without absl, a parameterized test has no decorators to use anyway
    _KerasTestCase = TestCase


class _KerasParameterized:
    """``tensorflow.python.keras.keras_parameterized``: its ``TestCase`` is absl's parameterized
    ``TestCase`` with TF's assertions, and its mode decorators run a test once (MindSpore has one
    eager mode where TF runs a Keras test in graph, eager and ``tf.function`` modes)."""

    TestCase = _KerasTestCase

    @staticmethod
    def run_all_keras_modes(test_or_class=None, config=None, always_skip_v1=False, always_skip_eager=False,
                            **kwargs):
        if test_or_class is None:
            return lambda test: test
        return test_or_class


keras_parameterized = _KerasParameterized()
# Keras 2.9+'s home for the same helpers, and TF's own base class under its framework name.
test_combinations = keras_parameterized
TensorFlowTestCase = TestCase
