#!/usr/bin/env bash
# Sets everything up, then runs hlogym's main job on the bundled dataset:
# `hlogym compare` of the four built-in agents with the H100 cost model
# (measured backends take too long for 5 minutes on 2 cores; pass --backend cpu). Extra arguments go to `compare`.
# The table is printed; a bar chart and every episode's decisions are
# written to build/main/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PYTHONPATH=python exec .venv/bin/python -m hlogym main "$@"
