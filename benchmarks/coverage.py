"""How much of a tree of real TF code converts with no hand edits.

    python benchmarks/coverage.py DIR [DIR ...] [--top N] [--json FILE]

For each DIR (one repository, or the part of it that holds training code)
this converts every ``.py`` and ``.ipynb`` file into a scratch directory with
``migrate convert --out`` (so nothing under DIR is written) and prints:

- the TF API uses found, split into converted statically, handed to
  ``migrate.runtime`` at run time, and left for a person (manual), per API;
- the files with nothing left for a person;
- the files whose converted text still imports TensorFlow, and whether the
  converted file says why (a ``# migrate:`` line naming what stays);
- where the converted uses went: MindSpore's own API, ``migrate.runtime`` (the shim:
  ``mk``, ``tfdata``, ``spmd``, ...), or plain Python (a scope dissolved, a call removed),
  by what the converting rule imports; the share that goes to MindSpore rather than
  the shim is issue 19's measure. A shim use the native tier lowered afterwards counts
  as MindSpore: one inside the statement a lowering's finding names (the model's, the
  optimizer's, a compiled step's whole function), one at the place of a lowered call (a random
  draw), or one whose shim module the converted
  file no longer reads at all. The findings of the rules run on the converted text (the native tier's ``TFL``,
  TFT140's wrapping of NumPy arrays) are not TF uses.

The last table sums every DIR. Converting needs neither TensorFlow nor
MindSpore. The numbers come from the JSON report (its schema is
``migrate/report/schema/report.schema.json``), so they are the numbers the
report page shows.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# A TF import left in converted text: `import tensorflow`, `import
# tensorflow.compat.v2 as tf`, `from tensorflow import keras`, `from
# tensorflow.keras import layers`, and Horovod's TensorFlow and Keras modules,
# which import TensorFlow (`import horovod.tensorflow as hvd`, `from
# horovod.tensorflow.keras import callbacks`). Other packages named tensorflow_*
# (hub, datasets, addons) are not TensorFlow itself.
_TF_MODULE = r"(?:tensorflow|horovod\.(?:tensorflow|keras))"
_TF_IMPORT = re.compile(rf"^\s*(?:import\s+{_TF_MODULE}(?:\.|\s|$|,)|from\s+{_TF_MODULE}(?:\.|\s))", re.M)


def _imports_tf(code: str) -> bool:
    """Whether ``code`` imports TensorFlow (or Horovod's TF API) in a statement, not in a docstring's
    example; read line by line where the code does not parse (a notebook's magics)."""
    import ast

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return bool(_TF_IMPORT.search(code))
    pattern = re.compile(rf"^{_TF_MODULE}(?:\.|$)")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(pattern.match(alias.name) for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and node.module and pattern.match(node.module):
            return True
    return False


def _code_of(path: Path) -> str:
    """The Python text of a converted ``.py`` file or notebook's code cells."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".ipynb":
        return text
    try:
        cells = json.loads(text).get("cells", [])
    except ValueError:
        return ""
    out = []
    for cell in cells:
        if cell.get("cell_type") == "code":
            src = cell.get("source", "")
            out.append("".join(src) if isinstance(src, list) else src)
    return "\n".join(out)


def _cell_offsets(path: Path) -> dict[int, int]:
    """For a notebook: cell number (1-based, among all cells) -> the line before its first in
    ``_code_of``'s joined code, so a finding's (cell, line) is a line of that code."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8", errors="replace")).get("cells", [])
    except ValueError:
        return {}
    offsets, at = {}, 0
    for number, cell in enumerate(cells, 1):
        if cell.get("cell_type") == "code":
            src = cell.get("source", "")
            offsets[number] = at
            at += ("".join(src) if isinstance(src, list) else src).count("\n") + 1
    return offsets


LOWERING = "TFL"  # the native tier's rules: they report lowerings, not TF uses


@functools.lru_cache(maxsize=None)
def after_rewrite() -> frozenset[str]:
    """The rules run on the converted text (the native tier's, and TFT140's wrapping of NumPy
    arrays): what they report is what the conversion did, not a TF use found."""
    sys.path.insert(0, str(ROOT))
    import migrate.ops
    from migrate.rules import load_rules

    return frozenset(r.id for r in load_rules() if migrate.ops.REGISTRY[r.operation].target == "lowering")


def _not_a_use(rule_id: str) -> bool:
    return rule_id.startswith(LOWERING) or rule_id in after_rewrite()


def rule_targets() -> tuple[dict[str, str], dict[str, set[str]]]:
    """Rule id -> where its converted uses go: "mindspore", "runtime" or "python" (by the rule's
    imports); and, for the runtime rules, the names their shim imports bind (``mk``, ``spmd``).

    ``migrate.runtime.spmd.init`` alone does not make a rule a shim rule: it is MindSpore's
    ``init()`` under a launcher (and nothing without one).
    """
    sys.path.insert(0, str(ROOT))
    from migrate.rules import load_rules

    targets, shim_names = {}, {}
    for rule in load_rules():
        modules = [(i.module, i.obj) for i in rule.imports]
        shim = [i for i in rule.imports if i.module.startswith("migrate.runtime")
                and (i.module, i.obj) != ("migrate.runtime.spmd", "init")]
        if shim:
            targets[rule.id] = "runtime"
            shim_names[rule.id] = {i.asname or i.obj or i.module.split(".")[0] for i in shim}
        elif any(m.startswith("mindspore") for m, _ in modules):
            targets[rule.id] = "mindspore"
        else:
            targets[rule.id] = "python"
    return targets, shim_names


_IPYTHON = re.compile(r"^([ \t]*)[%!?].*$", re.M)  # a notebook's magics and shell lines (not Python)


def _spans(source: str, lines: set[int]) -> list[tuple[int, int]]:
    """The original lines of the statements starting at ``lines`` (a function from its first
    decorator; a ``model = Sequential()`` with the ``model.add(...)`` statements right after
    it, and loops of them, which the lowering folds into the cell's list)."""
    import ast

    try:
        tree = ast.parse(_IPYTHON.sub(r"\1pass", source))  # (each a `pass`: the lines stay where they were)
    except SyntaxError:
        return []
    spans = []
    for block in (getattr(node, "body", None) for node in ast.walk(tree)):
        if not isinstance(block, list):
            continue
        for at, node in enumerate(block):
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
            if start not in lines and node.lineno not in lines:
                continue
            end = node.end_lineno or node.lineno
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                def adds(statement) -> bool:
                    call = statement.value if isinstance(statement, ast.Expr) else None
                    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "add"
                            and isinstance(call.func.value, ast.Name) and call.func.value.id == node.targets[0].id)

                for added in block[at + 1:]:  # (and loops of them, `for _ in range(n):`)
                    if not (adds(added) or isinstance(added, ast.For) and added.body and all(map(adds, added.body))):
                        break
                    end = added.end_lineno or added.lineno
            spans.append((start, end))
    return spans


