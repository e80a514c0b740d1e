"""Every benchmark in one run: the codemod table, then the runtime table.

    python benchmarks/run_all.py            # full runs (the codemod part takes a while: ~2,000 files)
    python benchmarks/run_all.py --quick    # smoke runs of both
    python benchmarks/run_all.py --corpus path/to/tf/repo   # the codemod part on real code

Each part runs as its own process (the runtime part launches two MindSpore workers),
one after the other, so they do not compete for the cores.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke runs: fewer files and repetitions")
    parser.add_argument("--corpus", help="real TF code for the codemod benchmark (default: generated from the fixtures)")
    parser.add_argument("--profile", action="store_true", help="also print where the codemod engine's time goes")
    args = parser.parse_args(argv)

    codemod = [sys.executable, str(HERE / "codemod_bench.py")]
    if args.corpus:
        codemod.append(args.corpus)
    if args.quick:
        codemod.append("--quick")
    if args.profile:
        codemod.append("--profile")
    runtime = [sys.executable, str(HERE / "runtime_bench.py")] + (["--quick"] if args.quick else [])

    failed = 0
    for title, cmd in (("== codemod ==", codemod), ("== runtime ==", runtime)):
        print(title, flush=True)
        code = subprocess.call(cmd)
        if code:
            print(f"({Path(cmd[1]).name} exited with {code})", flush=True)
            failed += 1
        print(flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
