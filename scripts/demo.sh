#!/usr/bin/env bash
# Set up (if needed), convert examples/ (report page in build/demo/report.html), run the result on 2 workers, compare with TF.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python scripts/demo.py "$@"
