#!/usr/bin/env bash
# redis-cli (Debian's redis-tools, 7.0) against ephpm, as people use it:
# one command per invocation, raw and formatted output, -x for binary input,
# commands read from stdin, -r, --scan, --csv, --bigkeys.  Every check is of
# the exact output.  Run by run_clients.sh, which sets EPHPM_HOST/EPHPM_PORT.
# Exits non-zero on any mismatch, after printing what differed.
set -u
: "${EPHPM_HOST:?run me through run_clients.sh}" "${EPHPM_PORT:?}"

cli() { redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT" "$@"; }

checks=0
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
  failures=$((failures + 1))
  printf 'FAIL %s\n' "$1"
}

# expect NAME WANT CMD...: CMD's stdout must be exactly WANT (trailing
# newlines included).
expect() {
  local name=$1 want=$2
  shift 2
  local got
  got=$("$@" 2> "$tmp/stderr"; printf x)
  got=${got%x}
  checks=$((checks + 1))
  if [ "$got" != "$want" ]; then
    fail "$name"
    printf '  want: %q\n  got:  %q\n' "$want" "$got"
    if [ -s "$tmp/stderr" ]; then printf '  stderr: %s\n' "$(cat "$tmp/stderr")"; fi
  fi
}

# expect_status NAME WANT CMD...: CMD's exit status must be WANT.
expect_status() {
  local name=$1 want=$2
  shift 2
  "$@" > /dev/null 2>&1
  local got=$?
  checks=$((checks + 1))
  if [ "$got" -ne "$want" ]; then
    fail "$name"
    printf '  want exit status %s, got %s\n' "$want" "$got"
  fi
}

# expect_bytes NAME FILE CMD...: CMD's stdout must be byte for byte FILE.
expect_bytes() {
  local name=$1 want_file=$2
  shift 2
  "$@" > "$tmp/got" 2> "$tmp/stderr"
  checks=$((checks + 1))
  if ! cmp -s "$want_file" "$tmp/got"; then
    fail "$name"
    printf '  want: %s\n  got:  %s\n' "$(od -An -c "$want_file" | tr -s ' ')" \
      "$(od -An -c "$tmp/got" | tr -s ' ')"
  fi
}

wrongtype="WRONGTYPE Operation against a key holding the wrong kind of value"

expect "FLUSHALL" $'OK\n' cli FLUSHALL
expect "PING" $'PONG\n' cli PING
expect "PING with a message" $'hello world\n' cli PING "hello world"

# --- strings, raw output (stdout is not a terminal) and --no-raw ------------
expect "SET" $'OK\n' cli SET greeting "hello world"
expect "GET" $'hello world\n' cli GET greeting
expect "GET --no-raw" $'"hello world"\n' cli --no-raw GET greeting
expect "GET missing" $'\n' cli GET missing
expect "GET missing --no-raw" $'(nil)\n' cli --no-raw GET missing
expect "INCR" $'1\n' cli INCR counter
expect "INCR --no-raw" $'(integer) 2\n' cli --no-raw INCR counter
expect "INCRBY" $'12\n' cli INCRBY counter 10
expect "DECR" $'11\n' cli DECR counter
expect "INCRBYFLOAT" $'11.5\n' cli INCRBYFLOAT counter 0.5
expect "INCR on a float" $'ERR value is not an integer or out of range\n\n' cli INCR counter
expect "APPEND" $'16\n' cli APPEND greeting "!!!!!"
expect "GETRANGE" $'world\n' cli GETRANGE greeting 6 10
expect "STRLEN" $'16\n' cli STRLEN greeting
expect "SET with spaces and newline" $'OK\n' cli SET "key with space" $'line1\nline2'
expect "GET --no-raw escapes" $'"line1\\nline2"\n' cli --no-raw GET "key with space"
expect "GETSET" $'line1\nline2\n' cli GETSET "key with space" new
expect "GETDEL" $'new\n' cli GETDEL "key with space"
expect "EXISTS after GETDEL" $'0\n' cli EXISTS "key with space"
expect "MSET" $'OK\n' cli MSET m:1 one m:2 two m:3 three
expect "MGET" $'one\ntwo\n\nthree\n' cli MGET m:1 m:2 missing m:3
expect "MGET --no-raw" $'1) "one"\n2) (nil)\n' cli --no-raw MGET m:1 missing
expect "MGET --csv" $'"one","two",NULL\n' cli --csv MGET m:1 m:2 missing
expect "MSETNX refused" $'0\n' cli MSETNX m:1 x m:9 y
expect "MSETNX" $'1\n' cli MSETNX m:8 x m:9 y
expect "SETNX" $'0\n' cli SETNX m:1 z
expect "DEL" $'3\n' cli DEL m:8 m:9 m:3 missing

