"""Where a run may write: never over an input, never outside --out or a named report, never
two inputs to one output, never through a link; and what it reads: regular files only.

Each case runs the real command line and checks the exit code, the one-line message, and
that every input byte is where it was. The last test does the same on random trees.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import stat
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from migrate import cli
from migrate.engine import paths, runner
from migrate.safe_io import display, open_regular, read_source
from tests.cli_helpers import PLAIN_SOURCE, TF_SOURCE, run_migrate, snapshot, temp_files, write

CONVERTED_HEAD = "import mindspore as ms"


def tree_state(root: Path) -> dict[str, object]:
    """Every entry under ``root`` by kind: bytes, ``-> target``, ``<fifo>`` or ``<dir>`` (links not followed)."""
    out: dict[str, object] = {}
    for dirpath, dirs, names in os.walk(root):
        for name in dirs + names:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            st_ = os.lstat(p)
            if stat.S_ISLNK(st_.st_mode):
                out[rel] = "-> " + os.readlink(p)
            elif stat.S_ISDIR(st_.st_mode):
                out[rel] = "<dir>"
            elif stat.S_ISFIFO(st_.st_mode):
                out[rel] = "<fifo>"
            else:
                with open(p, "rb") as fh:
                    out[rel] = fh.read()
    return out


def only_error(proc) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


# -- the five ways a run lost files ------------------------------------------------------------


def test_out_naming_the_directory_of_a_file_given_is_refused(tmp_path):
    write(tmp_path / "s1" / "a.py", TF_SOURCE)
    before = tree_state(tmp_path)
    proc = run_migrate("convert", "s1/a.py", "--out", "s1", cwd=tmp_path)
    assert proc.returncode == 2
    assert only_error(proc).startswith("error: --out s1 holds the input s1/a.py: the copy would be written among the sources")
    assert tree_state(tmp_path) == before


def test_out_that_is_the_source_through_a_link_is_refused(tmp_path):
    write(tmp_path / "src" / "a.py", TF_SOURCE)
    (tmp_path / "link").symlink_to("src")
    before = tree_state(tmp_path)
    proc = run_migrate("convert", "src", "--out", "link", cwd=tmp_path)
    assert proc.returncode == 2
    assert only_error(proc).startswith("error: --out link is the source itself (src, through a symbolic link)")
    assert tree_state(tmp_path) == before


def test_two_inputs_that_would_land_on_one_output_are_refused(tmp_path):
    write(tmp_path / "p1" / "a.py", TF_SOURCE)
    write(tmp_path / "p2" / "a.py", TF_SOURCE.replace("build()", "other()"))
    before = tree_state(tmp_path)
    proc = run_migrate("convert", "p1", "p2", "--out", "o", cwd=tmp_path)
    assert proc.returncode == 2
    assert only_error(proc) == ("error: p1/a.py and p2/a.py would both be written to o/a.py; "
                                "convert them in separate runs, or name the directory that holds both")
    assert tree_state(tmp_path) == before  # o is not even made


def test_nested_inputs_share_one_layout(tmp_path):
    """`src` and `src/sub` (in either order) place src/sub/a.py once, at o/sub/a.py."""
    write(tmp_path / "src" / "sub" / "a.py", TF_SOURCE)
    write(tmp_path / "src" / "b.py", TF_SOURCE)
    for order, out in ((("src", "src/sub"), "o1"), (("src/sub", "src"), "o2")):
        proc = run_migrate("convert", *order, "--out", out, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert sorted(snapshot(tmp_path / out)) == ["b.py", "sub/a.py"]
        assert "2 file(s) changed" in proc.stderr


def test_a_directory_link_out_of_the_tree_is_copied_as_a_link_and_never_written_through(tmp_path):
    write(tmp_path / "outside" / "secret.py", TF_SOURCE)
    write(tmp_path / "t" / "src" / "m.py", TF_SOURCE)
    (tmp_path / "t" / "src" / "ext").symlink_to(Path("..", "..", "outside"))
    first = run_migrate("convert", "src", "--out", "o", cwd=tmp_path / "t")
    assert first.returncode == 0, first.stderr
    assert os.readlink(tmp_path / "t" / "o" / "ext") == os.path.join("..", "..", "outside")
    before = tree_state(tmp_path)
    second = run_migrate("convert", "src", "src/ext", "--out", "o", cwd=tmp_path / "t")
    assert second.returncode == 2
    assert only_error(second).startswith(
        f"error: o/ext is a symbolic link (to {tmp_path / 'outside'}); writing o/ext/secret.py would go through it.")
    assert tree_state(tmp_path) == before
    # Into a new --out, a directory link named as an input is converted as a directory of its own.
    third = run_migrate("convert", "src", "src/ext", "--out", "fresh", cwd=tmp_path / "t")
    assert third.returncode == 0, third.stderr
    fresh = tmp_path / "t" / "fresh"
    assert not (fresh / "ext").is_symlink() and (fresh / "ext" / "secret.py").read_text().startswith(CONVERTED_HEAD)
    assert (tmp_path / "outside" / "secret.py").read_text() == TF_SOURCE


def test_out_inside_an_input_must_be_new_or_a_copy_this_tool_made(tmp_path):
    """A directory of sources inside the tree is no place for the copy: its files would be left out of
    the conversion and written over (r0/a.py onto the user's r0/sub/a.py)."""
    write(tmp_path / "r0" / "a.py", TF_SOURCE)
    write(tmp_path / "r0" / "sub" / "a.py", PLAIN_SOURCE)
    before = tree_state(tmp_path)
    proc = run_migrate("convert", "r0", "--out", "r0/sub", cwd=tmp_path)
    assert proc.returncode == 2
    assert only_error(proc).startswith("error: --out r0/sub is a directory of the input r0 and holds files this tool "
                                       "did not write (r0/sub/a.py)")
    assert tree_state(tmp_path) == before
    # A new directory inside the tree is fine, again and again, and is no source afterwards.
    for _ in range(2):
        proc = run_migrate("convert", "r0", "--out", "r0/converted", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "r0" / "converted" / ".migrate-out").is_file()
    assert (tmp_path / "r0" / "converted" / "a.py").read_text().startswith(CONVERTED_HEAD)
    check = run_migrate("check", "r0", cwd=tmp_path)
    assert "converted" not in check.stdout and "r0/a.py:3:12: TFD101" in check.stdout


@pytest.mark.parametrize("command", [
    ("report", "rp", "-o", "rp/a.py"),
    ("report", "rp", "-o", "rp/skip_me.py"),          # an excluded source is still an input
    ("check", "rp", "--report", "rp/a.py"),
    ("convert", "rp", "--report", "rp/a.py"),         # in place
    ("convert", "rp", "--report", "rp/notes.txt", "--out", "o"),  # --out copies it: an input
    ("convert", "rp", "--out", "o", "--report", "o/a.py"),  # where --out writes a.py
])
def test_a_report_never_replaces_an_input_or_an_output(tmp_path, command):
    write(tmp_path / "pyproject.toml", '[tool.migrate]\nexclude = ["skip_me.py"]\n')
    write(tmp_path / "rp" / "a.py", TF_SOURCE)
    write(tmp_path / "rp" / "skip_me.py", TF_SOURCE)
    write(tmp_path / "rp" / "notes.txt", "notes\n")
    before = tree_state(tmp_path)
    proc = run_migrate(*command, cwd=tmp_path)
    assert proc.returncode == 2
    message = only_error(proc)
    assert message.startswith(f"error: the report {command[command.index('-o') + 1] if '-o' in command else command[command.index('--report') + 1]} is ")
    assert "is an input of this run" in message or "is where --out writes rp/a.py" in message
    assert tree_state(tmp_path) == before


def test_a_report_beside_the_sources_is_fine(tmp_path):
    write(tmp_path / "rp" / "a.py", TF_SOURCE)
    proc = run_migrate("report", "rp", "-o", "rp/report.html", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "rp" / "a.py").read_text() == TF_SOURCE
    assert (tmp_path / "rp" / "report.html").read_text().startswith("<!doctype html>")


# -- what is not a regular file, and names that are not text -----------------------------------


def test_named_pipes_are_skipped_and_never_opened(tmp_path):
    write(tmp_path / "f" / "b.py", TF_SOURCE)
    os.mkfifo(tmp_path / "f" / "x.py")
    os.mkfifo(tmp_path / "f" / "data.bin")
    before = tree_state(tmp_path)
    check = run_migrate("check", "f", cwd=tmp_path, timeout=60)
    assert check.returncode == 1
    assert "f/x.py: skipped: a named pipe (FIFO), not a regular file; not read" in check.stderr
    assert "1 file(s) would change, 0 unchanged, 1 skipped" in check.stderr
    out = run_migrate("convert", "f", "--out", "o", cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "f/data.bin: skipped: a named pipe (FIFO), not a regular file; not copied" in out.stderr
    assert "1 file(s) changed, 0 unchanged, 2 skipped, 0 failed" in out.stderr
    assert sorted(snapshot(tmp_path / "o")) == ["b.py"]
    named = run_migrate("convert", "f/x.py", cwd=tmp_path, timeout=60)
    assert named.returncode == 0 and "f/x.py: skipped: a named pipe (FIFO)" in named.stderr
    assert {k: v for k, v in tree_state(tmp_path).items() if not k.startswith("o")} == before


@pytest.mark.exclusive
def test_reading_refuses_a_pipe_swapped_in_after_discovery(tmp_path):
    os.mkfifo(tmp_path / "x.py")
    started = time.monotonic()
    with pytest.raises(OSError, match="not a regular file: a named pipe"):
        read_source(str(tmp_path / "x.py"))
    assert time.monotonic() - started < 5


def test_ctrl_c_anywhere_in_opening_a_file_is_an_interrupt_and_closes_nothing_twice(tmp_path):
    """A KeyboardInterrupt raised at every step of opening and checking a source, in turn (a
    trace function raises it, as a signal handler would between two bytecodes). It must come
    out as the interrupt: never as an error about the file (a descriptor closed twice gave
    EBADF in its place, which a run reported as a failed file and went on), and a descriptor
    the file object took over is never closed by anyone else."""
    path = tmp_path / "x.py"
    path.write_bytes(b"x = 1\n")
    outcomes = set()
    for n in range(1, 400):
        seen = 0

        def trace(frame, event, arg):
            nonlocal seen
            frame.f_trace_opcodes = True
            seen += 1
            if seen == n:
                raise KeyboardInterrupt
            return trace

        witness = os.open(os.devnull, os.O_RDONLY)  # the number a stale close would hit next
        try:
            sys.settrace(trace)
            try:
                handle = open_regular(str(path))
            finally:
                sys.settrace(None)
        except KeyboardInterrupt:
            outcomes.add("interrupted")
        else:
            outcomes.add("opened")
            assert handle.read() == b"x = 1\n"
            handle.close()
            break
        finally:
            os.fstat(witness)  # still open: nobody closed a number they did not own
            os.close(witness)
    assert outcomes == {"interrupted", "opened"}


NOT_UTF8 = os.fsdecode(b"\xff\xfe.py")


@pytest.mark.parametrize("fmt", ["html", "json", "sarif"])
def test_names_that_are_not_utf8_are_shown_escaped_in_every_report(tmp_path, fmt):
    write(tmp_path / "nu" / NOT_UTF8, TF_SOURCE)
    write(tmp_path / "nu" / "a\nb.py", TF_SOURCE)  # a newline in a name must not split a line
    proc = run_migrate("report", "nu", "-o", f"r.{fmt}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / f"r.{fmt}").read_text(encoding="utf-8")  # valid UTF-8 throughout
    if fmt == "json":
        assert sorted(f["path"] for f in json.loads(text)["files"]) == ["nu/\\xff\\xfe.py", "nu/a\\x0ab.py"]
    elif fmt == "sarif":
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in json.loads(text)["runs"][0]["results"]}
        assert uris == {"nu/%FF%FE.py", "nu/a%0Ab.py"}  # the name's bytes
    else:
        assert json.dumps("nu/\\xff\\xfe.py") in text and json.dumps("nu/a\\x0ab.py") in text  # the page's data
    check = run_migrate("check", "nu", "--report", f"c.{fmt}", cwd=tmp_path)
    assert check.returncode == 1
    assert "nu/\\xff\\xfe.py:3:12: TFD101 " in check.stdout and "nu/a\\x0ab.py:3:12: TFD101 " in check.stdout


def test_a_name_that_is_not_utf8_converts_in_place_and_into_out(tmp_path):
    write(tmp_path / "nu" / NOT_UTF8, TF_SOURCE)
    out = run_migrate("convert", "nu", "--out", "o", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "o" / NOT_UTF8).read_text().startswith(CONVERTED_HEAD)
    assert run_migrate("convert", "nu", cwd=tmp_path).returncode == 0
    assert (tmp_path / "nu" / NOT_UTF8).read_text().startswith(CONVERTED_HEAD)


def test_display_escapes_undecodable_bytes_and_control_characters():
    assert display("plain/ä.py") == "plain/ä.py"
    assert display(os.fsdecode(b"d/\xff.py")) == "d/\\xff.py"
    assert display("a\nb\tc\x7f.py") == "a\\x0ab\\x09c\\x7f.py"


# -- resources and counts ----------------------------------------------------------------------


def test_workers_are_capped_at_the_files_and_the_cpus(monkeypatch):
    monkeypatch.setattr(runner, "usable_cpus", lambda: 2)
    assert runner.worker_count(1000, 5) == 2
    assert runner.worker_count(1000, 1) == 1
    assert runner.worker_count(1, 50) == 1
    monkeypatch.setattr(runner, "usable_cpus", lambda: 64)
    assert runner.worker_count(1000, 5) == 5


def test_jobs_1000_on_five_files_starts_no_more_workers_than_cpus(tmp_path, monkeypatch):
    import concurrent.futures

    for i in range(5):
        write(tmp_path / f"m{i}.py", TF_SOURCE)
    started = []
    real = concurrent.futures.ProcessPoolExecutor

    def recording(*args, **kwargs):
        started.append(kwargs.get("max_workers"))
        return real(*args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", recording)
    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(["convert", ".", "--jobs", "1000", "--no-cache"]) == 0
    assert started and max(started) <= min(5, runner.usable_cpus())


def test_a_file_that_cannot_be_read_is_reported_once(tmp_path, monkeypatch):
    write(tmp_path / "src" / "a.py", TF_SOURCE)
    write(tmp_path / "src" / "locked.py", TF_SOURCE)
    real = runner.read_source

    def locked(path):
        if path.endswith("locked.py"):
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(runner, "read_source", locked)
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["convert", "src", "--out", "o", "--no-cache"])
    assert code == 2
    lines = err.getvalue().splitlines()
    assert [line for line in lines if "locked.py" in line] == ["src/locked.py: error: cannot read: Permission denied"]
    assert "1 file(s) changed, 0 unchanged, 0 skipped, 1 failed" in lines[-1]
    assert not (tmp_path / "o" / "locked.py").exists()


@pytest.mark.exclusive
def test_a_rule_file_whose_aliases_expand_past_the_bound_is_refused_quickly(tmp_path):
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        levels.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    write(tmp_path / "rules" / "x" / "XTR901-lol.yaml", "\n".join(levels) + "\n")
    write(tmp_path / "pyproject.toml", '[tool.migrate]\nrules-dirs = ["rules"]\n')
    write(tmp_path / "a.py", "x = 1\n")
    started = time.monotonic()
    proc = run_migrate("check", "a.py", cwd=tmp_path)
    assert time.monotonic() - started < 20
    assert proc.returncode == 2
    assert "XTR901-lol.yaml: field '<file>': expands to more than 100,000 YAML nodes through its aliases" in only_error(proc)


def test_a_rule_digest_is_its_file_not_its_place_on_disk(tmp_path):
    from migrate.engine.cache import rule_digest
    from migrate.rules import default_rules_dir, load_rules_from

    copy = tmp_path / "copy"
    shutil.copytree(default_rules_dir(), copy)
    here = {r.id: rule_digest(r) for r in load_rules_from(default_rules_dir())}
    there = {r.id: rule_digest(r) for r in load_rules_from(copy)}
    assert here == there and len(set(here.values())) == len(here)


def test_more_strings_joined_than_libcst_parses_is_a_clean_error_in_a_short_file(tmp_path):
    head = "import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
    joined = "x = (" + " ".join(['"a"'] * 10_000) + ")\n"
    short = write(tmp_path / "short.py", head + joined)
    long_ = write(tmp_path / "long.py", head + "y = 1\n" * 40 + joined)  # the statement is set aside
    proc = run_migrate("convert", ".", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 2
    [error] = [line for line in proc.stderr.splitlines() if ": error: " in line]
    assert error.startswith("short.py: error: cannot parse with libcst, though Python can: line 3, column 1:")
    assert "at most 3,000 strings joined implicitly in one expression" in error
    assert short.read_text() == head + joined
    assert long_.read_text().startswith(CONVERTED_HEAD) and long_.read_text().endswith(joined)


# -- random trees ------------------------------------------------------------------------------

_NAMES = ["a.py", "b.py", "n.ipynb", "data.txt", "sub"]


@st.composite
def trees(draw):
    """A plan for a sandbox: input trees with files, pipes, links in and out, shared names; the
    paths given; and where --out goes."""
    n_roots = draw(st.integers(1, 3))
    roots = []
    for r in range(n_roots):
        entries = draw(st.lists(st.tuples(
            st.sampled_from(["", "sub/", "sub/deep/", "other/"]),
            st.sampled_from(_NAMES[:4] + ["pipe.py", "pipe.bin", "tolink.py", "dirlink_out", "dirlink_in", "filelink_out", "bad"]),
        ), min_size=1, max_size=7))
        roots.append(entries)
    given_extra = draw(st.sampled_from(["", "file", "dirlink", "nested"]))
    out = draw(st.sampled_from(["fresh", "inside", "equal", "parent", "link_to_root", "link_to_fresh", "in_sub", "file",
                                "dir_of_file", "in_place"]))
    twice = draw(st.booleans())
    return roots, given_extra, out, twice


def _build(box: Path, plan) -> tuple[list[str], str | None]:
    roots, given_extra, out, _ = plan
    write(box / "outside" / "secret.py", TF_SOURCE)
    write(box / "outside" / "secret.txt", "secret\n")
    given = []
    for r, entries in enumerate(roots):
        root = box / f"r{r}"
        root.mkdir()
        given.append(f"r{r}")
        for where, kind in entries:
            d = root / where
            d.mkdir(parents=True, exist_ok=True)
            if kind.endswith((".py", ".ipynb", ".txt")) and kind not in ("pipe.py", "tolink.py"):
                if kind == "n.ipynb":
                    continue  # notebooks have their own tests; keep the trees quick
                content = TF_SOURCE if kind == "a.py" else PLAIN_SOURCE if kind == "b.py" else "text\n"
                if not (d / kind).exists():
                    write(d / kind, content)
            elif kind in ("pipe.py", "pipe.bin") and not os.path.lexists(d / kind):
                os.mkfifo(d / kind)
            elif kind == "tolink.py" and not os.path.lexists(d / kind):
                write(d / "target.py", TF_SOURCE)
                (d / kind).symlink_to("target.py")
            elif kind == "dirlink_out" and not os.path.lexists(d / kind):
                (d / kind).symlink_to(os.path.relpath(box / "outside", d))
            elif kind == "dirlink_in" and not os.path.lexists(d / kind):
                (root / "other").mkdir(exist_ok=True)
                (d / kind).symlink_to(os.path.relpath(root / "other", d))
            elif kind == "filelink_out" and not os.path.lexists(d / "out_link.py"):
                (d / "out_link.py").symlink_to(os.path.relpath(box / "outside" / "secret.py", d))
            elif kind == "bad" and not os.path.lexists(d / "bad.py"):
                write(d / "bad.py", "import tensorflow as tf\ndef f(:\n")
    file_given = None
    if given_extra == "file" or out == "dir_of_file":
        first = next(iter(sorted((box / "r0").rglob("*.py"))), None)
        if first is not None and not first.is_symlink() and first.is_file():
            file_given = os.path.relpath(first, box)
            given.append(file_given)
    elif given_extra == "dirlink":
        links = [p for p in sorted((box / "r0").rglob("dirlink_*")) if p.is_symlink()]
        if links:
            given.append(os.path.relpath(links[0], box))
    elif given_extra == "nested" and (box / "r0" / "sub").is_dir():
        given.append("r0/sub")
    target = {"fresh": "out", "inside": "r0/out", "equal": "r0", "parent": ".", "in_sub": "r0/sub", "file": "r0/x.txt",
              "in_place": None}.get(out)
    if out == "link_to_root":
        (box / "lnk").symlink_to("r0")
        target = "lnk"
    elif out == "link_to_fresh":
        (box / "store").mkdir()
        (box / "lnk").symlink_to("store")
        target = "lnk"
    elif out == "file":
        write(box / "r0" / "x.txt", "x\n")
    elif out == "dir_of_file":
        target = os.path.dirname(file_given) if file_given else "out"
    return given, target


def _run(box: Path, args: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    old = os.getcwd()
    os.chdir(box)

    def hung(signum, frame):
        raise TimeoutError("the run blocked")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(args)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        os.chdir(old)
    return code, err.getvalue()


def _real(box: Path, path: str) -> str:
    return os.path.relpath(os.path.realpath(box / path), box)


def _under(key: str, places) -> bool:
    return any(place == "." or key == place or key.startswith(place + os.sep) for place in places)


@settings(max_examples=int(os.environ.get("TREE_EXAMPLES", 40)), deadline=None, suppress_health_check=list(HealthCheck))
@given(trees())
def test_random_trees_never_lose_an_input_byte_nor_write_outside_out(plan):
    """Whatever the tree and wherever --out points: no input changes unless converted in place,
    nothing is written outside --out, a refused run writes nothing at all, nothing blocks, no
    temporary file is left, and a second run changes nothing."""
    box = Path(tempfile.mkdtemp(prefix="migrate-tree-"))
    try:
        given, out = _build(box, plan)
        args = ["convert", *given, "--no-cache"] + (["--out", out] if out is not None else [])
        note(f"args: {args}")
        before = tree_state(box)
        code, err = _run(box, args)
        note(err)
        after = tree_state(box)
        assert code in (0, 1, 2)
        assert "Traceback" not in err
        # The inputs, where they really are (a directory given through a link is its target).
        inputs = {_real(box, g) for g in given}
        if err.startswith("error: "):
            assert code == 2 and after == before, "a refused run writes nothing"
        elif out is None:
            # In place: only the source files given (or below a directory given) may change, and
            # nothing appears or goes.
            assert set(after) == set(before)
            changed = [k for k in before if before[k] != after[k]]
            assert all(k.endswith(".py") and isinstance(before[k], bytes) and _under(k, inputs) for k in changed), changed
        else:
            target = _real(box, out)
            kept = {k: v for k, v in before.items() if not _under(k, [target])}
            assert {k: v for k, v in after.items() if not _under(k, [target])} == kept, "written outside --out"
            assert {k: after.get(k) for k in before if _under(k, inputs)} == \
                {k: v for k, v in before.items() if _under(k, inputs)}, "an input changed"
        assert not temp_files(box)
        if plan[3] and not err.startswith("error: "):
            again_code, again_err = _run(box, args)
            note(again_err)
            assert tree_state(box) == after, "a second run changed something"
            assert again_code == code or (out is None and again_code in (0, 1, 2))
    finally:
        shutil.rmtree(box, ignore_errors=True)


def test_each_file_is_found_once_whatever_its_spelling(tmp_path, monkeypatch):
    write(tmp_path / "src" / "sub" / "a.py", TF_SOURCE)
    (tmp_path / "alias").symlink_to("src")
    monkeypatch.chdir(tmp_path)
    found = paths.walk_inputs(["src", str(tmp_path / "src" / "sub"), "alias"])
    assert found.files == ["src/sub/a.py"]