def _went(findings: list[dict], targets: dict, shim_names: dict, source: str, code: str | None,
          offsets: dict[int, int] | None = None) -> tuple[collections.Counter, collections.Counter]:
    """Where the file's converted TF uses went (shim uses the native tier lowered counted as MindSpore),
    and the uses still bound to the shim, by API.
    ``offsets``: a notebook's (``_cell_offsets``), whose findings give cell and line."""
    if offsets:
        findings = [{**f, "line": offsets.get(f.get("cell"), 0) + f["line"]} for f in findings]
    lowerings = [f for f in findings if f["rule"].startswith(LOWERING) and f["status"] == "converted"]
    # (a lowering at a use's own place lowered that call alone, TFL180's draws; the others name
    # the statement of an object or a function they lowered whole)
    uses = {(f["line"], f.get("col")) for f in findings if not f["rule"].startswith(LOWERING)}
    exact = {(f["line"], f.get("col")) for f in lowerings if (f["line"], f.get("col")) in uses}
    lowered = {f["line"] for f in lowerings if (f["line"], f.get("col")) not in exact}
    spans = _spans(source, lowered) if lowered else []
    read = set(re.findall(r"\b([A-Za-z_]\w*)\.", code)) if code is not None else None
    went: collections.Counter = collections.Counter()
    shim: collections.Counter = collections.Counter()
    for f in findings:
        if f["status"] != "converted" or _not_a_use(f["rule"]):
            continue
        target = targets.get(f["rule"], "python")
        if target == "runtime" and ((f["line"], f.get("col")) in exact or any(a <= f["line"] <= b for a, b in spans)
                                    or (read is not None and not (shim_names.get(f["rule"], set()) & read))):
            target = "mindspore"
        went[target] += 1
        if target == "runtime":
            shim[f.get("api") or f["rule"]] += 1
    return went, shim


