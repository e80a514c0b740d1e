#!/usr/bin/env bash
# The engine's tests at both ends of the libcst range pyproject.toml allows (TESTED_LIBCST in
# migrate/engine/_libcst_speed.py): the lowest in a small venv of its own, with the libcst
# speed-ups on and off, and the highest (the main venv's) with them off; the whole suite runs
# with them on. The three runs go side by side; pip's cache keeps the downloads.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PIP_DISABLE_PIP_VERSION_CHECK=1
# (test_tape's last test runs the step under TensorFlow: a runtime test, not the engine's.)
ENGINE_TESTS=(tests/test_fixtures.py tests/test_rule_examples.py tests/test_prune.py tests/test_fuzz.py
              tests/test_aliases.py tests/test_tape.py tests/test_libcst_speed.py
              --deselect tests/test_tape.py::test_converted_step_runs_in_pynative_and_matches_tf)
read -r lowest highest < <(.venv/bin/python -c 'from migrate.engine._libcst_speed import TESTED_LIBCST as t; print(t[0], t[-1])')
installed="$(.venv/bin/python -c 'import libcst; print(libcst.LIBCST_VERSION)')"
if [ "$installed" != "$highest" ]; then
    echo "the main venv has libcst $installed, not the highest tested one ($highest)" >&2
    exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
.venv/bin/python -m venv "$work/venv"
# Everything but libcst at the main venv's versions.
.venv/bin/python -m pip freeze --exclude-editable --exclude libcst > "$work/constraints.txt"
"$work/venv/bin/python" -m pip install --quiet -c "$work/constraints.txt" "libcst==$lowest" \
    jinja2 pyyaml markdown-it-py pytest pytest-timeout hypothesis hypothesmith jsonschema numpy

names=() pids=()
run() {  # name, python, MIGRATE_LIBCST_SPEEDUPS
    names+=("$1")
    MIGRATE_LIBCST_SPEEDUPS="$3" "$2" -m pytest -q -p no:cacheprovider "${ENGINE_TESTS[@]}" >"$work/${#names[@]}.log" 2>&1 &
    pids+=($!)
}
run "libcst $lowest, speed-ups on" "$work/venv/bin/python" 1
run "libcst $lowest, speed-ups off" "$work/venv/bin/python" 0
run "libcst $highest, speed-ups off" .venv/bin/python 0
failed=0
for i in "${!pids[@]}"; do
    log="$work/$((i + 1)).log"
    if wait "${pids[$i]}"; then
        echo "${names[$i]}: $(tail -n 1 "$log")"
    else
        failed=1
        echo "${names[$i]}: FAILED"
        cat "$log"
    fi
done
exit "$failed"
