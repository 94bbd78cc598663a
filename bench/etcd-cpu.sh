#!/usr/bin/env bash
# etcd's CPU per request through its JSON gateway (docs/BENCHMARKS.md,
# "Where the eight-client rate ends"): starts a three-member etcd on
# loopback (tests/etcd/etcd-cluster.sh), sends N requests of each kind one
# at a time on one keep-alive connection to the leader, and prints the CPU
# time the three members spent per request (utime + stime from /proc) and
# the wall time per request.  Kinds: a serializable range (the gateway and
# etcd's gRPC server, no Raft), a linearizable range (a quorum read), a put
# (one Raft write).  Not a test.
#
#   bash bench/etcd-cpu.sh [N]     (default 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
dir=$(mktemp -d /tmp/ephpm-etcd-cpu.XXXXXX)
trap 'bash tests/etcd/etcd-cluster.sh stop "$dir/etcd" >/dev/null 2>&1; rm -rf "$dir"' EXIT
bash tests/etcd/etcd-cluster.sh start "$dir/etcd" 3 $$ >/dev/null
leader=$(bash tests/etcd/etcd-cluster.sh leader "$dir/etcd")
endpoint=$(cat "$dir/etcd/m$leader.client")
pids=$(cat "$dir"/etcd/m[123].pid)
cpu_ticks() {
  local t=0 p f
  for p in $pids; do
    read -r -a f < "/proc/$p/stat"
    t=$((t + f[13] + f[14]))
  done
  echo "$t"
}
hz=$(getconf CLK_TCK)
echo "etcd $(etcd --version | head -1 | awk '{print $3}'), 3 members, leader $endpoint, $n requests per kind"
for kind in serializable-range linearizable-range put; do
  before=$(cpu_ticks)
  start=$(date +%s%N)
  python3 - "$endpoint" "$kind" "$n" <<'PY'
import base64, http.client, json, sys
host, port = sys.argv[1].rsplit(':', 1)
kind, n = sys.argv[2], int(sys.argv[3])
conn = http.client.HTTPConnection(host, int(port))
key = base64.b64encode(b'ephpm-cpu-probe').decode()
for i in range(n):
    if kind == 'put':
        path, body = '/v3/kv/put', {'key': key, 'value': base64.b64encode(str(i).encode()).decode()}
    else:
        path, body = '/v3/kv/range', {'key': key, 'serializable': kind == 'serializable-range'}
    conn.request('POST', path, json.dumps(body), {'Content-Type': 'application/json'})
    reply = conn.getresponse()
    data = reply.read()
    if reply.status != 200 or b'"error"' in data:
        sys.exit('etcd answered %d: %s' % (reply.status, data[:200]))
PY
  end=$(date +%s%N)
  after=$(cpu_ticks)
  awk -v k="$kind" -v c=$((after - before)) -v hz="$hz" -v n="$n" -v w=$((end - start)) \
    'BEGIN { printf "  %-20s etcd CPU %.3f ms/request (3 members together), wall %.3f ms/request\n", k, c * 1000 / hz / n, w / 1e6 / n }'
done
