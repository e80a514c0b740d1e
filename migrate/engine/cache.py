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
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from migrate import __version__
from migrate.engine.findings import Finding

FORMAT = 1
MAGIC = b"migrate-cache\n"
# The files whose code decides a result; any edit to them is a new key space.
ENGINE_SOURCES = ("engine", "ops", "notebook.py", "rules.py", "__init__.py")
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
    import libcst

    h = hashlib.sha256()
    h.update(f"{FORMAT}\0{__version__}\0{sys.version}\0".encode())
    try:
        from importlib.metadata import version

        h.update(version("libcst").encode())
    except Exception:  # noqa: BLE001 - a vendored libcst has no metadata; its path still says which
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


def rules_fingerprint(rules, extra: str = "") -> str:
    """Every selected rule, in order (a rule is a frozen dataclass; its repr is its content)."""
    h = hashlib.sha256(extra.encode())
    for rule in rules:
        h.update(repr(rule).encode())
        h.update(b"\0")
    return h.hexdigest()


def _finding_to_json(f: Finding) -> dict:
    return {"type": type(f).__name__, **dataclasses.asdict(f)}


def _finding_from_json(d: dict, path: str) -> Finding:
    kind = d.pop("type")
    d["path"] = path
    if kind == "Finding":
        return Finding(**d)
    if kind == "CellFinding":
        from migrate.notebook import CellFinding

        return CellFinding(**d)
    raise ValueError(f"unknown finding type {kind!r}")


@dataclass(frozen=True)
class Cache:
    """Picklable: worker processes get the same directory and key space."""

    directory: str
    namespace: str  # hash of code + rules + options: one sub-directory per key space

    @classmethod
    def open(cls, directory: str | os.PathLike | None, rules, options: str = "") -> "Cache":
        root = Path(directory) if directory else default_dir()
        namespace = hashlib.sha256(f"{code_fingerprint()}\0{rules_fingerprint(rules, options)}".encode()).hexdigest()[:32]
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
        from migrate.engine.runner import FileResult

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
            return FileResult(path, status, findings=findings, error=meta["error"], original=data, converted=converted)
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
        }
        payload = json.dumps(meta, separators=(",", ":")).encode() + b"\n" + body
        blob = MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
        entry = self._entry(self.key(result.path, data))
        tmp = None
        try:
            if not entry.parent.is_dir():
                self._make_dirs(entry.parent)
            fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".entry.", suffix=".tmp")
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
            os.replace(tmp, entry)
            tmp = None
        except (OSError, ValueError):
            pass
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def _make_dirs(self, leaf: Path) -> None:
        root = Path(self.directory)
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
