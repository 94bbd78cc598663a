#!/usr/bin/env bash
# Runs one real-client script against a fresh `ephpm` on a free port.
#
#   run_clients.sh EPHPM_BINARY CLIENT_SCRIPT [ephpm options...]
#
# Starts `ephpm --resp 127.0.0.1:0 [options]`, waits for its
# "resp listening on 127.0.0.1:PORT" line, runs the client script with
# EPHPM_HOST, EPHPM_PORT (and EPHPM_PASSWORD, from --resp-password) in its
# environment (a *.php script with Debian's
# phpredis, anything else with bash), then stops ephpm with SIGTERM and checks
# that it exits cleanly.  Exit status: the script's, 1 when ephpm misbehaves,
# 77 (skipped) when the client (redis-cli, php with the redis extension) is
# not installed.
set -u

if [ $# -lt 2 ]; then
  echo "usage: $0 EPHPM_BINARY CLIENT_SCRIPT [ephpm options...]" >&2
  exit 2
fi
ephpm=$1
client=$2
shift 2

# The client first: skip when it is missing.
php_cmd=()
case $client in
  *.php)
    if ! command -v php > /dev/null; then
      echo "SKIP: php not installed (apt-get install php8.2-cli php8.2-redis)"
      exit 77
    fi
    # Debian's redis.so needs igbinary loaded before it.
    for mods in "-d extension=redis.so" "-d extension=igbinary.so -d extension=redis.so"; do
      # shellcheck disable=SC2086
      if php -n $mods -r 'exit(class_exists("Redis") ? 0 : 1);' > /dev/null 2>&1; then
        # shellcheck disable=SC2206
        php_cmd=(php -n $mods)
        break
      fi
    done
    if [ ${#php_cmd[@]} -eq 0 ]; then
      echo "SKIP: phpredis not installed (apt-get install php8.2-redis)"
      exit 77
    fi
    ;;
  *)
    if ! command -v redis-cli > /dev/null; then
      echo "SKIP: redis-cli not installed (apt-get install redis-tools)"
      exit 77
    fi
    ;;
esac

tmp=$(mktemp -d)
"$ephpm" --resp 127.0.0.1:0 "$@" > "$tmp/stdout" 2> "$tmp/stderr" &
pid=$!
cleanup() {
  if kill -0 "$pid" 2> /dev/null; then
    kill -KILL "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# Wait for the listening line (10 s at most).
line=""
for _ in $(seq 1 200); do
  line=$(grep -m1 '^resp listening on ' "$tmp/stdout" 2> /dev/null)
  [ -n "$line" ] && break
  if ! kill -0 "$pid" 2> /dev/null; then
    echo "FAIL: ephpm exited before listening:"
    cat "$tmp/stdout" "$tmp/stderr"
    exit 1
  fi
  sleep 0.05
done
if [ -z "$line" ]; then
  echo "FAIL: no 'resp listening on' line from ephpm within 10 s:"
  cat "$tmp/stdout" "$tmp/stderr"
  exit 1
fi
addr=${line#resp listening on }
export EPHPM_HOST=${addr%:*}
export EPHPM_PORT=${addr##*:}
# The password, for scripts that test AUTH.
export EPHPM_PASSWORD=""
prev=""
for arg in "$@"; do
  [ "$prev" = "--resp-password" ] && EPHPM_PASSWORD=$arg
  prev=$arg
done
echo "ephpm (pid $pid) listening on $EPHPM_HOST:$EPHPM_PORT; running $client"

case $client in
  *.php) "${php_cmd[@]}" "$client" ;;
  *) bash "$client" ;;
esac
rc=$?

# A clean stop: SIGTERM, then exit status 0 within 10 s.
kill -TERM "$pid"
stopped=0
for _ in $(seq 1 200); do
  if ! kill -0 "$pid" 2> /dev/null; then
    stopped=1
    break
  fi
  sleep 0.05
done
if [ $stopped -eq 0 ]; then
  echo "FAIL: ephpm did not stop within 10 s of SIGTERM"
  [ $rc -eq 0 ] && rc=1
else
  wait "$pid"
  status=$?
  if [ $status -ne 0 ]; then
    echo "FAIL: ephpm exited with status $status after SIGTERM:"
    cat "$tmp/stderr"
    [ $rc -eq 0 ] && rc=1
  fi
fi
exit $rc
