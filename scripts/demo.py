"""The main job: convert examples/ (writing the report page), run it on 2 MindSpore workers, compare with TF on 2 replicas.

Run through ``bash scripts/demo.sh``. Writes everything under ``build/demo/``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.equivalence.harness import EXAMPLE, assert_same_numbers, run_converted, run_tf  # noqa: E402

OUT = REPO / "build" / "demo"


def main() -> int:
    shutil.rmtree(OUT, ignore_errors=True)
    converted_dir = OUT / "converted"
    report = OUT / "report.html"
    print(f"== migrate convert {EXAMPLE.parent.relative_to(REPO)} --out {converted_dir.relative_to(REPO)}"
          f" --report {report.relative_to(REPO)}", flush=True)
    command = [sys.executable, "-m", "migrate", "convert", str(EXAMPLE.parent), "--out", str(converted_dir), "--report", str(report)]
    done = subprocess.run(command, cwd=REPO)
    if done.returncode not in (0, 1):
        return done.returncode
    if not report.is_file():
        print(f"no report page at {report.relative_to(REPO)}")
        return 1
    print(f"report page: {report.relative_to(REPO)} (every API difference found, where, what it maps to, what was done)")
    script = converted_dir / EXAMPLE.name
    print(f"\n== migrate run -n 2 {script.relative_to(REPO)}", flush=True)
    got = run_converted(script, 2, OUT / "logs")
    print("MindSpore, 2 workers:", got)
    print("\n== TensorFlow original on 2 replicas (2 logical CPU devices)", flush=True)
    want = run_tf(EXAMPLE, 2)
    print("TensorFlow, 2 replicas:", want)
    try:
        assert_same_numbers(got, want)
    except AssertionError as exc:
        print(f"\nThe numbers differ: {exc}")
        return 1
    worst = max(abs(a - b) / max(abs(b), 1e-12) for k in want for a, b in zip(got[k], want[k]))
    print(f"\nSame numbers: largest relative difference {worst:.1e} (tolerance 1e-4).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
