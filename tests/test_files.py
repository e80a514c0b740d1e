"""File handling of ``migrate convert``: every file gets a result, bytes outside rewrites survive,
writes are atomic, and nothing is touched that should not be."""

from __future__ import annotations

import os
import stat

import pytest

from migrate import cli
from migrate.engine import paths, runner, writes
from migrate.engine.results import ConvertOptions
from migrate.engine.codemod import MigrateCommand
from tests.cli_helpers import PLAIN_SOURCE, TF_SOURCE, pyproject, run_migrate, snapshot, temp_files, write
from tests.helpers import convert

CONVERTED, _ = convert(TF_SOURCE)


@pytest.fixture
def project(tmp_path):
    pyproject(tmp_path)
    return tmp_path


def test_expected_conversion_of_the_sample():
    """The sample every test here converts: init() + auto-parallel context, body unwrapped."""
    assert "tensorflow" not in CONVERTED
    assert "\ninit()\nms.set_auto_parallel_context(" in CONVERTED
    assert CONVERTED.endswith("\nmodel = build()\n")


# -- one run over a tree of awkward files --------------------------------------------------

BAD_FILES = {
    "syntax-error": b"import tensorflow as tf\n\ndef broken(:\n    pass\n",
    "python2-print": b'import tensorflow as tf\n\nprint "x"\n',
    "python2-without-tf": b'print "no tensorflow here"\n',
    "invalid-utf8": b'import tensorflow as tf\n\nname = "\xff\xfe"\n',
    "invalid-for-declared-encoding": b'# -*- coding: ascii -*-\nimport tensorflow as tf\nname = "\xc3\xa9"\n',
    "unknown-encoding": b"# -*- coding: no-such-codec -*-\nimport tensorflow as tf\n",
    "null-byte": b"import tensorflow as tf\nx = 1\x00\n",
}

LATIN1_SOURCE = (
    "# -*- coding: latin-1 -*-\n"
    "import tensorflow as tf\n"
    "\n"
    "# R\u00e9glages du caf\u00e9\n"
    "strategy = tf.distribute.MirroredStrategy()\n"
    "with strategy.scope():\n"
    "    model = build('\u00e9t\u00e9')\n"
)

STYLE_HEAD = "#!/usr/bin/env python\n# Training script.  Two spaces here.\n"
STYLE_TAIL = (
    "\n\n"
    "def describe(x):   # odd spacing kept\n"
    "    '''Single-quoted docstring.'''\n"
    "    return f'{x!r}' + \"double\" + r'raw\\n'\n"
    "\n"
    "\n"
    "\n"
    "CONFIG = {'a': 1,\n"
    "          'b': (2,   3)}  # aligned by hand\n"
    "# trailing comment without newline at end"
)


@pytest.fixture(scope="module")
def awkward(tmp_path_factory):
    """``migrate convert src/`` once over every kind of file the issue lists."""
    root = tmp_path_factory.mktemp("awkward")
    pyproject(root)
    src = root / "src"
    inputs = {
        "a_good.py": TF_SOURCE,
        "bom.py": b"\xef\xbb\xbf" + TF_SOURCE.encode(),
        "crlf.py": TF_SOURCE.replace("\n", "\r\n"),
        "bom_crlf.py": b"\xef\xbb\xbf" + TF_SOURCE.replace("\n", "\r\n").encode(),
        "latin.py": LATIN1_SOURCE.encode("latin-1"),
        "style.py": STYLE_HEAD + TF_SOURCE + STYLE_TAIL,
        "empty.py": b"",
        "comments.py": "# tensorflow used to live here\n\n# nothing else\n",
        "z_good.py": TF_SOURCE,
        **{f"bad_{name.replace('-', '_')}.py": content for name, content in BAD_FILES.items()},
    }
    for name, content in inputs.items():
        write(src / name, content)
    write(src / "bin" / "train.py", "#!/usr/bin/env python\n" + TF_SOURCE, mode=0o755)
    write(src / "bin" / "secret.py", TF_SOURCE, mode=0o600)
    before = {name: (src / name).read_bytes() for name in inputs}
    proc = run_migrate("convert", "src", cwd=root)
    return root, proc, before


