"""The content-hash cache: a warm run converts nothing again, and never serves a stale result."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from migrate import cli, filetypes
from migrate.engine import cache as result_cache
from migrate.engine import runner
from tests.cli_helpers import TF_SOURCE, pyproject, run_migrate, snapshot, write, write_rule
from tests.helpers import convert

CONVERTED, _ = convert(TF_SOURCE)
LEGACY = "import legacy\nlegacy.sync()\n"

NOTEBOOK = json.dumps(
    {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "cells": [
            {"cell_type": "code", "id": "a", "metadata": {}, "outputs": [], "execution_count": None,
             "source": ["import tensorflow as tf\n", "strategy = tf.distribute.MirroredStrategy()\n"]},
            {"cell_type": "code", "id": "b", "metadata": {}, "outputs": [], "execution_count": None,
             "source": ["with strategy.scope():\n", "    model = build()\n", "x = strategy.run(step)\n"]},
        ],
    },
    indent=1,
) + "\n"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("MIGRATE_CACHE_DIR", str(directory))
    monkeypatch.delenv("MIGRATE_NO_CACHE", raising=False)
    return directory


@pytest.fixture
def project(tmp_path, cache_dir):
    root = tmp_path / "proj"
    pyproject(root)
    write(root / "src" / "a.py", TF_SOURCE)
    write(root / "src" / "b.py", "import numpy as np\n")
    write(root / "src" / "broken.py", "import tensorflow as tf\ndef f(:\n")
    write(root / "src" / "nb.ipynb", NOTEBOOK)
    return root


class Conversions:
    """Counts the files really converted (not served from the cache)."""

    def __init__(self, monkeypatch) -> None:
        self.paths: list[str] = []
        real = filetypes.convert_file

        def counting(data, index, path, *args, **kwargs):
            self.paths.append(os.path.basename(path))
            return real(data, index, path, *args, **kwargs)

        monkeypatch.setattr(filetypes, "convert_file", counting)
        monkeypatch.setattr(cli, "convert_file", counting)


def run(capsys, *args) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def entries(cache_dir: Path) -> list[Path]:
    return [p for p in cache_dir.rglob("*") if p.is_file() and p.parent.parent.parent.name.startswith("v")]


def test_a_second_run_converts_nothing_and_gives_the_same_results(project, cache_dir, monkeypatch, capsys):
    conversions = Conversions(monkeypatch)
    first = run(capsys, "check", str(project / "src"))
    assert sorted(conversions.paths) == ["a.py", "b.py", "broken.py", "nb.ipynb"]
    conversions.paths.clear()
    second = run(capsys, "check", str(project / "src"))
    assert conversions.paths == []
    assert second == first  # exit code, findings (notebook cells too), errors, summary
    assert "broken.py: error: cannot parse" in second[2]
    assert "nb.ipynb:cell 2:" in second[1]


def test_out_from_the_cache_is_the_same_tree_and_rewrites_nothing(project, cache_dir, monkeypatch, capsys):
    conversions = Conversions(monkeypatch)
    assert run(capsys, "convert", str(project / "src"), "--out", str(project / "out1"))[0] == 2
    conversions.paths.clear()
    assert run(capsys, "convert", str(project / "src"), "--out", str(project / "out2"))[0] == 2
    assert conversions.paths == []
    assert snapshot(project / "out1") == snapshot(project / "out2")
    assert (project / "out2" / "a.py").read_text() == CONVERTED
    # Into the same --out again: nothing is rewritten (same inode, same mtime).
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (project / "out2").rglob("*") if p.is_file()}
    assert run(capsys, "convert", str(project / "src"), "--out", str(project / "out2"))[0] == 2
    after = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (project / "out2").rglob("*") if p.is_file()}
    assert after == before


def test_in_place_conversion_then_a_warm_check(project, cache_dir, monkeypatch, capsys):
    assert run(capsys, "convert", str(project / "src"))[0] == 2
    assert (project / "src" / "a.py").read_text() == CONVERTED
    conversions = Conversions(monkeypatch)
    assert run(capsys, "convert", str(project / "src"), "--check")[0] == 2  # converts the new contents once
    assert "a.py" in conversions.paths
    conversions.paths.clear()
    code, _, err = run(capsys, "convert", str(project / "src"), "--check")
    assert conversions.paths == [] and code == 2
    assert "0 file(s) would change" in err


def test_a_changed_file_is_converted_again(project, cache_dir, monkeypatch, capsys):
    run(capsys, "check", str(project / "src"))
    conversions = Conversions(monkeypatch)
    write(project / "src" / "b.py", TF_SOURCE.replace("build()", "make()"))
    code, out, _ = run(capsys, "convert", str(project / "src"), "--diff")
    assert conversions.paths == ["b.py"]
    assert "src/b.py\n" in out and "\n+model = make()\n" in out


def test_a_changed_rule_invalidates(tmp_path, cache_dir):
    """Separate processes, as in real use (one process keeps the rules it loaded)."""
    root = tmp_path / "proj"
    pyproject(root, '[tool.migrate]\nrules-dirs = ["my_rules"]\n')
    write(root / "src" / "legacy_use.py", LEGACY)
    env = {"MIGRATE_CACHE_DIR": str(cache_dir)}
    write_rule(root / "my_rules", summary="The first summary.")
    assert "The first summary." in run_migrate("check", "src", cwd=root, env=env).stdout
    assert "The first summary." in run_migrate("check", "src", cwd=root, env=env).stdout  # from the cache
    write_rule(root / "my_rules", summary="The second summary.")
    assert "The second summary." in run_migrate("check", "src", cwd=root, env=env).stdout
    assert len(entries(cache_dir)) == 2


def test_select_ignore_and_max_file_size_are_part_of_the_key(project, cache_dir, monkeypatch, capsys):
    run(capsys, "check", str(project / "src"))
    conversions = Conversions(monkeypatch)
    _, out, _ = run(capsys, "check", str(project / "src"), "--ignore", "TFD1")
    assert "a.py" in conversions.paths
    assert "TFD1" not in out
    conversions.paths.clear()
    pyproject(project, '[tool.migrate]\nmax-file-size = "50"\n')
    code, _, err = run(capsys, "check", str(project / "src"))
    assert "a.py" in conversions.paths
    assert "a.py: error: too large to convert" in err and code == 2


def test_a_change_to_the_engine_code_invalidates(project, cache_dir, monkeypatch, capsys):
    run(capsys, "check", str(project / "src"))
    result_cache.code_fingerprint.cache_clear()
    monkeypatch.setattr(result_cache, "code_fingerprint", lambda: "an edited engine")
    conversions = Conversions(monkeypatch)
    run(capsys, "check", str(project / "src"))
    assert sorted(conversions.paths) == ["a.py", "b.py", "broken.py", "nb.ipynb"]


def test_code_fingerprint_follows_the_engine_sources():
    fingerprint = result_cache.code_fingerprint()
    assert len(fingerprint) == 64
    package = Path(result_cache.__file__).resolve().parent.parent
    assert (package / "engine" / "codemod.py").is_file()  # one of the files it hashes


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],  # truncated
        lambda b: b[:-3] + bytes([b[-3] ^ 0x20]) + b[-2:],  # one flipped bit in the payload
        lambda b: b"",
        lambda b: b"\x00" * len(b),
        lambda b: b.replace(b'"status":"changed"', b'"status":"unchanged"'),  # a plausible edit: the digest catches it
    ],
    ids=["truncated", "bit-flip", "empty", "zeros", "edited"],
)
def test_a_damaged_entry_is_ignored(project, cache_dir, monkeypatch, capsys, damage):
    run(capsys, "check", str(project / "src"))
    for entry in entries(cache_dir):
        entry.write_bytes(damage(entry.read_bytes()))
    conversions = Conversions(monkeypatch)
    code, _, err = run(capsys, "convert", str(project / "src"), "--out", str(project / "out"))
    assert {"a.py", "nb.ipynb"} <= set(conversions.paths)  # the entries holding converted bytes
    assert (project / "out" / "a.py").read_text() == CONVERTED
    assert code == 2 and "1 failed" in err


def test_unrelated_files_in_the_cache_directory_are_harmless(project, cache_dir, capsys):
    run(capsys, "check", str(project / "src"))
    for entry in entries(cache_dir):
        (entry.parent / "junk").write_bytes(b"junk")
        entry.unlink()
        entry.mkdir()  # a directory where an entry should be
    assert run(capsys, "convert", str(project / "src"), "--out", str(project / "out"))[0] == 2
    assert (project / "out" / "a.py").read_text() == CONVERTED


def test_no_cache_flag_and_environment(project, cache_dir, monkeypatch, capsys):
    run(capsys, "check", str(project / "src"), "--no-cache")
    assert not cache_dir.exists()
    monkeypatch.setenv("MIGRATE_NO_CACHE", "1")
    run(capsys, "check", str(project / "src"))
    assert not cache_dir.exists()
    monkeypatch.delenv("MIGRATE_NO_CACHE")
    run(capsys, "check", str(project / "src"))
    assert len(entries(cache_dir)) == 4
    assert (cache_dir / ".gitignore").read_text().endswith("*\n")
    assert (cache_dir / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_cache_dir_in_the_project_is_skipped_by_discovery(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MIGRATE_CACHE_DIR", raising=False)
    monkeypatch.delenv("MIGRATE_NO_CACHE", raising=False)
    root = tmp_path / "proj"
    pyproject(root, '[tool.migrate]\ncache-dir = ".migrate_cache"\n')
    write(root / "a.py", TF_SOURCE)
    assert run(capsys, "convert", str(root), "--check")[0] == 1
    assert (root / ".migrate_cache").is_dir()
    assert len(entries(root / ".migrate_cache")) == 1
    code, _, err = run(capsys, "convert", str(root), "--check")
    assert code == 1 and "1 file(s) would change, 0 unchanged" in err


def test_an_unwritable_cache_directory_only_means_no_cache(project, tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("MIGRATE_CACHE_DIR", str(blocker / "cache"))
    code, out, err = run(capsys, "convert", str(project / "src"), "--out", str(project / "out"))
    assert code == 2 and [line for line in err.splitlines() if "error" in line] == [
        f"{project / 'src' / 'broken.py'}: error: cannot parse: line 2, column 7: invalid syntax"
    ]
    assert (project / "out" / "a.py").read_text() == CONVERTED


def test_a_full_disk_under_the_cache_leaves_no_temporary_file(project, cache_dir, monkeypatch, capsys):
    """The rule manifest and every entry fail to write (ENOSPC once their temporary file is
    made): the run converts as without a cache, and the cache directory holds no leftovers."""
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def write(self, data):
            raise OSError(28, "No space left on device")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()
            return False

    def fdopen(fd, *args, **kwargs):
        fh = real_fdopen(fd, *args, **kwargs)
        in_cache = os.readlink(f"/proc/self/fd/{fd}").startswith(str(cache_dir))
        return Full(fh) if in_cache else fh

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc to tell the cache's files from the others")
    monkeypatch.setattr(os, "fdopen", fdopen)
    code, out, err = run(capsys, "convert", str(project / "src"), "--out", str(project / "out"))
    monkeypatch.setattr(os, "fdopen", real_fdopen)
    assert code == 2 and (project / "out" / "a.py").read_text() == CONVERTED
    made = [p.name for p in cache_dir.rglob("*") if p.is_file()]
    assert sorted(made) == [".gitignore", "CACHEDIR.TAG"]  # no entry, no manifest, no temporary file
    # ...and the next run, with room, fills the cache from nothing.
    code, _, _ = run(capsys, "convert", str(project / "src"), "--out", str(project / "out2"))
    assert code == 2 and len(entries(cache_dir)) == 4


def test_failures_that_may_not_recur_are_not_stored(tmp_path, cache_dir):
    cache = result_cache.Cache.open(cache_dir, ())
    data = TF_SOURCE.encode()
    for error in ("internal error in a rule (RuntimeError: x)", "too deeply nested to convert", "the converter crashed"):
        result = runner.FileResult(str(tmp_path / "a.py"), "failed", error=error, original=data)
        assert not runner._deterministic(result)
    parse_error = runner.FileResult(str(tmp_path / "a.py"), "failed", error="cannot parse: line 1", original=data)
    assert runner._deterministic(parse_error)
    cache.put(parse_error, data)
    hit = cache.get(str(tmp_path / "a.py"), data)
    assert hit is not None and hit.status == "failed" and hit.error == "cannot parse: line 1"
    assert cache.get(str(tmp_path / "b.py"), data) is None  # the path is part of the key
    assert cache.get(str(tmp_path / "a.py"), data + b"\n") is None


def test_a_run_served_from_the_cache_does_not_import_libcst(tmp_path, cache_dir):
    """The rules' ids and digests are remembered by the bytes of the rule files; libcst waits for a miss."""
    root = tmp_path / "proj"
    pyproject(root)
    write(root / "src" / "a.py", TF_SOURCE)
    env = {"MIGRATE_CACHE_DIR": str(cache_dir), "PYTHONPROFILEIMPORTTIME": "1"}
    first = run_migrate("check", "src", cwd=root, env=env)
    assert "libcst" in first.stderr
    second = run_migrate("check", "src", cwd=root, env=env)
    assert second.returncode == first.returncode and second.stdout == first.stdout
    assert "libcst" not in second.stderr  # nor the engine, nor the rules parsed (their ops need libcst)
    # a typo in --select is still an error, from the remembered ids
    bad = run_migrate("check", "src", "--select", "TFQ", cwd=root, env=env)
    assert bad.returncode == 2 and "'TFQ' is not a rule id or id prefix" in bad.stderr


def test_a_rule_file_broken_after_a_warm_run_still_stops_the_run(tmp_path, cache_dir):
    root = tmp_path / "proj"
    pyproject(root, '[tool.migrate]\nrules-dirs = ["my_rules"]\n')
    write(root / "src" / "legacy_use.py", LEGACY)
    env = {"MIGRATE_CACHE_DIR": str(cache_dir)}
    rule = write_rule(root / "my_rules")
    assert run_migrate("check", "src", cwd=root, env=env).returncode == 1
    rule.write_text(rule.read_text() + "operation: [not, valid\n")
    broken = run_migrate("check", "src", cwd=root, env=env)
    assert broken.returncode == 2 and "XTR901" in broken.stderr and "not valid YAML" in broken.stderr
