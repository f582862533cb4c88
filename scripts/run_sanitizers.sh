#!/usr/bin/env bash
# Builds and runs the C++ tests under sanitizers:
#   asan  ASan + UBSan (UBSan fails on the first error), the whole ctest suite,
#         in build-asan/
#   tsan  TSan, the pool's suites only (envs and agents: TBB arenas step the
#         environments in parallel), in build-tsan/, against a oneTBB built
#         with TSan too (see HLOGYM_TSAN_TBB_DIR)
# Usage: scripts/run_sanitizers.sh [asan|tsan|all]   (default: all)
# Environment: HLOGYM_JOBS (build and test jobs, default: all cores),
# HLOGYM_CTEST_ARGS (extra ctest arguments, e.g. "-R Parser"),
# HLOGYM_TSAN_TBB_DIR (the CMake package folder of a oneTBB built with
# -fsanitize=thread; by default tsan builds Debian's oneTBB source, once,
# fetched with apt-get source; if that fails it falls back to Debian's
# uninstrumented libtbb, with core/base/parallel.h's annotations and
# scripts/tsan.supp standing in for what TSan cannot see).
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

# Builds Debian's own oneTBB source (the version libtbb-dev has) with
# -fsanitize=thread into build-tsan/onetbb, once, and prints its CMake package
# folder. With TBB instrumented, TSan sees TBB's synchronization and its task
# memory recycling, which no annotation of ours can describe: an uninstrumented
# TBB shows a stolen task's range as written by one thread and read by another
# with nothing in between. Prints nothing if the source cannot be fetched.
instrumented_tbb() {
  local dir=$ROOT/build-tsan/onetbb
  if [[ ! -f $dir/install/lib/cmake/TBB/TBBConfig.cmake ]]; then
    local version
    version=$(dpkg-query -W -f='${source:Version}' libtbb-dev 2>/dev/null) || return 0
    rm -rf "$dir" && mkdir -p "$dir/lists/partial" "$dir/src" || return 0
    printf 'deb-src http://deb.debian.org/debian bookworm main\ndeb-src http://deb.debian.org/debian-security bookworm-security main\n' \
      >"$dir/sources.list"
    local apt=(-o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o Dir::State::Lists="$dir/lists" -o APT::Sandbox::User=root)
    if ! { apt-get "${apt[@]}" update &&
      (cd "$dir/src" && apt-get "${apt[@]}" source --download-only "onetbb=$version") &&
      tar -C "$dir/src" -xf "$dir"/src/onetbb_*.orig.tar.* &&
      nice -n 10 cmake -S "$(ls -d "$dir"/src/oneTBB-*/)" -B "$dir/build" -G Ninja \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTBB_SANITIZE=thread -DTBB_TEST=OFF \
        -DTBB_STRICT=OFF -DCMAKE_INSTALL_PREFIX="$dir/install" &&
      nice -n 10 cmake --build "$dir/build" -j "$JOBS" && cmake --install "$dir/build"; } \
      >"$ROOT/build-tsan/onetbb.log" 2>&1; then
      echo "   (could not build an instrumented oneTBB, see build-tsan/onetbb.log)" >&2
      return 0
    fi
  fi
  echo "$dir/install/lib/cmake/TBB"
}

if [[ $WHICH == tsan || $WHICH == all ]]; then
  echo "== TSan: build-tsan (envs and agents suites)"
  start=$SECONDS
  mkdir -p build-tsan
  TBB_FOR_TSAN=${HLOGYM_TSAN_TBB_DIR:-$(instrumented_tbb)}
  TSAN_ARGS=(-DTBB_DIR="${TBB_FOR_TSAN:-$(dirname "$(find /usr/lib -name TBBConfig.cmake | head -n 1)")}")
  echo "   TBB: ${TBB_FOR_TSAN:-the Debian libtbb, not instrumented (annotations and scripts/tsan.supp stand in)}"
  if configure build-tsan thread "${TSAN_ARGS[@]}" &&
    build build-tsan hlogym_envs_tests hlogym_agents_tests; then
    echo "   built in $((SECONDS - start)) s"
    start=$SECONDS
    # With TBB instrumented nothing is suppressed. With Debian's TBB,
    # scripts/tsan.supp says which of its reports are silenced and why. A
    # report exits the test with 66.
    SUPPRESSIONS=
    [[ -z $TBB_FOR_TSAN ]] && SUPPRESSIONS="suppressions=$ROOT/scripts/tsan.supp:"
    TSAN_OPTIONS="${SUPPRESSIONS}second_deadlock_stack=1:history_size=4" \
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
