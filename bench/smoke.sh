#!/usr/bin/env bash
# Every benchmark once, as short as it runs, to show that it still works:
# CI's smoke test (the bench_smoke test of tests/CMakeLists.txt, in the
# Debian PHP build only).  Each benchmark must run to its end and print its
# report; the figures of so short a run mean nothing, and nothing here reads
# them (benchmarks are not tests: no timing is asserted anywhere).
#
#   bash bench/smoke.sh BUILD_DIR
#
# BUILD_DIR holds sapi/ephpm, ext/ephpm.so and bench/core_bench (any build
# type).  Needs php8.2-apcu, php8.2-redis, redis-server and redis-tools
# (scripts/install-deps.sh installs them), and the frameworks of
# bench/php_adapters.php when they are there (it says when they are not).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

build=$(cd "${1:?usage: bench/smoke.sh BUILD_DIR}" && pwd)
ephpm=$build/sapi/ephpm
ext=$build/ext/ephpm.so
core_bench=$build/bench/core_bench
for f in "$ephpm" "$ext" "$core_bench"; do
  [ -e "$f" ] || { echo "FAIL: no $f (build first)" >&2; exit 1; }
done

out=$(mktemp -d /tmp/ephpm-bench-smoke.XXXXXX)
redis_pid=""
cleanup() {
  bench_stop $redis_pid
  rm -rf "$out"
}
bench_on_exit cleanup

# run NAME PATTERN... -- CMD...: runs CMD (output in $out/NAME), fails when
# it fails or when its output lacks one of the patterns (grep -E).
run() {
  local name=$1 patterns=() p
  shift
  while [ "$1" != "--" ]; do patterns+=("$1"); shift; done
  shift
  echo "== $name: $*"
  local start=$SECONDS
  if ! "$@" >"$out/$name" 2>&1; then
    cat "$out/$name"
    echo "FAIL: $name exited with an error" >&2
    exit 1
  fi
  for p in "${patterns[@]}"; do
    if ! grep -Eq -- "$p" "$out/$name"; then
      cat "$out/$name"
      echo "FAIL: $name printed no line matching '$p'" >&2
      exit 1
    fi
  done
  echo "   ran in $((SECONDS - start)) s"
}

# The core (Google Benchmark): every benchmark, a millisecond each.
run core_bench '^get/ephpm' '^set/ephpm' '^lock/ephpm' 'items_per_second' -- "$core_bench" --benchmark_min_time=0.001

# The PHP scripts against a private redis-server, with the distribution's
# CLI configuration (apcu, redis), as bench/run-php-bench.sh runs them.
bench_start_redis "$out" || { echo "FAIL: could not start redis-server" >&2; exit 1; }
php_common=(-d "extension=$ext" -d apc.enable_cli=1 -d apc.shm_size=32M)
run php_kv '^\| get  \| ephpm' '^\| lock \| apcu' '^\| set  \| redis' 'lock ephpm/apcu above floor' -- \
  php "${php_common[@]}" bench/php_kv.php --redis-port="$redis_port" \
      --keys=200 --rounds=1 --redis-rounds=1 --repeats=1
run php_session '^\| ephpm ' '^\| files ' '^\| redis ' 'ephpm / files' -- \
  php "${php_common[@]}" -d redis.session.locking_enabled=1 bench/php_session.php \
      --redis-port="$redis_port" --cycles=200 --redis-cycles=50 --repeats=1 --dir="$out"
redis-cli -p "$redis_port" flushall >/dev/null
run php_adapters '^laravel +get' '^symfony +put' -- \
  php "${php_common[@]}" bench/php_adapters.php --redis-port="$redis_port" \
      --keys=100 --rounds=1 --redis-rounds=1 --repeats=1
bench_stop "$redis_pid"
redis_pid=""

# RESP against redis-server (redis-benchmark), and memory for a data set.
run resp_bench '^\| SET \| 16 \|' '^\| INCR \| 1 \|' 'ephpm / redis' -- \
  env EPHPM="$ephpm" ROUNDS=1 REQUESTS=2000 CLIENTS=4 KEYSPACE=1000 bash bench/resp-bench.sh
run memory_bench '^\| ephpm \|' '^\| redis \|' 'accounted / real growth' -- \
  env EPHPM="$ephpm" KEYS=20000 bash bench/memory-bench.sh

echo "every benchmark ran"
