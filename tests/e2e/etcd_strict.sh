#!/usr/bin/env bash
# The cluster's strict mode end to end: lock decisions made in etcd.
#
#   tests/e2e/etcd_strict.sh BUILD/sapi/ephpm tests/etcd/etcd-cluster.sh
#
# Starts a private etcd cluster of three members on loopback (etcd-cluster.sh)
# and three ephpm hosts (RESP only, gossip cluster n1 <- n2 <- n3) with
# --cluster-arbiter etcd, then over RESP (redis-cli):
#   - SET NX on one host wins, on the others it is refused at once (nil);
#     the lock is mirrored into the store (GET); DELIFEQ with a wrong token
#     is 0 everywhere, with the right token on another host 1, and the key
#     can be taken again;
#   - etcd holds the lock (key -> token) and the three members;
#   - a lock with PX expires with its etcd lease;
#   - with two of three etcd members killed (no quorum) SET NX and DELIFEQ
#     answer CLUSTERDOWN within the --etcd-timeout plus a margin, never OK,
#     while GET still answers; once the members are back, exactly one host
#     wins a new lock and the others are refused;
#   - a host whose etcd is down when it starts still starts and answers
#     CLUSTERDOWN.
# Every wait is bounded, every process started (etcd, ephpm) is killed on any
# exit.  Prints `ok - ...` per check; stops at the first `not ok - ...` with
# the logs' tails and exits 1, also when a tool it needs is missing (etcd,
# etcdctl, redis-cli, python3: scripts/install-deps.sh installs them).
# ETCD_STRICT_KEEP=1 keeps the work directory.

set -euo pipefail

