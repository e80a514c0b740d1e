"""Codemod speed and memory, measured side by side in one run and printed as ratios.

    python benchmarks/codemod_bench.py                  # ~2,000 files generated from fixtures/convert
    python benchmarks/codemod_bench.py path/to/tf/repo  # a real tree (copied; never modified)
    python benchmarks/codemod_bench.py --quick          # 200 files, one round (a smoke run)
    python benchmarks/codemod_bench.py --profile        # also: where the engine's time goes
    python benchmarks/codemod_bench.py --json out.json  # also write the tables as JSON

Every tool reads the same files and writes a converted copy (``--out``/``--outtree``):

- ``migrate convert --jobs 1`` against ``tf_upgrade_v2 --intree/--outtree`` (target <= 0.6x)
  and against a bare libcst parse + regenerate + write of every file (the floor for a
  CST tool; target <= 1.5x);
- ``--jobs 2`` against ``--jobs 1`` (target >= 1.7x on two cores);
- a second run over the unchanged tree with the content-hash cache against the
  first (target >= 10x);
- peak memory of the whole process tree (sampled RSS of the process and its workers)
  for migrate and tf_upgrade_v2 (target <= 300 MB);
- time per line on 100 files against 2,000 (target: flat, 0.8x-1.25x), and the same with
  the time of a one-file run (start-up: the interpreter, libcst's import, the rules)
  taken out of both, which is what grows with the lines if anything does.

Timings swing on a shared machine, so the variants run interleaved in rounds, the
order rotating each round; each round gives one ratio per pair, and the table shows
the median ratio over rounds with its range, and the median time of each tool.

A real tree is screened once before anything is timed: tf_upgrade_v2's converter runs over
each copied file in one process, and the files it raises on (pasta cannot annotate some
newer syntax, and ``tf_upgrade_v2 --intree`` then stops the whole run) are dropped from
the copy, so every tool converts the same files; the dropped files are printed with the
first line of their error. Files CPython cannot compile are kept and listed (migrate
reports them as failed, tf_upgrade_v2 logs them, the bare libcst run copies them).

The first table gives, for each timed command, the files and lines it read, its median
seconds, lines per second and peak RSS; the second the ratios against their targets.

The generated corpus: each fixture input copied many times with its own bound names
renamed (``strategy`` -> ``strategy_k17``), its top-level functions and classes in a
shuffled order and a unique header comment, so no two files are alike.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures" / "convert"
BIN = Path(sys.executable).parent
SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "__pycache__", ".tox", "node_modules", ".migrate_cache"}


# -- corpus ------------------------------------------------------------------------------------------


def generate_corpus(dest: Path, count: int, seed: int = 7) -> None:
    import libcst as cst

    from migrate.ops.base import RenameNames

    sources = sorted(FIXTURES.glob("*/input.py"))
    rng = random.Random(seed)

    class Bound(cst.CSTVisitor):
        def __init__(self) -> None:
            self.names: set[str] = set()
            self.imported: set[str] = set()

        def visit_AssignTarget(self, node) -> None:
            if isinstance(node.target, cst.Name):
                self.names.add(node.target.value)

        def visit_FunctionDef(self, node) -> None:
            self.names.add(node.name.value)

        def visit_ClassDef(self, node) -> None:
            self.names.add(node.name.value)

        def visit_Param(self, node) -> None:
            self.names.add(node.name.value)

        def visit_ImportAlias(self, node) -> None:
            name = node.asname.name if node.asname else node.name
            if isinstance(name, cst.Name):
                self.imported.add(name.value)
            elif isinstance(name, cst.Attribute):
                self.imported.add(cst.Module([]).code_for_node(name).split(".")[0])

    parsed = []
    for path in sources:
        text = path.read_text(encoding="utf-8")
        module = cst.parse_module(text)
        bound = Bound()
        module.visit(bound)
        keep = bound.imported | {"self", "cls", "main", "__name__", "__init__", "__file__"}
        parsed.append((path.parent.name, module, {n for n in bound.names if n not in keep and not n.startswith("__")}))
    dest.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        name, module, names = parsed[i % len(parsed)]
        suffix = f"_k{i}"
        new = module.visit(RenameNames({name: name + suffix for name in names}))  # (not attribute names, keywords)
        # Shuffle runs of adjacent top-level definitions (their order does not matter).
        body, out, run = list(new.body), [], []
        for stmt in body + [None]:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                run.append(stmt)
                continue
            rng.shuffle(run)
            out += run
            run = []
            if stmt is not None:
                out.append(stmt)
        new = new.with_changes(body=out, header=[cst.EmptyLine(comment=cst.Comment(f"# corpus file {i} from {name}")), *new.header])
        code = new.code
        try:
            compile(code, name, "exec", dont_inherit=True)
        except SyntaxError:
            code = module.code
        sub = dest / f"pkg{i % 20:02d}"
        sub.mkdir(exist_ok=True)
        (sub / f"{name}_{i:05d}.py").write_text(code, encoding="utf-8")


def copy_corpus(src: Path, dest: Path) -> None:
    """Only the Python sources of a real tree (tf_upgrade_v2 also copies everything else)."""
    for root, dirs, names in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in names:
            if name.endswith(".py"):
                s = Path(root) / name
                if s.is_symlink():
                    continue
                d = dest / s.relative_to(src)
                d.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(s, d)


# tf_upgrade_v2 --intree stops at the first file its converter raises on (pasta cannot annotate
# some Python 3.8+ syntax) and writes nothing else. This runs the same converter, with the same
# change spec as the command's default mode, over every file in one process, catching errors per
# file; the parent drops the files it raises on. It also notes the files CPython cannot compile.
# Each result is one JSON line, so a file that kills or hangs the process is found too.
SCREEN = r"""
import json, os, sys, traceback, warnings
warnings.simplefilter("ignore")
results = os.fdopen(os.dup(1), "w")  # the converter prints to stdout: results get their own copy of it
os.dup2(2, 1)
sys.stdout = sys.stderr
from tensorflow.tools.compatibility import ast_edits, tf_upgrade_v2
spec = tf_upgrade_v2.TFAPIChangeSpec(import_rename=False, upgrade_compat_v1_import=True)
upgrader = ast_edits.ASTCodeUpgrader(spec)
out = sys.argv[1]

