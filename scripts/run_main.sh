#!/usr/bin/env bash
# Sets everything up, then runs hlogym's main job on the bundled dataset:
# `hlogym compare` of the four built-in agents with the best backend here
# (the GPU, else episodes planned on the cost model and timed on the CPU; see
# README, "The main job"). Extra arguments go to `compare`. The table is
# printed; a bar chart and every episode's decisions are written to build/main/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PYTHONPATH=python exec .venv/bin/python -m hlogym main "$@"
