"""Every benchmark in one run: the codemod tables, the runtime table, then one combined table.

    python benchmarks/run_all.py            # full runs (the codemod part takes a while: ~2,000 files)
    python benchmarks/run_all.py --quick    # smoke runs of both
    python benchmarks/run_all.py --corpus path/to/tf/repo   # the codemod part on real code
    python benchmarks/run_all.py --json all.json            # also keep the combined results

Each part runs as its own process (the runtime part launches two MindSpore workers),
one after the other, so they do not compete for the cores; each prints its own tables
as it ends and writes its results with --json. At the end one table gathers every
measurement from both (measurement, value, target, met?, detail), headed by the machine
(CPU, cores, RAM, Python and library versions) and the codemod corpus (files, lines, MB).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def version(*names: str) -> str:
    for name in names:
        try:
            return importlib.metadata.version(name) + ("" if name == names[0] else f" ({name})")
        except importlib.metadata.PackageNotFoundError:
            continue
    return "not installed"


def machine_facts() -> list[str]:
    model, ram = "unknown CPU", "? GB"
    try:
        model = next(l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                     if l.startswith("model name"))
    except (OSError, StopIteration):
        model = platform.processor() or model
    try:
        kb = next(int(l.split()[1]) for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal"))
        ram = f"{kb / 2**20:.1f} GB"
    except (OSError, StopIteration, ValueError):
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = f"{os.cpu_count()} cores" + (f" ({usable} usable)" if usable != os.cpu_count() else "")
    return [
        f"machine: {model}, {cores}, {ram} RAM; {platform.system()} {platform.release()}",
        f"software: Python {platform.python_version()}, libcst {version('libcst')}, "
        f"mindspore {version('mindspore')}, tensorflow {version('tensorflow', 'tensorflow-cpu', 'tf-nightly')}",
    ]


def combined(codemod: dict | None, runtime: dict | None, failures: dict[str, str]) -> str:
    rows: list[tuple[str, str, str, str, str]] = []  # measurement, value, target, met?, detail
    head = machine_facts()
    if codemod:
        s = codemod["summary"]
        note = ""
        if s.get("dropped") or s.get("unparseable"):
            note = (f"; {len(s.get('dropped', []))} file(s) dropped before timing (tf_upgrade_v2 crashes on them), "
                    f"{len(s.get('unparseable', []))} kept that CPython cannot compile")
        head.append(f"codemod corpus: {s['files']:,} files, {s['lines']:,} lines, {s['bytes'] / 1e6:.1f} MB "
                    f"({s.get('corpus', '?')}){note}; {s['rounds']} round(s)")
        for t in s.get("tools", []):
            rss = f", peak RSS {t['peak_rss_mb']:.0f} MB" if t.get("peak_rss_mb") is not None else ""
            rows.append((f"codemod: {t['tool']}", f"{t['seconds']:.2f} s", "(info)", "-",
                         f"{t['files']:,} files, {t['lines']:,} lines{rss}"))
        for r in codemod["rows"]:
            spread = f", range {r['min']:.2f}-{r['max']:.2f}" if r["rounds"] > 1 else ""
            rows.append((f"codemod: {r['case']} ({r['metric']})", f"{r['median']:.2f}", r["target"],
                         "yes" if r["pass"] else "NO", f"{r['detail']}{spread}, {r['rounds']} round(s)"))
    if runtime:
        for r in runtime["rows"]:
            low, high = r["ci95"]
            info = r["target"] == "(info)"
            rows.append((f"runtime: {r['case']} ({r['metric']})", f"{r['median']:.3f}", r["target"],
                         "-" if info else ("yes" if r["pass"] else "NO"),
                         f"{r['detail']}; 95% CI {low:.3f}-{high:.3f}, {r['trials']} pairs"))
        s = runtime.get("summary", {})
        if "python_overhead_us" in s:
            rows.append(("runtime: shim Python per steady-state reduce call", f"{s['python_overhead_us']:.0f} us",
                         "(info)", "-", "no communication: a one-process group"))
    for part, why in failures.items():
        rows.append((f"{part}: no results", "-", "-", "NO", why))
    widths = [max(len(r[i]) for r in rows + [("measurement", "value", "target", "met?", "")]) for i in range(4)]
    widths[0] = min(widths[0], 72)
    line = lambda r: "  ".join([r[0].ljust(widths[0]), r[1].rjust(widths[1]), r[2].ljust(widths[2]),
                                r[3].ljust(widths[3]), r[4]]).rstrip()
    out = ["== all benchmarks ==", *head, "", line(("measurement", "value", "target", "met?", "detail"))]
    out.append(line(tuple("-" * w for w in widths) + ("-" * 6,)))
    out += [line(r) for r in rows]
    met = [r for r in rows if r[3] in ("yes", "NO")]
    out.append(f"{sum(r[3] == 'yes' for r in met)} of {len(met)} targets met "
               f"(load average {os.getloadavg()[0]:.1f} at the end)")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="smoke runs: passes --quick to both scripts (codemod: one round, at most 200 "
                             "generated files; runtime: a quarter of the repetitions)")
    parser.add_argument("--corpus", metavar="DIR",
                        help="real TF code for the codemod benchmark (copied, screened with tf_upgrade_v2's "
                             "converter, never modified; default: generated from fixtures/convert)")
    parser.add_argument("--profile", action="store_true",
                        help="also print where the codemod engine's time goes (codemod_bench.py --profile)")
    parser.add_argument("--json", metavar="FILE",
                        help="also write the combined results to FILE: {'codemod': ..., 'runtime': ...}, "
                             "each as its script's --json writes it")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-all-") as tmp:
        results = {"codemod": Path(tmp) / "codemod.json", "runtime": Path(tmp) / "runtime.json"}
        codemod = [sys.executable, str(HERE / "codemod_bench.py"), "--json", str(results["codemod"])]
        if args.corpus:
            codemod.append(args.corpus)
        if args.quick:
            codemod.append("--quick")
        if args.profile:
            codemod.append("--profile")
        runtime = [sys.executable, str(HERE / "runtime_bench.py"), "--json", str(results["runtime"])]
        if args.quick:
            runtime.append("--quick")

        gathered: dict[str, dict | None] = {}
        failures: dict[str, str] = {}
        for part, cmd in (("codemod", codemod), ("runtime", runtime)):
            print(f"== {part} ==", flush=True)
            code = subprocess.call(cmd)
            gathered[part] = None
            if results[part].exists():
                gathered[part] = json.loads(results[part].read_text())
            if code or gathered[part] is None:
                why = f"{Path(cmd[1]).name} exited with {code}" + ("" if gathered[part] else ", no results written")
                print(f"({why})", flush=True)
                failures[part] = why
            print(flush=True)

    print(combined(gathered["codemod"], gathered["runtime"], failures), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({**gathered, "failures": failures}, indent=2))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
