"""`tfgfile` does on local files what `tf.io.gfile` does (checked against real TF)."""

import os

import pytest

tf = pytest.importorskip("tensorflow")

from migrate.runtime import tfgfile  # noqa: E402


def test_stat_is_tfs(tmp_path):
    (tmp_path / "f").write_bytes(b"abcdef")
    for path in (tmp_path / "f", tmp_path):
        ours, theirs = tfgfile.stat(str(path)), tf.io.gfile.stat(str(path))
        assert (ours.length, ours.mtime_nsec, ours.is_directory) == (theirs.length, theirs.mtime_nsec, theirs.is_directory)
    with pytest.raises(FileNotFoundError):
        tfgfile.stat(str(tmp_path / "missing"))
    with pytest.raises(tf.errors.NotFoundError):
        tf.io.gfile.stat(str(tmp_path / "missing"))


@pytest.mark.parametrize("operation", ["copy", "rename"])
def test_copy_and_rename_refuse_to_replace_unless_told(tmp_path, operation):
    results = {}
    for who, module, refused in (("tf", tf.io.gfile, tf.errors.AlreadyExistsError), ("ours", tfgfile, FileExistsError)):
        root = tmp_path / who
        root.mkdir()
        (root / "src").write_bytes(b"new")
        (root / "dst").write_bytes(b"old")
        with pytest.raises(refused):
            getattr(module, operation)(str(root / "src"), str(root / "dst"))
        kept = (root / "dst").read_bytes()
        getattr(module, operation)(str(root / "src"), str(root / "dst"), overwrite=True)
        getattr(module, operation)(str(root / "dst"), str(root / "fresh"))
        results[who] = (kept, sorted(os.listdir(root)), (root / "fresh").read_bytes())
    assert results["ours"] == results["tf"]
