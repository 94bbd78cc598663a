#!/usr/bin/env bash
# RESP throughput: ephpm's RESP server against Debian's redis-server, both
# driven by redis-benchmark with the same arguments, interleaved.
#
#   bash bench/resp-bench.sh
#
# Environment (all optional):
#   EPHPM=/path/to/ephpm  use this binary (default: a Release build made in
#                         $BUILD, default /tmp/ephpm-resp-bench-build, no PHP
#                         needed but the default configure includes it)
#   EPHPM_ARGS='...'      extra host flags, e.g. "--resp-io-threads 1"
#   ROUNDS=3              rounds; each runs every (server, -P) pair once
#   REQUESTS=200000 CLIENTS=50 KEYSPACE=100000 DATASIZE=32 TESTS=set,get,incr
#   PIPELINES="1 16"      the -P values
#   EVAL_SCRIPT='lua'     also measure `EVAL lua 1 key:__rand_int__` (reported
#                         as EVAL; no double quotes in it); run it with
#                         TESTS="" (the client CPU figure covers one command)
#   OUT=file              also keep the raw CSV lines here
#
# Prints, per round, the requests/s of every test, then the medians and the
# ratios ephpm/redis.  Also the CPU seconds each server used per run (from
# /proc/PID/stat), to tell "slower per request" from "starved of CPU", and
# the CPU seconds that other processes took meanwhile (machine busy time less
# server and client): a run where that is more than a few tenths of a second
# was disturbed and should be repeated.
# Every process started here is stopped on exit (trap).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

ROUNDS=${ROUNDS:-3}
REQUESTS=${REQUESTS:-200000}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}
DATASIZE=${DATASIZE:-32}
TESTS=${TESTS-set,get,incr}
PIPELINES=${PIPELINES:-"1 16"}

bench_require "apt-get install redis-server redis-tools" redis-server redis-benchmark redis-cli ||
  exit 1

# ---- the ephpm binary ------------------------------------------------------
bench_ephpm "${BUILD:-/tmp/ephpm-resp-bench-build}" || exit 1
ephpm=$REPLY

# ---- processes and cleanup ---------------------------------------------------
work=$(mktemp -d /tmp/resp-bench.XXXXXX)
ephpm_pid=""
redis_pid=""
stop() {
  bench_stop $ephpm_pid $redis_pid
  rm -rf "$work"
}
bench_on_exit stop

# ephpm picks its own free port and prints it; both answer before anything
# is measured.
bench_start_ephpm_resp "$ephpm" "$work" || exit 1

bench_client_timer "$work/client.time"

echo "ephpm: $ephpm (pid $ephpm_pid, port $ephpm_port)"
echo "redis: $(redis-server --version | cut -d' ' -f3) (pid $redis_pid, port $redis_port)"
echo "loadavg before: $(cat /proc/loadavg)"
echo "command: redis-benchmark -h 127.0.0.1 -p PORT -c $CLIENTS -n $REQUESTS -r $KEYSPACE -d $DATASIZE -t $TESTS -P <p> --csv"