def first_line(exc):
    text = str(exc).strip().splitlines()
    return type(exc).__name__ + (": " + text[0] if text else "")

print(json.dumps({"ready": True}), file=results, flush=True)
for line in sys.stdin:
    path = line.rstrip("\n")
    result = {"path": path}
    try:
        with open(path, "rb") as fh:
            compile(fh.read(), path, "exec", dont_inherit=True)
    except Exception as exc:  # SyntaxError, ValueError (null bytes), RecursionError, ...
        result["syntax"] = first_line(exc)
    try:
        upgrader.process_file(path, out)
    except Exception as exc:
        result["crash"] = first_line(exc)
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        result["where"] = f"{os.path.basename(frame.filename)}:{frame.lineno}"
        try:
            spec.clear_preprocessing()
        except Exception:
            pass
    print(json.dumps(result), file=results, flush=True)
"""


def screen_corpus(corpus: Path, work: Path, timeout: float = 300) -> tuple[list[dict], list[dict]]:
    """Run tf_upgrade_v2's converter over each file of `corpus` once, before anything is timed; delete
    the files it raises on (or that kill or hang it for `timeout` seconds), so every tool sees the same
    files. Returns (dropped, unparseable): dicts with the relative path and the first line of the error.
    Files CPython cannot compile stay (migrate reports them as failed, tf_upgrade_v2 logs them)."""
    import queue

    pending = sorted(str(p) for p in corpus.rglob("*.py"))
    tmp = work / "screen-tmp"  # process_file leaves its temporary file behind when it raises
    tmp.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "TMPDIR": str(tmp)}
    dropped: list[dict] = []
    unparseable: list[dict] = []
    rel = lambda path: str(Path(path).relative_to(corpus))
    while pending:
        log = work / "screen-stderr.txt"
        with open(log, "wb") as err:
            proc = subprocess.Popen([sys.executable, "-c", SCREEN, str(tmp / "out.py")], env=env, cwd=work,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)
        lines: queue.Queue = queue.Queue()

        def feed() -> None:
            try:
                proc.stdin.write("".join(p + "\n" for p in pending))
                proc.stdin.close()
            except OSError:  # the process died
                pass

        def read() -> None:
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=feed, daemon=True).start()
        threading.Thread(target=read, daemon=True).start()
        done, ready, why = 0, False, None
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                why = f"no result after {timeout:.0f} s"
                proc.kill()
                break
            if line is None:
                break
            result = json.loads(line)
            if result.get("ready"):
                ready = True
                continue
            done += 1
            if "crash" in result:
                dropped.append({"path": rel(result["path"]), "reason": result["crash"], "where": result["where"]})
            if "syntax" in result:
                unparseable.append({"path": rel(result["path"]), "reason": result["syntax"]})
        code = proc.wait()
        if not ready:
            tail = log.read_text(errors="replace")[-2000:]
            raise SystemExit(f"could not start tf_upgrade_v2's converter to screen the corpus ({code}):\n{tail}")
        if done < len(pending):  # the process died or hung on pending[done]: drop it and go on after it
            why = why or f"the process ended with exit code {code}"
            dropped.append({"path": rel(pending[done]), "reason": why, "where": "-"})
            done += 1
        pending = pending[done:]
    for d in dropped:
        (corpus / d["path"]).unlink()
    unparseable = [u for u in unparseable if u["path"] not in {d["path"] for d in dropped}]
    return dropped, unparseable


def corpus_stats(root: Path) -> tuple[int, int, int]:
    files = lines = size = 0
    for p in root.rglob("*.py"):
        data = p.read_bytes()
        files += 1
        lines += data.count(b"\n")
        size += len(data)
    return files, lines, size


# -- running and measuring --------------------------------------------------------------------------


def tree_rss(pid: int) -> int:
    import psutil

    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def measure(cmd: list[str], env: dict | None = None, cwd: Path | None = None) -> dict:
    """Wall time, peak RSS of the whole process tree (sampled every 20 ms) and exit code."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss(proc.pid))
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode("utf-8", "replace")
    proc.stderr.close()
    return {"seconds": elapsed, "peak_rss": max(peak[0], usage.ru_maxrss * 1024), "rc": proc.returncode, "stderr": err[-2000:]}