usage() { echo "usage: etcd_strict.sh EPHPM_BINARY ETCD_CLUSTER_SCRIPT" >&2; exit 2; }
(($# == 2)) || usage
ephpm=$(readlink -f "$1")
etcd_cluster=$(readlink -f "$2")
[[ -x $ephpm ]] || { echo "not ok - $1 is not an executable"; exit 1; }
[[ -f $etcd_cluster ]] || { echo "not ok - $2 does not exist"; exit 1; }
for tool in etcd etcdctl redis-cli python3 timeout; do
  if ! command -v "$tool" > /dev/null; then
    echo "not ok - $tool is missing (bash scripts/install-deps.sh installs it)"
    exit 1
  fi
done
export ETCDCTL_API=3

start_ns=$(date +%s%N)
work=$(mktemp -d /tmp/ephpm-etcd-strict-XXXXXX)
etcd_dir=$work/etcd
prefix=/ephpm-test-$$-$RANDOM
etcd_timeout_ms=1000
# SET NX and DELIFEQ without quorum: CLUSTERDOWN within this (ms).
clusterdown_bound_ms=$((etcd_timeout_ms + 1500))

declare -a host_pid=() host_resp=() host_cluster=()
watchdog=

# ---- cleanup ------------------------------------------------------------------
stop_hosts() {
  local k pid i
  for k in "${!host_pid[@]}"; do
    pid=${host_pid[k]}
    if [[ -n $pid ]]; then kill -TERM "$pid" 2> /dev/null || true; fi
  done
  for k in "${!host_pid[@]}"; do
    pid=${host_pid[k]}
    [[ -n $pid ]] || continue
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2> /dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
    host_pid[k]=
  done
}

log_tails() {
  local f
  for f in "$work"/n*.log; do
    [[ -f $f ]] || continue
    echo "--- $f (tail)"
    tail -n 25 "$f"
  done
  for f in "$etcd_dir"/m*.log; do
    [[ -f $f ]] || continue
    echo "--- $f (tail)"
    tail -n 8 "$f"
  done
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  if ((rc != 0 && rc != 77)); then
    log_tails
  fi
  stop_hosts
  [[ -n $watchdog ]] && kill -KILL "$watchdog" 2> /dev/null
  if [[ -d $etcd_dir ]]; then
    bash "$etcd_cluster" stop "$etcd_dir" > /dev/null 2>&1
  fi
  if [[ ${ETCD_STRICT_KEEP:-0} == 1 ]]; then
    echo "# work directory kept: $work"
  else
    rm -rf "$work"
  fi
  echo "# run time: $(( ($(date +%s%N) - start_ns) / 1000000 )) ms"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A safety net for a SIGKILL (a ctest timeout), when the trap cannot run: a
# watchdog SIGKILLs the hosts and the etcd members once this script is gone
# (etcd-cluster.sh's own watchdog, also armed, may race it to the members).
: > "$work/hosts.pids"
(
  trap '' HUP INT TERM
  while kill -0 $$ 2> /dev/null; do sleep 1; done
  xargs -r kill -KILL < "$work/hosts.pids" 2> /dev/null
  bash "$etcd_cluster" stop "$etcd_dir" > /dev/null 2>&1
  rm -rf "$work"
) < /dev/null > /dev/null 2>&1 &
watchdog=$!
disown "$watchdog"

# ---- helpers ------------------------------------------------------------------
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

ok() { echo "ok - $*"; }
fail() {
  echo "not ok - $1"
  shift
  local line
  for line in "$@"; do echo "#   $line"; done
  exit 1
}

# One RESP command on host K (1-based): redis-cli's formatted reply,
# ("OK", "(nil)", "\"tok\"", "(integer) 1", "(error) ..."), bounded in time.
resp() {
  local k=$1
  shift
  timeout 10 redis-cli --no-raw -p "${host_resp[k]}" "$@" 2>&1 || true
}
# resp_past_clusterdown K DEADLINE_MS ARGS...: asks host K until the reply
# is something other than CLUSTERDOWN (which a client retries) or DEADLINE_MS
# passes; the last reply in $reply, the CLUSTERDOWN answers seen in $refusals.
refusals=0
resp_past_clusterdown() {
  local k=$1 until=$2
  shift 2
  refusals=0
  while :; do
    reply=$(resp "$k" "$@")
    [[ $reply == "(error) CLUSTERDOWN"* ]] || return 0
    refusals=$((refusals + 1))
    (( $(now_ms) < until )) || return 0
    sleep 0.2
  done
}
# The same, its duration in ms in $took.
took=0
timed_resp() {
  local t0
  t0=$(now_ms)
  reply=$(resp "$@")
  took=$(( $(now_ms) - t0 ))
}

# expect NAME ACTUAL EXPECTED
expect() {
  if [[ $2 == "$3" ]]; then
    ok "$1"
  else
    fail "$1" "expected: $3" "got:      $2"
  fi
}

etcdctl_() { etcdctl --endpoints="$endpoints" --dial-timeout=2s --command-timeout=3s "$@"; }

alive_or_fail() {
  local k
  for k in "${!host_pid[@]}"; do
    [[ -n ${host_pid[k]} ]] || continue
    kill -0 "${host_pid[k]}" 2> /dev/null || fail "host n$k is running" "it exited"
  done
}

# Starts host n$1 with the given extra arguments; waits (10 s at most) for its
# RESP and cluster addresses on stdout.
start_host() {
  local k=$1
  shift
  "$ephpm" --resp 127.0.0.1:0 --cluster-node-id "n$k" --cluster-listen 127.0.0.1:0 "$@" \
    < /dev/null > "$work/n$k.log" 2>&1 &
  host_pid[k]=$!
  echo "${host_pid[k]}" >> "$work/hosts.pids"
  local deadline=$(( $(now_ms) + 10000 )) resp_port="" cluster_addr=""
  while (( $(now_ms) < deadline )); do
    resp_port=$(sed -n 's/^resp listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$work/n$k.log")
    cluster_addr=$(sed -n "s/^cluster node n$k listening on \\([^ ]*\\)\$/\\1/p" "$work/n$k.log")
    [[ -n $resp_port && -n $cluster_addr ]] && break
    kill -0 "${host_pid[k]}" 2> /dev/null || break
    sleep 0.05
  done
  if [[ -z $resp_port || -z $cluster_addr ]]; then
    fail "host n$k starts and prints its RESP and cluster addresses" \
      "$(kill -0 "${host_pid[k]}" 2> /dev/null && echo "still running, no address in 10 s" || echo "it exited")"
  fi
  host_resp[k]=$resp_port
  host_cluster[k]=$cluster_addr
  ok "host n$k started: resp 127.0.0.1:$resp_port, cluster $cluster_addr"
}

info_cluster() { timeout 10 redis-cli -p "${host_resp[$1]}" INFO ephpm-cluster 2>&1 | tr -d '\r' || true; }
info_field() { info_cluster "$1" | sed -n "s/^$2://p"; }

print_etcd_counters() {  # print_etcd_counters WHEN
  local k
  for k in "$@"; do
    [[ -n ${host_resp[k]:-} ]] || continue
    info_cluster "$k" | grep -E '^cluster_(arbiter|etcd_)' | sed "s/^/#   n$k /" || true
  done
}

# ---- the binary has strict mode ---------------------------------------------------
help=$("$ephpm" --help 2>&1 || true)
for flag in --cluster-arbiter --etcd-endpoints --etcd-prefix --etcd-timeout; do
  grep -q -- "$flag" <<< "$help" || fail "ephpm --help lists $flag" "$ephpm has no strict mode"
done
ok "ephpm --help lists the strict-mode flags"

# ---- etcd, three members ------------------------------------------------------------
t0=$(now_ms)
if ! bash "$etcd_cluster" start "$etcd_dir" 3 $$ > "$work/etcd-start.log" 2>&1; then
  fail "etcd-cluster.sh starts three members" "$(tail -n 30 "$work/etcd-start.log")"
fi
endpoints=$(cat "$etcd_dir/endpoints")
ok "etcd: three members healthy in $(( $(now_ms) - t0 )) ms at $endpoints"

# A port nobody listens on, for the host whose etcd is down.
dead_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# ---- three hosts, and a fourth whose etcd is down ----------------------------------------
strict=(--cluster-arbiter etcd --etcd-endpoints "$endpoints" --etcd-prefix "$prefix"
        --etcd-timeout "$etcd_timeout_ms")
start_host 1 "${strict[@]}"
start_host 2 "${strict[@]}" --cluster-join "${host_cluster[1]}"
start_host 3 "${strict[@]}" --cluster-join "${host_cluster[2]}"
# n4: its own one-node cluster, etcd unreachable from the start.
start_host 4 --cluster-arbiter etcd --etcd-endpoints "127.0.0.1:$dead_port" \
  --etcd-prefix "$prefix-dead" --etcd-timeout "$etcd_timeout_ms"
ok "a host whose only etcd endpoint (127.0.0.1:$dead_port) is dead still starts"

deadline=$(( $(now_ms) + 10000 ))
converged=0
while (( $(now_ms) < deadline )); do
  alive_or_fail
  converged=1
  for k in 1 2 3; do
    [[ $(info_field "$k" cluster_alive) == 3 ]] || { converged=0; break; }
  done
  ((converged)) && break
  sleep 0.1
done
((converged)) || fail "gossip: every host sees 3 alive within 10 s" "$(info_cluster 3)"
ok "gossip: every host sees 3 alive"

for k in 1 2 3 4; do
  info_cluster "$k" | grep -q '^cluster_etcd_' ||
    fail "INFO ephpm-cluster on n$k has cluster_etcd_* lines (strict mode)" "$(info_cluster "$k")"
done
ok "INFO ephpm-cluster has cluster_etcd_* lines on every host"
# A member serves (decides) once it holds its etcd lease and has caught up
# with the fences the others granted; a host that joined last may still be
# catching up when gossip already counts it: wait for that, bounded.
for k in 1 2 3; do
  deadline=$(( $(now_ms) + 10000 ))
  serving=""
  while :; do
    serving=$(info_field "$k" cluster_etcd_serving)
    [[ $serving == 1 ]] && break
    (( $(now_ms) < deadline )) || break
    sleep 0.05
  done
  expect "n$k: INFO cluster_etcd_serving:1 (within 10 s of 3 alive)" "$serving" 1
done
expect "n4 (etcd dead): INFO cluster_etcd_serving:0" "$(info_field 4 cluster_etcd_serving)" 0
echo "# INFO ephpm-cluster, arbiter and etcd lines, at start:"
print_etcd_counters 1 2 3 4

# The members, registered in etcd (with a lease): wait for all three.
deadline=$(( $(now_ms) + 10000 ))
members=""
while (( $(now_ms) < deadline )); do
  members=$(etcdctl_ get --prefix "$prefix/members/" 2>&1 || true)
  if grep -q n1 <<< "$members" && grep -q n2 <<< "$members" && grep -q n3 <<< "$members"; then
    break
  fi
  sleep 0.1
done
echo "# etcdctl get --prefix $prefix/members/:"
sed 's/^/#   /' <<< "$members"
for id in n1 n2 n3; do
  grep -q -- "$id" <<< "$members" || fail "etcd lists member $id under $prefix/members/" "$members"
done
ok "etcd lists the members n1, n2, n3 under $prefix/members/"

# ---- one lock, decided in etcd ----------------------------------------------------
expect "n1: SET k tok NX PX 30000 -> OK" "$(resp 1 SET k tok NX PX 30000)" OK
expect "n2: SET k other2 NX PX 30000 -> nil (held in etcd, no waiting)" \
  "$(resp 2 SET k other2 NX PX 30000)" "(nil)"
expect "n3: SET k other3 NX PX 30000 -> nil" "$(resp 3 SET k other3 NX PX 30000)" "(nil)"
expect "n1: GET k -> tok" "$(resp 1 GET k)" '"tok"'
for k in 2 3; do
  deadline=$(( $(now_ms) + 2000 ))
  reply=""
  while (( $(now_ms) < deadline )); do
    reply=$(resp "$k" GET k)
    [[ $reply == '"tok"' ]] && break
    sleep 0.02
  done
  expect "n$k: GET k -> tok (replicated within 2 s)" "$reply" '"tok"'
done
for k in 1 2 3; do
  expect "n$k: DELIFEQ k wrongtoken -> 0" "$(resp "$k" DELIFEQ k wrongtoken)" "(integer) 0"
done

locks=$(etcdctl_ get --prefix "$prefix/locks/" 2>&1 || true)
echo "# etcdctl get --prefix $prefix/locks/:"
sed 's/^/#   /' <<< "$locks"
# key and value lines alternate: the key of k must hold the token.
lock_pair=$(awk -v want="$prefix/locks/k" 'NR % 2 == 1 { key = $0; next }
  key == want && $0 == "tok" { print key " = " $0 }' <<< "$locks")
[[ -n $lock_pair ]] || fail "etcd holds the lock: $prefix/locks/k = tok" "$locks"
ok "etcd holds the lock: $lock_pair"

expect "n3: DELIFEQ k tok -> 1 (the holder's token, on another host)" \
  "$(resp 3 DELIFEQ k tok)" "(integer) 1"
locks=$(etcdctl_ get --prefix "$prefix/locks/" 2>&1 || true)
if grep -qx tok <<< "$locks"; then
  fail "etcd no longer holds the token tok after DELIFEQ" "$locks"
fi
ok "etcd no longer holds the token tok"
expect "n2: SET k tok2 NX PX 30000 -> OK (free again)" "$(resp 2 SET k tok2 NX PX 30000)" OK
expect "n1: SET k tok3 NX PX 30000 -> nil" "$(resp 1 SET k tok3 NX PX 30000)" "(nil)"

# ---- a lock with a TTL expires with its lease ---------------------------------------
t_set=$(now_ms)
expect "n1: SET t a NX PX 1500 -> OK" "$(resp 1 SET t a NX PX 1500)" OK
expect "n2: SET t b NX PX 1500 at once -> nil" "$(resp 2 SET t b NX PX 1500)" "(nil)"
# etcd leases are whole seconds (at least 2): free by 3.5 s (+1 s of slack for
# a loaded machine, polled).
sleep_ms=$(( t_set + 3500 - $(now_ms) ))
((sleep_ms > 0)) && sleep "$(printf '%d.%03d' $((sleep_ms / 1000)) $((sleep_ms % 1000)))"
deadline=$(( t_set + 4500 ))
reply=""
while :; do
  reply=$(resp 2 SET t b NX PX 1500)
  [[ $reply == OK ]] && break
  (( $(now_ms) < deadline )) || break
  sleep 0.05
done
expect "n2: SET t b NX PX 1500 after the lease expired -> OK ($(( $(now_ms) - t_set )) ms after the first SET)" \
  "$reply" OK

# ---- quorum loss ------------------------------------------------------------------
leader=$(bash "$etcd_cluster" leader "$etcd_dir" 2> /dev/null || echo 1)
other=$(( leader % 3 + 1 ))
bash "$etcd_cluster" kill "$etcd_dir" "$leader"
bash "$etcd_cluster" kill "$etcd_dir" "$other"
ok "etcd: killed members $leader (the leader) and $other; one of three left"

for k in 1 2 3; do
  timed_resp "$k" SET q x NX PX 5000
  [[ $reply != OK ]] || fail "n$k: SET q x NX PX 5000 without quorum is not OK" "got OK after $took ms"
  [[ $reply == "(error) CLUSTERDOWN"* ]] ||
    fail "n$k: SET q x NX PX 5000 without quorum -> CLUSTERDOWN" "got: $reply (after $took ms)"
  ((took <= clusterdown_bound_ms)) ||
    fail "n$k: SET q NX without quorum answers within $clusterdown_bound_ms ms" "took $took ms: $reply"
  ok "n$k: SET q x NX PX 5000 without quorum -> $reply ($took ms)"
done
for k in 1 2 3; do
  timed_resp "$k" GET k
  expect "n$k: GET k without quorum -> tok2 (local read, $took ms)" "$reply" '"tok2"'
done
timed_resp 1 DELIFEQ k tok2
[[ $reply == "(error) CLUSTERDOWN"* ]] ||
  fail "n1: DELIFEQ k tok2 without quorum -> CLUSTERDOWN" "got: $reply (after $took ms)"
((took <= clusterdown_bound_ms)) ||
  fail "n1: DELIFEQ without quorum answers within $clusterdown_bound_ms ms" "took $took ms: $reply"
ok "n1: DELIFEQ k tok2 without quorum -> $reply ($took ms)"
expect "n2: GET k after the refused DELIFEQ -> tok2" "$(resp 2 GET k)" '"tok2"'
echo "# INFO ephpm-cluster, arbiter and etcd lines, without quorum:"
print_etcd_counters 1 2 3
alive_or_fail

# ---- quorum back ------------------------------------------------------------------
t_restart=$(now_ms)
bash "$etcd_cluster" restart "$etcd_dir" "$leader"
bash "$etcd_cluster" restart "$etcd_dir" "$other"
deadline=$(( t_restart + 15000 ))
while (( $(now_ms) < deadline )); do
  etcdctl --endpoints="$endpoints" --dial-timeout=1s --command-timeout=2s endpoint health \
    > /dev/null 2>&1 && break
  sleep 0.1
done
ok "etcd: members $leader and $other restarted, cluster healthy after $(( $(now_ms) - t_restart )) ms"

# n1 retries until it gets an answer other than CLUSTERDOWN: that must be OK
# (nobody holds q: every earlier SET q was refused).
resp_past_clusterdown 1 "$deadline" SET q x NX PX 5000
t_granted=$(now_ms)
expect "n1: SET q x NX PX 5000 once quorum is back -> OK ($(( t_granted - t_restart )) ms after the restart, after $refusals CLUSTERDOWN)" \
  "$reply" OK
# The others may still be registering again (their membership leases ran
# out during the outage) or catching up: CLUSTERDOWN until then, which a
# client retries; what they must never answer is OK while n1 holds q.  They
# retry only within q's 5 s (with a margin), so an OK after its expiry
# cannot pass for a second holder.
for k in 2 3; do
  resp_past_clusterdown "$k" $(( t_granted + 4000 )) SET q x NX PX 5000
  expect "n$k: SET q x NX PX 5000 -> nil (after $refusals CLUSTERDOWN)" "$reply" "(nil)"
done

# ---- etcd down from the start --------------------------------------------------------
timed_resp 4 SET z v NX
[[ $reply == "(error) CLUSTERDOWN"* ]] ||
  fail "n4 (etcd dead since its start): SET z v NX -> CLUSTERDOWN" "got: $reply (after $took ms)"
((took <= clusterdown_bound_ms)) ||
  fail "n4: SET z v NX answers within $clusterdown_bound_ms ms" "took $took ms: $reply"
ok "n4 (etcd dead since its start): SET z v NX -> $reply ($took ms)"

echo "# INFO ephpm-cluster, arbiter and etcd lines, at the end:"
print_etcd_counters 1 2 3 4
for k in 1 2 3; do
  expect "n$k: INFO cluster_etcd_serving:1 again" "$(info_field "$k" cluster_etcd_serving)" 1
done
alive_or_fail
ok "every host still running"
