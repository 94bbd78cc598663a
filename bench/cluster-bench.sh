#!/usr/bin/env bash
# Cluster benchmarks (bench/cluster_bench.php): a single node, a three-node
# gossip cluster and a three-node strict cluster (locks decided by a
# three-member etcd on loopback), in one run.  Builds a Release ephpm from
# the working tree against the thread-safe PHP (scripts/build-zts-php.sh,
# cached after its first build), so that a host runs several PHP workers
# and the session part's concurrent clients are served at once.
#
# Environment (optional):
#   ROUNDS=3       rounds (each interleaves the modes)
#   WORKERS=8      PHP workers per host (one per concurrent session client)
#   EPHPM=path     an ephpm to use instead of building one (with a
#                  non-thread-safe PHP, set WORKERS=0: it runs one worker)
#   BUILD=dir      the build directory (default /tmp/ephpm-cluster-bench-zts)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
command -v redis-benchmark >/dev/null || { echo "needs redis-benchmark: apt-get install redis-tools" >&2; exit 1; }
if ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; then
  echo "needs etcd and etcdctl: apt-get install etcd-server etcd-client" >&2
  exit 1
fi
bench_ephpm "${BUILD:-/tmp/ephpm-cluster-bench-zts}" bench_zts_release || exit 1
ephpm=$REPLY
exec php -n bench/cluster_bench.php --ephpm "$ephpm" --rounds "${ROUNDS:-3}" --workers "${WORKERS:-8}"
