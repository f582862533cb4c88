#!/usr/bin/env bash
# Sets everything up, then runs the whole test suite: C++ (ctest) and Python
# (pytest). Both always run; the exit status is non-zero if either fails.
# HLOGYM_LONG_TESTS=1 adds the slow checks (full-size corpus modules).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
BUILD_DIR=${HLOGYM_BUILD_DIR:-build}

echo "== C++ tests (ctest)"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" 2>&1 | tail -n 60
cpp=${PIPESTATUS[0]}

echo "== Python tests (pytest)"
PYTHONPATH=python .venv/bin/python -m pytest tests/python -q -p no:cacheprovider
py=$?
exit $(( cpp != 0 || py != 0 ))