# --- binary values with -x (the last argument read from stdin) --------------
printf 'a\0b\r\nc\xff' > "$tmp/bin"
expect "SET -x binary" $'OK\n' cli -x SET bin < "$tmp/bin"
expect "STRLEN binary" $'7\n' cli STRLEN bin
{ cat "$tmp/bin"; printf '\n'; } > "$tmp/bin.out"
expect_bytes "GET binary, raw bytes" "$tmp/bin.out" cli GET bin
expect "GET binary --no-raw" $'"a\\x00b\\r\\nc\\xff"\n' cli --no-raw GET bin
head -c 100000 /dev/zero | tr '\0' 'z' > "$tmp/big"
expect "SET -x 100 kB" $'OK\n' cli -x SET big < "$tmp/big"
{ cat "$tmp/big"; printf '\n'; } > "$tmp/big.out"
expect_bytes "GET 100 kB" "$tmp/big.out" cli GET big
expect "HSET -x binary field value" $'1\n' cli -x HSET binhash f < "$tmp/bin"
expect_bytes "HGET binary" "$tmp/bin.out" cli HGET binhash f

# --- expiry -------------------------------------------------------------------
expect "SET EX" $'OK\n' cli SET session:1 data EX 100
expect "TTL" $'100\n' cli TTL session:1
expect "EXPIRE" $'1\n' cli EXPIRE session:1 500
expect "TTL after EXPIRE" $'500\n' cli TTL session:1
expect "PERSIST" $'1\n' cli PERSIST session:1
expect "TTL after PERSIST" $'-1\n' cli TTL session:1
expect "TTL missing" $'-2\n' cli TTL missing
expect "PEXPIRE GT refused" $'0\n' cli PEXPIRE session:1 1000 GT
expect "SET PX then GET" $'OK\n' cli SET short v PX 100000
expect "PTTL upper bound" $'1\n' bash -c \
  'v=$(redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT" PTTL short); [ "$v" -le 100000 ] && [ "$v" -gt 0 ] && echo 1'

# --- hashes -------------------------------------------------------------------
expect "HSET" $'2\n' cli HSET user:1 name Ada lang C
expect "HGET" $'Ada\n' cli HGET user:1 name
expect "HINCRBY" $'37\n' cli HINCRBY user:1 age 37
expect "HLEN" $'3\n' cli HLEN user:1
expect "HMGET --no-raw" $'1) "Ada"\n2) (nil)\n3) "37"\n' cli --no-raw HMGET user:1 name nope age
expect "HGETALL sorted" $'37\nAda\nC\nage\nlang\nname\n' bash -c \
  'redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT" HGETALL user:1 | LC_ALL=C sort'
expect "HSET one field" $'1\n' cli HSET small only 1
expect "HGETALL --no-raw" $'1) "only"\n2) "1"\n' cli --no-raw HGETALL small
expect "HDEL" $'1\n' cli HDEL user:1 lang
expect "HEXISTS" $'0\n' cli HEXISTS user:1 lang
expect "TYPE hash" $'hash\n' cli TYPE user:1
expect "TYPE string" $'string\n' cli TYPE greeting
expect "GET on a hash" "$wrongtype"$'\n\n' cli GET user:1
expect "GET on a hash --no-raw" "(error) $wrongtype"$'\n' cli --no-raw GET user:1

