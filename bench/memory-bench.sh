#!/usr/bin/env bash
# Memory for a loaded data set: ephpm's RESP host against Debian's
# redis-server, in one run.
#
#   bash bench/memory-bench.sh
#   KEYS=1000000 KEYLEN=16 VALLEN=64 bash bench/memory-bench.sh
#   EPHPM=/path/to/ephpm  use this binary (default: a Release build made in
#                         $BUILD, default /tmp/ephpm-resp-bench-build)
#
# Loads KEYS distinct keys ("k" then the number, zero-padded to KEYLEN bytes)
# with VALLEN-byte values and no TTL into each server over RESP (redis-cli
# --pipe, the same bytes for both), then prints, per server: the growth of
# the process's resident set (VmRSS before the load and after it), the
# server's own `used_memory` growth (the figure ephpm.memory_limit and Redis's
# maxmemory enforce), both per key, and ephpm's ratios to redis-server:
# RSS growth (issue 19's target: at most 0.8x) and accounted / real growth
# (target: within 15%).  A measurement, not a test: CI runs it only as a
# smoke test (bench/smoke.sh, 20 000 keys) and reads no figure.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

KEYS=${KEYS:-1000000}
KEYLEN=${KEYLEN:-16}
VALLEN=${VALLEN:-64}

bench_require "apt-get install redis-server redis-tools python3" redis-server redis-cli python3 ||
  exit 1

bench_ephpm "${BUILD:-/tmp/ephpm-resp-bench-build}" || exit 1
ephpm=$REPLY

work=$(mktemp -d /tmp/memory-bench.XXXXXX)
ephpm_pid=""
redis_pid=""
stop() {
  bench_stop $ephpm_pid $redis_pid
  rm -rf "$work"
}
bench_on_exit stop

bench_start_ephpm_resp "$ephpm" "$work" || exit 1

# The load, as RESP, written once.
python3 - "$KEYS" "$KEYLEN" "$VALLEN" >"$work/load.resp" <<'EOF'
import sys
n, klen, vlen = (int(a) for a in sys.argv[1:4])
if klen < len(str(n - 1)) + 1:
    sys.exit(f"KEYLEN {klen} cannot hold {n} distinct keys")
value = b"v" * vlen
out = sys.stdout.buffer
head = b"*3\r\n$3\r\nSET\r\n$%d\r\n" % klen
tail = b"\r\n$%d\r\n%s\r\n" % (vlen, value)
for i in range(n):
    out.write(head + b"k" + str(i).zfill(klen - 1).encode() + tail)
EOF

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
used_memory() {
  redis-cli -p "$1" INFO memory | tr -d '\r' | sed -n 's/^used_memory:\([0-9]*\)$/\1/p'
}

echo "ephpm: $ephpm (pid $ephpm_pid); redis: $(redis-server --version | cut -d' ' -f3) (pid $redis_pid)"
echo "data: $KEYS keys of $KEYLEN B, values of $VALLEN B, no TTL, loaded with redis-cli --pipe"
declare -A rss used
for server in ephpm redis; do
  if [ "$server" = ephpm ]; then port=$ephpm_port pid=$ephpm_pid; else port=$redis_port pid=$redis_pid; fi
  rss0=$(rss_kb "$pid")
  used0=$(used_memory "$port")
  redis-cli -p "$port" --pipe <"$work/load.resp" >"$work/$server.pipe" 2>&1 || {
    cat "$work/$server.pipe" >&2
    echo "$server: the load failed" >&2
    exit 1
  }
  grep -q "errors: 0, replies: $KEYS" "$work/$server.pipe" || {
    cat "$work/$server.pipe" >&2
    echo "$server: not every SET was answered OK" >&2
    exit 1
  }
  size=$(redis-cli -p "$port" DBSIZE | tr -d '\r')
  [ "$size" = "$KEYS" ] || { echo "$server: DBSIZE $size, expected $KEYS" >&2; exit 1; }
  rss[$server]=$(( ($(rss_kb "$pid") - rss0) * 1024 ))
  used[$server]=$(( $(used_memory "$port") - used0 ))
done

echo
echo "| server | RSS growth (MB) | B/key | used_memory growth (MB) | B/key | used / RSS growth |"
echo "|---|---:|---:|---:|---:|---:|"
for server in ephpm redis; do
  awk -v s="$server" -v r="${rss[$server]}" -v u="${used[$server]}" -v n="$KEYS" \
    'BEGIN { printf "| %s | %.1f | %.0f | %.1f | %.0f | %.2f |\n", s, r / 1e6, r / n, u / 1e6, u / n, u / r }'
done
awk -v e="${rss[ephpm]}" -v r="${rss[redis]}" \
  'BEGIN { printf "\nephpm / redis-server, RSS growth: %.2fx (target <= 0.80)\n", e / r }'
awk -v u="${used[ephpm]}" -v r="${rss[ephpm]}" \
  'BEGIN { printf "ephpm accounted / real growth: %.2f (target 0.85-1.15)\n", u / r }'