def measure(tree: Path, jobs: int) -> dict:
    """Convert ``tree`` into a scratch dir and gather the numbers."""
    with tempfile.TemporaryDirectory(prefix="migrate-coverage-") as scratch:
        out = Path(scratch) / "out"
        report = Path(scratch) / "report.json"
        cmd = [
            sys.executable, "-m", "migrate", "convert", str(tree), "--out", str(out),
            "--report", str(report), "--no-cache", "--quiet", "--jobs", str(jobs),
        ]
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode not in (0, 1) and not report.exists():
            raise SystemExit(f"{tree}: migrate convert exited {proc.returncode}\n{proc.stderr[-2000:]}")
        data = json.loads(report.read_text(encoding="utf-8"))
        targets, shim_names = rule_targets()
        per_api: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        files = []
        for entry in data["files"]:
            if entry["status"] in ("skipped",):
                continue
            every = entry.get("findings", [])
            findings = [f for f in every if not _not_a_use(f["rule"])]
            if not findings and entry["status"] != "failed":
                continue  # no TF in this file: not a TF file
            counts = collections.Counter(f["status"] for f in findings)
            for f in findings:
                per_api[f.get("api") or f["rule"]][f["status"]] += 1
            src = Path(entry["path"])
            try:
                rel = src.resolve().relative_to(tree.resolve())
            except ValueError:
                rel = Path(src.name)
            converted = out / rel
            still_tf = said = False
            code = None
            if converted.is_file():
                code = _code_of(converted)
                still_tf = _imports_tf(code)
                said = still_tf and "# migrate:" in code
            went, shim = _went(every, targets, shim_names, _code_of(src) if src.is_file() else "", code,
                         _cell_offsets(src) if src.suffix == ".ipynb" and src.is_file() else None)
            files.append({
                "path": str(rel), "status": entry["status"], "manual": counts["manual"],
                "converted": counts["converted"], "runtime": counts["runtime"],
                "imports_tf": still_tf, "says_why": said,
                "to_mindspore": went["mindspore"], "to_runtime": went["runtime"], "to_python": went["python"],
                "shim_apis": dict(shim),
            })
    return {"tree": str(tree), "summary": data["summary"], "apis": per_api, "files": files}


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f} %" if whole else "-"


def _row(name: str, res: list[dict]) -> list[str]:
    files = [f for r in res for f in r["files"]]
    conv = sum(f["converted"] for f in files)
    rt = sum(f["runtime"] for f in files)
    man = sum(f["manual"] for f in files)
    total = conv + rt + man
    clean = sum(1 for f in files if f["manual"] == 0 and f["status"] != "failed")
    tf_left = sum(1 for f in files if f["imports_tf"])
    unsaid = sum(1 for f in files if f["imports_tf"] and not f["says_why"])
    return [name, str(len(files)), str(total), _pct(conv, total), _pct(rt, total), _pct(man, total),
            f"{clean} ({_pct(clean, len(files))})", f"{tf_left} ({unsaid} unsaid)"]


def _targets_row(name: str, res: list[dict]) -> list[str]:
    files = [f for r in res for f in r["files"]]
    ms_, rt, py = (sum(f[k] for f in files) for k in ("to_mindspore", "to_runtime", "to_python"))
    total = ms_ + rt + py
    return [name, str(total), _pct(ms_, total), _pct(rt, total), _pct(py, total), _pct(ms_, ms_ + rt)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    ap.add_argument("--top", type=int, default=25, help="how many manual APIs to list (default 25)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", type=Path, help="also write every number to this file")
    args = ap.parse_args(argv)
    results = []
    for d in args.dirs:
        if not d.is_dir():
            ap.error(f"{d}: not a directory")
        results.append(measure(d, args.jobs))
    head = ["tree", "TF files", "uses", "converted", "runtime", "manual", "nothing manual", "still import TF"]
    rows = [_row(Path(r["tree"]).name, [r]) for r in results]
    if len(results) > 1:
        rows.append(_row("all", results))
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    head = ["tree", "converted uses", "to MindSpore", "to migrate.runtime", "to plain Python",
            "MindSpore / (MindSpore + runtime)"]
    rows = [_targets_row(Path(r["tree"]).name, [r]) for r in results]
    if len(results) > 1:
        rows.append(_targets_row("all", results))
    print("\nwhere the converted uses go (by the converting rule's imports):")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    manual: collections.Counter = collections.Counter()
    for r in results:
        for api, c in r["apis"].items():
            if c["manual"]:
                manual[api] += c["manual"]
    if manual:
        print(f"\nmost frequent manual uses (top {args.top}):")
        for api, n in manual.most_common(args.top):
            print(f"  {n:5d}  {api}")
    shim: collections.Counter = collections.Counter()
    for r in results:
        for f in r["files"]:
            shim.update(f["shim_apis"])
    if shim:
        print(f"\nmost frequent converted uses bound to migrate.runtime (top {args.top}):")
        for api, n in shim.most_common(args.top):
            print(f"  {n:5d}  {api}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=dict), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
