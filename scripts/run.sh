#!/usr/bin/env bash
# Sets up, builds and runs the main job: for now the design note's lock
# scenario against the store (the HTTP host arrives with later work).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B cmake-build
cmake --build cmake-build -j"$(nproc)" --target ephpm-lock-demo
exec cmake-build/sapi/ephpm-lock-demo "$@"
