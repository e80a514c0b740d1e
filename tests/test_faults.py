"""Faults: nothing is ever lost.

Awkward inputs (a 10 MB file, extreme nesting), files deleted or edited while a run
is going, files and directories that may not be written, a filesystem that fills
up, Ctrl-C in the middle of a large run, a worker process that crashes, and two runs
over one tree at once. In every case each file ends up as either its original bytes
or its complete converted text (checked against a map computed beforehand), no
temporary file is left behind, and the exit code and message say what happened.

Some of these need root and ``mount`` (a tmpfs that fills up, a read-only bind
mount, ``chattr +i``); they are skipped elsewhere, and the full-disk case then
injects ENOSPC into the write path instead. As root, permission bits do not stop
writes: the runner refuses files without write bits itself, and a directory
without write bits (chmod 555) does not stop root at all — only a read-only mount or
an immutable directory does, which is what these tests use.
"""

from __future__ import annotations

import errno
import multiprocessing
import os
import shutil
import signal
import subprocess
import threading
import sys
import time
from pathlib import Path

import pytest

from migrate import cli
from migrate.engine import runner, source
from migrate.engine.runner import RuleSelection, convert_source, rule_index
from tests.cli_helpers import PLAIN_SOURCE, ROOT, TF_SOURCE, pyproject, run_migrate, temp_files, write

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

# A few different sources, so a tree holds files of different sizes and conversions.
SOURCES = [
    TF_SOURCE,
    "import tensorflow as tf\n\nstrategy = tf.distribute.MirroredStrategy()\nn = strategy.num_replicas_in_sync\n"
    "with strategy.scope():\n    model = build()\n    opt = make_optimizer()\n",
    "import tensorflow as tf\n\n\ndef total(strategy, v):\n    return strategy.reduce(tf.distribute.ReduceOp.SUM, v, axis=None)\n",
    PLAIN_SOURCE,
    "import tensorflow as tf\n\nop = tf.distribute.ReduceOp.MEAN\n" + "# padding line\n" * 40,
]


def converted_map(sources) -> dict[bytes, bytes]:
    """Original bytes -> the complete converted bytes (equal for a file with nothing to convert)."""
    index = rule_index(RuleSelection())
    out = {}
    for s in sources:
        data = s.encode() if isinstance(s, str) else s
        result = convert_source(data, index, "x.py")
        assert result.status != "failed", result.error
        out[data] = result.converted
    return out


EXPECTED = converted_map(SOURCES)


def make_tree(root: Path, count: int, sources=SOURCES) -> dict[Path, bytes]:
    files = {}
    for i in range(count):
        data = sources[i % len(sources)]
        data = data.encode() if isinstance(data, str) else data
        files[write(root / f"pkg{i % 7}" / f"mod_{i:04d}.py", data)] = data
    return files


def assert_whole(files: dict[Path, bytes], expected: dict[bytes, bytes] = EXPECTED, *, allow_missing=False) -> tuple[int, int]:
    """Every file holds its original bytes or its complete conversion; returns (converted, original) counts."""
    converted = original = 0
    for path, before in files.items():
        if allow_missing and not path.exists():
            continue
        now = path.read_bytes()
        assert now in (before, expected[before]), f"{path} is neither original nor converted:\n{now[:300]!r}"
        if now == expected[before] != before:
            converted += 1
        else:
            original += 1
    return converted, original


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ": error: " in line]


# -- awkward inputs ---------------------------------------------------------------------------------


