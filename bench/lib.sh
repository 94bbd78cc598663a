# Shared by the benchmark scripts (sourced, never run): a quiet Release build,
# free loopback ports, a private redis-server, stopping what a script
# started, and the CPU accounting and medians their tables use.
#
#   . "$(dirname "$0")/lib.sh"
#
# Callers run under `set -euo pipefail` from the repository root.  Functions
# that can fail return non-zero and print why; the caller chooses the message
# and the exit.

# Runs "$@" with its output kept in a temporary log, shown on stderr only if
# the command fails.  Returns the command's status.
bench_quietly() {
  local log rc=0
  log=$(mktemp /tmp/ephpm-bench.XXXXXX.log)
  "$@" >"$log" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || cat "$log" >&2
  rm -f "$log"
  return "$rc"
}

# bench_require HINT TOOL...: fails, naming the first missing TOOL and how
# to get it (HINT), unless every TOOL is on PATH.
bench_require() {
  local hint=$1 tool
  shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "needs $tool: $hint" >&2; return 1; }
  done
}

# bench_cmake_release BUILD_DIR TARGET [CMAKE_ARGS...]: configures BUILD_DIR
# in Release without tests or benchmarks and builds TARGET.
bench_cmake_release() {
  local build=$1 target=$2
  shift 2
  cmake -S "$PWD" -B "$build" -DCMAKE_BUILD_TYPE=Release -DEPHPM_BUILD_TESTS=OFF \
        -DEPHPM_BUILD_BENCH=OFF "$@" &&
    cmake --build "$build" -j"$(nproc)" --target "$target"
}

# bench_ephpm BUILD_DIR [BUILDER]: sets $REPLY to the ephpm program: $EPHPM
# when set, else a quiet build of it in BUILD_DIR by `BUILDER BUILD_DIR ephpm`
# (default bench_cmake_release).  Fails (after the build's log) when the
# build fails or leaves no program.
bench_ephpm() {
  local build=$1 builder=${2:-bench_cmake_release}
  REPLY=${EPHPM:-}
  if [ -z "$REPLY" ]; then
    bench_quietly "$builder" "$build" ephpm || { echo "build failed" >&2; return 1; }
    REPLY=$build/sapi/ephpm
  fi
  [ -x "$REPLY" ] || { echo "no executable $REPLY" >&2; return 1; }
}

# bench_zts_release BUILD_DIR TARGET: a Release build of TARGET against the
# thread-safe PHP (built once by scripts/build-zts-php.sh, then cached), for
# bench_ephpm's BUILDER.
bench_zts_release() {
  local php_config
  php_config=$(bash scripts/build-zts-php.sh | tail -n 1) &&
    bench_cmake_release "$1" "$2" -DPHP_CONFIG="$php_config"
}

# Stops each given process (when still running) and waits for it.
bench_stop() {
  local pid
  for pid in "$@"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
}

# Runs CLEANUP on exit, and turns the usual signals into an exit, so that it
# runs then too.
bench_on_exit() {
  trap "$1" EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP
  trap 'exit 141' PIPE
}

# In use: anything listens there, or any socket (a client's, in any state)
# has it as its local port, which would make bind() fail.  Candidates come
# from below the kernel's ephemeral range (ip_local_port_range, 32768- here).
bench_port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
  [ -n "$(ss -Htan "( sport = :$1 )" 2>/dev/null)" ]
}
bench_chosen_ports=" "
# Sets $REPLY to a free port not chosen before in this run.
bench_free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 12000))
    case $bench_chosen_ports in *" $p "*) continue ;; esac
    bench_port_in_use "$p" && continue
    bench_chosen_ports+="$p "
    REPLY=$p
    return 0
  done
  return 1
}

# bench_start_redis DIR [ARGS...]: a private redis-server (no persistence
# unless ARGS turn it on: they come last, and redis takes the last value of
# an option; its log in DIR/redis.log) on a free loopback port, accepted
# only once the server answering there reports our own pid (never someone
# else's server).  Sets redis_pid and redis_port; the caller stops it
# (bench_stop "$redis_pid").
bench_start_redis() {
  local dir=$1 candidate there
  shift
  redis_pid="" redis_port=""
  for _ in $(seq 1 20); do
    bench_free_port || continue
    candidate=$REPLY
    redis-server --port "$candidate" --bind 127.0.0.1 --save '' --appendonly no \
                 --daemonize no --dir "$dir" --logfile "$dir/redis.log" "$@" &
    redis_pid=$!
    for _ in $(seq 1 50); do
      kill -0 "$redis_pid" 2>/dev/null || break  # bind failed: next port
      # (|| true: under pipefail a refused connection must not end the script)
      there=$(redis-cli -p "$candidate" info server 2>/dev/null | tr -d '\r' |
              sed -n 's/^process_id://p' || true)
      if [ "$there" = "$redis_pid" ]; then redis_port=$candidate; return 0; fi
      sleep 0.1
    done
    bench_stop "$redis_pid"
    redis_pid=""
  done
  return 1
}

# bench_start_ephpm_resp EPHPM DIR: `EPHPM --resp` on a port it picks
# itself (its output in DIR/ephpm.out and .err), then a private redis-server
# (bench_start_redis DIR), both answering PING.  Sets ephpm_pid, ephpm_port,
# redis_pid and redis_port; the caller stops them.  Fails after saying why.
# $EPHPM_ARGS, when set, adds host flags (split on spaces), e.g.
# EPHPM_ARGS="--resp-io-threads 1".
bench_start_ephpm_resp() {
  local ephpm=$1 dir=$2
  local -a extra=()
  read -r -a extra <<<"${EPHPM_ARGS:-}"
  "$ephpm" --resp 127.0.0.1:0 --log-level warn "${extra[@]}" >"$dir/ephpm.out" 2>"$dir/ephpm.err" &
  ephpm_pid=$!
  if ! bench_listening_port "$dir/ephpm.out" resp "$ephpm_pid" 100; then
    cat "$dir/ephpm.err" >&2
    echo "ephpm did not start" >&2
    return 1
  fi
  ephpm_port=$REPLY
  bench_start_redis "$dir" || { echo "could not start redis-server" >&2; return 1; }
  redis-cli -p "$ephpm_port" ping >/dev/null && redis-cli -p "$redis_port" ping >/dev/null
}

# bench_listening_port FILE WHAT PID TRIES: waits (TRIES x 50 ms) for the
# line "WHAT listening on HOST:PORT" that ephpm prints to FILE, and sets
# $REPLY to PORT.  Fails when PID exits first or time runs out.
bench_listening_port() {
  REPLY=""
  for _ in $(seq 1 "$4"); do
    REPLY=$(sed -n "s/^$2 listening on .*:\([0-9]*\)\$/\1/p" "$1")
    [ -n "$REPLY" ] && return 0
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# CPU accounting, in clock ticks (bench_hz per second): utime + stime of the
# given processes, and the whole machine's busy time.
bench_hz=$(getconf CLK_TCK)
bench_cpu_ticks() {
  local total=0 pid
  for pid in "$@"; do
    [ -r "/proc/$pid/stat" ] || continue
    total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
  done
  echo "$total"
}
bench_busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }

# bench_client_timer FILE: sets the array bench_timer to a GNU time prefix
# that writes the client's "user system" CPU seconds to FILE (Debian package
# "time"), or to nothing without it.
bench_client_timer() {
  bench_timer=()
  [ -x /usr/bin/time ] && bench_timer=(/usr/bin/time -f '%U %S' -o "$1")
  return 0
}

# The median of the numbers on stdin, one a line.
bench_median() {
  sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
