#!/usr/bin/env bash
# Fences across strict mode and gossip mode (docs/CLUSTER.md, "Fences: etcd
# revisions, comparable with gossip mode's"), with three real ephpm hosts
# (RESP only, each with its data dir) and a one-member etcd:
#
#   gossip -> strict -> gossip -> strict, restarting every host on the same
#   data dirs each time.  Each phase takes the lock `lk` and reads its fence
#   (LOCK.FENCE); every fence must be above every earlier one.  The data key
#   `data` is written with each fence (SET ... FENCE n), and in every phase a
#   write with an earlier phase's fence, a stale holder's, must be refused
#   on every host.
#
# Usage: etcd_fences.sh EPHPM_BINARY ETCD_CLUSTER_SCRIPT

set -euo pipefail

EPHPM=${1:?usage: etcd_fences.sh EPHPM_BINARY ETCD_CLUSTER_SCRIPT}
ETCDSH=${2:?usage: etcd_fences.sh EPHPM_BINARY ETCD_CLUSTER_SCRIPT}
command -v redis-cli >/dev/null || { echo "not ok - redis-cli is missing (apt-get install redis-tools)"; exit 1; }

work=$(mktemp -d /tmp/ephpm-fences.XXXXXX)
declare -a host_pid=()
cleanup() {
  for p in "${host_pid[@]}"; do [[ -n $p ]] && kill -9 "$p" 2>/dev/null || true; done
  bash "$ETCDSH" stop "$work/etcd" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "not ok - $*"
  for i in 1 2 3; do
    [[ -f $work/h$i.log ]] && { echo "--- host $i log (tail)"; tail -n 20 "$work/h$i.log"; }
  done
  exit 1
}
ok() { echo "ok - $*"; }

free_ports() {
  python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

bash "$ETCDSH" start "$work/etcd" 1 $$ >/dev/null || fail "etcd did not start"
endpoints=$(cat "$work/etcd/endpoints")
read -r -a ports <<<"$(free_ports 6)"
resp=("" "${ports[0]}" "${ports[1]}" "${ports[2]}")
node=("" "${ports[3]}" "${ports[4]}" "${ports[5]}")

cli() {  # cli HOST ARGS...: one command, its raw answer
  local h=$1
  shift
  timeout 10 redis-cli -p "${resp[$h]}" "$@" 2>&1
}

start_hosts() {  # start_hosts gossip|strict
  local mode=$1 i j join
  for i in 1 2 3; do
    join=""
    for j in 1 2 3; do [[ $j != "$i" ]] && join+="${join:+,}127.0.0.1:${node[$j]}"; done
    local args=(--resp "127.0.0.1:${resp[$i]}" --cluster-node-id "n$i"
                --cluster-listen "127.0.0.1:${node[$i]}" --cluster-join "$join"
                --data-dir "$work/d$i")
    if [[ $mode == strict ]]; then
      args+=(--cluster-arbiter etcd --etcd-endpoints "$endpoints" --etcd-prefix /fences-test
             --etcd-lease-ttl 2)
    fi
    "$EPHPM" "${args[@]}" >>"$work/h$i.log" 2>&1 &
    host_pid[$i]=$!
  done
  # Every host answers, sees three members and may decide (strict: its
  # etcd lease is alive too).
  local deadline=$((SECONDS + 30)) info
  for i in 1 2 3; do
    while :; do
      info=$(cli "$i" INFO ephpm-cluster 2>/dev/null | tr -d '\r' || true)
      if grep -q '^cluster_alive:3$' <<<"$info" && grep -q '^cluster_ready:1$' <<<"$info" &&
         { [[ $mode == gossip ]] || grep -q '^cluster_etcd_serving:1$' <<<"$info"; }; then
        break
      fi
      ((SECONDS < deadline)) || fail "$mode: host $i not ready in 30 s: $(tr '\n' ' ' <<<"$info")"
      sleep 0.2
    done
  done
}

stop_hosts() {
  local i
  for i in 1 2 3; do kill -TERM "${host_pid[$i]}" 2>/dev/null || true; done
  for i in 1 2 3; do wait "${host_pid[$i]}" 2>/dev/null || true; host_pid[$i]=""; done
}

# take HOST TOKEN: takes lock `lk` with TOKEN, prints its fence.
take() {
  local h=$1 tok=$2 a f
  a=$(cli "$h" SET lk "$tok" NX PX 60000)
  [[ $a == OK ]] || fail "SET lk $tok NX on host $h answered '$a'"
  f=$(cli "$h" LOCK.FENCE lk "$tok")
  [[ $f =~ ^[0-9]+$ ]] || fail "LOCK.FENCE lk $tok on host $h answered '$f'"
  echo "$f"
}

release() {
  local a
  a=$(cli "$1" DELIFEQ lk "$2")
  [[ $a == 1 ]] || fail "DELIFEQ lk $2 on host $1 answered '$a'"
}

# stale FENCE: a write with FENCE must be refused on every host.
stale() {
  local h a
  for h in 1 2 3; do
    a=$(cli "$h" SET data "stale-$1" FENCE "$1")
    [[ -z $a ]] || fail "a stale write (fence $1) on host $h answered '$a', not nil"
  done
}

write() {  # write HOST VALUE FENCE
  local a
  a=$(cli "$1" SET data "$2" FENCE "$3")
  [[ $a == OK ]] || fail "SET data $2 FENCE $3 on host $1 answered '$a'"
}

# every host reads VALUE for data (replication: poll briefly)
reads() {
  local h a deadline=$((SECONDS + 5))
  for h in 1 2 3; do
    while a=$(cli "$h" GET data); [[ $a != "$1" ]]; do
      ((SECONDS < deadline)) || fail "host $h reads data = '$a', not '$1'"
      sleep 0.1
    done
  done
}

above() {  # above NEW OLD WHAT
  (($1 > $2)) || fail "$3: fence $1 is not above $2"
  ok "$3: fence $1 > $2"
}

start_hosts gossip
g1=$(take 1 t1)
write 2 v1 "$g1"
reads v1
release 1 t1
ok "gossip: lock fence $g1, data written with it"
stop_hosts

start_hosts strict
s1=$(take 2 t2)
above "$s1" "$g1" "gossip -> strict"
release 2 t2
s2=$(take 3 t3)
above "$s2" "$s1" "strict, next grant"
write 1 v2 "$s2"
stale "$s1"
stale "$g1"
ok "strict: writes with fence $s1 (an earlier holder's) and $g1 (gossip's) refused on every host"
reads v2
release 3 t3
# A last grant that writes nothing: only the lock's own copy (replicated and
# logged with its fence) tells the members about it.
s2b=$(take 1 t3b)
above "$s2b" "$s2" "strict, a grant that writes no data"
release 1 t3b
stop_hosts

start_hosts gossip
g2=$(take 1 t4)
above "$g2" "$s2b" "strict -> gossip"
write 2 v3 "$g2"
stale "$s2"
ok "gossip: a write with strict mode's last fence $s2 refused on every host"
reads v3
release 1 t4
stop_hosts

start_hosts strict
s3=$(take 2 t5)
above "$s3" "$g2" "gossip -> strict, second time"
write 3 v4 "$s3"
stale "$g2"
reads v4
release 2 t5
stop_hosts
ok "fences increased across gossip -> strict -> gossip -> strict: $g1 < $s1 < $s2 < $s2b < $g2 < $s3"