def _error_lines(stderr: str) -> dict[str, str]:
    return {line.split(": error: ")[0]: line for line in stderr.splitlines() if ": error: " in line}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_unreadable_file_is_an_error_left_byte_identical(awkward, name):
    root, proc, before = awkward
    file = f"bad_{name.replace('-', '_')}.py"
    assert proc.returncode == 2
    assert os.path.join("src", file) in _error_lines(proc.stderr), proc.stderr
    assert (root / "src" / file).read_bytes() == before[file]


def test_the_run_goes_on_past_bad_files(awkward):
    root, proc, before = awkward
    assert set(_error_lines(proc.stderr)) == {os.path.join("src", f"bad_{n.replace('-', '_')}.py") for n in BAD_FILES}
    assert (root / "src" / "a_good.py").read_text() == CONVERTED
    assert (root / "src" / "z_good.py").read_text() == CONVERTED
    assert proc.stderr.rstrip().splitlines()[-1].startswith(f"9 file(s) changed, 2 unchanged, 0 skipped, {len(BAD_FILES)} failed;")
    assert not temp_files(root)


def test_utf8_bom_is_kept(awkward):
    data = (awkward[0] / "src" / "bom.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\xef\xbb\xbf") == 1
    assert data[3:].decode("utf-8") == CONVERTED


def test_crlf_line_endings_are_kept(awkward):
    data = (awkward[0] / "src" / "crlf.py").read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") > 0, "every line ending is still CRLF"
    assert data.replace(b"\r\n", b"\n").decode() == CONVERTED


