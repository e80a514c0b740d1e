"""migrate.runtime.tfdata gives the elements tf.data gives: each pipeline runs on both and is compared.

TensorFlow runs once, in a subprocess, over every pipeline below; the runtime runs them
here. A pipeline is an expression over ``D`` (``tf.data.Dataset`` or ``tfdata.Dataset``)
and ``np``; functions given to ``map``/``filter`` use only operators both tensor types share.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from migrate.runtime import spmd, tfdata

X = "np.arange(20, dtype=np.float32).reshape(10, 2)"
Y = "np.arange(10, dtype=np.int64)"
PIPELINES = {
    "python_ints_past_int32": "D.from_tensor_slices([1, 2**40, -3])",
    "python_scalars": "D.from_tensors((1, 2.5, True, [1, 2]))",
    "slices_batch": f"D.from_tensor_slices(({X}, {Y})).batch(4)",
    "slices_batch_drop": f"D.from_tensor_slices(({X}, {Y})).batch(4, drop_remainder=True)",
    "dict_elements": f"D.from_tensor_slices({{'x': {X}, 'y': {Y}}}).batch(3)",
    "nested_tuple": f"D.from_tensor_slices(({X}, ({Y}, {Y}))).batch(5)",
    "python_lists": "D.from_tensor_slices([1.5, 2.5, 3.5]).batch(2)",
    "python_ints": "D.from_tensor_slices([1, 2, 3])",
    "from_tensors": f"D.from_tensors(({X}, {Y}))",
    "range_stop": "D.range(5)",
    "range_start_stop_step": "D.range(2, 11, 3)",
    "repeat_batch": "D.range(5).repeat(3).batch(4)",
    "batch_repeat": "D.range(5).batch(2).repeat(2)",
    "take_skip": "D.range(20).skip(3).take(5)",
    "take_all": "D.range(4).take(-1)",
    "skip_all": "D.range(4).skip(-1)",
    "repeat_forever_take": "D.range(3).repeat().take(8)",
    "shard": "D.range(11).shard(3, 1)",
    "map_scalar": "D.range(6).map(lambda v: v * 2 + 1)",
    "map_tuple_spread": f"D.from_tensor_slices(({X}, {Y})).map(lambda a, b: (a * 2, b + 1)).batch(3)",
    "map_dict": f"D.from_tensor_slices({{'x': {X}, 'y': {Y}}}).map(lambda e: (e['x'], e['y'])).batch(4)",
    "map_to_dict": f"D.from_tensor_slices(({X}, {Y})).map(lambda a, b: {{'f': a, 'l': b}}).batch(4)",
    "filter": "D.range(12).filter(lambda v: v % 3 == 0)",
    "filter_tuple": f"D.from_tensor_slices(({X}, {Y})).filter(lambda a, b: b > 6)",
    "unbatch": f"D.from_tensor_slices(({X}, {Y})).batch(4).unbatch()",
    "zip_tuple": "D.zip((D.range(3), D.range(10, 20)))",
    "zip_dict": "D.zip({'a': D.range(4), 'b': D.range(2)})",
    "zip_then_batch": "D.zip((D.range(5), D.range(5).map(lambda v: v * 10))).batch(2)",
    "cache_prefetch_options": "D.range(7).cache().prefetch(2).batch(3).prefetch(-1)",
    "enumerate": "D.range(10, 13).enumerate()",
    "concatenate": "D.range(3).concatenate(D.range(7, 9))",
    "generator_signature": "D.from_generator(lambda: ((np.arange(i + 1), i * 0.5) for i in range(3)), "
                           "output_signature=(S(shape=(None,), dtype='int32'), S(shape=(), dtype='float32')))",
    "generator_types_shapes_dict": "D.from_generator(lambda: ({'x': [1.0, 2.0], 'n': i} for i in range(3)), "
                                   "output_types={'x': 'float32', 'n': 'int64'}, "
                                   "output_shapes={'x': (2,), 'n': ()}).batch(2)",
    "generator_args": "D.from_generator(lambda n, s: (s * k for k in range(int(n))), output_types='int32', "
                      "args=(3, 2))",
    "generator_strings": "D.from_generator(lambda: iter(['a', 'bc']), output_types='string')",
    "generator_each_epoch": "D.from_generator(lambda: iter(range(3)), output_types='int64').repeat(2)",
    "generator_nested_lists": "D.from_generator(lambda: iter([[[1, 2], [3, 4]]]), output_signature="
                              "S(shape=(2, None), dtype='float64'))",
    "window_flat_map": "D.range(7).window(3, 2).flat_map(lambda w: w.batch(3))",
    "window_drop": "D.range(7).window(3, 2, drop_remainder=True).flat_map(lambda w: w.batch(3))",
    "window_shift_past_size": "D.range(7).window(2, 3).flat_map(lambda w: w.batch(2))",
    "window_stride": "D.range(7).window(2, 1, 2).flat_map(lambda w: w.batch(2))",
    "window_stride_drop": "D.range(7).window(3, 1, 2, drop_remainder=True).flat_map(lambda w: w.batch(3))",
    "window_default_shift": "D.range(7).window(4).flat_map(lambda w: w.batch(4))",
    "window_tuple": f"D.from_tensor_slices(({X}, {Y})).window(3, 2).flat_map("
                    "lambda a, b: D.zip((a.batch(3), b.batch(3))))",
    "window_dict": f"D.from_tensor_slices({{'x': {X}, 'y': {Y}}}).window(4, 3, drop_remainder=True).flat_map("
                   "lambda w: D.zip((w['x'].batch(4), w['y'].batch(4))))",
    "flat_map_slices": f"D.from_tensors(({X}, {Y})).flat_map(lambda a, b: D.from_tensor_slices((a, b)))",
    "flat_map_repeat": "D.range(3).flat_map(lambda v: D.from_tensors(v).repeat(2))",
    "padded_batch": "D.from_generator(lambda: (np.arange(i) for i in range(5)), "
                    "output_signature=S(shape=(None,), dtype='int64')).padded_batch(2)",
    "padded_batch_shapes_values": "D.from_generator(lambda: (np.arange(i) for i in range(5)), "
                                  "output_signature=S(shape=(None,), dtype='int64'))"
                                  ".padded_batch(2, padded_shapes=[6], padding_values=np.int64(-1), drop_remainder=True)",
    "padded_batch_tuple": "D.from_generator(lambda: ((np.ones((i, 2), np.float32) * i, np.arange(i), i) for i in range(4)), "
                          "output_signature=(S(shape=(None, 2), dtype='float32'), S(shape=(None,), dtype='int64'), "
                          "S(shape=(), dtype='int32'))).padded_batch(3, padded_shapes=([None, 3], [5], []), "
                          "padding_values=(np.float32(0.5), np.int64(7), np.int32(-2)))",
    "padded_batch_text": "D.from_generator(lambda: (['a', 'bc'][:i] for i in range(3)), "
                         "output_signature=S(shape=(None,), dtype='string')).padded_batch(2)",
    "apply": "D.range(6).apply(lambda d: d.batch(4))",
    "counter": "D.counter(3, 2).take(4)",
}
CARDINALITIES = {
    "slices_batch": "D.from_tensor_slices(np.arange(10)).batch(4)",
    "slices_batch_drop": "D.from_tensor_slices(np.arange(10)).batch(4, drop_remainder=True)",
    "repeat_forever": "D.range(3).repeat()",
    "repeat_take": "D.range(3).repeat().take(7)",
    "filter": "D.range(3).filter(lambda v: v > 0)",
    "shard": "D.range(11).shard(3, 2)",
    "skip": "D.range(4).skip(6)",
    "zip": "D.zip((D.range(3), D.range(5)))",
    "generator": "D.from_generator(lambda: iter(range(3)), output_types='int64')",
    "window": "D.range(7).window(3, 2)",
    "window_drop": "D.range(7).window(3, 2, drop_remainder=True)",
    "window_stride": "D.range(7).window(2, 1, 2)",
    "window_stride_drop": "D.range(7).window(3, 1, 2, drop_remainder=True)",
    "window_short_input": "D.range(2).window(3, 2, drop_remainder=True)",
    "flat_map": "D.range(3).flat_map(lambda v: D.range(2))",
    "padded_batch": "D.range(5).map(lambda v: (v, v)).padded_batch(2)",
    "counter": "D.counter()",
}


def encode(element):
    """An element as JSON: nests kept, leaves as (dtype, shape, values)."""
    if isinstance(element, dict):
        return {"dict": {k: encode(v) for k, v in sorted(element.items())}}
    if isinstance(element, tuple):
        return {"tuple": [encode(v) for v in element]}
    array = np.asarray(element)
    if array.dtype.kind in "OS":  # TF strings are bytes on both sides
        values = [v.decode("utf-8", "backslashreplace") for v in array.reshape(-1).tolist()]
        return {"dtype": "bytes", "shape": list(array.shape), "values": values}
    return {"dtype": str(array.dtype), "shape": list(array.shape), "values": array.tolist()}


TF_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tensorflow as tf
    from tests.test_tfdata import encode
    D, S = tf.data.Dataset, tf.TensorSpec
    cases, cards = json.loads(sys.stdin.read())
    out = {"elements": {}, "cardinality": {}}
    for name, code in cases.items():
        out["elements"][name] = [encode(e) for e in eval(code).as_numpy_iterator()]
    for name, code in cards.items():
        out["cardinality"][name] = int(eval(code).cardinality())
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def tf_results():
    done = subprocess.run([sys.executable, "-c", TF_SCRIPT], input=json.dumps([PIPELINES, CARDINALITIES]),
                          capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def runtime(code: str):
    return eval(code, {"D": tfdata.Dataset, "S": tfdata.TensorSpec, "np": np})  # noqa: S307 - the test's own pipelines


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_elements_equal_tf(name, tf_results):
    got = [encode(e) for e in runtime(PIPELINES[name]).as_numpy_iterator()]
    assert got == tf_results["elements"][name]


@pytest.mark.parametrize("name", sorted(CARDINALITIES))
def test_cardinality_equals_tf(name, tf_results):
    assert runtime(CARDINALITIES[name]).cardinality() == tf_results["cardinality"][name]


@pytest.mark.parametrize("code, message", [
    ("D.from_generator(lambda: iter([[1, 2, 3]]), output_types='int32', output_shapes=(2,))",
     "yielded an element of shape (3,) where an element of shape (2,) was expected"),
    ("D.from_generator(lambda: iter([(1, 2)]), output_types=('int32', 'int32', 'int32'))",
     "did not match the expected structure"),
    ("D.from_generator(lambda: iter(['x']), output_types='float32')", "could not be converted to the expected type"),
    ("D.from_generator(lambda: iter([1]))", "provide either the `output_signature` argument or the `output_types`"),
])
def test_a_generator_that_does_not_fit_its_signature_fails_as_tf_does(code, message):
    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        list(runtime(code))


def test_iterating_yields_mindspore_tensors_and_every_pass_is_an_epoch():
    import mindspore as ms

    ds = tfdata.Dataset.from_tensor_slices((np.ones((5, 2), np.float32), np.arange(5))).batch(2)
    first = list(ds)
    assert isinstance(first[0][0], ms.Tensor) and first[0][0].shape == (2, 2)
    assert [b[1].asnumpy().tolist() for b in ds] == [b[1].asnumpy().tolist() for b in first]
    assert len(ds) == 3


def test_map_functions_receive_mindspore_tensors():
    import mindspore as ms

    seen = []
    list(tfdata.Dataset.range(2).map(lambda v: seen.append(type(v)) or v).as_numpy_iterator())
    assert seen == [ms.Tensor, ms.Tensor]


def test_shuffle_keeps_the_elements_and_a_seed_repeats_the_order():
    def order(seed):
        return [int(v) for v in tfdata.Dataset.range(50).shuffle(10, seed=seed).as_numpy_iterator()]

    assert sorted(order(3)) == list(range(50))
    assert order(3) == order(3)
    assert order(3) != list(range(50))


def test_shuffle_reshuffles_each_epoch_unless_told_not_to():
    ds = tfdata.Dataset.range(30).shuffle(30, seed=1)
    assert list(ds.as_numpy_iterator()) != list(ds.as_numpy_iterator())
    fixed = tfdata.Dataset.range(30).shuffle(30, seed=1, reshuffle_each_iteration=False)
    assert [int(v) for v in fixed.as_numpy_iterator()] == [int(v) for v in fixed.as_numpy_iterator()]


def test_buffer_of_one_keeps_the_order():
    assert [int(v) for v in tfdata.Dataset.range(8).shuffle(1).as_numpy_iterator()] == list(range(8))


def test_cache_replays_the_first_pass():
    ds = tfdata.Dataset.range(20).shuffle(20).cache()
    assert list(ds.as_numpy_iterator()) == list(ds.as_numpy_iterator())


def test_infinite_and_unknown_lengths_raise_like_tf():
    with pytest.raises(TypeError, match="infinite"):
        len(tfdata.Dataset.range(2).repeat())
    with pytest.raises(TypeError, match="unknown"):
        len(tfdata.Dataset.range(2).filter(lambda v: v > 0))


def test_options_accept_any_setting_and_are_recorded():
    options = tfdata.Options()
    options.experimental_distribute.auto_shard_policy = tfdata.AutoShardPolicy.DATA
    options.deterministic = False
    ds = tfdata.Dataset.range(3).with_options(options)
    assert ds.options().experimental_distribute.auto_shard_policy is tfdata.AutoShardPolicy.DATA
    assert [int(v) for v in ds.as_numpy_iterator()] == [0, 1, 2]
    assert tfdata.experimental.AUTOTUNE == tfdata.AUTOTUNE == -1


def test_batches_of_ragged_elements_fail_clearly():
    ds = tfdata.Dataset.range(3).map(lambda v: np.zeros(int(v)))
    with pytest.raises(ValueError, match="different shapes"):
        list(ds.batch(2).as_numpy_iterator())


def test_distribute_dataset_splits_each_global_batch():
    # One process is one replica: it takes the whole global batch, in TF's order.
    ds = tfdata.Dataset.from_tensor_slices((np.arange(14, dtype=np.float32), np.arange(14))).batch(8)
    batches = [tuple(part.asnumpy().tolist() for part in batch) for batch in spmd.distribute_dataset(ds)]
    assert batches == [(list(map(float, range(8))), list(range(8))), (list(map(float, range(8, 14))), list(range(8, 14)))]


def test_tf_split_of_a_runtime_global_batch_matches_tf():
    from migrate.runtime.data import shard_global_batch

    (batch,) = tfdata.Dataset.from_tensor_slices(np.arange(5)).batch(5)
    assert [shard_global_batch(batch, r, 2).asnumpy().tolist() for r in range(2)] == [[0, 1, 2], [3, 4]]


@pytest.mark.parametrize("shuffle", [None, 7, 1])
@pytest.mark.parametrize("drop", [False, True])
def test_batches_of_array_rows_equal_the_rows_stacked_one_by_one(shuffle, drop):
    """`batch` over from_tensor_slices (and shuffle) slices whole batches at once; the batches are
    the ones stacking each element gives, in the same order, with the same dtypes, text included."""
    rng = np.random.default_rng(0)
    columns = {"x": rng.normal(size=(23, 3)).astype(np.float32), "y": np.arange(23, dtype=np.int64),
               "text": np.array([f"row {i}" for i in range(23)])}

    def pipeline():
        ds = tfdata.Dataset.from_tensor_slices(columns)
        return ds.shuffle(shuffle, seed=5) if shuffle else ds

    unbatched, batched = pipeline(), pipeline().prefetch(2).batch(4, drop_remainder=drop)
    for _ in range(2):  # a second epoch reshuffles the same way for both
        rows = list(unbatched.as_numpy_iterator())
        expected = [rows[i:i + 4] for i in range(0, len(rows), 4)]
        if drop:
            expected = [group for group in expected if len(group) == 4]
        got = list(batched.as_numpy_iterator())
        assert len(got) == len(expected)
        for batch, group in zip(got, expected):
            for key in columns:
                stacked = np.stack([row[key] for row in group])
                assert batch[key].dtype == stacked.dtype and batch[key].shape == stacked.shape
                assert batch[key].tolist() == stacked.tolist()
    if shuffle == 7:
        assert [int(v) for v in np.concatenate([b["y"] for b in got])] != sorted(range(23))[:len(got) * 4]


def test_a_batch_of_rows_does_not_alias_the_input_array():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    first = next(tfdata.Dataset.from_tensor_slices(x).batch(3).as_numpy_iterator())
    x[0, 0] = 99.0
    assert float(first[0, 0]) == 0.0


def test_list_files_gives_tfs_files(tmp_path):
    tf = pytest.importorskip("tensorflow")
    for name in ("f10.txt", "f2.txt", "f1.txt", "a.csv", ".hidden.csv", "sub/f3.txt", "sub/skip.bin"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(name)
    patterns = [str(tmp_path / "f*.txt"), [str(tmp_path / "f*.txt"), str(tmp_path / "*.csv"), str(tmp_path / "*/f*.txt")],
                [str(tmp_path / "f1.txt"), str(tmp_path / "a.csv"), str(tmp_path / "f1.txt")]]
    for pattern in patterns:
        theirs = list(tf.data.Dataset.list_files(pattern, shuffle=False).as_numpy_iterator())
        ours = tfdata.Dataset.list_files(pattern, shuffle=False)
        assert list(ours.as_numpy_iterator()) == theirs
        assert int(ours.cardinality()) == len(theirs)
        shuffled = [list(tfdata.Dataset.list_files(pattern, seed=3).as_numpy_iterator()) for _ in range(2)]
        assert shuffled[0] == shuffled[1] and sorted(shuffled[0]) == theirs  # the same files; one order per seed
    read = tfdata.Dataset.list_files(str(tmp_path / "f*.txt"), shuffle=False).interleave(tfdata.TextLineDataset, 1)
    assert list(read.as_numpy_iterator()) == [b"f1.txt", b"f10.txt", b"f2.txt"]
    with pytest.raises(ValueError, match="No files matched pattern: .*zz"):
        tfdata.Dataset.list_files(str(tmp_path / "zz*"))


def test_get_single_element_and_the_experimental_helpers():
    element = tfdata.Dataset.from_tensors((np.arange(3), np.float32(2.5))).get_single_element()
    assert np.asarray(element[0].asnumpy()).tolist() == [0, 1, 2] and float(element[1].asnumpy()) == 2.5
    assert int(tfdata.get_single_element(tfdata.Dataset.range(4).skip(3)).asnumpy()) == 3
    with pytest.raises(ValueError, match="Dataset was empty"):
        tfdata.Dataset.range(0).get_single_element()
    with pytest.raises(ValueError, match="more than one element"):
        tfdata.experimental.get_single_element(tfdata.Dataset.range(2))
    assert [int(v) for v in tfdata.Counter(5, -2).take(3).as_numpy_iterator()] == [5, 3, 1]
    assert tfdata.experimental.Counter().cardinality() == tfdata.INFINITE_CARDINALITY
    batches = tfdata.Dataset.range(5).apply(tfdata.prefetch_to_device("/gpu:0")).batch(2)
    assert [b.tolist() for b in batches.as_numpy_iterator()] == [[0, 1], [2, 3], [4]]


@pytest.mark.parametrize("code, message", [
    ("D.range(3).map(lambda v: (v, v)).padded_batch(2, padded_shapes=[4])", "does not match the structure"),
    ("D.from_generator(lambda: (np.arange(i) for i in range(4)), output_types='int64').padded_batch(4, "
     "padded_shapes=[2])", "larger than its padded shape"),
    ("D.range(3).flat_map(lambda v: v)", "flat_map's map_func must return a dataset"),
    ("D.range(3).window(0)", "must be positive"),
])
def test_window_padded_batch_and_flat_map_refuse_as_tf_does(code, message):
    with pytest.raises((ValueError, TypeError), match=message):
        list(runtime(code).as_numpy_iterator())
