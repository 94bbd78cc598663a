#!/usr/bin/env bash
# Issue 14's benchmarks: what the append-only log costs, and how long a
# restart takes to load.
#
#   bash bench/persistence.sh
#
# Three parts (PARTS="php resp load", any subset):
#   php   in-process ephpm_kv_set (bench/php_persist.php) with persistence
#         off, fsync=everysec and fsync=always, against the call floor; one
#         PHP process per (mode, round), the modes interleaved round by round
#   resp  redis-benchmark -t set -P 16 against three ephpm --resp (no data
#         dir, --fsync everysec, --fsync always) and redis-server with
#         appendonly yes (appendfsync everysec, and always), interleaved
#   load  LOAD_KEYS (1 000 000) keys of 64 B written over RESP with
#         redis-cli --pipe, SIGTERM, and the restart timed until ephpm
#         prints its listening line (it loads before it listens) and answers
#         PING; then again after SAVE (a snapshot instead of a long log)
#
# Environment (all optional):
#   EPHPM=/path/to/ephpm EXT=/path/to/ephpm.so   use these (default: a Release
#                         build of both in $BUILD, /tmp/ephpm-persist-bench-build)
#   ROUNDS=3              rounds of the php and resp parts
#   PHP_ARGS="--keys=10000 --rounds=20 --repeats=5"   off and everysec runs
#   PHP_ALWAYS_ARGS="--keys=500 --rounds=1 --repeats=3"  always (one fsync per call)
#   REQUESTS=200000 CLIENTS=50 KEYSPACE=100000 DATASIZE=32   redis-benchmark
#   LOAD_KEYS=1000000
#
# Data dirs live in a temporary directory under /tmp (the machine's disk, so
# fsync is real) and are removed at the end, with every process started
# here.  A benchmark, never a test: it prints figures and fails only when
# something does not run.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

PARTS=${PARTS:-"php resp load"}
ROUNDS=${ROUNDS:-3}
PHP_ARGS=${PHP_ARGS:-"--keys=10000 --rounds=20 --repeats=5"}
PHP_ALWAYS_ARGS=${PHP_ALWAYS_ARGS:-"--keys=500 --rounds=1 --repeats=3"}
REQUESTS=${REQUESTS:-200000}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}
DATASIZE=${DATASIZE:-32}
LOAD_KEYS=${LOAD_KEYS:-1000000}
build=${BUILD:-/tmp/ephpm-persist-bench-build}

bench_require "apt-get install redis-server redis-tools php8.2-cli" \
  redis-server redis-benchmark redis-cli php || exit 1

# ---- the programs ------------------------------------------------------------
bench_ephpm "$build" || exit 1
ephpm=$REPLY
ext=${EXT:-}
if [ -z "$ext" ] && [[ " $PARTS " == *" php "* ]]; then
  bench_quietly bench_cmake_release "$build" ephpm_ext || { echo "build failed" >&2; exit 1; }
  ext=$build/ext/ephpm.so
fi

# ---- processes and cleanup -------------------------------------------------------
work=$(mktemp -d /tmp/persist-bench.XXXXXX)
pids=()
stop_all() {
  bench_stop "${pids[@]}"
  rm -rf "$work"
}
bench_on_exit stop_all

# start_ephpm NAME ARGS...: ephpm --resp on a port of its choosing, output in
# $work/NAME.out / .err; sets ephpm_pid and ephpm_port.
start_ephpm() {
  local name=$1
  shift
  "$ephpm" --resp 127.0.0.1:0 "$@" >"$work/$name.out" 2>"$work/$name.err" &
  ephpm_pid=$!
  pids+=("$ephpm_pid")
  if ! bench_listening_port "$work/$name.out" resp "$ephpm_pid" 600; then
    cat "$work/$name.err" >&2
    echo "ephpm ($name) did not start" >&2
    exit 1
  fi
  ephpm_port=$REPLY
}

# The persistence section of INFO, one "name=value" a word, for the notes.
info_persistence() {
  redis-cli -p "$1" info persistence | tr -d '\r' | grep -v '^#' | grep -v '^$' | tr '\n' ' '
}

echo "== machine"
echo "$(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)," \
     "$(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r)," \
     "data dirs on $(df -T "$work" | awk 'NR == 2 { print $2 " (" $1 ")" }')"
