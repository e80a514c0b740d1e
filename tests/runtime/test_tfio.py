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
