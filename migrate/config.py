"""Configuration from ``[tool.migrate]`` in pyproject.toml.

Looked up like ruff and black do: the nearest pyproject.toml at or above the
common parent of the paths given (or the current directory). Command-line flags
win over the file.

```toml
[tool.migrate]
select = ["TFD"]           # rule ids or id prefixes
ignore = ["TFD502"]
exclude = ["third_party/*", "*_pb2.py"]   # relative to this file; no '/': any path part
jobs = 2
rules-dirs = ["tools/migrate_rules"]   # extra rule directories, relative to pyproject.toml
cache-dir = ".migrate_cache"   # where results are cached (default: $XDG_CACHE_HOME/migrate)
max-file-size = "1MB"          # larger files a rule may match are reported, not converted
```
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from migrate.safe_io import read_source

KNOWN_KEYS = {"select", "ignore", "exclude", "jobs", "rules-dirs", "cache-dir", "max-file-size", "tier"}
# The output tiers (see migrate.ops.native): "native" lowers to MindSpore's own API where proven
# equal (the TFL rules); "shim" keeps every conversion on migrate.runtime.
TIERS = ("native", "shim")
# The rules only the native tier applies.
NATIVE_RULES = "TFL"
_SIZE_UNITS = {"": 1, "B": 1, "KB": 1000, "K": 1000, "KIB": 1024, "MB": 1000**2, "M": 1000**2, "MIB": 1024**2, "GB": 1000**3, "G": 1000**3, "GIB": 1024**3}


# More worker processes than this is a typo; a run also never starts more than it has files or CPUs.
MAX_JOBS = 1024


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    jobs: int | None = None
    rules_dirs: tuple[str, ...] = ()
    source: str | None = None
    cache_dir: str | None = None
    max_file_size: int | None = None
    tier: str = "native"


# Past this a size is surely a typo (and float('1e400') is infinite): a terabyte of source.
MAX_SIZE = 1000**4


def parse_size(value) -> int | None:
    """Bytes from ``1000000``, ``"512KB"``, ``"1MiB"``, ``"2 MB"``; None if it is not a size
    (not a finite, positive number of at most a terabyte, with a known unit)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 < value <= MAX_SIZE else None
    if not isinstance(value, str):
        return None
    text = value.strip().upper().replace(" ", "")
    number = text.rstrip("KMGIB")
    unit = text[len(number):]
    try:
        amount = float(number)
    except ValueError:
        return None
    if unit not in _SIZE_UNITS or not math.isfinite(amount) or amount <= 0:
        return None
    size = int(amount * _SIZE_UNITS[unit])
    return size if 0 < size <= MAX_SIZE else None


def _read_text(path: Path) -> str:
    """A configuration file's text; a named pipe or device is refused, not waited on."""
    return read_source(str(path)).decode("utf-8")


def find_pyproject(paths: list[str]) -> Path | None:
    starts = [Path(p).resolve() for p in paths] or [Path.cwd()]
    try:
        common = Path(os.path.commonpath([str(p) for p in starts]))
    except ValueError:
        common = Path.cwd()
    if common.is_file():
        common = common.parent
    for directory in (common, *common.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _str_list(path: Path, key: str, value) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: [tool.migrate] {key} must be a list of strings, not {value!r}")
    return tuple(value)


def load_config(paths: list[str], explicit: str | None = None) -> Config:
    path = Path(explicit) if explicit else find_pyproject(paths)
    if path is None:
        return Config()
    try:
        data = tomllib.loads(_read_text(path))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read configuration: not UTF-8 text (byte {exc.start}); TOML files are UTF-8") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}") from None
    tool = data.get("tool", {})
    section = tool.get("migrate") if isinstance(tool, dict) else None
    if section is None:
        return Config()
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.migrate] must be a table, not {type(section).__name__}")
    unknown = set(section) - KNOWN_KEYS
    if unknown:
        raise ConfigError(f"{path}: [tool.migrate] has unknown keys: {', '.join(sorted(unknown))} (known: {', '.join(sorted(KNOWN_KEYS))})")
    jobs = section.get("jobs")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS):
        raise ConfigError(f"{path}: [tool.migrate] jobs must be an integer from 1 to {MAX_JOBS}, not {jobs!r}")
    rules_dirs = tuple(str((path.parent / d).resolve()) for d in _str_list(path, "rules-dirs", section.get("rules-dirs", [])))
    cache_dir = section.get("cache-dir")
    if cache_dir is not None:
        if not isinstance(cache_dir, str) or not cache_dir.strip():
            raise ConfigError(f"{path}: [tool.migrate] cache-dir must be a directory name, not {cache_dir!r}")
        cache_dir = str((path.parent / os.path.expanduser(cache_dir)).resolve())
    max_file_size = section.get("max-file-size")
    if max_file_size is not None:
        size = parse_size(max_file_size)
        if size is None:
            raise ConfigError(f"{path}: [tool.migrate] max-file-size must be a positive size of at most 1TB, in bytes "
                              f"(1000000) or with a unit (\"1MB\", \"512KiB\"), not {max_file_size!r}")
        max_file_size = size
    tier = section.get("tier", "native")
    if tier not in TIERS:
        raise ConfigError(f"{path}: [tool.migrate] tier must be one of {', '.join(map(repr, TIERS))}, not {tier!r}")
    return Config(
        tier=tier,
        select=_str_list(path, "select", section.get("select", [])),
        ignore=_str_list(path, "ignore", section.get("ignore", [])),
        exclude=_str_list(path, "exclude", section.get("exclude", [])),
        jobs=jobs,
        rules_dirs=rules_dirs,
        source=str(path),
        cache_dir=cache_dir,
        max_file_size=max_file_size,
    )
