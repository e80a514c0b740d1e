"""`tfsummary` writes the event records TF writes; TensorBoard's own reader reads them back."""

import glob

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
pytest.importorskip("tensorboardX")
event_file_loader = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader")

from migrate.runtime import tfsummary  # noqa: E402

RNG = np.random.default_rng(0)
IMAGES = RNG.random((3, 4, 5, 3)).astype(np.float32)
GRAY = (RNG.random((2, 3, 2, 1)) * 255).astype(np.uint8)
WEIGHTS = RNG.normal(size=(7, 5)).astype(np.float32)


def write(summary, logdir):
    """The same summaries through `summary` (tf.summary or tfsummary)."""
    writer = summary.create_file_writer(str(logdir))
    with writer.as_default(step=3):
        summary.scalar("loss", 0.5)
        summary.scalar("loss", np.float64(0.25), step=4, description="the training loss")
        summary.histogram("w", WEIGHTS, step=1)
        summary.histogram("few", [1.0, 2.0, 2.5, 10.0], step=1, buckets=4)
        summary.histogram("same", [2.0, 2.0], step=1)
        summary.histogram("empty", np.zeros(0), step=1)
        summary.image("img", IMAGES, step=1, max_outputs=2)
        summary.image("gray", GRAY, step=2)
        summary.text("note", "hello **world**", step=2)
        summary.text("table", [["a", "b"], ["c", "d"]], step=2)
        with summary.record_if(False):
            assert not summary.scalar("hidden", 1.0)
        with summary.record_if(lambda: True):
            summary.scalar("shown", 1.0)
    writer.close()


def events(logdir):
    (path,) = glob.glob(f"{logdir}/events.out.tfevents.*")
    out = []
    for event in event_file_loader.EventFileLoader(path).Load():
        for value in event.summary.value:
            tensor = value.tensor
            shape = tuple(d.size for d in tensor.tensor_shape.dim)
            out.append({"step": event.step, "tag": value.tag, "metadata": value.metadata.SerializeToString(),
                        "dtype": tensor.dtype, "shape": shape, "content": tensor.tensor_content,
                        "strings": list(tensor.string_val)})
    return path, out


def test_every_record_is_tfs(tmp_path):
    write(tf.summary, tmp_path / "tf")
    write(tfsummary, tmp_path / "ms")
    tf_path, theirs = events(tmp_path / "tf")
    ms_path, ours = events(tmp_path / "ms")
    assert ms_path.endswith(".v2") and len(ours) == len(theirs) == 11
    for a, b in zip(ours, theirs):
        assert {k: a[k] for k in ("step", "tag", "metadata", "dtype", "shape", "content")} == \
               {k: b[k] for k in ("step", "tag", "metadata", "dtype", "shape", "content")}, a["tag"]
        if a["tag"] in ("img", "gray"):  # width, height, then PNGs: PNG bytes may differ, pixels may not
            assert a["strings"][:2] == b["strings"][:2]
            for png_a, png_b in zip(a["strings"][2:], b["strings"][2:], strict=True):
                np.testing.assert_array_equal(tf.io.decode_png(png_a).numpy(), tf.io.decode_png(png_b).numpy())
        else:
            assert a["strings"] == b["strings"]


def test_without_a_writer_nothing_is_written_and_without_a_step_it_fails(tmp_path):
    assert tfsummary.scalar("loss", 1.0, step=1) is False
    writer = tfsummary.create_file_writer(str(tmp_path))
    with writer.as_default():
        with pytest.raises(ValueError, match="No step set"):
            tfsummary.scalar("loss", 1.0)
        tfsummary.set_step(7)
        assert tfsummary.get_step() == 7 and tfsummary.scalar("loss", 1.0)
    tfsummary.set_step(None)
    writer.flush()
    assert [e["step"] for e in events(tmp_path)[1]] == [7]


def test_a_ms_tensor_is_a_value(tmp_path):
    ms = pytest.importorskip("mindspore")
    writer = tfsummary.create_file_writer(str(tmp_path))
    with writer.as_default(step=0):
        tfsummary.scalar("t", ms.Tensor(1.5, ms.float32))
    writer.close()
    assert np.frombuffer(events(tmp_path)[1][0]["content"], np.float32).tolist() == [1.5]
