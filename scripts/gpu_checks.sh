#!/bin/bash
# Every check that needs a GPU, prepared for a session that is lent one: its
# device time is short (15 minutes, the machine's start included, at most 10
# minutes a command), so the checks run as two commands on a warm machine, each
# writing its logs to OUT. Prepare here, where apt-get and pip work, once:
#   bash scripts/gpu_sysroot.sh .sysroot          # with the Python wheels: WHEELS=3.12
#   echo /.sysroot/ >> .git/info/exclude
# then on the GPU machine (the `device` tool: carry [".sysroot"]):
#   bash scripts/gpu_checks.sh "$OUT" build-and-test   # build, GPU tests, both tables, pytest (~6 min)
#   bash scripts/gpu_checks.sh "$OUT" main             # hlogym main on the GPU, then the pool's
#                                                      # GPU rewards in and out of process (~6 min)
# (`build` and `test` alone too; `main` passes further arguments to `hlogym main`,
# e.g. --limit 12.) BUILD (default build-gpu) and SYSROOT (.sysroot) name the folders.
# A step over its time limit is stopped and the next one runs; the exit status
# is the number of steps that failed. docs/gpu.md says what each log shows.
set -uo pipefail
usage='usage: gpu_checks.sh OUT_DIR build|test|build-and-test|main [ARGS...]'
out=${1:?$usage}
phase=${2:?$usage}
sysroot=${SYSROOT:-.sysroot}
build=${BUILD:-build-gpu}
mkdir -p "$out"
failed=0

step() {  # name, seconds, command...: runs the command into OUT/name.log
  local name=$1 seconds=$2
  shift 2
  local start=$SECONDS
  timeout --kill-after=10 "$seconds" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc after $((SECONDS - start)) s (limit $seconds s)" | tee -a "$out/summary.txt"
  [ $rc -eq 0 ] || failed=$((failed + 1))
}

nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv > "$out/summary.txt" 2>&1
eval "$(bash "$sysroot/unpack.sh" /tmp/hlogym-sysroot | tail -1)"
# The Python packages hlogym needs beyond numpy, from the wheels gpu_sysroot.sh fetched.
site=/tmp/hlogym-site
if [ -d "$sysroot/wheels" ] && [ ! -d "$site" ]; then
  python3 -m pip install -q --no-index --no-deps --target "$site" "$sysroot"/wheels/*.whl \
    >> "$out/summary.txt" 2>&1
fi

case $phase in
  build | test | build-and-test)
    if [ "$phase" != test ]; then
      step build 210 env PYTHON=1 bash scripts/gpu_build.sh "$sysroot" "$build" hlogym_backend_tests \
        hlogym_envs_tests hlogym_gpu_backend_table hlogym_gpu_memory_table _hlogym
    fi
    [ "$phase" = build ] && exit $failed
    step tests 100 bash -c "$build/tests/hlogym_backend_tests --gtest_filter='Gpu*:Nvptx*' &&
      $build/tests/hlogym_envs_tests --gtest_filter='Isolated*'"
    step gpu_table 100 "$build/bench/hlogym_gpu_backend_table"
    # conv_bn_relu with the elemental convolution kernel, against the table's im2col + cuBLAS.
    step gpu_table_conv_elemental 30 \
      env HLOGYM_GPU_LOWERINGS=select-and-scatter-to-scatter,topk-to-reductions \
      "$build/bench/hlogym_gpu_backend_table" conv_bn_relu
    step gpu_memory 100 "$build/bench/hlogym_gpu_memory_table" 1000
    # The Python API on the GPU: the `gpu`-marked test runs only where one is present.
    step pytest_gpu 60 env PYTHONPATH="$site:python" python3 -m pytest -q -p no:cacheprovider \
      tests/python/test_backend.py
    ;;
  main)
    # The table's rows are timed on the GPU after episodes planned on its
    # cost model; `hlogym main` picks that where a GPU is usable.
    step main 330 env PYTHONPATH="$site:python" PYTHONUNBUFFERED=1 python3 -m hlogym main --no-progress \
      "${@:3}"
    cp build/main/compare.json "$out/" 2>/dev/null
    # A pool's GPU rewards in this process and in a worker (isolate=1, the default).
    step isolation 120 env PYTHONPATH="$site:python" python3 bench/pool_reward_isolation.py gpu 15
    ;;
  *)
    echo "unknown phase '$phase': build, test, build-and-test or main" >&2
    exit 2
    ;;
esac
exit $failed
