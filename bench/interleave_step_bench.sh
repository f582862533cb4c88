#!/usr/bin/env bash
# Compares env-step bench binaries by interleaving them: ROUNDS rounds, each
# running every binary once on gpt2 (`--benchmark_filter=gpt2`), then the
# median, min and every run's `cpu_median_ms` per binary. On this 2-core
# machine single runs move 20-40% with the host's load, so two builds are
# compared only in one interleaved run (copy the base binary aside first:
# cp build/bench/hlogym_env_step_bench /tmp/base).
#
#   bench/interleave_step_bench.sh ROUNDS BINARY...
#   bench/interleave_step_bench.sh 8 /tmp/base build/bench/hlogym_env_step_bench
set -euo pipefail
if (($# < 2)); then
  echo "usage: $0 ROUNDS BINARY..." >&2
  exit 2
fi
rounds=$1
shift
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for ((r = 0; r < rounds; ++r)); do
  for bin in "$@"; do
    ms=$("$bin" --benchmark_filter=gpt2 2>&1 | grep -o 'cpu_median_ms=[0-9.]*' | cut -d= -f2)
    echo "$bin ${ms:-nan}" >> "$results"
  done
done
python3 - "$results" "$@" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, ms = line.split()
    runs.setdefault(name, []).append(float(ms))
for name in sys.argv[2:]:
    v = runs[name]
    print(f"{name}: median {statistics.median(v):.2f} ms, min {min(v):.2f} ms over {len(v)} runs:"
          f" {' '.join(f'{x:.1f}' for x in v)}")
PY
