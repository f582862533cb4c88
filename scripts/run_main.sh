#!/usr/bin/env bash
# Sets everything up, then runs hlogym's main job on the bundled dataset.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PYTHONPATH=python exec .venv/bin/python -m hlogym main "$@"
