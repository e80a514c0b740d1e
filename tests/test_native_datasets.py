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
from tests.helpers import convert

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
    (".batch(8).prefetch", ".shuffle(64).batch(8).prefetch", "`.shuffle(...)` has no native lowering yet"),
    (".batch(8).prefetch", ".batch(8).map(lambda a, b: (a, b)).prefetch", "`.map(...)` has no native lowering yet"),
    (".batch(8).prefetch(tf.data.AUTOTUNE)", ".prefetch(2)", "the pipeline is not batched"),
    (".batch(8)", ".batch(8, num_parallel_calls=2)", "`batch` is given arguments the native source does not take"),
    ("from_tensor_slices((x, labels))", "from_tensor_slices(x)", "not given a tuple of two or more names"),
    ("from_tensor_slices((x, labels))", "from_tensor_slices({'x': x, 'y': labels})", "not given a tuple of two or more names"),
    ("labels = np.zeros(36, np.int64)", "labels = [0.5] * 36", "`labels` is bound to a Python sequence"),
    ("for batch in dist_ds:", "for batch in iter(dist_ds):", "read other than as a `for` loop's iterable"),
    ("strategy.run(train_step, args=(batch,))", "print(type(batch))", "used other than by unpacking it"),
    ("features, targets = inputs", "features = inputs", "used other than by unpacking it"),
    ("for batch in dist_ds:\n", "dist_ds = None\nfor batch in dist_ds:\n", "bound more than once"),
    ("labels = np.zeros(36, np.int64)", "labels = {'y': np.zeros(36)}", "`labels` is bound to a dict"),
    ("    strategy.run(train_step, args=(batch,))\n", "    strategy.run(train_step, args=(batch,))\nprint(batch)\n",
     "read after the loop"),
])
def test_pipelines_it_cannot_prove_keep_the_shim(old, new, why):
    assert old in DISTRIBUTED
    out, findings = convert(DISTRIBUTED.replace(old, new, 1))
    assert "ds.GeneratorDataset" not in out and "class ArrayBatches" not in out
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

TF_SPLITS = textwrap.dedent('''\
    import json, sys
    import numpy as np
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    out = []
    for rows, batch, drop, shards, index in json.loads(sys.argv[1]):
        ids = np.arange(rows, dtype=np.int64)
        dataset = tf.data.Dataset.from_tensor_slices((ids, ids * 10))
        if shards > 1:
            dataset = dataset.shard(shards, index)
        dataset = dataset.batch(batch, drop_remainder=drop)
        plain = [[a.numpy().tolist(), b.numpy().tolist()] for a, b in dataset]
        split = [[[a.numpy().tolist(), b.numpy().tolist()] for a, b in zip(strategy.experimental_local_results(x),
                                                                        strategy.experimental_local_results(y))]
                 for x, y in strategy.experimental_distribute_dataset(dataset)]
        out.append({"plain": plain, "split": split})
    print(json.dumps(out))
    ''')


def _source_class(rank: int, processes: int):
    [rule] = [r for r in load_rules() if r.id == "TFL170"]
    namespace = {"np": np, "get_group_size": lambda: processes, "get_rank": lambda: rank}
    exec(rule.params["source"].format(name="ArrayBatches"), namespace)  # noqa: S102 - the rule's own text
    return namespace["ArrayBatches"]


def _batches(source) -> list:
    return [[part.tolist() for part in source[i]] for i in range(len(source))]


def test_the_source_gives_tfs_batches_and_each_processs_part_of_them():
    pytest.importorskip("tensorflow")
    proc = subprocess.run([sys.executable, "-c", TF_SPLITS, json.dumps(CASES)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = json.loads(proc.stdout.strip().splitlines()[-1])
    for (rows, batch, drop, shards, index), tf_out in zip(CASES, expected):
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
    [rule] = [r for r in load_rules() if r.id == "TFL170"]
    return rule.params["source"].format(name="ArrayBatches")


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
