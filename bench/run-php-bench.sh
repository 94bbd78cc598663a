#!/usr/bin/env bash
# The PHP-level benchmarks: ephpm_kv_* against APCu and phpredis
# (bench/php_kv.php), the ephpm session handler against files and
# phpredis's (bench/php_session.php), and the Laravel and Symfony cache
# adapters of php/ against the frameworks' APCu and Redis ones
# (bench/php_adapters.php).
#
#   bash bench/run-php-bench.sh [build-dir]      (default /tmp/phpbench-build)
#
# Installs what it needs (Debian 12 packages), builds the extension in
# Release, starts a private redis-server on a free loopback port (no
# persistence), runs both benchmarks, and stops that redis-server again.
# Extra arguments for the PHP scripts: KV_ARGS="--rounds=50" SESSION_ARGS=...
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
root=$PWD
build=${1:-/tmp/phpbench-build}

# ---- dependencies --------------------------------------------------------
bash scripts/install-deps.sh
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
missing=()
for p in php8.2-apcu php8.2-redis redis-server redis-tools; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# ---- build ---------------------------------------------------------------
bench_quietly bench_cmake_release "$build" ephpm_ext || { echo "the build failed (log above)" >&2; exit 1; }
ext="$build/ext/ephpm.so"
[ -f "$ext" ] || { echo "no $ext after the build" >&2; exit 1; }

# ---- a private redis-server ----------------------------------------------
redis_pid=""
redis_dir=$(mktemp -d /tmp/ephpm-bench-redis.XXXXXX)
stop_redis() {
  bench_stop $redis_pid
  rm -rf "$redis_dir"
}
bench_on_exit stop_redis
bench_start_redis "$redis_dir" || { echo "could not start redis-server on a free port" >&2; exit 1; }
port=$redis_port

# ---- run -----------------------------------------------------------------
# The distribution's CLI configuration (conf.d loads apcu, igbinary, redis,
# opcache), plus what the benchmarks need.  opcache is on as in production
# (JIT off, as Debian ships it).
php_common=(-d opcache.enable_cli=1 -d "extension=$ext")

echo "== machine"
echo "$(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)," \
     "$(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r)"
echo "$(php -r 'echo "PHP ", PHP_VERSION, PHP_ZTS ? " ZTS" : " NTS";'), ephpm built" \
     "$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt") with" \
     "$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")," \
     "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/') on port $port"
if rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null); then
  dirty=$(git -C "$root" status --porcelain --untracked-files=no -- core ext session | wc -l)
  echo "ephpm source: commit $rev$([ "$dirty" -gt 0 ] && echo " + uncommitted changes in core/ext/session")"
fi

# For reading the redis figures: one client, one request at a time, so this
# is the loopback round trip plus redis's own work.
echo "redis-benchmark, 1 connection: $(redis-benchmark -p "$port" -c 1 -n 20000 -t get -q 2>/dev/null |
      tr '\r' '\n' | grep -a 'requests per second' | tail -1)"
redis-cli -p "$port" flushall >/dev/null

echo
echo "== bench/php_kv.php"
# APCu gets a hash table sized for the 20000 keys (the default hint, 4096,
# would make it chain); this only makes APCu faster.
php "${php_common[@]}" -d apc.enable_cli=1 -d apc.shm_size=128M -d apc.entries_hint=32768 \
    bench/php_kv.php --redis-port="$port" --repeats=7 ${KV_ARGS:-}

echo
echo "== bench/php_session.php"
php "${php_common[@]}" -d redis.session.locking_enabled=1 -d redis.session.lock_expire=30 \
    bench/php_session.php --redis-port="$port" ${SESSION_ARGS:-}

echo
echo "== bench/php_adapters.php"
redis-cli -p "$port" flushall >/dev/null
php "${php_common[@]}" -d apc.enable_cli=1 -d apc.shm_size=128M -d apc.entries_hint=32768 \
    bench/php_adapters.php --redis-port="$port" ${ADAPTER_ARGS:-}