echo "ephpm: $ephpm$(git rev-parse --short HEAD 2>/dev/null | sed 's/^/, commit /')"
echo "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), $(php -r 'echo "PHP ", PHP_VERSION;')"
echo "loadavg before: $(cat /proc/loadavg)"

# ---- php: ephpm_kv_set in-process -----------------------------------------------------
if [[ " $PARTS " == *" php "* ]]; then
  echo
  echo "== php: ephpm_kv_set, bench/php_persist.php ($PHP_ARGS; always: $PHP_ALWAYS_ARGS)"
  results=$work/php.txt
  : >"$results"
  for round in $(seq 1 "$ROUNDS"); do
    for mode in off everysec always; do
      args=(-d opcache.enable_cli=1 -d "extension=$ext")
      # shellcheck disable=SC2206  # word splitting of the knobs is wanted
      bench_args=($PHP_ARGS)
      if [ "$mode" != off ]; then
        args+=(-d ephpm.persistence=log -d "ephpm.data_dir=$work/php-$mode-$round"
               -d "ephpm.fsync=$mode")
      fi
      # shellcheck disable=SC2206
      [ "$mode" = always ] && bench_args=($PHP_ALWAYS_ARGS)
      out=$(php "${args[@]}" bench/php_persist.php "${bench_args[@]}")
      line=$(echo "$out" | grep '^RESULT')
      echo "round $round $mode: ${line#RESULT }"
      echo "$mode $(echo "$line" | sed 's/.*floor_ns=\([^ ]*\) set_ns=\([^ ]*\) set_cpu_ns=\([^ ]*\).*/\1 \2 \3/')" >>"$results"
      if [ "$mode" = always ] && [ "$round" = "$ROUNDS" ]; then
        echo "$out" | grep '^INFO' | sed 's/^INFO /  /' | grep -i 'commit\|fsync\|records' || true
      fi
      rm -rf "$work/php-$mode-$round"
    done
  done
  echo
  echo "| mode | floor ns | set ns | above floor ns | x off (above floor) |"
  echo "|---|---:|---:|---:|---:|"
  off_above=$(awk '$1 == "off" { print $3 - $2 }' "$results" | bench_median)
  for mode in off everysec always; do
    f=$(awk -v m="$mode" '$1 == m { print $2 }' "$results" | bench_median)
    s=$(awk -v m="$mode" '$1 == m { print $3 }' "$results" | bench_median)
    a=$(awk -v m="$mode" '$1 == m { print $3 - $2 }' "$results" | bench_median)
    printf '| %s | %.1f | %.1f | %.1f | %.2f |\n' "$mode" "$f" "$s" "$a" \
      "$(awk -v a="$a" -v o="$off_above" 'BEGIN { print a / o }')"
  done
fi

# ---- resp: SET -P 16 ------------------------------------------------------------------
if [[ " $PARTS " == *" resp "* ]]; then
  echo
  echo "== resp: redis-benchmark -c $CLIENTS -n $REQUESTS -r $KEYSPACE -d $DATASIZE -t set -P 16"
  declare -A port pid
  start_ephpm resp-off --log-level warn
  port[ephpm-off]=$ephpm_port pid[ephpm-off]=$ephpm_pid
  for mode in everysec always; do
    start_ephpm "resp-$mode" --log-level warn --data-dir "$work/resp-$mode" --fsync "$mode"
    port[ephpm-$mode]=$ephpm_port pid[ephpm-$mode]=$ephpm_pid
  done
  for mode in everysec always; do
    mkdir -p "$work/redis-$mode"
    bench_start_redis "$work/redis-$mode" --appendonly yes --appendfsync "$mode" ||
      { echo "could not start redis-server" >&2; exit 1; }
    pids+=("$redis_pid")
    port[redis-aof-$mode]=$redis_port pid[redis-aof-$mode]=$redis_pid
  done
  servers="ephpm-off ephpm-everysec ephpm-always redis-aof-everysec redis-aof-always"
  results=$work/resp.txt
  : >"$results"
  for round in $(seq 1 "$ROUNDS"); do
    for s in $servers; do
      c0=$(bench_cpu_ticks "${pid[$s]}")
      t0=$(date +%s.%N)
      rps=$(redis-benchmark -h 127.0.0.1 -p "${port[$s]}" -c "$CLIENTS" -n "$REQUESTS" \
              -r "$KEYSPACE" -d "$DATASIZE" -t set -P 16 --csv 2>/dev/null |
            tail -n +2 | tr -d '"' | cut -d, -f2)
      t1=$(date +%s.%N)
      c1=$(bench_cpu_ticks "${pid[$s]}")
      cpu=$(awk -v a="$c0" -v b="$c1" -v hz="$bench_hz" 'BEGIN { printf "%.2f", (b - a) / hz }')
      wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
      echo "$s $rps" >>"$results"
      printf 'round %s  %-19s %10s req/s  (server CPU %ss over %ss wall)\n' "$round" "$s" "$rps" "$cpu" "$wall"
    done
  done
  echo
  echo "| server | SET -P 16 req/s (median) | x ephpm-off |"
  echo "|---|---:|---:|"
  off=$(awk '$1 == "ephpm-off" { print $2 }' "$results" | bench_median)
  for s in $servers; do
    m=$(awk -v s="$s" '$1 == s { print $2 }' "$results" | bench_median)
    printf '| %s | %.0f | %.2f |\n' "$s" "$m" "$(awk -v a="$m" -v o="$off" 'BEGIN { print a / o }')"
  done
  for mode in everysec always; do
    echo "INFO persistence of ephpm --fsync $mode: $(info_persistence "${port[ephpm-$mode]}")"
  done
  bench_stop "${pid[@]}"
