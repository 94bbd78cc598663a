#!/usr/bin/env bash
# Redis's own Tcl test units (from Debian's redis source package, fetched
# once into the cache by scripts/fetch-php-src.sh), run in Redis's external
# mode against Debian's redis-server and against ephpm in the same run:
#
#   run.sh EPHPM_BINARY [unit ...]     (default: the units listed below)
#
# Both servers are started fresh for each unit, each with a data directory
# of its own: redis-server as Debian ships it (DEBUG disabled, no save
# points, no AOF), ephpm with --resp and --data-dir.  The suite runs
# with --ignore-encoding (ephpm keeps one representation per type) and
# --ignore-digest (no DEBUG DIGEST), without --singledb (so SELECT, MOVE,
# SWAPDB and COPY .. DB are exercised), one client, and with --tags -resp3:
# ephpm speaks RESP2 only (HELLO 3 is refused with -NOPROTO), so the units'
# RESP3 variants are left out against both servers; and --tags -needs:repl:
# those tests read the replication stream (SYNC), which ephpm does not serve
# (its cluster replicates its own way), and against a stock redis-server
# they wait for an RDB preamble that diskless sync never sends.
#
# tests/redis-tcl/skipped.txt names tests left out against both servers
# (a test's name, a tab, why): a test whose outcome depends on how requests
# sent on different connections at the same moment are ordered, which a
# multi-threaded server does not promise, and which would otherwise hang; a
# test that fails against ephpm on purpose before it restores what it
# changed, which would fail every test after it.  The scripting unit runs
# its EVAL pass only (below).
#
# Every test that passes against redis-server must pass against ephpm,
# unless tests/redis-tcl/expected-differences.txt names it with the reason
# (a unit, a tab, the test's name, a tab, why).  A listed test that passes
# against ephpm is reported too, so the list cannot go stale.  Prints one
# line per unit: passed against redis-server / against ephpm.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 EPHPM_BINARY [unit ...]" >&2
  exit 2
