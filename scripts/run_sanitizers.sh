#!/usr/bin/env bash
# Builds and runs the C++ tests under sanitizers:
#   asan  ASan + UBSan (UBSan fails on the first error), the whole ctest suite,
#         in build-asan/
#   tsan  TSan, the pool's suites only (envs and agents: TBB arenas step the
#         environments in parallel), in build-tsan/, with scripts/tsan.supp
# Usage: scripts/run_sanitizers.sh [asan|tsan|all]   (default: all)
# Environment: HLOGYM_JOBS (build and test jobs, default: all cores),
# HLOGYM_CTEST_ARGS (extra ctest arguments, e.g. "-R Parser"),
# HLOGYM_TSAN_TBB_DIR (optional: the CMake package folder of a oneTBB built
# with -fsanitize=thread; without it, core/base/parallel.h tells TSan about
# Debian's uninstrumented TBB hand-offs, and scripts/tsan.supp silences TBB's
# own bookkeeping).
# Builds run under `nice`; the exit status is non-zero if any suite fails.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=${HLOGYM_JOBS:-$(nproc)}
WHICH=${1:-all}
case $WHICH in asan | tsan | all) ;; *)
  echo "usage: $0 [asan|tsan|all]" >&2
  exit 2
  ;;
esac

LAUNCHER=()
command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

configure() {  # build dir, sanitizers, extra cmake arguments...
  local dir=$1 sanitizers=$2
  shift 2
  nice -n 10 cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DHLOGYM_SANITIZE="$sanitizers" -DHLOGYM_BUILD_PYTHON=OFF -DHLOGYM_BUILD_BENCH=OFF \
    "${LAUNCHER[@]}" "$@" >/dev/null
}

build() {  # build dir, targets...
  local dir=$1
  shift
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  if ! nice -n 10 cmake --build "$dir" -j "$JOBS" "${targets[@]}" > "$dir/build.log" 2>&1; then
    grep -E "error|FAILED" -A3 "$dir/build.log" | head -40
    echo "error: the build failed; see $dir/build.log" >&2
    return 1
  fi
}

status=0

if [[ $WHICH == asan || $WHICH == all ]]; then
  echo "== ASan + UBSan: build-asan"
  start=$SECONDS
  if configure build-asan address,undefined && build build-asan; then
    echo "   built in $((SECONDS - start)) s"
    start=$SECONDS
    ASAN_OPTIONS=detect_leaks=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      nice -n 10 ctest --test-dir build-asan -j "$JOBS" --output-on-failure \
      ${HLOGYM_CTEST_ARGS:-} 2>&1 | tail -n 80
    rc=${PIPESTATUS[0]}
    echo "   ctest finished in $((SECONDS - start)) s (exit $rc)"
    ((rc == 0)) || status=1
  else
    status=1
  fi
fi

if [[ $WHICH == tsan || $WHICH == all ]]; then
  echo "== TSan: build-tsan (envs and agents suites)"
  start=$SECONDS
  TSAN_ARGS=()
  [[ -n ${HLOGYM_TSAN_TBB_DIR:-} ]] && TSAN_ARGS=(-DTBB_DIR="$HLOGYM_TSAN_TBB_DIR")
  if configure build-tsan thread "${TSAN_ARGS[@]}" &&
    build build-tsan hlogym_envs_tests hlogym_agents_tests; then
    echo "   built in $((SECONDS - start)) s"
    start=$SECONDS
    # TBB and OpenBLAS are not instrumented: scripts/tsan.supp says which of
    # their reports are silenced and why. A report exits the test with 66.
    TSAN_OPTIONS="suppressions=$ROOT/scripts/tsan.supp:second_deadlock_stack=1:history_size=4" \
      nice -n 10 ctest --test-dir build-tsan -j "$JOBS" --output-on-failure \
      -L '^(envs|agents)$' ${HLOGYM_CTEST_ARGS:-} 2>&1 | tail -n 80
    rc=${PIPESTATUS[0]}
    echo "   ctest finished in $((SECONDS - start)) s (exit $rc)"
    ((rc == 0)) || status=1
  else
    status=1
  fi
fi

exit $status