# --- errors --------------------------------------------------------------------
expect "unknown command" $'ERR unknown command \'NOSUCH\', with args beginning with: \'a\' \n\n' \
  cli NOSUCH a
expect "arity --no-raw" $'(error) ERR wrong number of arguments for \'get\' command\n' \
  cli --no-raw GET
expect "SET syntax error" $'ERR syntax error\n\n' cli SET k v NX XX
expect_status "exit status 0 on error without -e" 0 cli GET user:1
expect_status "exit status 1 on error with -e" 1 cli -e GET user:1

# --- locks ---------------------------------------------------------------------
expect "SET NX PX acquires" $'OK\n' cli SET lock owner-a NX PX 30000
expect "SET NX PX is refused" $'\n' cli SET lock owner-b NX PX 30000
expect "SET NX PX is refused --no-raw" $'(nil)\n' cli --no-raw SET lock owner-b NX PX 30000
expect "DELIFEQ another token" $'0\n' cli DELIFEQ lock owner-b
expect "DELIFEQ own token --no-raw" $'(integer) 1\n' cli --no-raw DELIFEQ lock owner-a
expect "lock released" $'0\n' cli EXISTS lock
expect "DELIFEQ arity" $'ERR wrong number of arguments for \'delifeq\' command\n\n' cli DELIFEQ lock

# --- Redis 8.4's conditional writes, ephpm's fences ---------------------------------
expect "SET for DIGEST" $'OK\n' cli SET key1 "Hello world"
expect "DIGEST (Redis's example)" $'b6acb9d84a38ff74\n' cli DIGEST key1
expect "DIGEST --no-raw" $'"b6acb9d84a38ff74"\n' cli --no-raw DIGEST key1
expect "SET IFDEQ" $'OK\n' cli SET key1 v1 IFDEQ B6ACB9D84A38FF74
expect "SET IFEQ refused --no-raw" $'(nil)\n' cli --no-raw SET key1 v2 IFEQ nope
expect "SET IFEQ GET" $'v1\n' cli SET key1 v2 IFEQ v1 GET
expect "SET NX IFEQ" $'ERR syntax error\n\n' cli SET key1 v NX IFEQ v2
expect "DELEX IFNE refused" $'0\n' cli DELEX key1 IFNE v2
expect "DELEX bad digest" $'ERR must be exactly 16 hexadecimal characters\n\n' \
  cli DELEX key1 IFDEQ abc
expect "DELEX IFEQ --no-raw" $'(integer) 1\n' cli --no-raw DELEX key1 IFEQ v2
expect "DIGEST missing --no-raw" $'(nil)\n' cli --no-raw DIGEST key1
expect "SET NX PX takes a fenced lock" $'OK\n' cli SET flock me NX PX 30000
expect "LOCK.FENCE with the token is positive" $'1\n' bash -c \
  'v=$(redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT" LOCK.FENCE flock me); [ "$v" -gt 0 ] && echo 1'
expect "LOCK.FENCE another token" $'(nil)\n' cli --no-raw LOCK.FENCE flock you
expect "PEXPIRE IFEQ refreshes" $'1\n' cli PEXPIRE flock 60000 IFEQ me
expect "PEXPIRE IFEQ another token" $'0\n' cli PEXPIRE flock 60000 IFEQ you
expect "SET FENCE" $'OK\n' cli SET fres a FENCE 10
expect "SET FENCE stale --no-raw" $'(nil)\n' cli --no-raw SET fres b FENCE 9
expect "SET FENCE 0" $'ERR value is not an integer or out of range\n\n' cli SET fres b FENCE 0
# The holder's fence, read and handed to the resource in one connection.
expect "fence from stdin" $'OK\n' bash -c \
  'f=$(redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT" LOCK.FENCE flock me);
   printf "SET fres c FENCE %s\n" "$f" | redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT"'
