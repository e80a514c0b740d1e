"""A content-hash cache of per-file results, so a second run over an unchanged tree is cheap.

An entry is keyed by everything that decides a file's result and nothing else:

- the file's bytes and its path (findings carry the path; ``.ipynb`` converts differently),
- the rule set in use: every selected rule, parameters and examples included, so a
  changed rule file, ``--select``/``--ignore`` or ``rules-dirs`` is a different key,
- the code that converts: migrate's version, a hash of the engine's own source files
  (engine, ops, rules loader, notebooks), libcst's version and Python's, so an edited
  checkout or an upgraded dependency never reads an older result.

The value is the result's status, error, findings and, for a changed file, the
converted bytes (an unchanged file's output is its input). Entries are written
through a temporary file and a rename, so concurrent runs never read half an entry,
and each carries a hash of its own payload: a truncated or corrupted entry is
ignored (and converted again), never served. Failures that are not a property of
the bytes (a crash, a recursion limit, an unreadable file) are not stored.

Where: ``cache-dir`` in ``[tool.migrate]``, else ``$MIGRATE_CACHE_DIR``, else
``$XDG_CACHE_HOME/migrate`` (``~/.cache/migrate``). Not inside the project by
default, because ``check``, ``--check`` and ``--diff`` promise to write nothing in
the tree (``cache-dir = ".migrate_cache"`` puts it there; discovery skips that name).
``--no-cache`` (or ``MIGRATE_NO_CACHE=1``) turns it off. Deleting the directory is
always safe.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from migrate import __version__
from migrate.engine.findings import CellFinding, Finding
from migrate.engine.writes import temporary_beside
from migrate.rules import rule_files

FORMAT = 1
MAGIC = b"migrate-cache\n"
# The files whose code decides a result; any edit to them is a new key space.
ENGINE_SOURCES = ("engine", "ops", "notebook.py", "filetypes.py", "safe_io.py", "rules.py", "__init__.py")
CACHEABLE = ("changed", "unchanged", "skipped", "failed")


def default_dir() -> Path:
    env = os.environ.get("MIGRATE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "migrate"


def disabled_by_environment() -> bool:
    return os.environ.get("MIGRATE_NO_CACHE", "") not in ("", "0")


@lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """migrate's version, the engine's source, libcst's and Python's versions."""
    h = hashlib.sha256()
    h.update(f"{FORMAT}\0{__version__}\0{sys.version}\0".encode())
    try:
        from importlib.metadata import version

        h.update(version("libcst").encode())
    except Exception:  # noqa: BLE001 - a vendored libcst has no metadata; its path still says which
        import libcst

        h.update(str(getattr(libcst, "__file__", "")).encode())
    package = Path(__file__).resolve().parent.parent
    for name in ENGINE_SOURCES:
        top = package / name
        files = sorted(top.rglob("*.py")) if top.is_dir() else [top]
        for f in files:
            try:
                h.update(f.relative_to(package).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
            except OSError:
                h.update(b"?")
    return h.hexdigest()


def rule_digest(rule) -> str:
    """A rule's content: its file's bytes (and place) as read; for a rule made in code, its repr
    (a rule is a frozen dataclass; its repr is its content)."""
    return rule.digest or hashlib.sha256(repr(rule).encode()).hexdigest()


def rules_fingerprint(rules, extra: str = "") -> str:
    """Every selected rule, in order."""
    return digests_fingerprint([rule_digest(rule) for rule in rules], extra)


def digests_fingerprint(digests, extra: str = "") -> str:
    h = hashlib.sha256(extra.encode())
    for digest in digests:
        h.update(digest.encode() + b"\0")
    return h.hexdigest()


def rule_files_digest(directories) -> str:
    """The bytes of every rule file in ``directories`` (as :func:`migrate.rules.load_rules_from` finds them)."""
    h = hashlib.sha256(code_fingerprint().encode())
    for directory in directories:
        root = Path(directory)
        h.update(b"\1" + str(root).encode() + b"\0")
        for path in rule_files(root):
            h.update(path.relative_to(root).as_posix().encode() + b"\0")
            try:
                h.update(path.read_bytes() if path.is_file() else b"<not a file>")
            except OSError:
                h.update(b"<unreadable>")
            h.update(b"\0")
    return h.hexdigest()


def rule_manifest(directory: str | os.PathLike | None, rule_dirs: tuple[str, ...], load) -> list[tuple[str, str]]:
    """(id, content digest) of every rule, in order, remembered in the cache by the bytes of the rule files.

    Parsing the rules (YAML, each operation checking its parameters) needs the engine,
    libcst included; a run whose every file is cached needs neither, so the rules are
    parsed only when their files changed (``load()`` then parses them and may raise;
    nothing is remembered for rules that do not load).
    """
    root = Path(directory) if directory else default_dir()
    entry = root / f"v{FORMAT}" / "rules" / f"{rule_files_digest(rule_dirs)[:32]}.json"
    try:
        data = json.loads(entry.read_text(encoding="utf-8"))
        if isinstance(data, list) and all(isinstance(r, list) and len(r) == 2 and all(isinstance(x, str) for x in r) for r in data):
            return [(a, b) for a, b in data]
    except (OSError, ValueError):
        pass
    found = [(rule.id, rule_digest(rule)) for rule in load()]
    try:
        if not entry.parent.is_dir():
            _make_dirs(root, entry.parent)
        _store(entry, json.dumps(found).encode())
    except OSError:
        pass
    return found


def _store(entry: Path, data: bytes) -> None:
    """``entry`` holds ``data`` whole, or is as it was; no temporary file is left either way."""
    with temporary_beside(entry) as (fd, tmp):
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, entry)


def _finding_to_json(f: Finding) -> dict:
    # Flat records of strings and numbers: dataclasses.asdict's deep copy is not needed.
    return {"type": type(f).__name__, **{field.name: getattr(f, field.name) for field in _fields(type(f))}}


@lru_cache(maxsize=None)
def _fields(cls: type) -> tuple:
    return dataclasses.fields(cls)


def _finding_from_json(d: dict, path: str) -> Finding:
    kind = d.pop("type")
    d["path"] = path
    if kind == "Finding":
        return Finding(**d)
    if kind == "CellFinding":
        return CellFinding(**d)
    raise ValueError(f"unknown finding type {kind!r}")


@dataclass(frozen=True)
class Cache:
    """Picklable: worker processes get the same directory and key space."""

    directory: str
    namespace: str  # hash of code + rules + options: one sub-directory per key space

    @classmethod
    def open(cls, directory: str | os.PathLike | None, rules, options: str = "", *, digests=None) -> "Cache":
        """The cache for these rules (or their content ``digests``, see :func:`rule_manifest`) and options."""
        root = Path(directory) if directory else default_dir()
        rules_part = digests_fingerprint(digests, options) if digests is not None else rules_fingerprint(rules, options)
        namespace = hashlib.sha256(f"{code_fingerprint()}\0{rules_part}".encode()).hexdigest()[:32]
        return cls(str(root), namespace)

    def key(self, path: str, data: bytes) -> str:
        h = hashlib.sha256(self.namespace.encode())
        h.update(b"\0" + os.path.abspath(path).encode("utf-8", "surrogateescape") + b"\0")
        h.update(data)
        return h.hexdigest()

    def _entry(self, key: str) -> Path:
        return Path(self.directory) / f"v{FORMAT}" / self.namespace / key[:2] / key

    def get(self, path: str, data: bytes):
        """The stored result for these bytes at this path, or None (missing, unreadable or corrupt)."""
        from migrate.engine.results import FileResult

        try:
            raw = self._entry(self.key(path, data)).read_bytes()
        except OSError:
            return None
        try:
            if not raw.startswith(MAGIC):
                return None
            digest, _, payload = raw[len(MAGIC):].partition(b"\n")
            if hashlib.sha256(payload).hexdigest().encode() != digest:
                return None
            head, _, body = payload.partition(b"\n")
            meta = json.loads(head)
            status = meta["status"]
            if status not in CACHEABLE or len(body) != meta["size"]:
                return None
            converted = body if meta["stored"] else (data if status in ("unchanged", "skipped") else b"")
            findings = [_finding_from_json(dict(d), path) for d in meta["findings"]]
            return FileResult(path, status, findings=findings, error=meta["error"], original=data, converted=converted,
                              lines_changed=meta.get("lines") or 0)
        except Exception:  # noqa: BLE001 - a damaged entry is a miss, whatever is wrong with it
            return None

    def put(self, result, data: bytes) -> None:
        """Store ``result`` for ``data``; any error (full disk, read-only home) just means no entry."""
        if result.status not in CACHEABLE:
            return
        stored = result.status == "changed"
        body = result.converted if stored else b""
        meta = {
            "status": result.status,
            "error": result.error,
            "findings": [_finding_to_json(f) for f in result.findings],
            "stored": stored,
            "size": len(body),
            "lines": result.lines_changed,
        }
        payload = json.dumps(meta, separators=(",", ":")).encode() + b"\n" + body
        blob = MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
        entry = self._entry(self.key(result.path, data))
        try:
            if not entry.parent.is_dir():
                self._make_dirs(entry.parent)
            _store(entry, blob)
        except (OSError, ValueError):
            pass

    def _make_dirs(self, leaf: Path) -> None:
        _make_dirs(Path(self.directory), leaf)


def _make_dirs(root: Path, leaf: Path) -> None:
    fresh = not root.exists()
    leaf.mkdir(parents=True, exist_ok=True)
    if fresh:
        # Like .ruff_cache: version control and backup tools leave the directory alone.
        try:
            (root / ".gitignore").write_text("# Automatically created by migrate.\n*\n")
            (root / "CACHEDIR.TAG").write_text(
                "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by migrate.\n"
            )
        except OSError:
            pass