results=$work/results.csv  # round,server,pipeline,test,rps,server_cpu_s,wall_s,other_cpu_s
: >"$results"
for round in $(seq 1 "$ROUNDS"); do
  for p in $PIPELINES; do
    for server in ephpm redis; do
      if [ "$server" = ephpm ]; then port=$ephpm_port pid=$ephpm_pid
      else port=$redis_port pid=$redis_pid; fi
      c0=$(bench_cpu_ticks "$pid")
      b0=$(bench_busy_ticks)
      t0=$(date +%s.%N)
      if [ -n "$TESTS" ]; then
        "${bench_timer[@]}" redis-benchmark -h 127.0.0.1 -p "$port" -c "$CLIENTS" -n "$REQUESTS" \
          -r "$KEYSPACE" -d "$DATASIZE" -t "$TESTS" -P "$p" --csv >"$work/run.csv" 2>"$work/run.err"
      else
        echo '"test","rps"' >"$work/run.csv"
      fi
      if [ -n "${EVAL_SCRIPT:-}" ]; then
        # A custom command's CSV row is named after the command: call it EVAL.
        "${bench_timer[@]}" redis-benchmark -h 127.0.0.1 -p "$port" -c "$CLIENTS" -n "$REQUESTS" \
          -r "$KEYSPACE" -P "$p" --csv EVAL "$EVAL_SCRIPT" 1 key:__rand_int__ 2>>"$work/run.err" |
          tail -n +2 | sed 's/^"[^"]*"/"EVAL"/' >>"$work/run.csv"
      fi
      t1=$(date +%s.%N)
      c1=$(bench_cpu_ticks "$pid")
      b1=$(bench_busy_ticks)
      # CPU the machine spent on anything but this server and the client:
      # other jobs, which make the run unfair to whichever server they hit.
      other="?"
      if [ ${#bench_timer[@]} -gt 0 ]; then
        other=$(awk -v a="$b0" -v b="$b1" -v s0="$c0" -v s1="$c1" -v hz="$bench_hz" \
                    '{ printf "%.2f", ((b - a) - (s1 - s0)) / hz - $1 - $2 }' "$work/client.time")
      fi
      cpu=$(awk -v a="$c0" -v b="$c1" -v hz="$bench_hz" 'BEGIN { printf "%.2f", (b - a) / hz }')
      wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
      # "test","rps",... ; test names are e.g. "SET", "GET", "INCR"
      tail -n +2 "$work/run.csv" | tr -d '"' | cut -d, -f1,2 | grep -v 'needed to benchmark' | sed 's/ ([^,]*)//' |
        while IFS=, read -r t rps; do
        echo "$round,$server,$p,$t,$rps,$cpu,$wall,$other" >>"$results"
      done
      printf 'round %s  %-5s -P %-2s  %s  (server CPU %ss over %ss wall; other processes %ss)\n' \
        "$round" "$server" "$p" \
        "$(tail -n +2 "$work/run.csv" | tr -d '"' | cut -d, -f1,2 | tr '\n' ' ')" "$cpu" "$wall" "$other"
    done
  done
done
echo "loadavg after: $(cat /proc/loadavg)"
[ -n "${OUT:-}" ] && cp "$results" "$OUT"

# ---- medians and ratios --------------------------------------------------------
# Medians over the undisturbed runs: those where other processes took at most
# OTHER_MAX (default 0.1) of the run's wall time in CPU.  Without any such
# run, over all runs (the table says how many were used).
OTHER_MAX=${OTHER_MAX:-0.1}
echo
echo "| test | -P | ephpm req/s (median) | redis req/s (median) | ephpm / redis | undisturbed runs (ephpm, redis; 0 = median of all) |"
echo "|---|---:|---:|---:|---:|---|"
for p in $PIPELINES; do
  names=$(echo "$TESTS" | tr 'a-z,' 'A-Z ')
  [ -n "${EVAL_SCRIPT:-}" ] && names="$names EVAL"
  for t in $names; do
    pick() {  # server -> the rps of the clean runs, or of all runs
      local clean
      clean=$(awk -F, -v s="$1" -v p="$p" -v t="$t" -v m="$OTHER_MAX" \
                  '$2 == s && $3 == p && $4 == t && $8 != "?" && $8 <= m * $7 { print $5 }' "$results")
      if [ -n "$clean" ]; then echo "$clean"
      else awk -F, -v s="$1" -v p="$p" -v t="$t" '$2 == s && $3 == p && $4 == t { print $5 }' "$results"
      fi
    }
    total=$(awk -F, -v p="$p" -v t="$t" '$2 == "ephpm" && $3 == p && $4 == t' "$results" | wc -l)
    clean_count() {
      awk -F, -v s="$1" -v p="$p" -v t="$t" -v m="$OTHER_MAX" \
          '$2 == s && $3 == p && $4 == t && $8 != "?" && $8 <= m * $7' "$results" | wc -l
    }
    ne=$(clean_count ephpm)
    nr=$(clean_count redis)
    e=$(pick ephpm | bench_median)
    r=$(pick redis | bench_median)
    ratio=$(awk -v e="$e" -v r="$r" 'BEGIN { printf "%.2f", e / r }')
    printf '| %s | %s | %.0f | %.0f | %s | %s, %s of %s |\n' "$t" "$p" "$e" "$r" "$ratio" "$ne" "$nr" "$total"
  done
done
