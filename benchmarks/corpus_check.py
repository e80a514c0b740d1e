"""The fuzz tests' properties, checked on every file of a real tree.

    python benchmarks/corpus_check.py path/to/tf/repo            # every .py and .ipynb file under it
    python benchmarks/corpus_check.py path/to/tf/repo --jobs 2   # in worker processes

``tests/test_fuzz.py`` checks these on generated and mutated programs; real trees hold
shapes neither makes (a class's trailing comment at the end of a file, a parameter whose
default is an imported name), so before a release the same properties are worth checking
on large TensorFlow code bases. For each file, in this process (the tree is only read):

- ``crash``: the engine fails a file CPython compiles (an internal error, a libcst limit,
  also one converting the pruned module, which a run would retry on the whole file), or a
  notebook with an internal error;
- ``untouched``: a file with nothing found, or reported unchanged, comes out different;
- ``parses``: the output of a file CPython compiles does not compile (of a notebook that
  is JSON, is not JSON);
- ``idempotent``: converting the output again changes it;
- ``pruning``: setting statements aside and the import table (the default) give another
  status, output or findings than converting the whole file with libcst's scope analysis;
- ``shadows``: an import the conversion added binds a name the file used for something
  else (``from mindspore import ops`` over TensorFlow's ``ops``), which every later use of
  that name would then mean;
- ``mixes``: a call left TensorFlow is given something an import the conversion added
  binds (``tf.Variable(0, dtype=ms.int64)``): TensorFlow would receive a MindSpore value.

Prints one line per file that breaks a property (the property, the path, what differs)
and a summary; exits 1 if any property broke, 0 if none.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from migrate.engine.aliases import shadowed_names  # noqa: E402
from migrate.engine.tfvalues import mixed_calls  # noqa: E402
from migrate.engine.paths import SKIP_DIRS  # noqa: E402
from migrate.engine.results import ConvertOptions  # noqa: E402
from migrate.engine.runner import RuleSelection, rule_index  # noqa: E402
from migrate.filetypes import convert_file  # noqa: E402
from migrate.notebook import NOTEBOOK_SUFFIX  # noqa: E402

PROPERTIES = ("crash", "untouched", "parses", "idempotent", "pruning", "shadows", "mixes")


def _compiles(data: bytes, path: str) -> bool:
    """CPython compiles it (a notebook: it is JSON; its cells may hold IPython syntax)."""
    if path.endswith(NOTEBOOK_SUFFIX):
        try:
            json.loads(data)
            return True
        except ValueError:
            return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (invalid escape sequences and the like)
        try:
            ast.parse(data)
            return True
        except (SyntaxError, ValueError):
            return False


# An engine error is the file's failure here (a run would convert the file whole and say so).
_PRUNED = ConvertOptions(fallback=False)
_WHOLE = ConvertOptions(pruning=False, scope_shortcut=False, fallback=False)


def _convert(data: bytes, path: str, whole: bool = False):
    """The conversion a run makes (no size limit); ``whole``: of the whole file, with libcst's scope analysis."""
    return convert_file(data, rule_index(RuleSelection()), path, None, _WHOLE if whole else _PRUNED)


def _engine_failure(result, data: bytes, path: str) -> bool:
    if path.endswith(NOTEBOOK_SUFFIX):
        return result.error.startswith(("internal error", "too deeply nested"))
    return _compiles(data, path) and not result.error.startswith(("not valid", "cannot read source encoding"))


def check_file(path: str) -> list[tuple[str, str]]:
    """The (property, detail) pairs ``path`` breaks."""
    data = Path(path).read_bytes()
    broken: list[tuple[str, str]] = []
    first = _convert(data, path)
    if first.status == "failed":
        if _engine_failure(first, data, path):
            broken.append(("crash", first.error))
        return broken
    out = first.converted
    if (first.status == "unchanged" or not first.findings) and out != data:
        broken.append(("untouched", f"{first.status}, {len(first.findings)} finding(s), yet the bytes changed"))
    if _compiles(data, path) and not _compiles(out, path):
        broken.append(("parses", "the output does not compile"))
    elif first.status == "changed" and not path.endswith(NOTEBOOK_SUFFIX):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            before, after = ast.parse(data), ast.parse(out)
            taken = shadowed_names(before, after)
            mixed = mixed_calls(before, after)
        if taken:
            broken.append(("shadows", f"an added import takes {', '.join(sorted(taken))} from the file's own code"))
        if mixed:
            broken.append(("mixes", f"a call left TensorFlow is given MindSpore: {mixed[0][:120]}"))
    again = _convert(out, path)
    if again.status == "failed" or again.converted != out:
        broken.append(("idempotent", again.error if again.status == "failed" else "a second run changes the output"))
    whole = _convert(data, path, whole=True)
    if (whole.status, whole.converted, whole.findings) != (first.status, first.converted, first.findings):
        what = ("status" if whole.status != first.status else "output" if whole.converted != first.converted
                else "findings")
        broken.append(("pruning", f"the whole-file conversion gives another {what}"))
    return broken


def _check(path: str) -> tuple[str, int, list[tuple[str, str]]]:
    try:
        lines = Path(path).read_bytes().count(b"\n")
    except OSError as exc:
        return path, 0, [("crash", f"cannot read: {exc}")]
    try:
        return path, lines, check_file(path)
    except Exception as exc:  # noqa: BLE001 - the engine never raises: that is a property too
        return path, lines, [("crash", f"raised {type(exc).__name__}: {exc}")]


def python_files(root: Path) -> list[str]:
    found = []
    for top, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        found += [os.path.join(top, n) for n in sorted(names)
                  if n.endswith((".py", NOTEBOOK_SUFFIX)) and not os.path.islink(os.path.join(top, n))]
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", help="a directory of Python code (read, never written)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    args = parser.parse_args(argv)
    root = Path(args.tree)
    if not root.is_dir():
        print(f"{root}: not a directory", file=sys.stderr)
        return 2
    files = python_files(root)
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(_check, files, chunksize=8))
    else:
        results = [_check(f) for f in files]
    counts = dict.fromkeys(PROPERTIES, 0)
    for path, _, broken in results:
        for prop, detail in broken:
            counts[prop] += 1
            print(f"{prop}: {path}: {detail}")
    lines = sum(n for _, n, _ in results)
    bad = sum(1 for _, _, broken in results if broken)
    print(f"{len(files)} file(s), {lines:,} line(s): {bad} break a property ("
          + ", ".join(f"{prop} {n}" for prop, n in counts.items()) + ")")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
