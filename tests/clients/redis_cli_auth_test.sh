#!/usr/bin/env bash
# redis-cli against ephpm started with --resp-password: the ways redis-cli
# authenticates, and what it prints without or with a wrong password.  Run by
# run_clients.sh, which sets EPHPM_HOST, EPHPM_PORT and EPHPM_PASSWORD.
set -u
: "${EPHPM_HOST:?run me through run_clients.sh}" "${EPHPM_PORT:?}" "${EPHPM_PASSWORD:?}"

cli() { redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT" "$@"; }
pw=$EPHPM_PASSWORD

checks=0
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect NAME WANT_STDOUT WANT_STDERR CMD...: exact stdout and stderr.
expect() {
  local name=$1 want=$2 want_err=$3
  shift 3
  local got err
  got=$("$@" 2> "$tmp/stderr"; printf x)
  got=${got%x}
  err=$(cat "$tmp/stderr"; printf x)
  err=${err%x}
  checks=$((checks + 1))
  if [ "$got" != "$want" ] || [ "$err" != "$want_err" ]; then
    printf 'FAIL %s\n  want: %q (stderr %q)\n  got:  %q (stderr %q)\n' \
      "$name" "$want" "$want_err" "$got" "$err"
    failures=$((failures + 1))
  fi
}

noauth=$'NOAUTH Authentication required.\n\n'
wrongpass="AUTH failed: WRONGPASS invalid username-password pair or user is disabled."$'\n'

expect "no password" "$noauth" "" cli PING
expect "no password, SET" "$noauth" "" cli SET k v
expect "REDISCLI_AUTH" $'PONG\n' "" env REDISCLI_AUTH="$pw" \
  redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT" PING
expect "-a" $'OK\n' "" cli -a "$pw" --no-auth-warning SET k v
expect "-a prints a warning" $'v\n' \
  "Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe."$'\n' \
  cli -a "$pw" GET k
expect "--user --pass" $'v\n' "" cli --user default --pass "$pw" --no-auth-warning GET k
expect "-u URI" $'v\n' "" redis-cli -u "redis://default:$pw@$EPHPM_HOST:$EPHPM_PORT" \
  --no-auth-warning GET k
expect "wrong password" "$noauth" "$wrongpass" cli -a wrong --no-auth-warning PING
expect "wrong user" "$noauth" "$wrongpass" cli --user admin --pass "$pw" --no-auth-warning PING
expect "AUTH from stdin" $'OK\nv\n' "" bash -c \
  'printf "AUTH \"%s\"\nGET k\n" "$EPHPM_PASSWORD" | redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT"'
expect "wrong AUTH from stdin" \
  $'WRONGPASS invalid username-password pair or user is disabled.\n\n'"$noauth" "" bash -c \
  'printf "AUTH nope\nGET k\n" | redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT"'
expect "HELLO 2 AUTH default" $'cli\nv\n' "" bash -c \
  'printf "HELLO 2 AUTH default \"%s\" SETNAME cli\nCLIENT GETNAME\nGET k\n" "$EPHPM_PASSWORD" |
     redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT" | tail -n 2'
expect "QUIT without AUTH" $'OK\n' "" cli QUIT

echo "redis-cli with a password: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
