"""`mk.utils.get_file` puts files where Keras's `get_file` does, with Keras's cache and hash rules,
and downloads once when processes ask for the same file together (a real HTTP server on localhost;
Keras's own function is run beside it into another cache)."""

from __future__ import annotations

import hashlib
import http.server
import io
import subprocess
import sys
import tarfile
import threading
import zipfile
from pathlib import Path

import pytest

keras = pytest.importorskip("keras")

from migrate.runtime import keras as mk  # noqa: E402


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):  # noqa: N802
        self.server.requests.append(self.path)
        if self.server.delay:
            threading.Event().wait(self.server.delay)
        super().do_GET()


@pytest.fixture()
def server(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    (root / "data.csv").write_bytes(b"a,b\n1,2\n")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in (("photos/a.txt", b"A"), ("photos/sub/b.txt", b"BB")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (root / "photos.tgz").write_bytes(buffer.getvalue())
    with zipfile.ZipFile(root / "words.zip", "w") as archive:
        archive.writestr("words/list.txt", "one\ntwo\n")
    handler = lambda *a, **k: _Handler(*a, directory=str(root), **k)  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.requests, httpd.delay = [], 0
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.root = root
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def tree(path: Path) -> dict:
    """Every file under path (relative name → bytes), lock files aside."""
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file() and not p.name.endswith(".lock")}


CASES = [
    dict(fname="data.csv", origin="/data.csv"),
    dict(origin="/data.csv"),
    dict(fname="renamed.csv", origin="/data.csv", cache_subdir="tables"),
    dict(origin="/photos.tgz", extract=True),
    dict(fname="flowers", origin="/photos.tgz", untar=True),
    dict(fname="photos.tgz", origin="/photos.tgz", extract=True),
    dict(fname="words.zip", origin="/words.zip", extract=True),
    dict(origin="/words.zip", extract=True, archive_format="tar"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_paths_and_files_are_keras(server, tmp_path, case):
    case = dict(case, origin=server.url + case["origin"])
    (tmp_path / "keras").mkdir()
    (tmp_path / "ours").mkdir()
    theirs = keras.utils.get_file(**case, cache_dir=str(tmp_path / "keras"))
    with pytest.warns(UserWarning, match="Could not extract") if case.get("archive_format") == "tar" else \
            _nothing():
        ours = mk.utils.get_file(**case, cache_dir=str(tmp_path / "ours"))
    assert Path(ours).relative_to(tmp_path / "ours") == Path(theirs).relative_to(tmp_path / "keras")
    assert tree(tmp_path / "ours") == tree(tmp_path / "keras") != {}


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_cache_and_hashes(server, tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "home"))
    url = server.url + "/data.csv"
    sha = hashlib.sha256(b"a,b\n1,2\n").hexdigest()
    md5 = hashlib.md5(b"a,b\n1,2\n").hexdigest()
    path = mk.utils.get_file("data.csv", url, file_hash=sha)
    assert path == str(tmp_path / "home" / "datasets" / "data.csv") and len(server.requests) == 1
    assert mk.utils.get_file("data.csv", url, md5_hash=md5) == path and len(server.requests) == 1  # cached
    Path(path).write_bytes(b"stale")
    assert mk.utils.get_file("data.csv", url, file_hash=sha) == path and len(server.requests) == 2  # re-fetched
    assert Path(path).read_bytes() == b"a,b\n1,2\n"
    mk.utils.get_file("data.csv", url, force_download=True)
    assert len(server.requests) == 3
    with pytest.raises(ValueError, match="Incomplete or corrupted file detected. The md5"):
        mk.utils.get_file("other.csv", url, md5_hash="0" * 32)
    with pytest.raises(Exception, match="URL fetch failure on .*/absent.csv: 404"):
        mk.utils.get_file("absent.csv", server.url + "/absent.csv")
    assert not (tmp_path / "home" / "datasets" / "absent.csv").exists()
    with pytest.raises(ValueError, match="Paths are no longer accepted"):
        mk.utils.get_file("a/b.csv", url)
    with pytest.raises(ValueError, match='specify the "origin"'):
        mk.utils.get_file("x.csv")
    server.shutdown()  # a cached file needs no network
    assert mk.utils.get_file("data.csv", url) == path


def test_an_archive_cannot_write_outside_its_directory(server, tmp_path):
    buffer = io.BytesIO()
    (tmp_path / "cache").mkdir()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in ("ok.txt", "../escaped.txt"):
            info = tarfile.TarInfo(name)
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
    (server.root / "evil.tar").write_bytes(buffer.getvalue())
    with pytest.warns(UserWarning, match="Skipping invalid path"):
        out = mk.utils.get_file("evil", server.url + "/evil.tar", extract=True, cache_dir=str(tmp_path / "cache"))
    assert (Path(out) / "ok.txt").exists() and not (Path(out).parent / "escaped.txt").exists()


CONCURRENT = """
import sys
from migrate.runtime import keras as mk
print(mk.utils.get_file("data.csv", sys.argv[1], cache_dir=sys.argv[2]))
"""


def test_processes_asking_together_download_once(server, tmp_path):
    server.delay = 1.0  # the first download is still running when the others ask
    jobs = [subprocess.Popen([sys.executable, "-c", CONCURRENT, server.url + "/data.csv", str(tmp_path)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [job.communicate(timeout=120) for job in jobs]
    assert [job.returncode for job in jobs] == [0, 0, 0], [err for _, err in outs]
    assert {out.strip().splitlines()[-1] for out, _ in outs} == {str(tmp_path / "datasets" / "data.csv")}
    assert server.requests == ["/data.csv"]
    assert sum("Downloading data from" in out for out, _ in outs) == 1
    assert (tmp_path / "datasets" / "data.csv").read_bytes() == b"a,b\n1,2\n"
