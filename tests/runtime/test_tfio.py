"""TFRecord files, `tf.train.Example` parsing and image/raw decoding give tf.data's elements
(files written by real TF; every parsed element compared)."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
ms = pytest.importorskip("mindspore")

from migrate.runtime import tfdata, tfio  # noqa: E402

SPEC = {"image": ([2, 3], "float32"), "label": ([2], "int64"), "name": ([], "string"), "png": ([], "string"),
        "raw": ([], "string")}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    out = tmp_path_factory.mktemp("records")
    rng = np.random.default_rng(0)
    paths = []
    for k, options in enumerate([None, None, "GZIP", "ZLIB"]):
        path = str(out / f"part{k}.tfrecord")
        paths.append(path)
        with tf.io.TFRecordWriter(path, options=options) as writer:
            for i in range(5 + k):
                image = (rng.random((4, 3, 1 + (i % 3))) * 255).astype(np.uint8)
                writer.write(tf.train.Example(features=tf.train.Features(feature={
                    "image": tf.train.Feature(float_list=tf.train.FloatList(value=rng.random(6).astype(np.float32))),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i - 3, 2**40])),
                    "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"n{k}{i}é".encode()])),
                    "png": tf.train.Feature(bytes_list=tf.train.BytesList(value=[tf.io.encode_png(image).numpy()])),
                    "raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[np.arange(3, dtype=np.float32).tobytes()])),
                })).SerializeToString())
    return paths


def spec(module, dtypes):
    out = {key: module.FixedLenFeature(shape, dtypes[kind]) for key, (shape, kind) in SPEC.items()}
    out["missing"] = module.FixedLenFeature([2], dtypes["float32"], default_value=[1.0, 2.0])
    return out


TF_SPEC = spec(tf.io, {"float32": tf.float32, "int64": tf.int64, "string": tf.string})
OUR_SPEC = spec(tfio, {"float32": ms.float32, "int64": ms.int64, "string": tfio.string})


def tf_parse(record):
    p = tf.io.parse_single_example(record, TF_SPEC)
    return (p["image"], p["label"], p["name"], tf.io.decode_png(p["png"]), tf.io.decode_image(p["png"], channels=3),
            tf.io.decode_raw(p["raw"], tf.float32), p["missing"])


def our_parse(record):
    p = tfio.parse_single_example(record, OUR_SPEC)
    return (p["image"], p["label"], p["name"], tfio.decode_png(p["png"]), tfio.decode_image(p["png"], channels=3),
            tfio.decode_raw(p["raw"], ms.float32), p["missing"])


def assert_same(theirs, ours):
    theirs, ours = list(theirs.as_numpy_iterator()), list(ours.as_numpy_iterator())
    assert len(theirs) == len(ours) > 0
    for a, b in zip(theirs, ours):
        for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,), strict=True):
            assert np.asarray(x).dtype == np.asarray(y).dtype or np.asarray(x).dtype.kind in "OS"
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("cycle, block", [(1, 1), (2, 1), (2, 3), (3, 2), (4, 4)])
def test_interleaved_files_parse_to_tfdatas_elements(files, cycle, block):
    plain = files[:2]
    assert_same(
        tf.data.Dataset.from_tensor_slices(plain).interleave(tf.data.TFRecordDataset, cycle, block).map(tf_parse),
        tfdata.Dataset.from_tensor_slices(plain).interleave(tfdata.TFRecordDataset, cycle, block).map(our_parse))


@pytest.mark.parametrize("index, compression", [(2, "GZIP"), (3, "ZLIB")])
def test_compressed_files(files, index, compression):
    assert_same(tf.data.TFRecordDataset(files[index], compression_type=compression).map(tf_parse),
                tfdata.TFRecordDataset(files[index], compression_type=compression).map(our_parse))


def test_parallel_reads_interleave_records_and_a_batch_parses_at_once(files):
    assert_same(tf.data.TFRecordDataset(files[:2], num_parallel_reads=2),
                tfdata.TFRecordDataset(files[:2], num_parallel_reads=2))
    batch = list(tfdata.TFRecordDataset(files[0]).batch(4).as_numpy_iterator())[0]
    theirs = tf.io.parse_example(tf.constant(batch), TF_SPEC)
    ours = tfio.parse_example(batch, OUR_SPEC)
    for key in ("image", "label", "missing"):
        np.testing.assert_array_equal(theirs[key].numpy(), ours[key].asnumpy())


def test_text_lines(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_bytes(b"a,b\r\n1,2\n\nlast")
    assert_same(tf.data.TextLineDataset(str(path)), tfdata.TextLineDataset(str(path)))


def test_what_tf_refuses_is_refused(files):
    record = next(tfdata.TFRecordDataset(files[0]).as_numpy_iterator())
    with pytest.raises(ValueError, match="is required but could not be found"):
        tfio.parse_single_example(record, {"absent": tfio.FixedLenFeature([], ms.int64)})
    with pytest.raises(ValueError, match="expected 3 values, got 2"):
        tfio.parse_single_example(record, {"label": tfio.FixedLenFeature([3], ms.int64)})
    with pytest.raises(ValueError, match="Data types don't match"):
        tfio.parse_single_example(record, {"label": tfio.FixedLenFeature([2], ms.float32)})
    with pytest.raises(ValueError, match="not PNG"):
        tfio.decode_png(tf.io.encode_jpeg(np.zeros((2, 2, 3), np.uint8)).numpy())


# -- writing: tf.train.Example's messages and TFRecordWriter -------------------------------------------

def example(module, i):
    """The same Example built from TF's classes or tfio's."""
    return module.Example(features=module.Features(feature={
        "ids": module.Feature(int64_list=module.Int64List(value=list(range(-1, i)))),
        "score": module.Feature(float_list=module.FloatList(value=np.linspace(0, 1, i + 1) / 3)),
        "tags": module.Feature(bytes_list=module.BytesList(value=[f"t{j}é".encode() for j in range(i % 3)])),
        "empty": module.Feature(bytes_list=module.BytesList()),
        "unset": module.Feature(),
    }))


def test_example_messages_are_tfs_byte_for_byte():
    for i in range(4):
        ours, theirs = example(tfio, i), example(tf.train, i)
        assert ours.SerializeToString() == theirs.SerializeToString()
        assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(deterministic=True)
        assert str(ours) == str(theirs)
        assert tfio.Example.FromString(theirs.SerializeToString()) == ours
        parsed = tfio.Example()
        parsed.ParseFromString(theirs.SerializeToString())
        assert parsed.features.feature["ids"].int64_list.value == list(range(-1, i))
        assert parsed.features.feature["tags"].WhichOneof("kind") == "bytes_list"
        assert parsed.features.feature["unset"].WhichOneof("kind") is None
    context = {"n": tf.train.Feature(int64_list=tf.train.Int64List(value=[3]))}
    steps = [tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.5]))] * 2
    theirs = tf.train.SequenceExample(context=tf.train.Features(feature=context), feature_lists=tf.train.FeatureLists(
        feature_list={"steps": tf.train.FeatureList(feature=steps)}))
    ours = tfio.SequenceExample.FromString(theirs.SerializeToString())
    assert ours.SerializeToString() == theirs.SerializeToString() and str(ours) == str(theirs)


def test_example_fields_refuse_what_tfs_refuse():
    # (The text is the protobuf implementation's: upb's, or the Python one once MindSpore is imported.)
    for make in (lambda m: m.BytesList(value=["text"]), lambda m: m.Int64List(value=[1.5])):
        messages = []
        for module in (tf.train, tfio):
            with pytest.raises(TypeError) as error:
                make(module)
            messages.append(str(error.value))
        assert messages[0] == messages[1]


@pytest.mark.parametrize("options", [None, "", "GZIP", "ZLIB", "tfrecordoptions"])
def test_written_records_read_back_by_tf(tmp_path, options):
    path = tmp_path / "out.tfrecord"
    ours_options = tfio.TFRecordOptions(compression_type="GZIP", compression_level=9) \
        if options == "tfrecordoptions" else options
    tf_options = "GZIP" if options == "tfrecordoptions" else options
    records = [example(tfio, i).SerializeToString() for i in range(6)] + [b"", "plain text"]
    with tfio.TFRecordWriter(str(path), options=ours_options) as writer:
        for record in records:
            writer.write(record)
        assert not path.exists()  # moved into place whole, at close
    assert [r.numpy() for r in tf.data.TFRecordDataset(str(path), compression_type=tf_options)] == [
        r if isinstance(r, bytes) else r.encode() for r in records]
    if not options:
        with tf.io.TFRecordWriter(str(tmp_path / "tf.tfrecord")) as writer:
            for record in records:
                writer.write(record)
        assert path.read_bytes() == (tmp_path / "tf.tfrecord").read_bytes()
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def test_writer_errors_and_close(tmp_path):
    with pytest.raises(FileNotFoundError):
        tfio.TFRecordWriter(str(tmp_path / "absent" / "x.tfrecord"))
    with pytest.raises(ValueError, match="compression_type"):
        tfio.TFRecordWriter(str(tmp_path / "x.tfrecord"), options="LZ4")
    writer = tfio.TFRecordWriter(tmp_path / "x.tfrecord")
    writer.write(b"a")
    writer.flush()
    writer.close()
    writer.close()
    with pytest.raises(ValueError, match="closed"):
        writer.write(b"b")
    assert [r.numpy() for r in tf.data.TFRecordDataset(str(tmp_path / "x.tfrecord"))] == [b"a"]


# -- VarLenFeature, RaggedFeature and sparse_to_dense --------------------------------------------------

def _var_len_spec(module, dtypes):
    return {"ids": module.VarLenFeature(dtypes["int64"]), "score": module.VarLenFeature(dtypes["float32"]),
            "tags": module.VarLenFeature(dtypes["string"]), "absent": module.VarLenFeature(dtypes["float32"])}


VAR_TF = _var_len_spec(tf.io, {"float32": tf.float32, "int64": tf.int64, "string": tf.string})
VAR_OURS = _var_len_spec(tfio, {"float32": ms.float32, "int64": ms.int64, "string": tfio.string})


def assert_same_sparse(theirs, ours):
    for part in ("indices", "values", "dense_shape"):
        a, b = getattr(theirs, part).numpy(), getattr(ours, part)
        b = b.asnumpy() if hasattr(b, "asnumpy") else np.asarray(b)
        assert a.shape == b.shape and (a.dtype == b.dtype or a.dtype.kind in "OS"), part
        np.testing.assert_array_equal(a, b)


def test_var_len_features_parse_to_tfs_sparse_tensors():
    records = [example(tf.train, i).SerializeToString() for i in range(4)]
    for record in records:
        theirs, ours = tf.io.parse_single_example(record, VAR_TF), tfio.parse_single_example(record, VAR_OURS)
        for key in VAR_TF:
            assert_same_sparse(theirs[key], ours[key])
            default = b"?" if key == "tags" else 7
            np.testing.assert_array_equal(tf.sparse.to_dense(theirs[key], default_value=default).numpy(),
                                          np.asarray(_np(tfio.sparse_to_dense(ours[key], default_value=default))))
    theirs, ours = tf.io.parse_example(records, VAR_TF), tfio.parse_example(records, VAR_OURS)
    for key in VAR_TF:
        assert_same_sparse(theirs[key], ours[key])
        np.testing.assert_array_equal(tf.sparse.to_dense(theirs[key]).numpy(),
                                      np.asarray(_np(tfio.sparse_to_dense(ours[key]))))
    assert ours["ids"].shape == tuple(theirs["ids"].dense_shape.numpy())


def _np(value):
    return value.asnumpy() if hasattr(value, "asnumpy") else value


def test_var_len_features_in_a_pipeline(tmp_path):
    path = str(tmp_path / "v.tfrecord")
    with tfio.TFRecordWriter(path) as writer:
        for i in range(5):
            writer.write(example(tfio, i).SerializeToString())

    def parse(module, spec):
        def fn(record):
            p = module.parse_single_example(record, spec)
            dense = module.sparse_to_dense if module is tfio else tf.sparse.to_dense
            return dense(p["ids"]), p["score"].values
        return fn

    assert_same(tf.data.TFRecordDataset(path).map(parse(tf.io, VAR_TF)),
                tfdata.TFRecordDataset(path).map(parse(tfio, VAR_OURS)))


def test_ragged_features_of_one_example():
    spec_tf = {"ids": tf.io.RaggedFeature(tf.int64), "x": tf.io.RaggedFeature(tf.float32, value_key="score"),
               "none": tf.io.RaggedFeature(tf.string)}
    spec_ours = {"ids": tfio.RaggedFeature(ms.int64), "x": tfio.RaggedFeature(ms.float32, value_key="score"),
                 "none": tfio.RaggedFeature(tfio.string)}
    for i in range(3):
        record = example(tf.train, i).SerializeToString()
        theirs, ours = tf.io.parse_single_example(record, spec_tf), tfio.parse_single_example(record, spec_ours)
        for key in spec_tf:
            a, b = theirs[key].numpy(), np.asarray(_np(ours[key]))
            assert a.shape == b.shape
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="RaggedTensor for a batch"):
        tfio.parse_example([record], spec_ours)
    with pytest.raises(ValueError, match="partitions"):
        tfio.RaggedFeature(ms.int64, partitions=[("row_lengths", "n")])


def test_var_len_type_mismatch_is_tfs_error():
    record = example(tf.train, 2).SerializeToString()
    with pytest.raises(tf.errors.InvalidArgumentError, match="Data types don't match"):
        tf.io.parse_single_example(record, {"ids": tf.io.VarLenFeature(tf.float32)})
    with pytest.raises(ValueError, match="Data types don't match"):
        tfio.parse_single_example(record, {"ids": tfio.VarLenFeature(ms.float32)})


def test_a_batch_of_parsed_var_len_features_is_tfs_batched_sparse_tensor():
    records = [example(tf.train, i).SerializeToString() for i in range(5)]

    def parse(module, spec):
        return lambda record: module.parse_single_example(record, spec)["ids"]

    theirs = list(tf.data.Dataset.from_tensor_slices(records).map(parse(tf.io, VAR_TF)).batch(2))
    ours = list(tfdata.Dataset.from_tensor_slices(np.array(records, dtype=object)).map(parse(tfio, VAR_OURS)).batch(2))
    assert len(theirs) == len(ours) == 3
    for a, b in zip(theirs, ours):
        assert_same_sparse(a, b)
        np.testing.assert_array_equal(tf.sparse.to_dense(a).numpy(), tfio.sparse_to_dense(b).asnumpy())


@pytest.mark.parametrize("channels, desired_channels, desired_samples",
                         [(1, -1, -1), (2, -1, -1), (1, 2, -1), (2, 1, 7), (2, -1, 30)])
def test_decode_wav_is_tfs(channels, desired_channels, desired_samples):
    rng = np.random.default_rng(channels)
    audio = rng.uniform(-1, 1, size=(20, channels)).astype(np.float32)
    contents = tf.audio.encode_wav(audio, 16000).numpy()
    want_audio, want_rate = tf.audio.decode_wav(contents, desired_channels=desired_channels,
                                                desired_samples=desired_samples)
    got_audio, got_rate = tfio.decode_wav(contents, desired_channels=desired_channels,
                                          desired_samples=desired_samples)
    assert got_audio.dtype == ms.float32 and int(got_rate.asnumpy()) == int(want_rate.numpy()) == 16000
    np.testing.assert_array_equal(got_audio.asnumpy(), want_audio.numpy())
