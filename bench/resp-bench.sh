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
#   ROUNDS=3              rounds; each runs every (server, -P) pair once
#   REQUESTS=200000 CLIENTS=50 KEYSPACE=100000 DATASIZE=32 TESTS=set,get,incr
#   PIPELINES="1 16"      the -P values
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
root=$PWD

ROUNDS=${ROUNDS:-3}
REQUESTS=${REQUESTS:-200000}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}
DATASIZE=${DATASIZE:-32}
TESTS=${TESTS:-set,get,incr}
PIPELINES=${PIPELINES:-"1 16"}

for tool in redis-server redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || {
    echo "needs $tool: apt-get install redis-server redis-tools" >&2
    exit 1
  }
done

# ---- the ephpm binary ------------------------------------------------------
ephpm=${EPHPM:-}
if [ -z "$ephpm" ]; then
  build=${BUILD:-/tmp/ephpm-resp-bench-build}
  log=$(mktemp /tmp/resp-bench-build.XXXXXX.log)
  if ! { cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
               -DEPHPM_BUILD_TESTS=OFF -DEPHPM_BUILD_BENCH=OFF &&
         cmake --build "$build" -j"$(nproc)" --target ephpm; } >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "build failed" >&2
    exit 1
  fi
  rm -f "$log"
  ephpm=$build/sapi/ephpm
fi
[ -x "$ephpm" ] || { echo "no executable $ephpm" >&2; exit 1; }

# ---- processes and cleanup ---------------------------------------------------
work=$(mktemp -d /tmp/resp-bench.XXXXXX)
ephpm_pid=""
redis_pid=""
stop() {
  local pid
  for pid in $ephpm_pid $redis_pid; do
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$work"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# In use: anything listens there, or any socket (a client's, in any state)
# has it as its local port, which would make bind() fail.  Candidates come
# from below the kernel's ephemeral range (ip_local_port_range, 32768- here).
port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
  [ -n "$(ss -Htan "( sport = :$1 )" 2>/dev/null)" ]
}

# ephpm picks its own free port and prints it.
"$ephpm" --resp 127.0.0.1:0 --log-level warn >"$work/ephpm.out" 2>"$work/ephpm.err" &
ephpm_pid=$!
ephpm_port=""
for _ in $(seq 1 100); do
  ephpm_port=$(sed -n 's/^resp listening on .*:\([0-9]*\)$/\1/p' "$work/ephpm.out")
  [ -n "$ephpm_port" ] && break
  kill -0 "$ephpm_pid" 2>/dev/null || break
  sleep 0.05
done
if [ -z "$ephpm_port" ]; then
  cat "$work/ephpm.err" >&2
  echo "ephpm did not start" >&2
  exit 1
fi

# redis-server on a random free port, accepted only once the server answering
# there reports our own pid (never someone else's server).
redis_port=""
for _ in $(seq 1 20); do
  candidate=$((20000 + RANDOM % 12000))
  port_in_use "$candidate" && continue
  redis-server --port "$candidate" --bind 127.0.0.1 --save '' --appendonly no \
               --daemonize no --dir "$work" --logfile "$work/redis.log" &
  redis_pid=$!
  for _ in $(seq 1 50); do
    kill -0 "$redis_pid" 2>/dev/null || break
    # (|| true: under pipefail a refused connection must not end the script)
    there=$(redis-cli -p "$candidate" info server 2>/dev/null | tr -d '\r' |
            sed -n 's/^process_id://p' || true)
    if [ "$there" = "$redis_pid" ]; then redis_port=$candidate; break 2; fi
    sleep 0.1
  done
  kill "$redis_pid" 2>/dev/null || true
  wait "$redis_pid" 2>/dev/null || true
  redis_pid=""
done
[ -n "$redis_port" ] || { echo "could not start redis-server" >&2; exit 1; }

# Both answer before anything is measured.
redis-cli -p "$ephpm_port" ping >/dev/null
redis-cli -p "$redis_port" ping >/dev/null

cpu_ticks() {  # utime + stime of a process, in clock ticks
  awk '{ print $14 + $15 }' "/proc/$1/stat"
}
hz=$(getconf CLK_TCK)
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
# The client's CPU time comes from GNU time (Debian package "time").
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -f '%U %S' -o "$work/client.time")

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
      c0=$(cpu_ticks "$pid")
      b0=$(busy_ticks)
      t0=$(date +%s.%N)
      "${timer[@]}" redis-benchmark -h 127.0.0.1 -p "$port" -c "$CLIENTS" -n "$REQUESTS" -r "$KEYSPACE" \
                      -d "$DATASIZE" -t "$TESTS" -P "$p" --csv >"$work/run.csv" 2>"$work/run.err"
      t1=$(date +%s.%N)
      c1=$(cpu_ticks "$pid")
      b1=$(busy_ticks)
      # CPU the machine spent on anything but this server and the client:
      # other jobs, which make the run unfair to whichever server they hit.
      other="?"
      if [ ${#timer[@]} -gt 0 ]; then
        other=$(awk -v a="$b0" -v b="$b1" -v s0="$c0" -v s1="$c1" -v hz="$hz" \
                    '{ printf "%.2f", ((b - a) - (s1 - s0)) / hz - $1 - $2 }' "$work/client.time")
      fi
      cpu=$(awk -v a="$c0" -v b="$c1" -v hz="$hz" 'BEGIN { printf "%.2f", (b - a) / hz }')
      wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
      # "test","rps",... ; test names are e.g. "SET", "GET", "INCR"
      tail -n +2 "$work/run.csv" | tr -d '"' | cut -d, -f1,2 | while IFS=, read -r t rps; do
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
  for t in $(echo "$TESTS" | tr 'a-z,' 'A-Z '); do
    pick() {  # server -> the rps of the clean runs, or of all runs
      local clean
      clean=$(awk -F, -v s="$1" -v p="$p" -v t="$t" -v m="$OTHER_MAX" \
                  '$2 == s && $3 == p && $4 == t && $8 != "?" && $8 <= m * $7 { print $5 }' "$results")
      if [ -n "$clean" ]; then echo "$clean"
      else awk -F, -v s="$1" -v p="$p" -v t="$t" '$2 == s && $3 == p && $4 == t { print $5 }' "$results"
      fi
    }
    med() {
      sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
    }
    total=$(awk -F, -v p="$p" -v t="$t" '$2 == "ephpm" && $3 == p && $4 == t' "$results" | wc -l)
    clean_count() {
      awk -F, -v s="$1" -v p="$p" -v t="$t" -v m="$OTHER_MAX" \
          '$2 == s && $3 == p && $4 == t && $8 != "?" && $8 <= m * $7' "$results" | wc -l
    }
    ne=$(clean_count ephpm)
    nr=$(clean_count redis)
    e=$(pick ephpm | med)
    r=$(pick redis | med)
    ratio=$(awk -v e="$e" -v r="$r" 'BEGIN { printf "%.2f", e / r }')
    printf '| %s | %s | %.0f | %.0f | %s | %s, %s of %s |\n' "$t" "$p" "$e" "$r" "$ratio" "$ne" "$nr" "$total"
  done
done