def test_bom_and_crlf_together(awkward):
    data = (awkward[0] / "src" / "bom_crlf.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.count(b"\n") == data.count(b"\r\n")
    assert data[3:].replace(b"\r\n", b"\n").decode() == CONVERTED


def test_latin1_coding_cookie_and_text_are_kept(awkward):
    data = (awkward[0] / "src" / "latin.py").read_bytes()
    assert b"\xc3" not in data, "still latin-1, not re-encoded as UTF-8"
    text = data.decode("latin-1")
    assert text.startswith("# -*- coding: latin-1 -*-\n"), "the cookie stays on the first line"
    assert "# R\u00e9glages du caf\u00e9\n" in text
    assert "\nmodel = build('\u00e9t\u00e9')\n" in text
    assert "\ninit()\n" in text and "tensorflow" not in text


def test_comments_blank_lines_and_quotes_outside_rewrites_are_byte_identical(awkward):
    text = (awkward[0] / "src" / "style.py").read_text()
    assert text == STYLE_HEAD + CONVERTED + STYLE_TAIL


@pytest.mark.parametrize("end", [
    "  # a\n\n  # b\n",  # libcst's module footer kept only `  # b`
    "\n\n  \n",  # ... and dropped the blank lines before a line of spaces
    "\n\f# a\n",
    "\n  # no newline at the end",
    "\n# a\n",  # (libcst's own footer, which it gives back)
])
@pytest.mark.parametrize("pruning", [True, 0, False])
def test_comment_and_blank_lines_after_the_last_statement_come_back_as_they_were(end, pruning):
    from migrate.engine.convert import convert_source
    from migrate.engine.runner import RuleSelection, rule_index

    for crlf in (False, True):
        body = "import tensorflow as tf\n\nstrategy = tf.distribute.MirroredStrategy()\n"
        text = (body + end).replace("\n", "\r\n") if crlf else body + end
        result = convert_source(text.encode(), rule_index(RuleSelection()), "t.py", ConvertOptions(pruning=pruning))
        out = result.converted.decode()
        assert result.changed and "init()" in out
        assert out.endswith(end.replace("\n", "\r\n") if crlf else end), repr(out[-60:])


def test_empty_and_comment_only_files_are_left_as_they_are(awkward):
    root, proc, before = awkward
    for name in ("empty.py", "comments.py"):
        assert (root / "src" / name).read_bytes() == before[name]


def test_write_keeps_mode(awkward):
    bin_dir = awkward[0] / "src" / "bin"
    assert stat.S_IMODE((bin_dir / "train.py").stat().st_mode) == 0o755
    assert stat.S_IMODE((bin_dir / "secret.py").stat().st_mode) == 0o600
    assert (bin_dir / "train.py").read_text() == "#!/usr/bin/env python\n" + CONVERTED
    assert sorted(p.name for p in bin_dir.iterdir()) == ["secret.py", "train.py"], "no temporary files"


def test_python2_is_an_error_that_says_what_is_wrong(project):
    write(project / "old.py", b'import tensorflow as tf\nprint "x"\n')
    proc = run_migrate("convert", "old.py", cwd=project)
    assert proc.returncode == 2
    assert "old.py: error: cannot parse: line 2" in proc.stderr
    assert "print(" in proc.stderr  # CPython's "Did you mean print(...)?"
    assert (project / "old.py").read_bytes() == b'import tensorflow as tf\nprint "x"\n'


def test_rule_that_crashes_fails_only_its_file(tmp_path, monkeypatch, capsys):
    pyproject(tmp_path)
    good = write(tmp_path / "good.py", TF_SOURCE)
    boom = write(tmp_path / "boom.py", TF_SOURCE)
    original_impl = MigrateCommand.transform_module_impl

    def crash_on_boom(self, tree):
        if self.path.endswith("boom.py"):
            raise RuntimeError("rule blew up")
        return original_impl(self, tree)

    monkeypatch.setattr(MigrateCommand, "transform_module_impl", crash_on_boom)
    code = cli.main(["convert", str(tmp_path)])
    err = capsys.readouterr().err

    assert code == 2
    assert f"{boom}: error: internal error in a rule (RuntimeError: rule blew up)" in err
    assert boom.read_text() == TF_SOURCE
    assert good.read_text() == CONVERTED


def test_unexpected_exception_outside_the_codemod_becomes_a_result(tmp_path, monkeypatch):
    f = write(tmp_path / "a.py", TF_SOURCE)

    def explode(data, index, path="<string>", *options):
        raise KeyError("x")

    monkeypatch.setattr(runner, "convert_source", explode)
    result = runner._convert_path((str(f), runner.RuleSelection()))
    assert result.status == "failed" and "KeyError" in result.error
    assert result.original == TF_SOURCE.encode()


def test_empty_and_comment_only_files_are_unchanged(project):
    empty = write(project / "empty.py", b"")
    comments = write(project / "comments.py", b"# tensorflow used to live here\n\n# nothing else\n")
    whitespace = write(project / "blank.py", b"\n\n   \n")
    before = snapshot(project)
    proc = run_migrate("convert", ".", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert snapshot(project) == before
    assert empty.read_bytes() == b"" and comments.exists() and whitespace.exists()
    assert "0 file(s) changed, 3 unchanged, 0 skipped, 0 failed" in proc.stderr


# -- what may not be written is not written -----------------------------------------------


def test_read_only_file_is_an_error_and_left_alone(project):
    ro = write(project / "src" / "ro.py", TF_SOURCE, mode=0o444)
    other = write(project / "src" / "other.py", TF_SOURCE)
    try:
        proc = run_migrate("convert", "src", cwd=project)
        assert proc.returncode == 2, proc.stderr
        assert os.path.join("src", "ro.py") + ": error: " in proc.stderr
        assert "read-only" in proc.stderr
        assert ro.read_text() == TF_SOURCE
        assert stat.S_IMODE(ro.stat().st_mode) == 0o444
        assert other.read_text() == CONVERTED
        assert not temp_files(project)
    finally:
        ro.chmod(0o644)


def test_read_only_file_is_fine_when_nothing_is_written(project):
    ro = write(project / "ro.py", TF_SOURCE, mode=0o444)
    try:
        assert run_migrate("convert", "--check", "ro.py", cwd=project).returncode == 1
        proc = run_migrate("convert", "--out", "out", "ro.py", cwd=project)
        assert proc.returncode == 0, proc.stderr
        assert (project / "out" / "ro.py").read_text() == CONVERTED
        assert ro.read_text() == TF_SOURCE
    finally:
        ro.chmod(0o644)


def test_symlinks_are_skipped_link_and_target_untouched(project):
    """Decision: symbolic links are never followed or replaced (rewriting through a link
    changes a file outside the tree; an atomic rename would turn the link into a file)."""
    target = write(project / "elsewhere" / "target.py", TF_SOURCE)
    (project / "src").mkdir()
    link = project / "src" / "link.py"
    link.symlink_to(os.path.join("..", "elsewhere", "target.py"))
    top_link = project / "top_link.py"
    top_link.symlink_to(os.path.join("elsewhere", "target.py"))
    real = write(project / "src" / "real.py", TF_SOURCE)

    proc = run_migrate("convert", "src", "top_link.py", cwd=project)

    assert proc.returncode == 0, proc.stderr
    assert f"{os.path.join('src', 'link.py')}: skipped: symbolic link" in proc.stderr
    assert "top_link.py: skipped: symbolic link" in proc.stderr
    for path in (link, top_link):
        assert path.is_symlink()
    assert os.readlink(link) == os.path.join("..", "elsewhere", "target.py")
    assert target.read_text() == TF_SOURCE
    assert real.read_text() == CONVERTED
    assert "1 file(s) changed, 0 unchanged, 2 skipped, 0 failed" in proc.stderr


def test_nonexistent_path_is_an_error_and_the_rest_is_converted(project):
    good = write(project / "good.py", TF_SOURCE)
    proc = run_migrate("convert", "missing.py", "good.py", cwd=project)
    assert proc.returncode == 2
    assert "missing.py: error: no such file or directory" in proc.stderr
    assert not (project / "missing.py").exists()
    assert good.read_text() == CONVERTED


# -- atomic writes ------------------------------------------------------------------------------


def test_atomic_write_replaces_the_file_by_rename(tmp_path):
    f = write(tmp_path / "a.py", b"old\n", mode=0o751)
    hard = tmp_path / "hard.py"
    os.link(f, hard)
    writes.atomic_write(str(f), b"new\n", expected=b"old\n")
    assert f.read_bytes() == b"new\n"
    # A new inode took the name: a reader holding the old file never saw half of the new one.
    assert hard.read_bytes() == b"old\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o751
    assert not temp_files(tmp_path)


def test_atomic_write_failure_leaves_original_and_no_temp(tmp_path, monkeypatch):
    f = write(tmp_path / "a.py", b"old\n")

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(runner.os, "replace", fail)
    with pytest.raises(OSError):
        writes.atomic_write(str(f), b"new\n", expected=b"old\n")
    assert f.read_bytes() == b"old\n"
    assert not temp_files(tmp_path)


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler, even when the test run inherited SIGINT ignored (as a shell's
    background job does); the previous handler comes back afterwards."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("when", ["temp file made", "before the rename", "write fails"])
def test_ctrl_c_during_a_write_takes_effect_after_it_and_leaves_no_temp_file(tmp_path, monkeypatch, when,
                                                                            python_sigint):
    """An interrupt that arrives between making the temporary file and renaming it (found as
    a leftover `.migrate-tmp` in the SIGINT fault test) is raised once the write is over:
    the file is whole (or, if the write failed, as it was), and no temporary file is left."""
    import signal
    import tempfile

    f = write(tmp_path / "a.py", b"old\n")
    real_mkstemp, real_replace = tempfile.mkstemp, runner.os.replace

    def mkstemp(*args, **kwargs):
        made = real_mkstemp(*args, **kwargs)
        if when == "temp file made":
            os.kill(os.getpid(), signal.SIGINT)  # as if it came before mkstemp returned
        return made

    def replace(src, dst):
        os.kill(os.getpid(), signal.SIGINT)
        if when == "write fails":
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    if when != "temp file made":
        monkeypatch.setattr(runner.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        writes.atomic_write(str(f), b"new\n", expected=b"old\n")
    assert f.read_bytes() == (b"old\n" if when == "write fails" else b"new\n")
    assert not temp_files(tmp_path)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_atomic_write_refuses_a_file_deleted_since_it_was_read(tmp_path):
    with pytest.raises(OSError, match="deleted"):
        writes.atomic_write(str(tmp_path / "gone.py"), b"new\n", expected=b"old\n")
    assert not (tmp_path / "gone.py").exists()
    assert not temp_files(tmp_path)


def test_atomic_write_refuses_a_file_changed_since_it_was_read(tmp_path):
    f = write(tmp_path / "a.py", b"edited meanwhile\n")
    with pytest.raises(OSError, match="changed"):
        writes.atomic_write(str(f), b"new\n", expected=b"old\n")
    assert f.read_bytes() == b"edited meanwhile\n"


def test_atomic_write_refuses_a_read_only_file(tmp_path):
    f = write(tmp_path / "a.py", b"old\n", mode=0o444)
    try:
        with pytest.raises(OSError, match="read-only"):
            writes.atomic_write(str(f), b"new\n", expected=b"old\n")
        assert f.read_bytes() == b"old\n"
    finally:
        f.chmod(0o644)


def test_file_deleted_between_discovery_and_write(tmp_path, monkeypatch, capsys):
    pyproject(tmp_path)
    doomed = write(tmp_path / "a_doomed.py", TF_SOURCE)
    other = write(tmp_path / "b_other.py", TF_SOURCE)
    real_run_files = cli.run_files

    def delete_after_reading(files, *args, **kwargs):
        for result in real_run_files(files, *args, **kwargs):
            if result.path.endswith("a_doomed.py"):
                doomed.unlink()
            yield result

    monkeypatch.setattr(cli, "run_files", delete_after_reading)
    code = cli.main(["convert", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{doomed}: error: deleted while converting" in err
    assert not doomed.exists()
    assert other.read_text() == CONVERTED


def test_interrupt_leaves_written_files_whole_and_the_rest_untouched(tmp_path, monkeypatch, capsys):
    pyproject(tmp_path)
    first = write(tmp_path / "a.py", TF_SOURCE)
    second = write(tmp_path / "b.py", TF_SOURCE)
    real_run_files = cli.run_files

    def interrupted(files, *args, **kwargs):
        results = real_run_files(files, *args, **kwargs)
        yield next(results)
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run_files", interrupted)
    code = cli.main(["convert", str(tmp_path)])
    assert code == 130
    assert "interrupted" in capsys.readouterr().err
    assert first.read_text() == CONVERTED
    assert second.read_text() == TF_SOURCE
    assert not temp_files(tmp_path)


# -- runs, copies and parallelism -----------------------------------------------------------


def test_second_run_changes_nothing(project):
    write(project / "src" / "a.py", TF_SOURCE)
    write(project / "src" / "b.py", b"\xef\xbb\xbf" + TF_SOURCE.replace("\n", "\r\n").encode())
    assert run_migrate("convert", "src", cwd=project).returncode == 0
    after_first = snapshot(project)
    check = run_migrate("convert", "--check", "src", cwd=project)
    assert check.returncode == 0, check.stdout + check.stderr
    again = run_migrate("convert", "src", cwd=project)
    assert again.returncode == 0
    assert "0 file(s) changed, 2 unchanged" in again.stderr
    assert snapshot(project) == after_first


def test_out_writes_a_converted_copy_and_leaves_the_source(project):
    src = project / "src"
    write(src / "train.py", TF_SOURCE, mode=0o755)
    write(src / "pkg" / "__init__.py", "")
    write(src / "pkg" / "util.py", PLAIN_SOURCE)
    write(src / "pkg" / "model.py", TF_SOURCE)
    write(src / "README.md", "# demo\n")
    write(src / "data" / "config.json", '{"lr": 0.1}\n')
    write(src / "data" / "weights.bin", bytes(range(256)))
    (src / "latest.py").symlink_to("train.py")
    before = snapshot(src)

    proc = run_migrate("convert", "--out", "converted", "src", cwd=project)

    assert proc.returncode == 0, proc.stderr
    assert snapshot(src) == before, "the source tree is untouched"
    out = project / "converted"
    assert (out / "train.py").read_text() == CONVERTED
    assert (out / "pkg" / "model.py").read_text() == CONVERTED
    assert (out / "pkg" / "util.py").read_text() == PLAIN_SOURCE
    assert (out / "pkg" / "__init__.py").read_bytes() == b""
    assert (out / "README.md").read_text() == "# demo\n"
    assert (out / "data" / "config.json").read_text() == '{"lr": 0.1}\n'
    assert (out / "data" / "weights.bin").read_bytes() == bytes(range(256))
    assert stat.S_IMODE((out / "train.py").stat().st_mode) == 0o755
    assert (out / "latest.py").is_symlink() and os.readlink(out / "latest.py") == "train.py"
    assert set(snapshot(out)) == set(before)
    assert not temp_files(project)


def test_out_inside_the_tree_is_not_converted_into_itself(project):
    write(project / "a.py", TF_SOURCE)
    for _ in range(2):
        proc = run_migrate("convert", "--out", "out", ".", cwd=project)
        assert proc.returncode == 0, proc.stderr
    assert (project / "out" / "a.py").read_text() == CONVERTED
    assert (project / "a.py").read_text() == TF_SOURCE
    assert not (project / "out" / "out").exists()
    assert "1 file(s) changed, 0 unchanged" in proc.stderr


def test_out_may_not_be_the_source_itself(project):
    write(project / "src" / "a.py", TF_SOURCE)
    proc = run_migrate("convert", "--out", "src", "src", cwd=project)
    assert proc.returncode == 2 and "is the source itself" in proc.stderr
    assert (project / "src" / "a.py").read_text() == TF_SOURCE


def test_out_copies_a_file_that_fails_as_it_is(project):
    bad = b'import tensorflow as tf\nprint "x"\n'
    write(project / "src" / "old.py", bad)
    write(project / "src" / "new.py", TF_SOURCE)
    proc = run_migrate("convert", "--out", "out", "src", cwd=project)
    assert proc.returncode == 2
    assert (project / "out" / "old.py").read_bytes() == bad
    assert (project / "out" / "new.py").read_text() == CONVERTED


def _mixed_tree(root, n=30):
    for i in range(n):
        sub = root / f"pkg{i % 4}"
        if i % 3 == 0:
            write(sub / f"m{i:02d}.py", PLAIN_SOURCE + f"\nVALUE = {i}\n")
        elif i % 3 == 1:
            write(sub / f"m{i:02d}.py", TF_SOURCE + f"print({i})\n")
        else:
            write(sub / f"m{i:02d}.py", f"import tensorflow as tf\n\nop = tf.distribute.ReduceOp.SUM  # {i}\n")
    write(root / "pkg1" / "broken.py", b"import tensorflow as tf\ndef f(:\n")
    write(root / "notes.txt", "not python\n")


def test_jobs_2_gives_the_same_output_as_jobs_1(project):
    _mixed_tree(project / "src")
    one = run_migrate("convert", "--jobs", "1", "--out", "one", "src", cwd=project)
    two = run_migrate("convert", "--jobs", "2", "--out", "two", "src", cwd=project)
    assert one.returncode == two.returncode == 2  # broken.py
    assert one.stdout == two.stdout
    assert one.stderr == two.stderr
    assert snapshot(project / "one") == snapshot(project / "two")
    assert len(snapshot(project / "one")) == 32
    assert "20 file(s) changed, 10 unchanged, 0 skipped, 1 failed" in one.stderr


@pytest.mark.parametrize("jobs", [1, 2])
def test_results_arrive_with_their_changed_lines_counted(tmp_path, jobs):
    """The changed-line count is made where the file converts (a worker, with --jobs 2): the
    caller only adds the counts up. Without a cache too."""
    from migrate.filetypes import changed_line_count

    files = [str(write(tmp_path / f"m{i}.py", TF_SOURCE if i % 2 else "x = 1\n")) for i in range(4)]
    results = list(runner.run_files(files, runner.RuleSelection(), jobs=jobs))
    assert [r.status for r in results] == ["unchanged", "changed"] * 2
    for r in results:
        assert r.lines_changed == (changed_line_count(r.path, r.original, r.converted) if r.changed else 0)
    assert results[1].lines_changed > 0


def test_one_process_run_freezes_the_heap_only_while_it_converts(tmp_path):
    """What is alive when the files start converting is left alone by the collector during
    the run, and handed back after it, also when the run is stopped half way."""
    import gc

    files = [str(write(tmp_path / f"m{i}.py", TF_SOURCE)) for i in range(3)]
    assert gc.get_freeze_count() == 0
    during = [gc.get_freeze_count() for _ in runner.run_files(files, runner.RuleSelection())]
    assert min(during) > 0 and gc.get_freeze_count() == 0
    results = runner.run_files(files, runner.RuleSelection())
    next(results)
    assert gc.get_freeze_count() > 0
    results.close()  # a consumer that stops early (an interrupt, an error writing)
    assert gc.get_freeze_count() == 0
    gc.freeze()  # a host that froze its own heap keeps it frozen
    try:
        assert gc.get_freeze_count() > 0
        list(runner.run_files(files, runner.RuleSelection()))
        assert gc.get_freeze_count() > 0  # (objects freed since leave the count, never the run)
    finally:
        gc.unfreeze()


def test_jobs_from_configuration_and_bad_jobs_flag(project):
    _mixed_tree(project / "src", n=6)
    pyproject(project, "[tool.migrate]\njobs = 2\n")
    proc = run_migrate("convert", "--check", "src", cwd=project)
    assert proc.returncode == 2 and "broken.py: error:" in proc.stderr
    bad = run_migrate("convert", "--jobs", "0", "src", cwd=project)
    assert bad.returncode == 2 and "positive integer" in bad.stderr


def test_exclude_patterns_from_configuration(project):
    pyproject(project, '[tool.migrate]\nexclude = ["third_party/*", "*_pb2.py", "generated"]\n')
    kept = {
        "third_party/lib/a.py": TF_SOURCE,
        "src/model_pb2.py": TF_SOURCE,
        "src/generated/b.py": TF_SOURCE,
    }
    for rel, text in kept.items():
        write(project / rel, text)
    converted = write(project / "src" / "train.py", TF_SOURCE)
    (project / "sub").mkdir()

    proc = run_migrate("convert", ".", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert converted.read_text() == CONVERTED
    for rel, text in kept.items():
        assert (project / rel).read_text() == text, rel
    # From a subdirectory the patterns still mean paths below the pyproject.toml.
    write(project / "third_party" / "lib" / "c.py", TF_SOURCE)
    proc = run_migrate("convert", os.path.join("..", "third_party"), cwd=project / "sub")
    assert proc.returncode == 0 and (project / "third_party" / "lib" / "c.py").read_text() == TF_SOURCE
    # Files named one by one (as pre-commit does) are excluded too, with a message.
    proc = run_migrate("check", "src/model_pb2.py", cwd=project)
    assert proc.returncode == 0, proc.stdout
    assert "model_pb2.py: skipped: excluded by configuration" in proc.stderr


def test_exclusion_matching():
    excluded = paths.exclusion(("third_party/*", "*_pb2.py", "build/"), base="/repo")
    assert excluded("/repo/third_party/x/y.py")
    assert excluded("/repo/src/a_pb2.py")
    assert excluded("/repo/build/lib/a.py")
    assert not excluded("/repo/src/third_party_utils.py")
    assert not excluded("/repo/src/build.py")


def test_discover_is_sorted_and_skips_tool_directories(tmp_path):
    for rel in ("b.py", "a.py", "sub/c.py", ".venv/x.py", "__pycache__/y.py", "node_modules/z.py", "notes.txt"):
        write(tmp_path / rel, "")
    files, passed_over = paths.discover([str(tmp_path)])
    assert [os.path.relpath(f, tmp_path) for f in files] == ["a.py", "b.py", os.path.join("sub", "c.py")]
    assert passed_over == []


@pytest.mark.parametrize("source, quoted", [
    # a refusal quoting an argument that spans lines: its comment used to fail the file
    ("import tensorflow as tf\n\ndef train(model, x, w):\n    with tf.GradientTape() as tape:\n        loss = model(x)\n"
     "    clip(loss, tape=tape,\n         other=1)\n    return tape.gradient(loss, w)\n", "(`tape=tape`)"),
    # a note quoting a value that spans lines
    ("import tensorflow as tf\n\nstrategy = tf.distribute.MirroredStrategy(\n    cross_device_ops=make_ops(\n        1))\n",
     "`cross_device_ops=make_ops( 1)` is not understood"),
])
def test_a_message_quoting_code_that_spans_lines_is_one_line(source, quoted):
    """`path:line:col: ID message` is one line, and so is a `# migrate:` comment, whatever code the message quotes."""
    out, findings = convert(source)
    assert any(quoted in f.message for f in findings), [f.message for f in findings]
    assert all("\n" not in f.format() for f in findings)
    if "tape" in source:  # the refusal is also a comment above the tape
        assert f"    # migrate: TFD701 not converted: the tape is used other than in one `tape.gradient(...)` call {quoted}\n" in out
    assert convert(out)[0] == out


def test_an_engine_error_is_converted_whole_and_reported_never_hidden(tmp_path, monkeypatch, capsys):
    """When the conversion of the file with statements set aside fails, a run converts the file
    whole (the output stays right) and reports the engine error; strict, the file fails."""
    from migrate.engine import convert, prune

    source = "import tensorflow as tf\n" + "".join(f"X{i} = {i}\n" for i in range(50)) + \
        "strategy = tf.distribute.MirroredStrategy()\n"
    f = write(tmp_path / "a.py", source)
    expected = convert.convert_source(source.encode(), runner.rule_index(runner.RuleSelection()), "a.py").converted
    monkeypatch.setattr(prune.Pruned, "restore", lambda self, code: None)  # as if a placeholder moved

    strict = convert.convert_source(source.encode(), runner.rule_index(runner.RuleSelection()), "a.py",
                                    ConvertOptions(fallback=False))
    assert strict.status == "failed" and strict.error.startswith("engine error: converting the file with statements "
                                                                 "set aside failed (a statement set aside did not come back")
    monkeypatch.setattr(convert, "DEFAULT_OPTIONS", ConvertOptions())  # a run's own
    monkeypatch.chdir(tmp_path)
    assert cli.main(["convert", "a.py", "--no-cache"]) == 0
    err = capsys.readouterr().err
    assert f.read_bytes() == expected
    assert "a.py: engine error: converting the file with statements set aside failed" in err
    assert "a bug of migrate's: please report it" in err
    assert err.rstrip().endswith("; 1 engine error(s), reported above")
