#!/usr/bin/env bash
# A throwaway etcd cluster on loopback for the tests (etcd 3.4).
#
#   etcd-cluster.sh start DIR N [OWNER_PID]  N members (1 or 3), data under DIR
#   etcd-cluster.sh stop DIR                 SIGKILLs every member (and the watchdog)
#   etcd-cluster.sh kill DIR K               SIGKILLs member K (1-based)
#   etcd-cluster.sh restart DIR K            starts member K again on its data dir
#   etcd-cluster.sh leader DIR               prints K of the current leader
#
# start picks free loopback ports (client and peer per member, below the
# kernel's ephemeral range so that no outgoing connection takes a killed
# member's port before it restarts), waits (about 20 s at most) until
# `etcdctl endpoint health` succeeds on every member, and writes:
#   DIR/endpoints   the client addresses, comma-separated: 127.0.0.1:P1,...
#   DIR/pids        the members' pids, one a line (as started)
#   DIR/mK.pid      member K's current pid
#   DIR/mK.client   member K's client address (host:port)
#   DIR/mK.cmd      member K's exact command line (restart runs it again)
#   DIR/mK.log      member K's output
#
# The members are daemons: they outlive this script, and nothing in etcd
# ends them with their parent (no PDEATHSIG), so the caller must run `stop`.
# As a safety net, when OWNER_PID is given a watchdog (DIR/watchdog.pid)
# SIGKILLs the members once that process is gone, within about a second,
# so that a crashed or killed test leaves no etcd behind.
#
# Small raft timings (heartbeat 50 ms, election 500 ms) make failover in the
# tests quick.  Exit status: 0 on success, 1 on failure (with a message and
# the tails of the logs on stderr), 2 on a usage error.

set -u

ETCD=${ETCD:-etcd}
ETCDCTL=${ETCDCTL:-etcdctl}
export ETCDCTL_API=3