# --pipe: raw protocol, as mass insertion sends it.
{
  printf '*3\r\n$3\r\nSET\r\n$4\r\npkey\r\n$11\r\nHello world\r\n'
  printf '*2\r\n$6\r\nDIGEST\r\n$4\r\npkey\r\n'
  printf '*5\r\n$3\r\nSET\r\n$4\r\npkey\r\n$1\r\nx\r\n$5\r\nIFDEQ\r\n$16\r\nb6acb9d84a38ff74\r\n'
  printf '*4\r\n$5\r\nDELEX\r\n$4\r\npkey\r\n$4\r\nIFEQ\r\n$1\r\ny\r\n'
  printf '*4\r\n$5\r\nDELEX\r\n$4\r\npkey\r\n$5\r\nIFDEQ\r\n$3\r\nabc\r\n'
  printf '*4\r\n$5\r\nDELEX\r\n$4\r\npkey\r\n$4\r\nIFEQ\r\n$1\r\nx\r\n'
} > "$tmp/pipe"
expect "--pipe" $'All data transferred. Waiting for the last reply...\nLast reply received from server.\nerrors: 1, replies: 6\n' \
  cli --pipe < "$tmp/pipe"
expect "--pipe left no key" $'0\n' cli EXISTS pkey
expect "clean up" $'2\n' cli DEL flock fres

# --- several commands from stdin, -r, --scan, --bigkeys ---------------------------
printf 'SET piped 1\nINCR piped\nINCRBY piped 40\nGET piped\nGET user:1\nPING\n' > "$tmp/cmds"
expect "commands from stdin" "OK"$'\n2\n42\n42\n'"$wrongtype"$'\n\nPONG\n' cli < "$tmp/cmds"
expect "-r 3" $'1\n2\n3\n' cli -r 3 INCR repeated
for i in $(seq 1 25); do printf 'SET scan:%02d %d\n' "$i" "$i"; done | cli > /dev/null
expect "--scan --pattern" "$(for i in $(seq 1 25); do printf 'scan:%02d\n' "$i"; done)"$'\n' \
  bash -c 'redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT" --scan --pattern "scan:*" | LC_ALL=C sort'
expect "SCAN --no-raw, one match" $'1) "0"\n2) 1) "scan:07"\n' \
  cli --no-raw SCAN 0 MATCH "scan:07" COUNT 1000
expect "KEYS sorted" $'m:1\nm:2\n' bash -c \
  'redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT" KEYS "m:*" | LC_ALL=C sort'
expect "--bigkeys finds the biggest string" $'1\n' bash -c \
  'redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT" --bigkeys 2>&1 | grep -c "^Biggest string found .\"big\". has 100000 bytes$"'
expect "--bigkeys finds the biggest hash" $'1\n' bash -c \
  'redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT" --bigkeys 2>&1 | grep -c "^Biggest   hash found .\"user:1\". has 2 fields$"'

# --- server commands -------------------------------------------------------------
expect "INFO server names the version" $'redis_version:7.0.15\r\n' bash -c \
  'redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT" INFO server | grep "^redis_version:"'
expect "DBSIZE" $'38\n' cli DBSIZE
expect "-n 0 selects db 0" $'PONG\n' cli -n 0 PING
expect "CLIENT SETNAME/GETNAME in one connection" $'OK\nme\n' bash -c \
  'printf "CLIENT SETNAME me\nCLIENT GETNAME\n" | redis-cli -h "$EPHPM_HOST" -p "$EPHPM_PORT"'
expect "ECHO" $'echo this\n' cli ECHO "echo this"
expect "RENAME" $'OK\n' cli RENAME piped piped2
expect "QUIT" $'OK\n' cli QUIT
expect "FLUSHDB" $'OK\n' cli FLUSHDB
expect "DBSIZE after FLUSHDB" $'0\n' cli DBSIZE

echo "redis-cli: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