fi
ephpm=$1
shift
units=("$@")
if [ ${#units[@]} -eq 0 ]; then
  units=(type/string type/incr type/hash type/list type/set type/zset expire scan protocol
         bitops bitfield multi scripting keyspace other)
fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
expected=$here/expected-differences.txt

command -v tclsh8.6 > /dev/null || { echo "FAIL: tclsh8.6 missing (apt-get install tcl8.6)"; exit 1; }
src=$(EPHPM_PHP_SRC_PACKAGE=redis EPHPM_SRC_MARKER=tests/unit/type \
      bash "$repo/scripts/fetch-php-src.sh")

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2> /dev/null || true; done
  wait 2> /dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
  php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo explode(":", stream_socket_get_name($s, false))[1];'
}

# Fresh servers for every unit, so that what one unit leaves behind (a
# CONFIG SET of a test that failed half way, a runaway script) does not
# decide the next one's results.  Sets ephpm_pid, ephpm_port, redis_pid,
# redis_port.
start_servers() {  # tag
  # (With a data directory, as redis-server has one: SAVE and BGSAVE work.)
  "$ephpm" --resp 127.0.0.1:0 --data-dir "$tmp/ephpm.$1.data" \
    > "$tmp/ephpm.$1.out" 2> "$tmp/ephpm.$1.err" &
  ephpm_pid=$!
  pids+=("$ephpm_pid")
  local line="" _
  for _ in $(seq 1 200); do
    line=$(grep -m1 '^resp listening on ' "$tmp/ephpm.$1.out" 2> /dev/null || true)
    [ -n "$line" ] && break
    kill -0 "$ephpm_pid" 2> /dev/null || { echo "FAIL: ephpm exited:"; cat "$tmp/ephpm.$1".*; exit 1; }
    sleep 0.05
  done
  [ -n "$line" ] || { echo "FAIL: ephpm did not listen within 10 s"; exit 1; }
  ephpm_port=${line##*:}
  redis_port=$(free_port)
  mkdir -p "$tmp/redis.$1"
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$tmp/redis.$1" > "$tmp/redis.$1.log" 2>&1 &
  redis_pid=$!
  pids+=("$redis_pid")
  for _ in $(seq 1 200); do
    redis-cli -p "$redis_port" ping > /dev/null 2>&1 && break
    sleep 0.05
  done
}

# Stops both; false (after saying so) when ephpm died during the unit or
# does not exit cleanly on SIGTERM.
stop_servers() {  # tag
  local ok=0
  kill -KILL "$redis_pid" 2> /dev/null || true
  wait "$redis_pid" 2> /dev/null || true
  if ! kill -0 "$ephpm_pid" 2> /dev/null; then
    echo "FAIL: ephpm died during $1:"
    wait "$ephpm_pid" 2> /dev/null || echo "  (exit status $?)"
    tail -n 20 "$tmp/ephpm.$1.err"
    return 1
  fi
  kill -TERM "$ephpm_pid"
  if ! wait "$ephpm_pid"; then
    echo "FAIL: ephpm did not exit cleanly after SIGTERM at the end of $1:"
    tail -n 20 "$tmp/ephpm.$1.err"
    ok=1
  fi
  return $ok
}

grep -v '^#' "$here/skipped.txt" | grep -v '^$' | cut -f1 > "$tmp/skip" || true

# The suite runs from a copy of its tests/ directory, in which the scripting
# unit runs its tests through EVAL only: it runs each of them twice, first
# through Redis 7's FUNCTION LOAD + FCALL, which ephpm does not implement
# (its scripts are EVAL/EVALSHA), and that pass left running on ephpm ends
# in a reply it reads raw and never finishes.  The same copy serves both
# servers.
suite=$tmp/suite
mkdir -p "$suite"
cp -r "$src/tests" "$suite/"
sed -i '1s/^foreach is_eval {0 1} {$/foreach is_eval {1} {/' "$suite/tests/unit/scripting.tcl"
grep -q '^foreach is_eval {1} {$' "$suite/tests/unit/scripting.tcl" || {
  echo "FAIL: tests/unit/scripting.tcl does not start as expected"; exit 1; }

# Runs one unit against one port; leaves the log with colours stripped.
# The suite's own test server (and the servers it would spawn) need a range
# of free ports of their own: a random base below Linux's ephemeral range
# (32768 up, where every connection and every port-0 listener of the tests
# running beside this one lands), another one when the suite finds the range
# busy or loses its port between finding it free and binding it.
run_unit() {  # unit port log
  local try base
  for try in 1 2 3 4 5; do
    base=$(( 20000 + RANDOM % 120 * 100 ))
    (cd "$suite" && timeout 600 tclsh8.6 tests/test_helper.tcl --host 127.0.0.1 --port "$2" \
       --ignore-encoding --ignore-digest --durable --clients 1 --tags -resp3 --tags -needs:repl \
       --baseport "$base" --portcount 90 --skipfile "$tmp/skip" --single "unit/$1") \
       > "$3.raw" 2>&1 || true
    grep -qE "Can't find a non busy port|couldn't open socket: address already in use" "$3.raw" ||
      break
  done
  sed 's/\x1b\[[0-9;]*m//g' "$3.raw" > "$3"
}

# "[ok]: NAME (N ms)" -> NAME, one per line, sorted.  Duplicates stay: a
# unit may run a test of one name more than once (scripting runs its tests
# once through FUNCTION/FCALL and once through EVAL), so the lists are
# compared as multisets (comm matches each line once).
passed() { sed -n 's/^\[ok\]: \(.*\) ([0-9]* ms)$/\1/p' "$1" | LC_ALL=C sort; }

rc=0
for u in "${units[@]}"; do
  b=${u//\//_}
  start_servers "$b"
  run_unit "$u" "$redis_port" "$tmp/$b.redis"
  run_unit "$u" "$ephpm_port" "$tmp/$b.ephpm"
  stop_servers "$b" || rc=1
  passed "$tmp/$b.redis" > "$tmp/$b.redis.ok"
  passed "$tmp/$b.ephpm" > "$tmp/$b.ephpm.ok"
  awk -F'\t' -v u="$u" '$1 == u { print $2 }' "$expected" | LC_ALL=C sort > "$tmp/$b.expected"
  # Passed against redis-server (so many times), not against ephpm.
  LC_ALL=C comm -23 "$tmp/$b.redis.ok" "$tmp/$b.ephpm.ok" > "$tmp/$b.missing"
  # ... and not listed.
  LC_ALL=C comm -23 "$tmp/$b.missing" "$tmp/$b.expected" > "$tmp/$b.new"
  # Listed, yet not missing: passes against ephpm as often as against redis.
  LC_ALL=C comm -23 "$tmp/$b.expected" "$tmp/$b.missing" > "$tmp/$b.stale"
  if [ ! -s "$tmp/$b.redis.ok" ]; then
    rc=1
    echo "FAIL: $u: nothing passed against redis-server (the suite did not run):"
    tail -n 20 "$tmp/$b.redis"
  fi
  printf '%-12s redis-server %4d passed, ephpm %4d passed, %d listed differences\n' "$u" \
    "$(wc -l < "$tmp/$b.redis.ok")" "$(wc -l < "$tmp/$b.ephpm.ok")" "$(wc -l < "$tmp/$b.expected")"
  if [ -s "$tmp/$b.new" ]; then
    rc=1
    echo "FAIL: $u: passed against redis-server, not against ephpm:"
    sed 's/^/  /' "$tmp/$b.new"
    echo "--- what ephpm's log says about them:"
    while IFS= read -r name; do
      grep -F -A4 -- "[err]: $name in " "$tmp/$b.ephpm" | head -n 5 || true
    done < "$tmp/$b.new"
    grep -A12 '^\[exception\]' "$tmp/$b.ephpm" | head -n 40 || true
  fi
  if [ -s "$tmp/$b.stale" ]; then
    rc=1
    echo "FAIL: $u: listed in expected-differences.txt but passes against ephpm (as often as against redis-server):"
    sed 's/^/  /' "$tmp/$b.stale"
  fi
  if [ -n "${EPHPM_TCL_KEEP:-}" ]; then
    mkdir -p "$EPHPM_TCL_KEEP"
    cp "$tmp/$b.redis" "$tmp/$b.ephpm" "$EPHPM_TCL_KEEP/"
  fi
done

exit $rc
