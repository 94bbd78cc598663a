#!/usr/bin/env bash
# Ephpm\Lock's costs (docs/LOCKS.md):
#
#   bash bench/lock-bench.sh
#
# 1. The acquire+release cycle against the raw setnx + del_if_eq cycle, in
#    one PHP CLI process (bench/php_lock.php), Release build of the
#    extension against Debian's PHP.
# 2. The handover from a releasing holder to a waiter blocked in
#    Ephpm\Lock::block: the ephpm host (thread-safe PHP, Release, 2 workers)
#    serves bench/php_lock.php; two requests at once each take the lock
#    HANDOVERS times, holding it 2 ms; every grant that follows the other
#    request's release reports the time from that release (noted just
#    before it) to the grant.  Median and p99 over all of them.
#
# Environment (optional): CYCLES=20000 REPEATS=7 HANDOVERS=500
#   BUILD=/tmp/ephpm-lock-bench (Debian PHP), ZBUILD=/tmp/ephpm-host-bench-zts
#   (thread-safe PHP; shared with bench/host-bench.sh), EPHPM=/path/to/ephpm.
# A benchmark, not a test: it prints figures and never fails on them.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bash scripts/install-deps.sh >/dev/null

bench_quietly bench_cmake_release "${BUILD:-/tmp/ephpm-lock-bench}" ephpm_ext ||
  { echo "the extension's build failed" >&2; exit 1; }
ext=${BUILD:-/tmp/ephpm-lock-bench}/ext/ephpm.so

echo "== machine"
echo "$(nproc) cores, $(. /etc/os-release && echo "$PRETTY_NAME"), $(php -r 'echo "PHP ", PHP_VERSION;')," \
     "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo
echo "== cycle: Ephpm\\Lock::acquire()->release() vs setnx + del_if_eq (CLI, NTS, opcache on)"
php -d opcache.enable_cli=1 -d "extension=$ext" bench/php_lock.php \
    --cycles="${CYCLES:-20000}" --repeats="${REPEATS:-7}"

bench_ephpm "${ZBUILD:-/tmp/ephpm-host-bench-zts}" bench_zts_release || exit 1
ephpm=$REPLY

work=$(mktemp -d /tmp/lock-bench.XXXXXX)
chmod 755 "$work"
pid=""
cleanup() {
  bench_stop $pid
  rm -rf "$work"
}
bench_on_exit cleanup
mkdir "$work/www"
cp bench/php_lock.php "$work/www/"
"$ephpm" --docroot "$work/www" --listen 127.0.0.1:0 --workers 2 --log-level warn \
         >"$work/out" 2>"$work/err" &
pid=$!
bench_listening_port "$work/out" http "$pid" 200 || { cat "$work/err" >&2; exit 1; }
port=$REPLY
n=${HANDOVERS:-500}
url="http://127.0.0.1:$port/php_lock.php?handover=$n"
curl -s "$url" >/dev/null  # warm up one worker
curl -s --parallel --parallel-immediate "$url" "$url" -o "$work/a" -o "$work/b" 2>/dev/null
echo
echo "== handover: release -> a waiter blocked in Ephpm\\Lock::block gets it (host, ZTS, 2 workers)"
cat "$work/a" "$work/b" | grep -E '^[0-9]+$' | sort -n | awk '
  { v[NR] = $1 }
  END {
    if (NR == 0) { print "no samples"; exit }
    p50 = v[int((NR - 1) * 0.50) + 1]; p99 = v[int((NR - 1) * 0.99) + 1]
    printf "samples %d  median %.1f us  p99 %.1f us  max %.1f us\n",
           NR, p50 / 1000, p99 / 1000, v[NR] / 1000
  }'
