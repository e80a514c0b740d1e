"""``tfcheckpoint`` reads the checkpoints TF writes as TF's own reader does, without TensorFlow:
every key, shape, dtype and value of a checkpoint TF saved (numbers of every width, bools,
strings, bfloat16, a Keras model and optimizer, enough variables for several index blocks),
and the checkpoints ``migrate.runtime`` writes, under TF's key names."""

from __future__ import annotations

import base64
import json
import pickle

import numpy as np
import pytest

from tests.helpers import python_json

pytest.importorskip("mindspore")

WRITE = r'''
import json, sys
import numpy as np
import tensorflow as tf
rng = np.random.default_rng(3)
values = {
    "f32": rng.normal(size=(4, 3)).astype(np.float32), "f64": rng.normal(size=(5,)),
    "f16": rng.normal(size=(2, 2)).astype(np.float16), "i8": np.array([-3, 4], np.int8),
    "u8": np.array([[1, 255]], np.uint8), "i16": np.array([-300], np.int16), "u16": np.array([60000], np.uint16),
    "i32": np.array(7, np.int32), "i64": np.arange(6, dtype=np.int64).reshape(3, 2),
    "c64": np.array([1 + 2j], np.complex64), "c128": np.array([3 - 1j, 0.5j]), "flag": np.array([True, False]),
    "empty": np.zeros((0, 3), np.float32), "big": rng.normal(size=(64, 32)).astype(np.float32),
}
tracked = {k: tf.Variable(v) for k, v in values.items()}
tracked["bf16"] = tf.Variable(tf.constant([1.5, -2.25, 3.0e5], tf.bfloat16))
tracked["text"] = tf.Variable(["", "a", "cd" * 200])
for i in range(1200):  # (long names: enough entries for several 256 KiB blocks of the index)
    tracked[f"many_{i:04d}_" + "n" * 240] = tf.Variable(float(i))
model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
optimizer = tf.keras.optimizers.Adam()
optimizer.apply_gradients(zip([tf.ones_like(v) for v in model.trainable_variables], model.trainable_variables))
path = tf.train.Checkpoint(model=model, optimizer=optimizer, **tracked).save(sys.argv[1] + "/ck")
reader = tf.train.load_checkpoint(sys.argv[1])
out = {"path": path, "listed": [[n, s] for n, s in tf.train.list_variables(sys.argv[1])], "values": {}}
for name, dtype in reader.get_variable_to_dtype_map().items():
    value = reader.get_tensor(name)
    if dtype == tf.bfloat16:
        value = np.asarray(value, np.float32)
    out["values"][name] = [dtype.name, base64.b64encode(pickle.dumps(np.asarray(value))).decode(), type(value).__name__]
out["one"] = float(tf.train.load_variable(sys.argv[1], "many_0007_" + "n" * 240 + "/.ATTRIBUTES/VARIABLE_VALUE"))
out["index_bytes"] = __import__("os").path.getsize(path + ".index")
out["debug"] = reader.debug_string().decode()
print(json.dumps(out))
'''.replace("import json, sys", "import base64, json, pickle, sys")

READ = r'''
import base64, json, pickle, sys
import numpy as np
from migrate.runtime import tfcheckpoint
reader = tfcheckpoint.load_checkpoint(sys.argv[1])
out = {"listed": [[n, s] for n, s in tfcheckpoint.list_variables(sys.argv[1])], "values": {}}
for name, dtype in reader.get_variable_to_dtype_map().items():
    value = reader.get_tensor(name)
    out["values"][name] = [str(dtype), base64.b64encode(pickle.dumps(np.asarray(value))).decode(), type(value).__name__]
name = "many_0007_" + "n" * 240 + "/.ATTRIBUTES/VARIABLE_VALUE"
out["one"] = float(tfcheckpoint.load_variable(sys.argv[1], name))
out["one_suffixed"] = float(tfcheckpoint.load_variable(sys.argv[1], name + ":0"))
out["debug"] = reader.debug_string().decode()
print(json.dumps(out))
'''

MS_NAMES = {"float32": "Float32", "float64": "Float64", "float16": "Float16", "bfloat16": "BFloat16",
            "int8": "Int8", "uint8": "UInt8", "int16": "Int16", "uint16": "UInt16", "int32": "Int32",
            "int64": "Int64", "complex64": "Complex64", "complex128": "Complex128", "bool": "Bool",
            "string": "String"}


def _array(encoded: str) -> np.ndarray:
    return pickle.loads(base64.b64decode(encoded))


def test_a_checkpoint_tf_wrote_reads_as_tfs_reader_reads_it(tmp_path):
    pytest.importorskip("tensorflow")
    tf_side = python_json(WRITE, str(tmp_path))
    ours = python_json(READ, str(tmp_path))
    assert ours["listed"] == tf_side["listed"] and len(tf_side["listed"]) > 1200
    assert tf_side["index_bytes"] > 262144  # (TF's index blocks are 256 KiB: more than one)
    assert ours["values"].keys() == tf_side["values"].keys()
    for name, (dtype, encoded, kind) in tf_side["values"].items():
        got_dtype, got, got_kind = ours["values"][name]
        want = _array(encoded)
        assert got_dtype == MS_NAMES[dtype] and got_kind == kind, (name, got_dtype, got_kind, kind)
        got = _array(got)
        assert got.shape == want.shape and got.dtype == want.dtype, (name, got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want, err_msg=name)
    assert ours["one"] == ours["one_suffixed"] == tf_side["one"] == 7.0
    assert ours["debug"] == tf_side["debug"]