fi

# ---- load: a restart with LOAD_KEYS keys ------------------------------------------------
if [[ " $PARTS " == *" load "* ]]; then
  echo
  echo "== load: $LOAD_KEYS keys of 64 B, --fsync everysec"
  bench_free_port || { echo "no free port" >&2; exit 1; }
  lport=$REPLY
  data=$work/load
  # start_load NAME: ephpm on $lport with the load data dir; sets took_s (the
  # spawn to its listening line) and ping_s (to its first PONG).
  start_load() {
    local name=$1 t0
    t0=$(date +%s.%N)
    "$ephpm" --resp "127.0.0.1:$lport" --data-dir "$data" --fsync everysec \
      >"$work/$name.out" 2>"$work/$name.err" &
    load_pid=$!
    pids+=("$load_pid")
    took_s=""
    for _ in $(seq 1 6000); do
      if grep -q '^resp listening on' "$work/$name.out"; then
        took_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
        break
      fi
      kill -0 "$load_pid" 2>/dev/null || break
      sleep 0.01
    done
    [ -n "$took_s" ] || { cat "$work/$name.err" >&2; echo "ephpm ($name) did not start" >&2; exit 1; }
    for _ in $(seq 1 3000); do
      [ "$(redis-cli -p "$lport" ping 2>/dev/null)" = PONG ] && break
      sleep 0.01
    done
    ping_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
  }
  start_load load-first
  t0=$(date +%s.%N)
  awk -v n="$LOAD_KEYS" 'BEGIN {
    for (i = 0; i < n; i++) {
      k = "key:" i; v = sprintf("%064d", i)
      printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$64\r\n%s\r\n", length(k), k, v
    }
  }' | redis-cli -p "$lport" --pipe >"$work/pipe.out"
  t1=$(date +%s.%N)
  echo "written in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s:" \
       "$(tail -1 "$work/pipe.out"); dbsize $(redis-cli -p "$lport" dbsize)"
  echo "INFO persistence: $(info_persistence "$lport")"
  echo "data dir: $(du -sh "$data" | cut -f1) ($(ls "$data" | tr '\n' ' '))"
  t0=$(date +%s.%N)
  bench_stop "$load_pid"
  echo "SIGTERM to exit: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }') s"
  for what in log snapshot; do
    start_load "load-$what"
    echo "restart from the $what: listening after $took_s s, first PONG after $ping_s s;" \
         "dbsize $(redis-cli -p "$lport" dbsize); RSS $(awk '/VmRSS/ { print $2 / 1024 " MB" }' /proc/$load_pid/status)"
    echo "  INFO persistence: $(info_persistence "$lport" | tr ' ' '\n' | grep -i 'load\|trunc\|log_bytes\|rewrite' | tr '\n' ' ')"
    grep -i 'load\|torn\|trunc' "$work/load-$what.err" | sed 's/^/  log: /' || true
    if [ "$what" = log ]; then
      t0=$(date +%s.%N)
      echo "SAVE: $(redis-cli -p "$lport" save) in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s;" \
           "data dir $(du -sh "$data" | cut -f1) ($(ls "$data" | tr '\n' ' '))"
    fi
    bench_stop "$load_pid"
  done
fi
echo
echo "loadavg after: $(cat /proc/loadavg)"
