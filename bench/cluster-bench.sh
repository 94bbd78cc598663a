#!/usr/bin/env bash
# Cluster benchmarks (bench/cluster_bench.php): builds a Release ephpm (or
# takes EPHPM=path) and runs them.  ROUNDS=3 by default.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
command -v redis-benchmark >/dev/null || { echo "needs redis-benchmark: apt-get install redis-tools" >&2; exit 1; }
bench_ephpm "${BUILD:-/tmp/ephpm-cluster-bench-build}" || exit 1
ephpm=$REPLY
exec php -n bench/cluster_bench.php --ephpm "$ephpm" --rounds "${ROUNDS:-3}"
