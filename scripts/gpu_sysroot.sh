#!/bin/bash
# Packs what scripts/gpu_build.sh needs on a GPU machine without packages:
# LLVM 16 headers, oneTBB, abseil (tools/offline-sysroot.sh's set) plus
# GoogleTest, Google Benchmark, OpenBLAS and yaml-cpp, as Debian 12 packages.
# Run where apt-get works: bash scripts/gpu_sysroot.sh DIR
set -euo pipefail
dir=${1:?usage: gpu_sysroot.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
[ -d /usr/lib/llvm-16/include/llvm ] || { echo "needs llvm-16-dev installed here"; exit 1; }
tar chJf "$dir/llvm16-include.tar.xz" -C /usr/lib/llvm-16 include/llvm include/llvm-c
(cd "$dir" && apt-get download libtbb12 libtbbmalloc2 libtbb-dev libabsl20220623 libabsl-dev \
  libgtest-dev libgmock-dev googletest libbenchmark-dev libbenchmark1debian libopenblas0-pthread \
  libopenblas-pthread-dev libopenblas-dev libgfortran5 libyaml-cpp-dev libyaml-cpp0.7 libtbbbind-2-5 libhwloc15 >/dev/null)
cat > "$dir/unpack.sh" <<'U'
#!/bin/bash
# usage: unpack.sh TARGET_DIR: unpacks the headers and packages, then prints the variables to export.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); t=${1:?usage: unpack.sh TARGET_DIR}; mkdir -p "$t"; t=$(cd "$t" && pwd)
tar xJf "$here/llvm16-include.tar.xz" -C "$t"
for d in "$here"/*.deb; do dpkg -x "$d" "$t"; done
lib=$t/usr/lib/x86_64-linux-gnu
echo "export CPATH=$t/include:$t/usr/include LIBRARY_PATH=$lib LD_LIBRARY_PATH=$lib:$lib/openblas-pthread:/usr/local/cuda/lib64:\${LD_LIBRARY_PATH:-} CMAKE_PREFIX_PATH=$t/usr"
U
chmod +x "$dir/unpack.sh"
# WHEELS=3.12 (the GPU machine's Python): the wheels `hlogym main` needs beyond
# the numpy there (scripts/gpu_checks.sh installs them), ~25 MB.
if [ -n "${WHEELS:-}" ]; then
  python=python3
  [ -x .venv/bin/python ] && python=.venv/bin/python
  "$python" -m pip download -q --no-deps --only-binary=:all: --python-version "$WHEELS" \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
    -d "$dir/wheels" gymnasium farama-notifications cloudpickle typing-extensions tqdm matplotlib \
    contourpy cycler fonttools kiwisolver pillow pyparsing python-dateutil six packaging
fi
du -sh "$dir"