BARE_LIBCST = r"""
import os, sys
import libcst as cst
src, out = sys.argv[1], sys.argv[2]
for root, dirs, names in os.walk(src):
    dirs.sort()
    for name in sorted(names):
        if not name.endswith(".py"):
            continue
        path = os.path.join(root, name)
        data = open(path, "rb").read()
        try:
            code = cst.parse_module(data).bytes
        except Exception:
            code = data
        dest = os.path.join(out, os.path.relpath(path, src))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as fh:
            fh.write(code)
"""


def snapshot_code(dest: Path) -> Path:
    """A copy of migrate/ and rules/ to run from: edits to the checkout during the run change nothing
    (and would otherwise, rightly, invalidate the cache between a cold and a warm run). It is
    byte-compiled, as an installed package is (and as libcst and tf_upgrade_v2 are here): with
    PYTHONDONTWRITEBYTECODE set, every run would otherwise compile the package again."""
    for name in ("migrate", "rules"):
        shutil.copytree(REPO / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    if not compileall.compile_dir(str(dest / "migrate"), quiet=1):
        raise SystemExit("could not byte-compile the snapshot of migrate/")
    return dest


class Bench:
    def __init__(self, corpus: Path, work: Path) -> None:
        self.corpus, self.work = corpus, work
        self.env = {**os.environ, "PYTHONPATH": str(snapshot_code(work / "code"))}
        self.env.pop("MIGRATE_NO_CACHE", None)
        self.n = 0

    def fresh(self, name: str) -> Path:
        self.n += 1
        path = self.work / f"{name}-{self.n}"
        return path

    def migrate(self, jobs: int, cache: Path | None = None, out: Path | None = None, corpus: Path | None = None) -> dict:
        out = out or self.fresh("out")
        cmd = [sys.executable, "-m", "migrate", "convert", str(corpus or self.corpus), "--out", str(out), "--jobs", str(jobs), "--quiet"]
        env = dict(self.env)
        if cache is None:
            cmd.append("--no-cache")
        else:
            env["MIGRATE_CACHE_DIR"] = str(cache)
        result = measure(cmd, env=env, cwd=self.work)
        if result["rc"] not in (0, 1, 2):
            raise SystemExit(f"migrate failed ({result['rc']}):\n{result['stderr']}")
        shutil.rmtree(out, ignore_errors=True) if cache is None else None
        return result

    def tf_upgrade(self) -> dict:
        out = self.fresh("tfout")
        report = self.fresh("report.txt")
        cmd = [str(BIN / "tf_upgrade_v2"), "--intree", str(self.corpus), "--outtree", str(out), "--reportfile", str(report)]
        env = {**self.env, "TF_CPP_MIN_LOG_LEVEL": "3"}
        result = measure(cmd, env=env, cwd=self.work)
        if result["rc"] != 0:
            raise SystemExit(f"tf_upgrade_v2 failed ({result['rc']}):\n{result['stderr']}")
        shutil.rmtree(out, ignore_errors=True)
        report.unlink(missing_ok=True)
        return result

    def bare_libcst(self) -> dict:
        out = self.fresh("cstout")
        result = measure([sys.executable, "-c", BARE_LIBCST, str(self.corpus), str(out)], env=self.env, cwd=self.work)
        if result["rc"] != 0:
            raise SystemExit(f"bare libcst failed:\n{result['stderr']}")
        shutil.rmtree(out, ignore_errors=True)
        return result


def median_range(values: list[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


def run(args) -> list[dict]:
    work = Path(tempfile.mkdtemp(prefix="codemod-bench-"))
    try:
        corpus = work / "corpus"
        dropped: list[dict] = []
        unparseable: list[dict] = []
        if args.corpus:
            copy_corpus(Path(args.corpus), corpus)
            copied = sum(1 for _ in corpus.rglob("*.py"))
            print(f"screening {copied} files with tf_upgrade_v2's converter (not timed) ...", file=sys.stderr, flush=True)
            dropped, unparseable = screen_corpus(corpus, work)
            print(screening_note(copied, dropped, unparseable), file=sys.stderr, flush=True)
        else:
            generate_corpus(corpus, args.files)
        files, lines, size = corpus_stats(corpus)
        if not files:
            raise SystemExit("no Python files left to convert")
        small = work / "small"
        every = sorted(corpus.rglob("*.py"))
        small_files = sorted(random.Random(1).sample(every, min(100, len(every))))  # the same mix of kinds of file
        for p in small_files:
            d = small / p.relative_to(corpus)
            d.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, d)
        _, small_lines, _ = corpus_stats(small)
        # One file of the small set: what a run costs before its files do (start-up, rules).
        one = work / "one"
        (one / small_files[0].name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(small_files[0], one / small_files[0].name)
        _, one_lines, _ = corpus_stats(one)
        bench = Bench(corpus, work)
        print(f"corpus: {files} files, {lines:,} lines, {size / 1e6:.1f} MB"
              f" ({'from ' + args.corpus if args.corpus else 'generated from fixtures/convert'}); "
              f"{args.rounds} round(s)", file=sys.stderr)
        kinds = ("j1", "j2", "tf", "cst", "warm", "small", "one")
        times: dict[str, list[float]] = {k: [] for k in kinds}
        rss: dict[str, list[int]] = {k: [] for k in kinds}

        def net_per_line(seconds: float, start: float, n_lines: int) -> float:
            """Seconds per line of a run with a one-file run's time (``start``) taken out."""
            return (seconds - start) / max(n_lines - one_lines, 1)

        ratios: dict[str, list[float]] = {k: [] for k in ("j1/tf", "j1/cst", "j1/j2", "cold/warm", "small/large",
                                                          "small/large net")}
        variants = ["j1", "tf", "cst", "j2", "small", "one"]
        for r in range(args.rounds):
            order = variants[r % len(variants):] + variants[: r % len(variants)]
            got = {}
            for v in order:
                print(f"  round {r + 1}: {v} ...", file=sys.stderr, flush=True)
                if v == "j1":
                    cache = work / f"cache-{r}"
                    out = work / f"cached-out-{r}"
                    got["j1"] = bench.migrate(1, cache=cache, out=out)
                    got["warm"] = bench.migrate(1, cache=cache, out=out)  # the same tree, unchanged
                    shutil.rmtree(cache, ignore_errors=True)
                    shutil.rmtree(out, ignore_errors=True)
                elif v == "j2":
                    got["j2"] = bench.migrate(2)
                elif v == "tf":
                    got["tf"] = bench.tf_upgrade()
                elif v == "cst":
                    got["cst"] = bench.bare_libcst()
                elif v == "small":
                    got["small"] = bench.migrate(1, corpus=small)
                elif v == "one":
                    got["one"] = bench.migrate(1, corpus=one)
            for k, m in got.items():
                times[k].append(m["seconds"])
                if k in rss:
                    rss[k].append(m["peak_rss"])
            ratios["j1/tf"].append(got["j1"]["seconds"] / got["tf"]["seconds"])
            ratios["j1/cst"].append(got["j1"]["seconds"] / got["cst"]["seconds"])
            ratios["j1/j2"].append(got["j1"]["seconds"] / got["j2"]["seconds"])
            ratios["cold/warm"].append(got["j1"]["seconds"] / got["warm"]["seconds"])
            per_line_small = got["small"]["seconds"] / small_lines
            per_line_large = got["j1"]["seconds"] / lines
            ratios["small/large"].append(per_line_small / per_line_large)
            start = got["one"]["seconds"]  # the fixed part, taken out of both
            ratios["small/large net"].append(net_per_line(got["small"]["seconds"], start, small_lines)
                                             / net_per_line(got["j1"]["seconds"], start, lines))
        med = {k: statistics.median(v) for k, v in times.items()}
        mb = {k: max(v) / 2**20 for k, v in rss.items()}
        rows = [
            row("migrate --jobs 1 vs tf_upgrade_v2", "time ratio", ratios["j1/tf"], "<= 0.6", lambda x: x <= 0.6,
                f"{med['j1']:.1f} s vs {med['tf']:.1f} s"),
            row("migrate --jobs 1 vs bare libcst", "time ratio", ratios["j1/cst"], "<= 1.5", lambda x: x <= 1.5,
                f"{med['j1']:.1f} s vs {med['cst']:.1f} s"),
            row("--jobs 2 vs --jobs 1", "speed-up", ratios["j1/j2"], ">= 1.7", lambda x: x >= 1.7,
                f"{med['j2']:.1f} s vs {med['j1']:.1f} s on {os.cpu_count()} cores"),
            row("second run, warm cache", "speed-up", ratios["cold/warm"], ">= 10", lambda x: x >= 10,
                f"{med['warm']:.2f} s vs {med['j1']:.1f} s"),
            row(f"time per line, {len(small_files)} vs {files} files", "ratio", ratios["small/large"], "0.8-1.25",
                lambda x: 0.8 <= x <= 1.25,
                f"{med['small'] / small_lines * 1e6:.0f} vs {med['j1'] / lines * 1e6:.0f} us/line"),
            row(f"  the same, less a 1-file run ({med['one']:.2f} s)", "ratio", ratios["small/large net"], "0.8-1.25",
                lambda x: 0.8 <= x <= 1.25,
                f"{net_per_line(med['small'], med['one'], small_lines) * 1e6:.0f} vs "
                f"{net_per_line(med['j1'], med['one'], lines) * 1e6:.0f} us/line"),
            row("peak RSS, migrate --jobs 1", "MB", [mb["j1"]], "<= 300", lambda x: x <= 300,
                f"tf_upgrade_v2 {mb['tf']:.0f} MB, bare libcst {mb['cst']:.0f} MB"),
            row("peak RSS, migrate --jobs 2 (3 processes)", "MB", [mb["j2"]], "<= 300", lambda x: x <= 300,
                f"warm-cache run {mb['warm']:.0f} MB"),
        ]
        small_files_n = len(small_files)
        tools = [  # what each timed command did: the files and lines it read, its median seconds and peak RSS
            ("migrate convert --jobs 1", "j1", files, lines),
            ("migrate convert --jobs 2", "j2", files, lines),
            ("migrate convert --jobs 1, warm cache", "warm", files, lines),
            ("tf_upgrade_v2 --intree/--outtree", "tf", files, lines),
            ("bare libcst parse + regenerate", "cst", files, lines),
            (f"migrate convert --jobs 1, {small_files_n} files", "small", small_files_n, small_lines),
            ("migrate convert --jobs 1, 1 file", "one", 1, one_lines),
        ]
        summary = {
            "files": files, "lines": lines, "bytes": size, "rounds": args.rounds, "seconds": med,
            "peak_rss_mb": mb, "small_files": small_files_n, "small_lines": small_lines,
            "corpus": f"from {args.corpus}" if args.corpus else "generated from fixtures/convert",
            "dropped": dropped, "unparseable": unparseable,
            "tools": [{"tool": name, "key": key, "files": n, "lines": nl, "seconds": med[key],
                       "lines_per_second": nl / med[key] if med[key] else None, "peak_rss_mb": mb.get(key)}
                      for name, key, n, nl in tools],
        }
        return rows, summary
    finally:
        shutil.rmtree(work, ignore_errors=True)


def row(case, metric, values, target, ok, detail) -> dict:
    median, low, high = median_range(values)
    return {"case": case, "metric": metric, "median": median, "min": low, "max": high, "target": target,
            "pass": bool(ok(median)), "detail": detail, "rounds": len(values)}


def screening_note(copied: int, dropped: list[dict], unparseable: list[dict], limit: int = 10) -> str:
    """What the screening removed and why (first error line), and which kept files CPython cannot compile."""
    out = [f"screening: {len(dropped)} of {copied} files dropped from the corpus (tf_upgrade_v2 --intree would stop "
           f"at them){':' if dropped else ''}"]
    out += [f"  dropped {d['path']}: {d['reason']} ({d['where']})" for d in dropped[:limit]]
    if len(dropped) > limit:
        out.append(f"  ... and {len(dropped) - limit} more")
    out.append(f"screening: {len(unparseable)} kept file(s) CPython cannot compile (every tool gets them; migrate "
               f"reports them as failed){':' if unparseable else ''}")
    out += [f"  unparseable {u['path']}: {u['reason']}" for u in unparseable[:limit]]
    if len(unparseable) > limit:
        out.append(f"  ... and {len(unparseable) - limit} more")
    return "\n".join(out)


def render(rows, summary) -> str:
    lines = [f"codemod corpus: {summary['files']} files, {summary['lines']:,} lines, {summary['bytes'] / 1e6:.1f} MB "
             f"({summary['corpus']}); {summary['rounds']} round(s), median of rounds"]
    if summary["dropped"] or summary["unparseable"]:
        lines.append(f"  ({len(summary['dropped'])} file(s) dropped before timing because tf_upgrade_v2 crashes on "
                     f"them; {len(summary['unparseable'])} kept that CPython cannot compile)")
        lines += [f"  dropped {d['path']}: {d['reason']}" for d in summary["dropped"][:5]]
        lines += [f"  unparseable {u['path']}: {u['reason']}" for u in summary["unparseable"][:5]]
    lines.append(f"{'tool':42} {'files':>6} {'lines':>9} {'seconds':>8} {'lines/s':>9} {'peak RSS':>9}")
    for t in summary["tools"]:
        rss = f"{t['peak_rss_mb']:.0f} MB" if t["peak_rss_mb"] is not None else "-"
        rate = f"{t['lines_per_second']:,.0f}" if t["lines_per_second"] else "-"
        lines.append(f"{t['tool']:42} {t['files']:6} {t['lines']:9,} {t['seconds']:8.2f} {rate:>9} {rss:>9}")
    lines += ["", f"{'case':42} {'metric':10} {'median':>8}  {'range':>15}  {'target':8} {'ok':4}  detail"]
    for r in rows:
        rng = f"{r['min']:.2f}-{r['max']:.2f}" if r["rounds"] > 1 else "-"
        lines.append(f"{r['case']:42} {r['metric']:10} {r['median']:8.2f}  {rng:>15}  {r['target']:8} "
                     f"{'yes' if r['pass'] else 'NO':4}  {r['detail']} ({r['rounds']} round(s))")
    lines.append(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {machine()})")
    return "\n".join(lines)


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        mem = next(int(l.split()[1]) for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal"))
        return f"{model}, {mem / 2**20:.1f} GB RAM"
    except (OSError, StopIteration, ValueError):
        return model


# -- where the engine's time goes -------------------------------------------------------------------


PROFILE_PARTS = [
    # (label, pstats key matcher (file suffix, function name)), measured as cumulative time.
    ("parse (libcst native parser)", ("libcst/_parser/entrypoints.py", "_parse")),
    ("scope analysis (libcst's ScopeProvider)", ("libcst/metadata/wrapper.py", "resolve_many")),
    ("positions (token spans; Planner.positions)", ("migrate/engine/planner.py", "positions")),
    ("matcher visitors' set-up (per instance)", ("libcst/matchers/_visitors.py", "__init__")),
    ("Add/RemoveImportsVisitor passes after the rewrite", ("libcst/codemod/_command.py", "_instantiate_and_run")),
    ("planner (Planner.run)", ("migrate/engine/planner.py", "run")),
    ("rewriter: Rewriter._realign", ("migrate/engine/rewriter.py", "_realign")),
    ("codegen of single nodes (code_for_node)", ("libcst/_nodes/module.py", "code_for_node")),
    ("final codegen (unchanged statements copied)", ("migrate/engine/_libcst_speed.py", "code")),
    ("rule templates filled", ("migrate/ops/base.py", "template_expression")),
    ("CPython pre-parse (ast.parse)", ("migrate/engine/source.py", "python_ast")),
    ("pruning, import table, flags on CPython's tree", ("migrate/engine/prune.py", "analyse")),
]


def profile(files: list[Path]) -> str:
    import cProfile
    import pstats

    from migrate.engine import runner, source

    index = runner.rule_index(runner.RuleSelection())
    datas = [(str(p), p.read_bytes()) for p in files]
    for path, data in datas[:3]:
        runner.convert_source(data, index, path)  # warm up imports
    real = source.on_deep_stack
    source.on_deep_stack = lambda fn, *a: fn(*a)  # profile on this thread
    try:
        prof = cProfile.Profile()
        start = time.perf_counter()
        prof.enable()
        for path, data in datas:
            runner.convert_source(data, index, path)
        prof.disable()
        wall = time.perf_counter() - start
    finally:
        source.on_deep_stack = real
    stats = pstats.Stats(prof).stats
    total = sum(v[2] for v in stats.values())  # tottime: the profile's own total
    line_count = sum(d.count(b"\n") for _, d in datas)
    lines = [f"engine profile: {len(datas)} analysed files, {line_count:,} lines, "
             f"{wall:.1f} s under cProfile ({wall / len(datas) * 1000:.0f} ms/file); cumulative time, parts overlap",
             f"{'part':52} {'seconds':>8} {'share':>6}  calls"]
    for label, (suffix, func) in PROFILE_PARTS:
        cum = calls = 0
        for (filename, _, name), (cc, nc, tt, ct, callers) in stats.items():
            if filename.replace(os.sep, "/").endswith(suffix) and name == func:
                # Only top-level calls count (a recursive function's inner calls are inside its outer ones).
                cum += ct
                calls += cc
        lines.append(f"{label:52} {cum:8.2f} {cum / total:6.0%}  {calls}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", nargs="?",
                        help="a directory of real TF code: its .py files are copied (symlinks and .git, .venv, "
                             "__pycache__ ... skipped), screened with tf_upgrade_v2's converter, and converted by "
                             "every tool; the tree itself is never modified (default: a generated corpus)")
    parser.add_argument("--files", type=int, default=2000,
                        help="files to generate when no corpus is given (default 2000; ignored with a corpus)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved rounds; each gives one ratio per pair, the table shows their median and "
                             "range (default 3)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: one round, and at most 200 generated files (a given corpus is used "
                             "whole); overrides --rounds")
    parser.add_argument("--profile", action="store_true",
                        help="also profile the engine in this process on the fixtures/convert inputs and print "
                             "where its time goes (cumulative seconds per part)")
    parser.add_argument("--json", metavar="FILE",
                        help="also write the results to FILE: {'rows': the ratio table, 'summary': corpus, "
                             "per-tool files/lines/seconds/RSS, dropped and unparseable files}")
    args = parser.parse_args(argv)
    if args.quick:
        args.files, args.rounds = min(args.files, 200), 1
    if not (BIN / "tf_upgrade_v2").exists():
        print("tf_upgrade_v2 is not installed next to this Python (pip install tensorflow-cpu)", file=sys.stderr)
        return 2
    rows, summary = run(args)
    print(render(rows, summary), flush=True)
    if args.profile:
        print()
        print(profile(sorted(FIXTURES.glob("*/input.py"))), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "summary": summary}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