usage() {
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

die() {
  echo "etcd-cluster.sh: $*" >&2
  exit 1
}

# A loopback TCP port nobody uses right now, not in $taken.
taken=" "
pick_port() {
  local low high from to p i
  read -r low high < /proc/sys/net/ipv4/ip_local_port_range || { low=32768; high=60999; }
  from=10000
  to=$low
  if (( low < 12000 )); then
    from=$((high + 1))
    to=65535
  fi
  for ((i = 0; i < 500; i++)); do
    p=$((from + (RANDOM * 32768 + RANDOM) % (to - from)))
    [[ $taken == *" $p "* ]] && continue
    # Anything bound to the port (listening or connected) makes it busy.
    if [[ -z $(ss -Htan "( sport = :$p )" 2>/dev/null) ]]; then
      taken+="$p "
      echo "$p"
      return 0
    fi
  done
  return 1
}

member_count() {
  local dir=$1 n=0
  while [[ -f $dir/m$((n + 1)).cmd ]]; do n=$((n + 1)); done
  echo "$n"
}

# Starts member K from its command file, in the background, detached from
# our stdin/stdout/stderr (a caller reading our output must not wait for it).
launch() {
  local dir=$1 k=$2 cmd
  cmd=$(cat "$dir/m$k.cmd") || return 1
  echo "=== $(date '+%F %T') start: $cmd" >> "$dir/m$k.log"
  # shellcheck disable=SC2086  # the command line is words, none with spaces
  $cmd < /dev/null >> "$dir/m$k.log" 2>&1 &
  echo $! > "$dir/m$k.pid"
  # The owner died meanwhile: the watchdog may have read the pid files
  # before this one was written (it marks the directory first).
  if [[ -e $dir/owner-gone ]]; then
    kill -KILL "$(cat "$dir/m$k.pid")" 2> /dev/null
    return 1
  fi
}

healthy() {
  "$ETCDCTL" --endpoints="$1" --dial-timeout=1s --command-timeout=2s endpoint health \
    > /dev/null 2>&1
}

# Waits until member K answers `endpoint health`, up to $2 seconds.
wait_healthy() {
  local dir=$1 k=$2 secs=$3 ep pid end
  ep=$(cat "$dir/m$k.client")
  pid=$(cat "$dir/m$k.pid")
  end=$((SECONDS + secs))
  while ((SECONDS < end)); do
    healthy "$ep" && return 0
    alive "$pid" || return 1
    sleep 0.1
  done
  healthy "$ep"
}

log_tails() {
  local dir=$1 f
  for f in "$dir"/m*.log; do
    [[ -f $f ]] || continue
    echo "--- $f (tail)" >&2
    tail -n 15 "$f" >&2
  done
}

kill_member() {
  local dir=$1 k=$2 pid
  [[ -f $dir/m$k.pid ]] || return 0
  pid=$(cat "$dir/m$k.pid")
  [[ -n $pid ]] || return 0
  kill -KILL "$pid" 2> /dev/null
  # Wait (bounded) for it to be gone, so that its ports are free again.  A
  # zombie is gone enough: whoever inherited it (init) reaps it in its time.
  local i
  for ((i = 0; i < 100; i++)); do
    alive "$pid" || break
    sleep 0.02
  done
  return 0
}

# Whether the process runs (exists and is not a zombie).
alive() {
  local state
  state=$(awk '{ print $3 }' "/proc/$1/stat" 2> /dev/null) || return 1
  [[ -n $state && $state != Z ]]
}

start_watchdog() {
  local dir=$1 owner=$2
  # In a session of its own: a signal to the caller's process group (a
  # Ctrl-C, a test runner killing the group) must not take it along.
  setsid "$BASH" "$0" _watchdog "$dir" "$owner" < /dev/null > /dev/null 2>&1 &
  echo $! > "$dir/watchdog.pid"
}

# The watchdog's body: once the owner is gone, mark the directory (see
# launch) and SIGKILL every member, twice, a restart racing with the first.
cmd__watchdog() {
  local dir=$1 owner=$2 f
  trap '' HUP INT TERM
  while alive "$owner"; do sleep 1; done
  : > "$dir/owner-gone"
  for _ in 1 2; do
    for f in "$dir"/m*.pid; do
      [[ -f $f ]] && kill -KILL "$(cat "$f")" 2> /dev/null
    done
    sleep 0.5
  done
  exit 0
}

cmd_start() {
  (($# >= 2)) || usage
  local dir=$1 n=$2 owner=${3:-}
  [[ $n == 1 || $n == 3 ]] || die "N must be 1 or 3"
  command -v "$ETCD" > /dev/null || die "$ETCD not found"
  command -v "$ETCDCTL" > /dev/null || die "$ETCDCTL not found"
  mkdir -p "$dir" || die "cannot create $dir"
  dir=$(cd "$dir" && pwd)
  [[ -e $dir/m1.cmd ]] && die "$dir already holds a cluster"

  local token
  token="ephpm-test-$$-$(date +%s%N)-$RANDOM"
  local -a client peer
  local k initial=""
  for ((k = 1; k <= n; k++)); do
    client[k]=$(pick_port) || die "no free port"
    peer[k]=$(pick_port) || die "no free port"
    initial+="${initial:+,}m$k=http://127.0.0.1:${peer[k]}"
  done
  local endpoints=""
  for ((k = 1; k <= n; k++)); do
    local c="127.0.0.1:${client[k]}"
    echo "$c" > "$dir/m$k.client"
    endpoints+="${endpoints:+,}$c"
    echo "$ETCD --name m$k --data-dir $dir/m$k.data" \
      "--listen-client-urls http://$c --advertise-client-urls http://$c" \
      "--listen-peer-urls http://127.0.0.1:${peer[k]}" \
      "--initial-advertise-peer-urls http://127.0.0.1:${peer[k]}" \
      "--initial-cluster $initial --initial-cluster-token $token" \
      "--initial-cluster-state new --heartbeat-interval 50 --election-timeout 500" \
      "--logger zap --log-outputs stderr" > "$dir/m$k.cmd"
  done
  echo "$endpoints" > "$dir/endpoints"
  : > "$dir/pids"
  [[ -n $owner ]] && start_watchdog "$dir" "$owner"
  for ((k = 1; k <= n; k++)); do
    launch "$dir" "$k" || { cmd_stop "$dir"; die "cannot start member $k"; }
    cat "$dir/m$k.pid" >> "$dir/pids"
  done

  local end=$((SECONDS + 20))
  for ((k = 1; k <= n; k++)); do
    local left=$((end - SECONDS))
    ((left < 1)) && left=1
    if ! wait_healthy "$dir" "$k" "$left"; then
      echo "etcd-cluster.sh: member $k not healthy in time" >&2
      log_tails "$dir"
      cmd_stop "$dir"
      exit 1
    fi
  done
  return 0
}

cmd_stop() {
  (($# >= 1)) || usage
  local dir=$1 n k
  [[ -d $dir ]] || return 0
  if [[ -f $dir/watchdog.pid ]]; then
    kill -KILL "$(cat "$dir/watchdog.pid")" 2> /dev/null
    rm -f "$dir/watchdog.pid"
  fi
  n=$(member_count "$dir")
  for ((k = 1; k <= n; k++)); do kill_member "$dir" "$k"; done
  return 0
}

cmd_kill() {
  (($# >= 2)) || usage
  [[ -f $1/m$2.cmd ]] || die "no member $2 in $1"
  kill_member "$1" "$2"
}

cmd_restart() {
  (($# >= 2)) || usage
  local dir=$1 k=$2
  [[ -f $dir/m$k.cmd ]] || die "no member $k in $dir"
  kill_member "$dir" "$k"
  launch "$dir" "$k" || die "cannot start member $k"
  # Alone (no quorum) a member of three does not pass `endpoint health`:
  # wait only for its client port to answer.
  local ep end
  ep=$(cat "$dir/m$k.client")
  end=$((SECONDS + 20))
  while ((SECONDS < end)); do
    curl -s -o /dev/null --max-time 1 "http://$ep/version" && return 0
    alive "$(cat "$dir/m$k.pid")" || break
    sleep 0.1
  done
  echo "etcd-cluster.sh: member $k did not come back" >&2
  tail -n 15 "$dir/m$k.log" >&2
  exit 1
}

cmd_leader() {
  (($# >= 1)) || usage
  local dir=$1 n k ep line
  n=$(member_count "$dir")
  for ((k = 1; k <= n; k++)); do
    ep=$(cat "$dir/m$k.client")
    # | ENDPOINT | ID | VERSION | DB SIZE | IS LEADER | IS LEARNER | ...
    line=$("$ETCDCTL" --endpoints="$ep" --dial-timeout=1s --command-timeout=2s \
      endpoint status -w table 2> /dev/null | awk -F'|' -v ep="$ep" '
        { gsub(/ /, "", $2); gsub(/ /, "", $6) }
        $2 == ep { print $6 }')
    if [[ $line == true ]]; then
      echo "$k"
      return 0
    fi
  done
  die "no leader found"
}

(($# >= 1)) || usage
sub=$1
shift
case $sub in
  start) cmd_start "$@" ;;
  stop) cmd_stop "$@" ;;
  kill) cmd_kill "$@" ;;
  restart) cmd_restart "$@" ;;
  _watchdog) cmd__watchdog "$@" ;;
  leader) cmd_leader "$@" ;;
  *) usage ;;
esac
