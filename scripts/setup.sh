#!/usr/bin/env bash
# Sets up hlogym on Debian 12 and builds it. Idempotent: each step is skipped
# when its result is already there.
#   1. Debian packages (apt-get, as root), when any is missing.
#   2. The virtual environment .venv with scripts/requirements.txt.
#   3. CMake configure (build/, Ninja) and build.
# Environment: HLOGYM_BUILD_DIR (default build), HLOGYM_CMAKE_ARGS (extra
# configure arguments), HLOGYM_JOBS (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD_DIR=${HLOGYM_BUILD_DIR:-build}
JOBS=${HLOGYM_JOBS:-$(nproc)}
say() { echo "[setup] $*"; }

PACKAGES=(build-essential cmake ninja-build git pkg-config
  llvm-16-dev libclang-rt-16-dev clang-16 zlib1g-dev libzstd-dev libedit-dev libxml2-dev
  libffi-dev libcurl4-openssl-dev libtbb-dev libabsl-dev libyaml-cpp-dev libgtest-dev
  libgmock-dev libbenchmark-dev libopenblas-dev pybind11-dev python3-dev python3-venv)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "error: these packages are missing and installing them needs root:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The venv: prefer the python3 on PATH, fall back to Debian's if it lacks venv.
stamp=.venv/.hlogym-requirements
want=$(sha256sum scripts/requirements.txt | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  if [[ ! -x .venv/bin/python ]]; then
    say "creating the virtual environment .venv"
    python3 -m venv .venv 2>/dev/null || /usr/bin/python3 -m venv .venv
  fi
  say "installing Python packages (scripts/requirements.txt)"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r scripts/requirements.txt
  echo "$want" > "$stamp"
fi

if [[ ! -f $BUILD_DIR/build.ninja ]]; then
  say "configuring $BUILD_DIR"
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPython3_EXECUTABLE="$ROOT/.venv/bin/python" ${HLOGYM_CMAKE_ARGS:-} >/dev/null
fi
say "building (${JOBS} jobs; log in $BUILD_DIR/build.log)"
if ! cmake --build "$BUILD_DIR" -j "$JOBS" > "$BUILD_DIR/build.log" 2>&1; then
  grep -E "error|Error|FAILED" -A3 "$BUILD_DIR/build.log" | head -60
  echo "error: the build failed; see $BUILD_DIR/build.log" >&2
  exit 1
fi
say "ready: build in $BUILD_DIR, Python in .venv (PYTHONPATH=python)"
