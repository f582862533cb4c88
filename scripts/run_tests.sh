#!/usr/bin/env bash
# Sets everything up, then runs the whole test suite: C++ (ctest) and Python
# (pytest). Both always run; the exit status is non-zero if either fails.
# HLOGYM_LONG_TESTS=1 adds the slow checks (full-size corpus modules).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
BUILD_DIR=${HLOGYM_BUILD_DIR:-build}

echo "== C++ tests (ctest)"
# The whole log goes to a file; shown are the failures with their output
# (every line but the starts and the passes: a tail cut a failure's output
# off) and the summary.
log="$BUILD_DIR/ctest.log"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" > "$log" 2>&1
cpp=$?
if [ "$cpp" -ne 0 ]; then
  grep -v -E '^ *(Start +[0-9]+: |[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed )' "$log"
else
  grep -E '^[0-9]+% tests passed|^Total Test time' "$log"
fi
echo "(full ctest log: $log)"

echo "== Python tests (pytest)"
PYTHONPATH=python .venv/bin/python -m pytest tests/python -q -p no:cacheprovider
py=$?
exit $(( cpp != 0 || py != 0 ))