def test_the_runtimes_own_checkpoint_answers_to_tfs_key_names(tmp_path):
    code = ("import json, sys\nimport numpy as np\nimport mindspore as ms\n"
            "from migrate.runtime import tfcheckpoint, tfvariable\nfrom migrate.runtime.keras import train\n"
            "step = tfvariable.Variable(np.int64(41))\nck = train.Checkpoint(step=step)\n"
            "manager = train.CheckpointManager(ck, sys.argv[1], max_to_keep=2)\nmanager.save()\n"
            "step.assign_add(1)\npath = manager.save()\n"
            "value = tfcheckpoint.load_variable(manager.latest_checkpoint, 'step/.ATTRIBUTES/VARIABLE_VALUE')\n"
            "names = [n for n, _ in tfcheckpoint.list_variables(sys.argv[1])]\n"
            "print(json.dumps({'value': int(value), 'names': names, "
            "'counter': int(tfcheckpoint.load_variable(sys.argv[1], 'save_counter/.ATTRIBUTES/VARIABLE_VALUE'))}))\n")
    got = python_json(code, str(tmp_path))
    assert got["value"] == 42 and got["counter"] == 2
    assert "step/.ATTRIBUTES/VARIABLE_VALUE" in got["names"]


def test_clear_errors_for_what_is_not_there(tmp_path):
    from migrate.runtime import tfcheckpoint

    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tfcheckpoint.load_checkpoint(tmp_path)
    with pytest.raises(tfcheckpoint.NotFoundError, match="Failed to find any matching files"):
        tfcheckpoint.load_checkpoint(tmp_path / "nothing")
    (tmp_path / "bad.index").write_bytes(b"not a table")
    with pytest.raises(ValueError, match="not a TF checkpoint index"):
        tfcheckpoint.load_checkpoint(tmp_path / "bad")


SLICED = r'''
import json, sys
import numpy as np
if sys.argv[1] == "tf":
    import tensorflow as tf
    variables = {f"v{i:03d}": tf.Variable(np.full((40,), i, np.float32)) for i in range(60)}
    policy = tf.train.experimental.MaxShardSizePolicy(max_shard_size=500)
    tf.train.Checkpoint(**variables).save(sys.argv[2] + "/ck", options=tf.train.CheckpointOptions(
        experimental_sharding_callback=policy))
    print(json.dumps(sorted(n for n, _ in tf.train.list_variables(sys.argv[2]))))
else:
    from migrate.runtime import tfcheckpoint
    reader = tfcheckpoint.load_checkpoint(sys.argv[2])
    names = sorted(n for n, _ in tfcheckpoint.list_variables(sys.argv[2]))
    refused = []
    for name in names:
        try:
            reader.get_tensor(name)
        except NotImplementedError as error:
            refused.append(str(error))
    try:
        reader.get_tensor("nope")
    except tfcheckpoint.NotFoundError as error:
        missing = str(error)
    print(json.dumps({"names": names, "refused": refused, "missing": missing}))
'''


def test_a_checkpoint_with_sliced_variables_lists_them_and_refuses_to_read_a_slice(tmp_path):
    """TF's sharding policy splits big variables across data files (a partitioned variable):
    the checkpoint opens and lists as in TF; reading a sliced one says why it is not read."""
    pytest.importorskip("tensorflow")
    names = python_json(SLICED, "tf", str(tmp_path))
    ours = python_json(SLICED, "ms", str(tmp_path))
    assert ours["names"] == names
    assert ours["refused"] and all("partitioned variable" in e for e in ours["refused"])
    assert ours["missing"] == "Key nope not found in checkpoint"


def test_snappy_blocks_decompress():
    from migrate.runtime.tfcheckpoint import _unsnappy

    # 12 bytes: the literal "abc", then a copy of 9 bytes from 3 back (it overlaps what it makes)
    assert _unsnappy(bytes([12, 0x08]) + b"abc" + bytes([0x15, 0x03])) == b"abcabcabcabc"
    with pytest.raises(ValueError, match="corrupt snappy"):
        _unsnappy(bytes([13, 0x08]) + b"abc" + bytes([0x15, 0x03]))


def test_checkpoints_iterator_yields_each_new_checkpoint_and_ends_on_timeout(tmp_path):
    code = ("import json, sys, threading, time\nimport numpy as np\n"
            "from migrate.runtime import tfcheckpoint, tfvariable\nfrom migrate.runtime.keras import train\n"
            "step = tfvariable.Variable(np.int64(0))\nmanager = train.CheckpointManager(train.Checkpoint(step=step), "
            "sys.argv[1], max_to_keep=5)\n"
            "def trainer():\n    for _ in range(2):\n        time.sleep(0.3)\n        step.assign_add(1)\n"
            "        manager.save()\n"
            "threading.Thread(target=trainer).start()\nseen = []\n"
            "for path in tfcheckpoint.checkpoints_iterator(sys.argv[1], timeout=2.5):\n"
            "    seen.append(int(tfcheckpoint.load_variable(path, 'step/.ATTRIBUTES/VARIABLE_VALUE')))\n"
            "print(json.dumps(seen))\n")
    seen = python_json(code, str(tmp_path))
    assert seen and seen[-1] == 2 and seen == sorted(set(seen))
