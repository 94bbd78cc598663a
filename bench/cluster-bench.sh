#!/usr/bin/env bash
# Cluster benchmarks (bench/cluster_bench.php): builds a Release ephpm (or
# takes EPHPM=path) and runs them.  ROUNDS=3 by default.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v redis-benchmark >/dev/null || { echo "needs redis-benchmark: apt-get install redis-tools" >&2; exit 1; }
ephpm=${EPHPM:-}
if [ -z "$ephpm" ]; then
  build=${BUILD:-/tmp/ephpm-cluster-bench-build}
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DEPHPM_BUILD_TESTS=OFF \
        -DEPHPM_BUILD_BENCH=OFF >/dev/null
  cmake --build "$build" -j"$(nproc)" --target ephpm >/dev/null
  ephpm=$build/sapi/ephpm
fi
exec php -n bench/cluster_bench.php --ephpm "$ephpm" --rounds "${ROUNDS:-3}"
