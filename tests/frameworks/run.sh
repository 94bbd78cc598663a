#!/usr/bin/env bash
# Framework suites over phpredis, against redis-server and against ephpm in
# the same run:
#
#   run.sh EPHPM_BINARY symfony|laravel
#
# symfony: Symfony 5.4's own PHPUnit tests for its Redis lock store and Redis
#   cache adapters (taken from Debian's symfony source package, fetched once
#   into the cache by scripts/fetch-php-src.sh), run against Debian's
#   installed php-symfony-lock / php-symfony-cache.
# laravel: tests/frameworks/LaravelRedisTest.php, Laravel 8's cache, tags,
#   locks, rate limiters, Redis queue and transactions (Debian's
#   php-laravel-framework).
#
# Every test must end the same way against both servers (per test, from
# PHPUnit's JUnit logs), and nothing may fail or error against ephpm.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 EPHPM_BINARY symfony|laravel" >&2
  exit 2
fi
ephpm=$1
suite=$2
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2> /dev/null || true; done
  wait 2> /dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

case $suite in
  symfony)
    src=$(EPHPM_PHP_SRC_PACKAGE=symfony EPHPM_SRC_MARKER=src/Symfony/Component/Lock/Tests \
          bash "$repo/scripts/fetch-php-src.sh")
    export SYMFONY_TESTS_ROOT=$src/src
    tests=(
      Symfony/Component/Lock/Tests/Store/RedisStoreTest.php
      Symfony/Component/Lock/Tests/Store/RedisArrayStoreTest.php
      Symfony/Component/Cache/Tests/Adapter/RedisAdapterTest.php
      Symfony/Component/Cache/Tests/Adapter/RedisArrayAdapterTest.php
      Symfony/Component/Cache/Tests/Adapter/RedisTagAwareAdapterTest.php
      Symfony/Component/Cache/Tests/Adapter/RedisTagAwareArrayAdapterTest.php
      Symfony/Component/Cache/Tests/Adapter/ProxyAdapterAndRedisAdapterTest.php
    )
    phpunit_args=(--bootstrap "$here/symfony-bootstrap.php")
    testdir=$SYMFONY_TESTS_ROOT
    ;;
  laravel)
    tests=(LaravelRedisTest.php)
    phpunit_args=()
    testdir=$here
    ;;
  *)
    echo "unknown suite: $suite" >&2
    exit 2
    ;;
esac

# ephpm on a port of its choosing.
"$ephpm" --resp 127.0.0.1:0 > "$tmp/ephpm.out" 2> "$tmp/ephpm.err" &
pids+=($!)
ephpm_pid=$!
line=""
for _ in $(seq 1 200); do
  line=$(grep -m1 '^resp listening on ' "$tmp/ephpm.out" 2> /dev/null || true)
  [ -n "$line" ] && break
  kill -0 "$ephpm_pid" 2> /dev/null || { echo "FAIL: ephpm exited:"; cat "$tmp"/ephpm.*; exit 1; }
  sleep 0.05
done
[ -n "$line" ] || { echo "FAIL: ephpm did not listen within 10 s"; exit 1; }
ephpm_addr=${line#resp listening on }

# redis-server on a free port (asked of the kernel, then given to redis).
port=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo explode(":", stream_socket_get_name($s, false))[1];')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --databases 16 \
  > "$tmp/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 200); do
  redis-cli -p "$port" ping > /dev/null 2>&1 && break
  sleep 0.05
done
redis_addr=127.0.0.1:$port

rc=0
for t in "${tests[@]}"; do
  name=$(basename "$t" .php)
  for server in redis ephpm; do
    addr=$redis_addr
    [ $server = ephpm ] && addr=$ephpm_addr
    # zend.assertions=1: Symfony's cache checks its keys only with assertions on.
    (cd "$testdir" && REDIS_HOST=$addr php -d zend.assertions=1 /usr/bin/phpunit \
       "${phpunit_args[@]}" --log-junit "$tmp/$name.$server.xml" "$t") \
       > "$tmp/$name.$server.out" 2>&1 || true
  done
  if php "$here/junit_compare.php" "$name" "$tmp/$name.redis.xml" "$tmp/$name.ephpm.xml"; then
    :
  else
    rc=1
    echo "--- $name against ephpm:"
    tail -n 60 "$tmp/$name.ephpm.out"
  fi
done

kill -TERM "$ephpm_pid"
if ! wait "$ephpm_pid"; then
  echo "FAIL: ephpm did not exit cleanly after SIGTERM:"
  cat "$tmp/ephpm.err"
  rc=1
fi
exit $rc