@pytest.mark.exclusive
def test_ten_megabyte_files(tmp_path):
    """A 10 MB file a rule may match is reported, not parsed into gigabytes; one no rule matches is just read."""
    pyproject(tmp_path)
    filler = "x = 1  # " + "filler " * 10 + "\n"
    big_tf = ("import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n" + filler * 130_000).encode()
    big_plain = ("import numpy as np\n" + filler * 130_000).encode()
    assert len(big_tf) > 10_000_000 and len(big_plain) > 10_000_000
    write(tmp_path / "big_tf.py", big_tf)
    write(tmp_path / "big_plain.py", big_plain)
    small = write(tmp_path / "small.py", TF_SOURCE)
    start = time.monotonic()
    proc = run_migrate("convert", ".", "--no-cache", cwd=tmp_path, timeout=300)
    assert time.monotonic() - start < 120
    assert proc.returncode == 2
    [err] = error_lines(proc.stderr)
    assert "big_tf.py: error: too large to convert (" in err and "max-file-size" in err
    assert (tmp_path / "big_tf.py").read_bytes() == big_tf
    assert (tmp_path / "big_plain.py").read_bytes() == big_plain
    assert small.read_bytes() == EXPECTED[TF_SOURCE.encode()]
    assert "1 file(s) changed, 1 unchanged, 0 skipped, 1 failed" in proc.stderr
    assert not temp_files(tmp_path)


