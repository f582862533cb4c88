#!/bin/bash
# Builds hlogym on a machine with a GPU but no -dev packages and no network
# (the H100 machine): see docs/gpu.md. Prepare the sysroot folder where apt
# works, once:
#   bash scripts/gpu_sysroot.sh .sysroot
# then, on the GPU machine, from the repository root:
#   bash scripts/gpu_build.sh .sysroot build-gpu [TARGETS...]
# It unpacks the sysroot to /tmp/hlogym-sysroot, configures against the
# machine's own libLLVM-16.so.1 and CUDA, and builds the targets (default: the
# backend and env tests and the GPU benchmark table). With PYTHON=1 it also builds the
# extension (target _hlogym) against that machine's python3, pybind11 and
# numpy. Print the environment to run the binaries with:
#   bash scripts/gpu_build.sh --env .sysroot
set -euo pipefail
if [ "${1:-}" = "--env" ]; then
  bash "$2/unpack.sh" /tmp/hlogym-sysroot | tail -1
  exit 0
fi
sysroot=${1:?usage: gpu_build.sh SYSROOT_DIR BUILD_DIR [TARGETS...]}
build=${2:?usage: gpu_build.sh SYSROOT_DIR BUILD_DIR [TARGETS...]}
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(hlogym_backend_tests hlogym_envs_tests hlogym_gpu_backend_table)
t=/tmp/hlogym-sysroot
eval "$(bash "$sysroot/unpack.sh" "$t" | tail -1)"
export LLVM_INCLUDE_DIR=$t/include
lib=$t/usr/lib/x86_64-linux-gnu
python_flags=(-DHLOGYM_BUILD_PYTHON=OFF)
if [ "${PYTHON:-0}" = 1 ]; then
  python_flags=(-DHLOGYM_BUILD_PYTHON=ON -DPython3_EXECUTABLE="$(command -v python3)"
                -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)")
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${python_flags[@]}" \
  -DHLOGYM_ENABLE_CUDA=ON -DBLAS_LIBRARIES="$lib/openblas-pthread/libopenblas.so" \
  -DHLOGYM_CBLAS_INCLUDE_DIR="$t/usr/include/x86_64-linux-gnu/openblas-pthread" \
  -DCMAKE_PREFIX_PATH="$t/usr" -DCMAKE_BUILD_RPATH="$lib;$lib/openblas-pthread"
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
