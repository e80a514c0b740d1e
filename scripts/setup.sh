#!/usr/bin/env bash
# Create .venv/ with migrate and everything its tests need. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
# Re-install only when the project's requirements changed since the last set-up.
stamp=.venv/.migrate-setup
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    # MindSpore 2.10's extension is built against numpy 1.x; TF 2.21 then needs ml_dtypes<0.6.
    .venv/bin/python -m pip install --quiet -e ".[test]"
    echo "$want" > "$stamp"
fi
