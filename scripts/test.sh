#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite, in two phases: first two tests at a time
# (pytest-xdist; all of a file's tests on one worker, so its module fixtures run once), then,
# alone, the tests marked `exclusive`, which bound their own wall time (the launcher's and the
# fault battery's jobs, the engine's time limits). Arguments go to both phases; with your own
# `-m`, the selection runs once, one test at a time.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit $?
pytest=(.venv/bin/python -m pytest -q --durations=15)
for arg in "$@"; do
    if [ "$arg" = "-m" ]; then
        exec "${pytest[@]}" "$@"
    fi
done
"${pytest[@]}" -n "${MIGRATE_TEST_WORKERS:-2}" --dist loadfile -m "not exclusive" "$@"
parallel=$?
"${pytest[@]}" -m exclusive "$@"
alone=$?
# pytest's 5 is "no test selected": fine for one phase of a selection, not for both.
if [ $parallel -eq 5 ] && [ $alone -eq 5 ]; then exit 5; fi
for code in $parallel $alone; do
    if [ $code -ne 0 ] && [ $code -ne 5 ]; then exit $code; fi
done
exit 0