def test_max_file_size_is_configurable(tmp_path):
    pyproject(tmp_path, '[tool.migrate]\nmax-file-size = "100"\n')
    f = write(tmp_path / "a.py", TF_SOURCE)  # 101 bytes
    proc = run_migrate("convert", ".", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 2 and "max-file-size is 100" in proc.stderr
    pyproject(tmp_path, '[tool.migrate]\nmax-file-size = "2KB"\n')
    assert run_migrate("convert", ".", "--no-cache", cwd=tmp_path).returncode == 0
    assert f.read_bytes() == EXPECTED[TF_SOURCE.encode()]
    pyproject(tmp_path, '[tool.migrate]\nmax-file-size = "lots"\n')
    proc = run_migrate("convert", ".", cwd=tmp_path)
    assert proc.returncode == 2 and "max-file-size must be a positive size" in proc.stderr


def test_a_dense_file_under_the_size_limit_is_bounded_by_its_syntax_nodes(tmp_path):
    """libcst's memory goes by syntax nodes, not bytes: one dense line of calls under max-file-size
    (a 950 KB one took 2.3 GB) fails cleanly, while real code of the same size converts."""
    pyproject(tmp_path, '[tool.migrate]\nmax-file-size = "60KB"\n')  # 10,000 nodes to rewrite
    head = "import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
    dense = (head + "x = [" + ", ".join(["tf.constant(1)"] * 3_000) + "]\n").encode()  # 12,000 nodes
    plain = (head + "".join(f"y{i} = tf.constant({i})  # a line of real size\n" for i in range(1_000))).encode()
    assert len(dense) < 60_000 and len(plain) < 60_000
    write(tmp_path / "dense.py", dense)
    write(tmp_path / "plain.py", plain)
    proc = run_migrate("convert", ".", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 2
    [err] = error_lines(proc.stderr)
    assert err.startswith("dense.py: error: too large to convert: 12,012 syntax nodes to rewrite, past the 10,000 ")
    assert (tmp_path / "dense.py").read_bytes() == dense
    assert (tmp_path / "plain.py").read_bytes() != plain and b"ms.Tensor(999, ms.int32)" in (tmp_path / "plain.py").read_bytes()


HEAD = "import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
DEEP = {
    # CPython accepts it; libcst's parser overflowed the 8 MB main-thread stack on it (SIGSEGV).
    "and_chain": HEAD + "ok = " + " and ".join(["a"] * 10_000) + "\n",
    # CPython rejects these: too deep for its parser, too many parentheses.
    "elif_chain": HEAD + "if a:\n    pass\n" + "elif a:\n    pass\n" * 20_000,
    "parentheses": HEAD + "x = " + "(" * 10_000 + "a" + ")" * 10_000 + "\n",
    "unary_100k": HEAD + "x = " + "-" * 100_000 + "a\n",
    # Deep but convertible (kept small: the engine's cost grows with the square of this depth).
    "sum": HEAD + "x = " + " + ".join(["a"] * 300) + "\n",
    "calls": HEAD + "x = f" + "()" * 100 + "\n",
}


def _failed_paths(stderr: str) -> set[str]:
    return {os.path.basename(line.split(": error: ")[0]) for line in error_lines(stderr)}


def test_deep_nesting_is_a_clean_result_never_a_crash(tmp_path):
    pyproject(tmp_path)
    for name, text in DEEP.items():
        write(tmp_path / f"deep_{name}.py", text)
    good = write(tmp_path / "zz_good.py", TF_SOURCE)
    before = {name: (tmp_path / f"deep_{name}.py").read_bytes() for name in DEEP}
    proc = run_migrate("convert", ".", "--no-cache", cwd=tmp_path, timeout=600)
    assert proc.returncode == 2, proc.stderr  # not a signal: the process ended by itself, with errors
    assert good.read_bytes() == EXPECTED[TF_SOURCE.encode()]
    failed = _failed_paths(proc.stderr)
    assert failed == {"deep_and_chain.py", "deep_elif_chain.py", "deep_parentheses.py", "deep_unary_100k.py"}, proc.stderr
    for name in DEEP:
        path = tmp_path / f"deep_{name}.py"
        if f"deep_{name}.py" in failed:
            assert path.read_bytes() == before[name]  # failed: left as it was
        else:
            assert path.read_bytes() != before[name]  # converted: the strategy line went
            compile(path.read_bytes(), name, "exec", flags=0x400)
    assert "deep_and_chain.py: error: too deeply nested to convert" in proc.stderr
    assert "deep_parentheses.py: error: cannot parse: line 3, column 205: too many nested parentheses" in proc.stderr
    assert "deep_unary_100k.py: error: cannot parse: too deeply nested for Python's parser" in proc.stderr
    assert not temp_files(tmp_path)


def test_a_deeply_nested_file_in_a_worker_is_a_clean_result(tmp_path):
    deep = HEAD + "ok = " + " and ".join(["a"] * 10_000) + "\n"
    files = [str(write(tmp_path / "a_deep.py", deep)), str(write(tmp_path / "b.py", TF_SOURCE))]
    results = list(runner.run_files(files, RuleSelection(), jobs=2))
    assert [r.path for r in results] == files
    assert results[0].status == "failed" and "too deeply nested" in results[0].error
    assert results[1].status == "changed"


def test_a_worker_that_dies_fails_only_its_file(tmp_path, monkeypatch):
    """A crash in native code kills a worker process: its file fails, every other file is converted."""
    files = [str(write(tmp_path / f"f{i:02d}.py", TF_SOURCE)) for i in range(10)]
    files.insert(5, str(write(tmp_path / "crash.py", TF_SOURCE)))
    real = runner._convert_path

    def segfault_on_crash(task):
        if task[0].endswith("crash.py"):
            os.kill(os.getpid(), signal.SIGKILL)  # as abrupt as a segfault, without a core dump
        return real(task)

    monkeypatch.setattr(runner, "_convert_path", segfault_on_crash)  # workers are forked: they see it
    if multiprocessing.get_start_method() != "fork":
        pytest.skip("workers are not forked here")
    results = list(runner.run_files(files, RuleSelection(), jobs=2))
    assert [r.path for r in results] == files
    by_status = {r.path: r.status for r in results}
    assert by_status.pop(files[5]) == "failed"
    assert "crashed" in results[5].error
    assert set(by_status.values()) == {"changed"}


# -- files that change under the run -------------------------------------------------------------------


def _after_reading(monkeypatch, action):
    real_run_files = cli.run_files

    def wrapped(files, *args, **kwargs):
        for result in real_run_files(files, *args, **kwargs):
            action(Path(result.path))
            yield result

    monkeypatch.setattr(cli, "run_files", wrapped)


def test_file_edited_between_reading_and_writing_keeps_the_edit(tmp_path, monkeypatch, capsys):
    pyproject(tmp_path)
    edited = write(tmp_path / "a.py", TF_SOURCE)
    other = write(tmp_path / "b.py", TF_SOURCE)
    newer = b"# edited by a person meanwhile\n" + TF_SOURCE.encode()
    _after_reading(monkeypatch, lambda p: p.name == "a.py" and p.write_bytes(newer))
    code = cli.main(["convert", str(tmp_path), "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{edited}: error: changed while converting; left as it is now" in err
    assert edited.read_bytes() == newer
    assert other.read_bytes() == EXPECTED[TF_SOURCE.encode()]
    assert not temp_files(tmp_path)


def test_file_replaced_by_a_directory_between_reading_and_writing(tmp_path, monkeypatch, capsys):
    pyproject(tmp_path)
    victim = write(tmp_path / "a.py", TF_SOURCE)

    def swap(p: Path) -> None:
        if p.name == "a.py":
            p.unlink()
            p.mkdir()

    _after_reading(monkeypatch, swap)
    assert cli.main(["convert", str(tmp_path), "--no-cache"]) == 2
    assert f"{victim}: error:" in capsys.readouterr().err
    assert victim.is_dir() and not any(victim.iterdir())
    assert not temp_files(tmp_path)


# -- files and directories that may not be written ------------------------------------------------------


def _chattr(flag: str, path: Path) -> bool:
    if not shutil.which("chattr"):
        return False
    return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0


def test_immutable_file_is_refused(tmp_path):
    pyproject(tmp_path)
    locked = write(tmp_path / "a.py", TF_SOURCE)
    other = write(tmp_path / "b.py", TF_SOURCE)
    if not _chattr("+i", locked):
        pytest.skip("chattr +i is not available here")
    try:
        proc = run_migrate("convert", ".", "--no-cache", cwd=tmp_path)
        assert proc.returncode == 2
        assert "a.py: error: file is read-only; left as it was" in proc.stderr
        assert locked.read_bytes() == TF_SOURCE.encode()
        assert other.read_bytes() == EXPECTED[TF_SOURCE.encode()]
    finally:
        _chattr("-i", locked)
    assert not temp_files(tmp_path)


def test_immutable_directory_is_an_error_per_file(tmp_path):
    pyproject(tmp_path)
    files = make_tree(tmp_path / "src", 6)
    locked = tmp_path / "src" / "pkg0"
    if not _chattr("+i", locked):
        pytest.skip("chattr +i is not available here")
    try:
        proc = run_migrate("convert", "src", "--no-cache", cwd=tmp_path)
    finally:
        _chattr("-i", locked)
    assert proc.returncode == 2
    errors = error_lines(proc.stderr)
    assert errors and all("pkg0" in line and "Operation not permitted" in line for line in errors), proc.stderr
    assert all(files[p] == p.read_bytes() for p in files if p.parent == locked)
    assert assert_whole(files)[0] >= 3
    assert not temp_files(tmp_path)


@pytest.fixture
def read_only_mount(tmp_path):
    """``tmp_path/ro``: a read-only bind mount of ``tmp_path/rw`` (root and mount(8) only)."""
    if not IS_ROOT or not shutil.which("mount"):
        pytest.skip("needs root and mount(8)")
    rw, ro = tmp_path / "rw", tmp_path / "ro"
    rw.mkdir()
    ro.mkdir()
    if subprocess.run(["mount", "--bind", str(rw), str(ro)], capture_output=True).returncode:
        pytest.skip("bind mounts are not allowed here")
    try:
        if subprocess.run(["mount", "-o", "remount,ro,bind", str(ro)], capture_output=True).returncode:
            pytest.skip("read-only remounts are not allowed here")
        yield rw, ro
    finally:
        subprocess.run(["umount", str(ro)], capture_output=True)


def test_read_only_filesystem_is_an_error_per_file_and_nothing_changes(tmp_path, read_only_mount):
    rw, ro = read_only_mount
    pyproject(tmp_path)
    files = make_tree(rw, 10)
    proc = run_migrate("convert", str(ro), "--no-cache", cwd=tmp_path)
    assert proc.returncode == 2
    errors = error_lines(proc.stderr)
    changing = sum(1 for data in files.values() if EXPECTED[data] != data)
    assert len(errors) == changing and all("error: file system is read-only; left as it was" in line for line in errors), proc.stderr
    assert all(path.read_bytes() == data for path, data in files.items())
    assert not temp_files(rw)


@pytest.mark.skipif(IS_ROOT, reason="root writes into a chmod 555 directory anyway; see the read-only mount tests")
def test_directory_without_write_permission(tmp_path):
    pyproject(tmp_path)
    files = make_tree(tmp_path / "src", 6)
    locked = tmp_path / "src" / "pkg0"
    locked.chmod(0o555)
    try:
        proc = run_migrate("convert", "src", "--no-cache", cwd=tmp_path)
    finally:
        locked.chmod(0o755)
    assert proc.returncode == 2
    assert all(files[p] == p.read_bytes() for p in files if p.parent == locked)
    assert_whole(files)
    assert not temp_files(tmp_path)


# -- a filesystem that fills up -----------------------------------------------------------------------------


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 64 KiB tmpfs at ``tmp_path/full`` (root and mount(8) only)."""
    if not IS_ROOT or not shutil.which("mount"):
        pytest.skip("needs root and mount(8)")
    mnt = tmp_path / "full"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("tmpfs mounts are not allowed here")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_out_directory_on_a_filesystem_that_fills_up(tmp_path, small_tmpfs):
    pyproject(tmp_path)
    files = make_tree(tmp_path / "src", 20)  # at least a 4 KiB page each: 64 KiB holds 16
    write(tmp_path / "src" / "data" / "weights.bin", os.urandom(20_000))
    out = small_tmpfs / "out"
    proc = run_migrate("convert", "src", "--out", str(out), "--no-cache", cwd=tmp_path, timeout=600)
    assert proc.returncode == 2
    assert "No space left on device" in proc.stderr
    written = {out / p.relative_to(tmp_path / "src"): data for p, data in files.items()}
    converted, original = assert_whole(written, {d: EXPECTED[d] for d in EXPECTED}, allow_missing=True)
    present = [p for p in written if p.exists()]
    assert 0 < len(present) < len(written)
    # A copy is complete or absent, never truncated.
    weights = out / "data" / "weights.bin"
    assert not weights.exists() or weights.read_bytes() == (tmp_path / "src" / "data" / "weights.bin").read_bytes()
    assert all(data == p.read_bytes() for p, data in files.items())  # the source is untouched
    assert not temp_files(small_tmpfs) and not temp_files(tmp_path / "src")


def _fill(path: Path, leave: int) -> None:
    """Fill the filesystem with ``path``, then give back ``leave`` bytes."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        size = 0
        try:
            while True:
                size += os.write(fd, b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        os.ftruncate(fd, max(0, size - leave))
    finally:
        os.close(fd)


def test_in_place_on_a_filesystem_that_fills_up(tmp_path, small_tmpfs):
    """Conversion makes each file cross a 4 KiB page: with no room for the temporary copy, the original stays."""
    padded = TF_SOURCE + "".join(f"# line {i:03d} " + "x" * 61 + "\n" for i in range(54))
    expected = converted_map([padded])
    assert 3900 < len(padded) < 4096 < len(expected[padded.encode()])
    files = make_tree(small_tmpfs / "src", 8, sources=[padded])
    _fill(small_tmpfs / "filler.bin", leave=8192)  # room for one conversion's temporary file, not two
    pyproject(tmp_path)
    proc = run_migrate("convert", str(small_tmpfs / "src"), "--no-cache", cwd=tmp_path, timeout=600)
    assert proc.returncode == 2
    assert "error: cannot write: No space left on device" in proc.stderr
    converted, original = assert_whole(files, expected)
    assert converted >= 1 and original >= 1
    assert not temp_files(small_tmpfs)


def test_full_disk_injected_into_the_write_path(tmp_path, monkeypatch, capsys):
    """Where no tmpfs can be mounted: ENOSPC from the n-th write, in process."""
    pyproject(tmp_path)
    files = make_tree(tmp_path / "src", 20)
    real_fsync, calls = os.fsync, [0]

    def fsync(fd):
        calls[0] += 1
        if calls[0] > 5:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    code = cli.main(["convert", str(tmp_path / "src"), "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2
    assert "error: cannot write: No space left on device" in err
    converted, original = assert_whole(files)
    assert converted == 5 and original > 0
    assert not temp_files(tmp_path)


# -- interrupted and concurrent runs ----------------------------------------------------------------------


def _start(args, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONSTARTUP", None)
    return subprocess.Popen(
        [sys.executable, "-m", "migrate", *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True, preexec_fn=_as_in_a_terminal,
    )


def _as_in_a_terminal() -> None:
    """Ctrl-C reaches the run as it reaches a program in a terminal, even when these tests were
    started in the background by a shell (which makes its children ignore SIGINT)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_until_writing(proc: subprocess.Popen, files: dict[Path, bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(p.read_bytes() != data for p, data in files.items()):
            return
        assert proc.poll() is None, "finished before it was interrupted"
        time.sleep(0.01)
    raise AssertionError("nothing was written in time")


@pytest.mark.parametrize("jobs,group", [(1, False), (2, False), (2, True)], ids=["jobs1", "jobs2", "jobs2-ctrl-c"])
def test_sigint_in_the_middle_of_a_large_run(tmp_path, jobs, group):
    """SIGINT to the process (or, like Ctrl-C, to its whole process group) once it has started writing."""
    pyproject(tmp_path)
    files = make_tree(tmp_path / "src", 200)
    proc = _start(["convert", "src", "--jobs", str(jobs), "--no-cache"], tmp_path)
    try:
        _wait_until_writing(proc, files)
        if group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "interrupted; files already written are complete, the rest are untouched" in err
    assert "Traceback" not in err
    converted, original = assert_whole(files)
    assert converted > 0 and original > 0
    assert not temp_files(tmp_path)


def test_two_runs_on_the_same_tree_at_once(tmp_path):
    pyproject(tmp_path)
    files = make_tree(tmp_path / "src", 30)
    first = _start(["convert", "src", "--jobs", "2", "--no-cache"], tmp_path)
    second = _start(["convert", "src", "--no-cache"], tmp_path)
    outputs = [p.communicate(timeout=600) for p in (first, second)]
    for proc, (_, err) in zip((first, second), outputs):
        assert proc.returncode in (0, 2), err
        # The only errors are files the other run converted differently or first: never a crash.
        assert all("changed while converting" in line for line in error_lines(err)), err
        assert "Traceback" not in err
    converted, original = assert_whole(files)
    assert converted == sum(1 for d in files.values() if EXPECTED[d] != d)
    assert not temp_files(tmp_path)
    again = run_migrate("convert", "src", "--check", "--no-cache", cwd=tmp_path)
    assert again.returncode == 0, again.stderr


def test_two_runs_into_the_same_out_directory(tmp_path):
    pyproject(tmp_path)
    files = make_tree(tmp_path / "src", 20)
    procs = [_start(["convert", "src", "--out", "out", "--no-cache", "--jobs", str(j)], tmp_path) for j in (1, 2)]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    out = {tmp_path / "out" / p.relative_to(tmp_path / "src"): data for p, data in files.items()}
    assert all(p.read_bytes() == EXPECTED[data] for p, data in out.items())
    assert not temp_files(tmp_path)


# -- the deep-stack thread conversions run on -----------------------------------------------------


def test_conversions_share_one_deep_thread_and_give_back_results_and_errors():
    def where(depth: int = 0):
        return threading.current_thread() if depth == 3000 else where(depth + 1)  # deeper than a default limit

    limit = sys.getrecursionlimit()
    first, second = source.on_deep_stack(where), source.on_deep_stack(where)
    assert first is second and first is not threading.current_thread() and first.daemon
    assert sys.getrecursionlimit() == limit  # raised only while a conversion runs
    with pytest.raises(ZeroDivisionError):
        source.on_deep_stack(lambda: 1 / 0)
    assert source.on_deep_stack(where) is first  # an error does not cost the thread
    assert source.on_deep_stack(source.on_deep_stack, lambda: 7) == 7  # a call from there runs there


@pytest.mark.exclusive
def test_an_interrupt_stops_waiting_at_once_and_the_next_conversion_gets_a_new_thread():
    started, release = threading.Event(), threading.Event()

    def slow():
        started.set()
        release.wait(10)
        return threading.current_thread()

    before = source.on_deep_stack(threading.current_thread)
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as a user's terminal sends it
    try:
        timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            source.on_deep_stack(slow)
    finally:
        signal.signal(signal.SIGINT, handler)
    assert started.is_set() and time.monotonic() - t0 < 5
    release.set()
    after = source.on_deep_stack(threading.current_thread)
    assert after is not before and after.is_alive()
