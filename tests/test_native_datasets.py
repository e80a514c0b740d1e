"""The native tier's input pipelines (TFL170): a tf.data pipeline of in-memory arrays becomes a
`mindspore.dataset.GeneratorDataset` whose batches, and each process's part of them, are TF's."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from migrate.rules import load_rules
from tests.helpers import convert, python_json

DISTRIBUTED = textwrap.dedent('''\
    import numpy as np
    import tensorflow as tf

    x = np.zeros((36, 6), np.float32)
    labels = np.zeros(36, np.int64)
    strategy = tf.distribute.MirroredStrategy()
    dist_ds = strategy.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices((x, labels)).batch(8).prefetch(tf.data.AUTOTUNE))


    def train_step(inputs):
        features, targets = inputs
        return features


    for batch in dist_ds:
        strategy.run(train_step, args=(batch,))
    ''')


def notes(findings, rule_id="TFL170"):
    return [f for f in findings if f.rule == rule_id]


def test_a_distributed_pipeline_of_arrays_is_a_generator_dataset_split_as_tf_splits_it():
    out, findings = convert(DISTRIBUTED)
    assert 'dist_ds = ds.GeneratorDataset(ArrayBatches((x, labels), 8, split=True), ["x", "labels"], shuffle=False)' in out
    assert "tfdata" not in out and "spmd.distribute_dataset" not in out and "prefetch" not in out
    assert "import mindspore.dataset as ds" in out
    assert out.count("class ArrayBatches:") == 1
    assert "\n\n\nclass ArrayBatches:" in out and "splits a global batch.\"\"\"" in out
    [note] = notes(findings)
    assert (note.line, note.status) == (7, "converted")
    assert "this process's contiguous part of each global batch" in note.message
    again, _ = convert(out)
    assert again == out


def test_shard_cache_drop_remainder_and_enumerate():
    out, findings = convert(textwrap.dedent('''\
        import tensorflow as tf

        dataset = tf.data.Dataset.from_tensor_slices((images, labels)).cache().shard(4, 1).batch(32, drop_remainder=True)
        for step, (x, y) in enumerate(dataset):
            print(step, x.shape)
        '''))
    assert ('dataset = ds.GeneratorDataset(ArrayBatches((images, labels), 32, drop_remainder=True, num_shards=4, shard=1), '
            '["images", "labels"], shuffle=False)') in out
    assert [n.status for n in notes(findings)] == ["converted"]


def test_two_pipelines_share_one_source_class():
    out, _ = convert(DISTRIBUTED.replace("for batch in dist_ds:", textwrap.dedent('''\
        test_ds = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, labels)).batch(8))
        for features, targets in test_ds:
            print(features)
        for batch in dist_ds:''')))
    assert out.count("class ArrayBatches") == 1
    assert 'test_ds = ds.GeneratorDataset(ArrayBatches((x, labels), 8, split=True), ["x", "labels"], shuffle=False)' in out


@pytest.mark.parametrize("old, new, why", [
    (".batch(8).prefetch", ".shuffle(64).batch(8).batch(2).prefetch", "the pipeline is batched twice"),
    (".batch(8).prefetch", ".batch(8).map(lambda a, b: (a, b)).prefetch", "`.map(...)` has no native lowering yet"),
    (".batch(8).prefetch(tf.data.AUTOTUNE)", ".prefetch(2)", "the pipeline is not batched"),
    (".batch(8)", ".batch(8, num_parallel_calls=2)", "`batch` is given arguments the native source does not take"),
    ("from_tensor_slices((x, labels))", "from_tensor_slices(x * 2)", "not given an array's name or a tuple of two or more names"),
    ("from_tensor_slices((x, labels))", "from_tensor_slices({'x': x, 'y': labels})",
     "not given an array's name or a tuple of two or more names"),
    ("labels = np.zeros(36, np.int64)", "labels = [0.5] * 36", "`labels` is bound to a Python sequence"),
    ("for batch in dist_ds:", "for batch in iter(dist_ds):", "read other than as a `for` loop's iterable"),
    ("strategy.run(train_step, args=(batch,))", "print(type(batch))", "used other than by unpacking it"),
    ("features, targets = inputs", "features = inputs", "used other than by unpacking it"),
    ("for batch in dist_ds:\n", "dist_ds = None\nfor batch in dist_ds:\n", "never iterated"),
    ("labels = np.zeros(36, np.int64)", "labels = {'y': np.zeros(36)}", "`labels` is bound to a dict"),
    ("    strategy.run(train_step, args=(batch,))\n", "    strategy.run(train_step, args=(batch,))\nprint(batch)\n",
     "read after the loop"),
])
def test_pipelines_it_cannot_prove_keep_the_shim(old, new, why):
    _keeps_the_shim(DISTRIBUTED, old, new, why)


def _keeps_the_shim(program: str, old: str, new: str, why: str) -> None:
    """``program`` with ``old`` made ``new`` keeps its one pipeline in the shim, and the note says ``why``."""
    assert old in program
    out, findings = convert(program.replace(old, new, 1))
    assert "ds.GeneratorDataset" not in out and "class Array" not in out
    [note] = notes(findings)
    assert note.status == "info" and why in note.message, note.message


def test_a_pipeline_never_iterated_keeps_the_shim():
    out, findings = convert(DISTRIBUTED[:DISTRIBUTED.index("\n\ndef train_step")] + "\n")
    assert "spmd.distribute_dataset" in out
    assert "is never iterated" in notes(findings)[0].message


def test_the_shim_tier_keeps_tfdata():
    from migrate.engine.runner import RuleSelection, convert_source, rule_index
    from migrate.config import NATIVE_RULES

    result = convert_source(DISTRIBUTED.encode(), rule_index(RuleSelection(ignore=(NATIVE_RULES,))), "example.py")
    assert "tfdata.Dataset.from_tensor_slices" in result.converted.decode()


# -- the source class's batches against TF's own ------------------------------------------------

CASES = [  # (rows, global batch, drop_remainder, num_shards, shard index)
    (36, 8, False, 1, 0), (33, 8, False, 1, 0), (9, 8, False, 1, 0), (33, 8, True, 1, 0),
    (37, 6, False, 3, 1), (20, 5, False, 1, 0), (7, 4, False, 2, 1),
]

STREAMS = [  # (rows, the pipeline's methods and arguments after from_tensor_slices)
    (12, [["repeat", [2]], ["batch", [5]]]),
    (12, [["batch", [5]], ["repeat", [2]]]),
    (13, [["shard", [2, 1]], ["repeat", [3]], ["batch", [4, True]]]),
    (15, [["skip", [3]], ["take", [7]], ["batch", [3]]]),
    (15, [["batch", [4]], ["skip", [1]], ["take", [2]]]),
    (10, [["repeat", []], ["batch", [6]], ["take", [5]]]),
    (9, [["take", [-1]], ["skip", [0]], ["batch", [4]], ["repeat", [-1]], ["take", [4]]]),
    (7, [["batch", [3]], ["skip", [-1]]]),
]

TF_BATCHES = textwrap.dedent('''\
    import json, sys
    import numpy as np
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    out = []
    for rows, methods in json.loads(sys.argv[1]):
        ids = np.arange(rows, dtype=np.int64)
        dataset = tf.data.Dataset.from_tensor_slices((ids, ids * 10))
        for method, arguments in methods:
            dataset = getattr(dataset, method)(*arguments)
        plain = [[a.numpy().tolist(), b.numpy().tolist()] for a, b in dataset]
        split = [[[a.numpy().tolist(), b.numpy().tolist()] for a, b in zip(strategy.experimental_local_results(x),
                                                                        strategy.experimental_local_results(y))]
                 for x, y in strategy.experimental_distribute_dataset(dataset)]
        out.append({"plain": plain, "split": split})
    print(json.dumps(out))
    ''')



@pytest.fixture(scope="module")
def tf_batches():
    """TF's batches, and each of its 2 replicas' part of them, for CASES and for STREAMS (one TF run)."""
    pytest.importorskip("tensorflow")
    pipelines = [_as_methods(*case) for case in CASES] + STREAMS
    proc = subprocess.run([sys.executable, "-c", TF_BATCHES, json.dumps(pipelines)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = json.loads(proc.stdout.strip().splitlines()[-1])
    return expected[:len(CASES)], expected[len(CASES):]


def _as_methods(rows, batch, drop, shards, index):
    """A CASES row as (rows, the pipeline's methods after from_tensor_slices)."""
    return rows, [["shard", [shards, index]]] * (shards > 1) + [["batch", [batch, drop]]]


def _rule_class(kind: str, rank: int, processes: int, seed: int = 5489):
    """TFL170's ``source`` or ``stream`` class as the rule writes it, run in a namespace where the
    process group has ``processes`` members and MindSpore's dataset seed is ``seed``."""
    import itertools

    from migrate.ops.native import source_class

    class Config:
        @staticmethod
        def get_seed():
            return seed

    [rule] = [r for r in load_rules() if r.id == "TFL170"]
    namespace = {"np": np, "itertools": itertools, "ds": type("ds", (), {"config": Config}),
                 "get_group_size": lambda: processes, "get_rank": lambda: rank}
    exec(source_class(rule, kind, "Source"), namespace)  # noqa: S102 - the rule's own text
    return namespace["Source"]


def _source_class(rank: int, processes: int):
    return _rule_class("source", rank, processes)


def _stream_class(rank: int, processes: int, seed: int = 5489):
    return _rule_class("stream", rank, processes, seed)


def _batches(source) -> list:
    return [[part.tolist() for part in source[i]] for i in range(len(source))]


def test_the_source_gives_tfs_batches_and_each_processs_part_of_them(tf_batches):
    for (rows, batch, drop, shards, index), tf_out in zip(CASES, tf_batches[0]):
        ids = np.arange(rows, dtype=np.int64)
        arrays = (ids, ids * 10)
        plain = _source_class(0, 1)(arrays, batch, drop_remainder=drop, num_shards=shards, shard=index)
        assert _batches(plain) == tf_out["plain"], (rows, batch, drop, shards, index)
        for rank in (0, 1):
            split = _source_class(rank, 2)(arrays, batch, drop_remainder=drop, num_shards=shards, shard=index, split=True)
            assert _batches(split) == [step[rank] for step in tf_out["split"]], (rows, batch, drop, shards, index, rank)


def test_the_source_refuses_arrays_of_different_lengths():
    with pytest.raises(ValueError, match="same number of rows"):
        _source_class(0, 1)((np.zeros(4), np.zeros(5)), 2)


def test_mindspore_reads_the_source_with_its_dtypes_and_an_empty_part():
    pytest.importorskip("mindspore")
    code = textwrap.dedent('''\
        import json
        import numpy as np
        import mindspore.dataset as ds
        from mindspore.communication import get_group_size, get_rank
        ''') + _class_text() + textwrap.dedent('''\

        x = np.arange(18, dtype=np.float32).reshape(9, 2)
        y = np.arange(9)
        get_group_size, get_rank = (lambda: 2), (lambda: 1)
        out = []
        for epoch in range(2):
            for features, labels in ds.GeneratorDataset(ArrayBatches((x, y), 8, split=True), ["x", "y"], shuffle=False):
                out.append([list(features.shape), str(features.dtype), labels.asnumpy().tolist(), str(labels.dtype)])
        print(json.dumps(out))
        ''')
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == [[[4, 2], "Float32", [4, 5, 6, 7], "Int64"], [[0, 2], "Float32", [], "Int64"]] * 2


def _class_text() -> str:
    from migrate.ops.native import source_class

    [rule] = [r for r in load_rules() if r.id == "TFL170"]
    return source_class(rule, "source", "ArrayBatches")


def test_a_file_whose_own_names_are_the_imports_gets_aliases_and_runs():
    pytest.importorskip("mindspore")
    out, findings = convert(textwrap.dedent('''\
        import numpy as np
        import tensorflow as tf

        x = np.arange(16, dtype=np.float32).reshape(8, 2)
        y = np.arange(8)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)
        val = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)
        out = [b.tolist() for _, b in ds] + [b.tolist() for _, b in val]
        for a, b in ds:
            out.append(list(a.shape))
        for a, b in val:
            out.append(list(b.shape))
        print(out)
        '''.replace("out = [b.tolist() for _, b in ds] + [b.tolist() for _, b in val]\n", "out = []\n")))
    assert "import mindspore.dataset as ms_ds" in out and "ds = ms_ds.GeneratorDataset(" in out
    proc = subprocess.run([sys.executable, "-c", out], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "[[4, 2], [4, 2], [4], [4]]"


def test_an_import_read_before_its_line_is_added_at_the_top():
    out, _ = convert(textwrap.dedent('''\
        import tensorflow as tf

        dataset = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(4)
        import numpy as np
        for a, b in dataset:
            print(np.shape(a))
        '''))
    assert out.index("import numpy as np") < out.index("class ArrayBatches")


def test_lists_take_tfs_dtypes_and_lengths_are_compared_before_sharding():
    source = _source_class(0, 1)
    batches = source(([0.5, 1.5, 2.5], [1, 2, 3]), 2)
    assert [part.dtype for part in batches[0]] == [np.float32, np.int32]
    assert source((np.zeros(4), np.zeros(4, np.int64)), 2)[0][1].dtype == np.int64
    with pytest.raises(ValueError, match="same number of rows"):
        source((np.zeros(4), np.zeros(5)), 1, num_shards=4, shard=1)
    with pytest.raises(TypeError, match="not an array of rows"):
        source(({"a": 1}, np.zeros(1)), 1)


@pytest.mark.parametrize("rows, batch, processes", [(36, 8, 2), (33, 8, 2), (10, 4, 3), (7, 8, 4), (5, 5, 3)])
def test_the_source_splits_each_batch_as_the_shims_distributed_dataset_does(rows, batch, processes):
    from migrate.runtime.data import replica_slice

    ids = np.arange(rows)
    for rank in range(processes):
        source = _source_class(rank, processes)((ids, ids), batch, split=True)
        for step in range(len(source)):
            whole = ids[step * batch:(step + 1) * batch]
            assert source[step][0].tolist() == whole[replica_slice(len(whole), rank, processes)].tolist()


# -- pipelines over several statements, shuffled, repeated (ArrayStream) -------------------------

NOTEBOOK = textwrap.dedent('''\
    import numpy as np
    import tensorflow as tf

    training_steps = 6
    x_train = np.arange(40, dtype=np.float32).reshape(20, 2)
    y_train = np.arange(20)
    # Use tf.data API to shuffle and batch data.
    train_data = tf.data.Dataset.from_tensor_slices((x_train, y_train))
    train_data = train_data.repeat().shuffle(5000).batch(4).prefetch(1)

    for step, (batch_x, batch_y) in enumerate(train_data.take(training_steps), 1):
        print(step, batch_y.shape)
    ''')


def test_a_pipeline_continued_by_its_next_binding_and_read_through_take():
    out, findings = convert(NOTEBOOK)
    assert "# Use tf.data API to shuffle and batch data.\ntrain_data = ArrayStream((x_train, y_train))\n" in out
    assert ('train_data = ds.GeneratorDataset(train_data.repeat().shuffle(5000).batch(4).take(training_steps), '
            '["x_train", "y_train"], shuffle=False)') in out
    assert "for step, (batch_x, batch_y) in enumerate(train_data, 1):" in out
    assert "tfdata" not in out and "prefetch" not in out and out.count("class ArrayStream:") == 1
    assert "class ArrayBatches" not in out
    assert [(n.line, n.status) for n in notes(findings)] == [(8, "converted"), (9, "converted")]
    assert "its next binding makes a native dataset" in notes(findings)[0].message
    assert "TF's buffer shuffle" in notes(findings)[1].message
    again, _ = convert(out)
    assert again == out


def test_the_mindspore_dataset_of_a_repeated_pipeline_stops_after_take():
    pytest.importorskip("mindspore")
    out, _ = convert(NOTEBOOK)
    proc = subprocess.run([sys.executable, "-c", out], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == [str(n) for step in range(1, 7) for n in (step, "(4,)")]


TUTORIAL = textwrap.dedent('''\
    import numpy as np
    import tensorflow as tf

    strategy = tf.distribute.MirroredStrategy()
    train_dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(60000).batch(64)
    test_dataset = tf.data.Dataset.from_tensor_slices((test_images, test_labels)).batch(64)
    train_dist_dataset = strategy.experimental_distribute_dataset(train_dataset)
    test_dist_dataset = strategy.experimental_distribute_dataset(test_dataset)
    for epoch in range(2):
        for x in train_dist_dataset:
            a, b = x
        for a, b in test_dist_dataset:
            print(a)
    ''')


def test_distributed_pipelines_named_before_they_are_distributed_share_one_stream_class():
    out, findings = convert(TUTORIAL)
    assert "train_dataset = ArrayStream((images, labels)).shuffle(60000).batch(64)\n" in out
    assert "test_dataset = ArrayStream((test_images, test_labels)).batch(64)\n" in out
    assert ('train_dist_dataset = ds.GeneratorDataset(train_dataset.split(), ["images", "labels"], shuffle=False)'
            in out)
    assert 'test_dist_dataset = ds.GeneratorDataset(test_dataset.split(), ["test_images", "test_labels"], shuffle=False)' in out
    assert out.count("class Array") == 1 and "spmd" not in out.replace("from migrate.runtime.spmd import init", "")
    assert [n.line for n in notes(findings) if n.status == "converted"] == [5, 6, 7, 8]


@pytest.mark.parametrize("old, new, why", [
    ("    for a, b in test_dist_dataset:", "    for a, b in test_dataset:", "read other than as a `for`"),
    ("test_dataset = tf.data.Dataset.from_tensor_slices((test_images, test_labels)).batch(64)",
     "test_dataset = tf.data.Dataset.from_tensor_slices((test_images, test_labels))", "the pipeline is not batched"),
    ("strategy.experimental_distribute_dataset(test_dataset)",
     "strategy.experimental_distribute_dataset(test_dataset.map(lambda a, b: (a, b)))", "`.map(...)` has no native"),
])
def test_a_chain_it_cannot_follow_keeps_the_shim(old, new, why):
    assert old in TUTORIAL
    out, findings = convert(TUTORIAL.replace(old, new))
    assert "train_dist_dataset = ds.GeneratorDataset(" in out
    refused = [n for n in notes(findings) if n.status == "info"]
    assert len(refused) == 1 and why in refused[0].message, [n.message for n in notes(findings)]
    assert "tfdata.Dataset.from_tensor_slices((test_images, test_labels))" in out


@pytest.mark.parametrize("old, new, why", [
    ("print(step, batch_y.shape)", "print(step, batch_y.shape)\nfor a, b in train_data:\n    print(a)",
     "read other than as a `for`"),
    ("training_steps = 6\n", "", "read other than as a `for`"),
    ("enumerate(train_data.take(training_steps), 1)", "enumerate(train_data.take(steps()), 1)", "read other than as a `for`"),
    ("train_data = train_data.repeat()", "def f():\n    return train_data\n\n\ntrain_data = train_data.repeat()",
     "bound more than once"),
])
def test_take_is_moved_into_the_pipeline_only_when_it_is_the_one_read_and_its_count_is_known(old, new, why):
    _keeps_the_shim(NOTEBOOK, old, new, why)


TWO_LOOPS = NOTEBOOK.replace("enumerate(train_data.take(training_steps), 1)", "enumerate(train_data.take(training_steps - 2), 1)") \
    + "for step, (batch_x, batch_y) in enumerate(train_data.take(training_steps - 2)):\n    print(step, batch_y.shape)\n"


def test_loops_that_take_one_count_each_start_the_pipeline_again():
    """TensorFlow-Examples' `enumerate(train_data.take(training_steps + 1))`, and two loops taking
    as many: the pipeline takes the count, and each loop reads it from its start, as TF's does."""
    out, _ = convert(TWO_LOOPS)
    assert ('train_data = ds.GeneratorDataset(train_data.repeat().shuffle(5000).batch(4).take(training_steps - 2), '
            '["x_train", "y_train"], shuffle=False)') in out
    assert "in enumerate(train_data, 1):" in out and "in enumerate(train_data):" in out
    pytest.importorskip("mindspore")
    proc = subprocess.run([sys.executable, "-c", out], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    want = [str(n) for step in range(1, 5) for n in (step, "(4,)")] + [str(n) for step in range(4) for n in (step, "(4,)")]
    assert proc.stdout.split() == want


def test_loops_that_take_different_counts_keep_the_shim():
    _keeps_the_shim(TWO_LOOPS, "enumerate(train_data.take(training_steps - 2))", "enumerate(train_data.take(3))",
                    "read other than as a `for`")



def _streamed(source, methods, split=False):
    for method, arguments in methods:
        source = getattr(source, method)(*arguments)
    if split:
        source = source.split()
    return [[part.tolist() for part in batch] for batch in source]


def test_the_stream_gives_tfs_batches_and_each_processs_part_of_them(tf_batches):
    for (rows, methods), tf_out in zip(STREAMS, tf_batches[1]):
        ids = np.arange(rows, dtype=np.int64)
        assert _streamed(_stream_class(0, 1)((ids, ids * 10)), methods) == tf_out["plain"], methods
        for rank in (0, 1):
            split = _streamed(_stream_class(rank, 2)((ids, ids * 10)), methods, split=True)
            assert split == [step[rank] for step in tf_out["split"]], (methods, rank)


def _orders(source, epochs=3):
    return [[row for batch, _ in source for row in batch.tolist()] for _ in range(epochs)]


def test_a_shuffle_draws_one_order_per_reading_the_same_in_every_process():
    ids = np.arange(50)
    whole = _orders(_stream_class(0, 1)((ids, ids)).shuffle(64).batch(8))
    assert all(sorted(order) == list(range(50)) for order in whole)
    assert len({tuple(order) for order in whole}) == 3 and whole[0] != list(range(50))
    def batches(source):
        return [[batch.tolist() for batch, _ in source] for _ in range(3)]

    single = batches(_stream_class(0, 1)((ids, ids)).shuffle(64).batch(8))
    parts = [batches(_stream_class(rank, 2)((ids, ids)).shuffle(64).batch(8).split()) for rank in (0, 1)]
    for epoch in range(3):  # (each process its contiguous part of the one order's global batches)
        assert [a + b for a, b in zip(parts[0][epoch], parts[1][epoch])] == single[epoch]
        assert [len(a) for a in parts[0][epoch]] == [4] * 6 + [1]
    assert _orders(_stream_class(0, 1)((ids, ids)).shuffle(64).batch(8)) == whole  # (the dataset seed decides)
    assert _orders(_stream_class(0, 1, seed=7)((ids, ids)).shuffle(64).batch(8)) != whole
    again = _orders(_stream_class(0, 1)((ids, ids)).shuffle(64, seed=3, reshuffle_each_iteration=False).batch(8))
    assert again[0] == again[1] == again[2] != whole[0]
    assert _orders(_stream_class(0, 1, seed=7)((ids, ids)).shuffle(64, 3, False).batch(8)) == again


def test_a_small_shuffle_buffer_keeps_tfs_window():
    ids = np.arange(200)
    order = _orders(_stream_class(0, 1)((ids, ids)).shuffle(10).batch(200), 1)[0]
    assert sorted(order) == list(range(200)) and order != list(range(200))
    # TF's buffer: the k-th row out is one of the first k + 10 rows in
    assert all(row < k + 10 for k, row in enumerate(order))


def test_the_stream_of_one_statement_and_a_with_options():
    out, findings = convert(DISTRIBUTED.replace(".batch(8).prefetch(tf.data.AUTOTUNE)",
                                                ".shuffle(36, seed=1).batch(8).with_options(tf.data.Options())"))
    assert ('dist_ds = ds.GeneratorDataset(ArrayStream((x, labels)).shuffle(36, seed=1).batch(8).split(), '
            '["x", "labels"], shuffle=False)') in out
    assert [n.status for n in notes(findings)] == ["converted"]


ONE_ARRAY = textwrap.dedent('''\
    import json

    import numpy as np
    import tensorflow as tf

    train_images = np.arange(84, dtype=np.float32).reshape(21, 2, 2)
    test_images = train_images[:9] * 2.0
    train_dataset = tf.data.Dataset.from_tensor_slices(train_images).batch(4)
    test_dataset = tf.data.Dataset.from_tensor_slices(test_images).repeat().batch(2)
    sums = []
    for epoch in range(2):
        for image_batch in train_dataset:
            sums.append([float(tf.reduce_sum(image_batch)), float(image_batch.shape[0])])
    for i, batch in enumerate(test_dataset.take(7)):
        sums.append([float(i), float(tf.reduce_sum(batch))])
    print(json.dumps({"sums": [x for pair in sums for x in pair]}))
    ''')


def test_a_pipeline_of_one_array_is_a_dataset_of_one_column_each_loop_unpacks():
    """TF's generative tutorials (DCGAN, CVAE) batch one array of images: TF yields each batch,
    MindSpore a list of its one column, so each loop names it `(batch,)`."""
    out, findings = convert(ONE_ARRAY)
    assert 'train_dataset = ds.GeneratorDataset(ArrayStream((train_images,)).batch(4), ["train_images"], shuffle=False)' in out
    assert 'test_dataset = ds.GeneratorDataset(ArrayStream((test_images,)).repeat().batch(2).take(7), ["test_images"], ' in out
    assert "    for (image_batch,) in train_dataset:\n" in out
    assert "for i, (batch,) in enumerate(test_dataset):\n" in out
    assert "tfdata" not in out
    assert [n.status for n in notes(findings)] == ["converted", "converted"]
    again, _ = convert(out)
    assert again == out


def test_a_pipeline_of_one_array_gives_tfs_batches(tmp_path):
    pytest.importorskip("mindspore")
    pytest.importorskip("tensorflow")
    out, _ = convert(ONE_ARRAY)
    assert python_json(out, script=tmp_path / "one.py") == python_json(ONE_ARRAY)


def test_a_loop_unpacking_a_batch_of_one_array_keeps_the_shim():
    # (TF unpacks the batch's rows there: `a, b = batch`)
    program = textwrap.dedent('''\
        import numpy as np
        import tensorflow as tf

        images = np.zeros((8, 3), np.float32)
        pairs = tf.data.Dataset.from_tensor_slices(images).batch(2)
        for a, b in pairs:
            print(a.shape)
        ''')
    _keeps_the_shim(program, "batch(2)", "batch(2)", "a loop's element is not named")


@pytest.mark.parametrize("binding", ["train, test = tf.keras.datasets.mnist.load_data()", "train = load()"])
def test_a_name_that_may_hold_a_tuple_of_arrays_keeps_the_shim(binding):
    """TF yields tuples from a tuple of arrays given by one name (`load_data()`'s parts)."""
    program = textwrap.dedent('''\
        import numpy as np
        import tensorflow as tf


        def load():
            return np.zeros((8, 3), np.float32), np.zeros(8)


        BINDING
        dataset = tf.data.Dataset.from_tensor_slices(train).batch(2)
        for batch in dataset:
            images, labels = batch
        ''').replace("BINDING", binding)
    _keeps_the_shim(program, "batch(2)", "batch(2)", "`train` is not known to be one array")
