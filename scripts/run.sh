#!/usr/bin/env bash
# Sets up, builds and runs the main job: the ephpm host serving examples/
# over HTTP on 127.0.0.1:8131, with the store inside it (and reachable over
# RESP on a free loopback port, printed at start).  Its data (sessions
# included) lives in $EPHPM_DATA_DIR (default ~/.local/share/ephpm/examples)
# and survives a restart.  Ctrl-C stops it.
#   curl 'localhost:8131/lock.php?release=del'
#   curl 'localhost:8131/lock.php?release=del_if_eq'
#   curl -c /tmp/c -b /tmp/c localhost:8131/session.php
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B cmake-build
cmake --build cmake-build -j"$(nproc)" --target ephpm
data_dir=${EPHPM_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/ephpm/examples}
mkdir -p "$(dirname "$data_dir")"
exec cmake-build/sapi/ephpm --docroot examples --listen 127.0.0.1:8131 --resp 127.0.0.1:0 \
  --data-dir "$data_dir" "$@"
