#!/usr/bin/env bash
# The host against nginx + php-fpm, on the same machine in the same run.
#
#   bash bench/host-bench.sh
#
# 1. Throughput (wrk), interleaved round by round:
#      hello.php    echo of a constant line
#      counter.php  session_start(); $_SESSION['n']++; echo
#    against
#      ephpm        ZTS build, --workers 2, session.save_handler=ephpm
#      fpm          nginx + php-fpm 8.2, pm=static, pm.max_children=2, files
#                   sessions, Debian's php.ini (OPcache on)
#      fpm-n        the same pool under "php-fpm -n" (no php.ini: no OPcache,
#                   like ephpm's thread-safe PHP, which has no OPcache)
#    The counter page's requests each carry a session cookie: every request
#    takes the next of 1000 session ids (per wrk thread, fresh per run), so
#    requests in flight at the same time practically never share a session.
# 2. Contention: 20 requests with one cookie sent at once (curl --parallel),
#    each reading the counter, sleeping 50 ms and writing counter+1, so the
#    serial floor is 1.0 s.  Against ephpm with 2 and 4 workers and php-fpm
#    (files) with 2 and 4 children; then a 21st request reads the counter,
#    which must be 20.
#
# Environment (optional):
#   EPHPM=/path/to/ephpm   a host built against the thread-safe PHP (default:
#                          built in $BUILD, default /tmp/ephpm-host-bench-zts)
#   ROUNDS=3 DURATION=10s THREADS=1 CONNECTIONS=8   wrk settings
#   TRIALS=5               contended trials per target
#   WORKERS=2              ephpm workers / fpm children for the throughput part
#   OUT=prefix             keep the raw figures in prefix.throughput.csv and
#                          prefix.contended.csv
#
# Each wrk line shows the CPU seconds of the server (ephpm; or nginx and
# php-fpm, masters and children), of wrk, and of every other process
# meanwhile: a run where "other" is more than a few tenths of a second was
# disturbed by another job and should be repeated.
#
# nginx and php-fpm run as root from config files in a temporary directory,
# with their own pid and log files; the system's services and configuration
# are not touched.  Everything started here is stopped on exit (trap).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
THREADS=${THREADS:-1}
CONNECTIONS=${CONNECTIONS:-8}
TRIALS=${TRIALS:-5}
WORKERS=${WORKERS:-2}
fpm_bin=${FPM:-php-fpm8.2}

missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || missing+=(nginx)
command -v "$fpm_bin" >/dev/null || missing+=(php8.2-fpm)
command -v curl >/dev/null || missing+=(curl)
if [ ${#missing[@]} -gt 0 ]; then
  echo "needs: apt-get install ${missing[*]}" >&2
  exit 1
fi

# ---- the ephpm binary (thread-safe PHP) ------------------------------------
bench_ephpm "${BUILD:-/tmp/ephpm-host-bench-zts}" bench_zts_release || exit 1
ephpm=$REPLY

# ---- work directory, processes, cleanup -------------------------------------
work=$(mktemp -d /tmp/host-bench.XXXXXX)
chmod 755 "$work"
pids=()
stop_all() {
  bench_stop "${pids[@]}"
  rm -rf "$work"
}
bench_on_exit stop_all

# ---- the pages -----------------------------------------------------------------
www=$work/www
mkdir -p "$www" "$work/sessions" "$work/nginx/logs" "$work/nginx/tmp"
cat >"$www/hello.php" <<'EOF'
<?php
echo "Hello, world!\n";
EOF
cat >"$www/counter.php" <<'EOF'
<?php
session_start();
$_SESSION['n'] = ($_SESSION['n'] ?? 0) + 1;
echo $_SESSION['n'], "\n";
EOF
cat >"$www/contended.php" <<'EOF'
<?php
session_start();
$n = $_SESSION['n'] ?? 0;
usleep(50000);
$_SESSION['n'] = $n + 1;
echo $_SESSION['n'], "\n";
EOF
cat >"$www/read.php" <<'EOF'
<?php
session_start(['read_and_close' => true]);
echo $_SESSION['n'] ?? 0, "\n";
EOF
cat >"$work/session.lua" <<'EOF'
-- Every request takes the next of 1000 session ids of its wrk thread.
-- The ids are 32 hex digits: a per-run prefix (argument 1), the thread
-- number, the slot.
local next_thread = 0
function setup(thread)
  thread:set("tid", next_thread)
  next_thread = next_thread + 1
end
local n = 0
function init(args)
  prefix = string.format("%s%02x", args[1] or "0123456789abcdef", tid)
end
function request()
  n = n + 1
  local sid = string.format("%s%014x", prefix, n % 1000)
  return wrk.format(nil, nil, { ["Cookie"] = "PHPSESSID=" .. sid })
end
EOF

# ---- php-fpm: Debian's php.ini (pools s2/s4/s<WORKERS>), and -n (pool n) ------------
pool() {  # name children
  cat <<EOF
[$1]
user = root
group = root
listen = $work/fpm-$1.sock
listen.mode = 0666
listen.backlog = 511
pm = static
pm.max_children = $2
pm.max_requests = 0
php_admin_value[session.save_handler] = files
php_admin_value[session.save_path] = $work/sessions
php_admin_value[session.gc_probability] = 0
php_admin_value[session.use_strict_mode] = 0
php_admin_value[error_log] = $work/fpm-php-errors.log
php_admin_flag[log_errors] = on
EOF
}
{
  printf '[global]\npid = %s\nerror_log = %s\ndaemonize = no\n' "$work/fpm-a.pid" "$work/fpm-a.log"
  pool tp "$WORKERS"
  pool c2 2
  pool c4 4
} >"$work/fpm-a.conf"
{
  printf '[global]\npid = %s\nerror_log = %s\ndaemonize = no\n' "$work/fpm-b.pid" "$work/fpm-b.log"
  pool tn "$WORKERS"
} >"$work/fpm-b.conf"
"$fpm_bin" -R -F -y "$work/fpm-a.conf" &
fpm_a=$!
pids+=("$fpm_a")
"$fpm_bin" -n -R -F -y "$work/fpm-b.conf" &
fpm_b=$!
pids+=("$fpm_b")

# ---- nginx: one server (port) per pool ------------------------------------------
declare -A port
for p in tp tn c2 c4; do bench_free_port; port[$p]=$REPLY; done
{
  cat <<EOF
worker_processes 2;
user root root;
pid $work/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  client_body_temp_path $work/nginx/tmp/body;
  fastcgi_temp_path $work/nginx/tmp/fastcgi;
  proxy_temp_path $work/nginx/tmp/proxy;
  uwsgi_temp_path $work/nginx/tmp/uwsgi;
  scgi_temp_path $work/nginx/tmp/scgi;
EOF
  for p in tp tn c2 c4; do
    cat <<EOF
  server {
    listen 127.0.0.1:${port[$p]} backlog=4096;
    root $www;
    location ~ \.php\$ {
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
      fastcgi_pass unix:$work/fpm-$p.sock;
    }
  }
EOF
  done
  echo "}"
} >"$work/nginx.conf"
nginx -e "$work/nginx/logs/startup.log" -p "$work/nginx" -c "$work/nginx.conf" -g 'daemon off;' &
nginx_pid=$!
pids+=("$nginx_pid")

# ---- ephpm with WORKERS and with 4 workers ----------------------------------------
start_ephpm() {  # workers outvar-pid outvar-port
  local out=$work/ephpm-$1.out
  "$ephpm" --docroot "$www" --listen 127.0.0.1:0 --workers "$1" --log-level warn \
           -d session.gc_probability=0 -d session.use_strict_mode=0 \
           >"$out" 2>"$work/ephpm-$1.err" &
  local pid=$!
  pids+=("$pid")
  if ! bench_listening_port "$out" http "$pid" 200; then
    cat "$work/ephpm-$1.err" >&2
    echo "ephpm --workers $1 did not start" >&2
    exit 1
  fi
  printf -v "$2" '%s' "$pid"
  printf -v "$3" '%s' "$REPLY"
}
start_ephpm "$WORKERS" ephpm_pid ephpm_port
if [ "$WORKERS" = 4 ]; then ephpm4_pid=$ephpm_pid ephpm4_port=$ephpm_port
else start_ephpm 4 ephpm4_pid ephpm4_port; fi
if [ "$WORKERS" = 2 ]; then ephpm2_pid=$ephpm_pid ephpm2_port=$ephpm_port
else start_ephpm 2 ephpm2_pid ephpm2_port; fi

# Every target answers every page before anything is measured.
url_of() {  # target page
  case $1 in
    ephpm) echo "http://127.0.0.1:$ephpm_port/$2" ;;
    ephpm2) echo "http://127.0.0.1:$ephpm2_port/$2" ;;
    ephpm4) echo "http://127.0.0.1:$ephpm4_port/$2" ;;
    fpm) echo "http://127.0.0.1:${port[tp]}/$2" ;;
    fpm-n) echo "http://127.0.0.1:${port[tn]}/$2" ;;
    fpm2) echo "http://127.0.0.1:${port[c2]}/$2" ;;
    fpm4) echo "http://127.0.0.1:${port[c4]}/$2" ;;
  esac
}
for t in ephpm ephpm2 ephpm4 fpm fpm-n fpm2 fpm4; do
  ok=""
  for _ in $(seq 1 100); do
    body=$(curl -s --max-time 5 "$(url_of "$t" hello.php)" || true)
    if [ "$body" = "Hello, world!" ]; then ok=1; break; fi
    sleep 0.1
  done
  if [ -z "$ok" ]; then
    echo "$t does not serve hello.php (got '$body')" >&2
    tail -n 20 "$work"/*.log "$work"/nginx/logs/*.log "$work"/*.err 2>/dev/null >&2
    exit 1
  fi
  c1=$(curl -s -H 'Cookie: PHPSESSID=00000000000000000000000000000abc' "$(url_of "$t" counter.php)")
  [ -n "$c1" ] || { echo "$t: counter.php answered nothing" >&2; exit 1; }
done

# CPU accounting: a process and its direct children (nginx workers, php-fpm
# children), in clock ticks; and the whole machine's busy ticks.
tree_ticks() {
  bench_cpu_ticks "$@" $(for p in "$@"; do pgrep -P "$p" || true; done)
}
bench_client_timer "$work/client.time"  # wrk's CPU time
server_pids() {
  case $1 in
    ephpm) echo "$ephpm_pid" ;;
    fpm) echo "$nginx_pid $fpm_a" ;;
    fpm-n) echo "$nginx_pid $fpm_b" ;;
  esac
}

echo "ephpm: $ephpm (ZTS, --workers $WORKERS, and 4 for the contention test)"
echo "php-fpm: $($fpm_bin -v | head -n 1); nginx: $(nginx -v 2>&1 | cut -d/ -f2)"
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION; $ROUNDS rounds; loadavg $(cat /proc/loadavg)"

# ---- 1. throughput -----------------------------------------------------------------
results=$work/throughput.csv  # round,page,target,rps,non2xx,server_cpu_s,machine_busy_pct,p50,p99,wrk_cpu_s,other_cpu_s
: >"$results"
for round in $(seq 1 "$ROUNDS"); do
  for page in hello counter; do
    for t in ephpm fpm fpm-n; do
      args=()
      if [ "$page" = counter ]; then
        args=(-s "$work/session.lua")
      fi
      prefix=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
      s0=$(tree_ticks $(server_pids "$t"))
      b0=$(bench_busy_ticks)
      t0=$(date +%s.%N)
      "${bench_timer[@]}" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "${args[@]}" \
          "$(url_of "$t" "$page.php")" -- "$prefix" >"$work/wrk.out" 2>&1
      t1=$(date +%s.%N)
      s1=$(tree_ticks $(server_pids "$t"))
      b1=$(bench_busy_ticks)
      rps=$(awk '/^Requests\/sec:/ { print $2 }' "$work/wrk.out")
      non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $5 }' "$work/wrk.out")
      errs=$(grep -E '^ +Socket errors:' "$work/wrk.out" || true)
      p50=$(awk '$1 == "50%" { print $2 }' "$work/wrk.out")
      p99=$(awk '$1 == "99%" { print $2 }' "$work/wrk.out")
      wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
      scpu=$(awk -v a="$s0" -v b="$s1" -v hz="$bench_hz" 'BEGIN { printf "%.2f", (b - a) / hz }')
      busy=$(awk -v a="$b0" -v b="$b1" -v hz="$bench_hz" -v w="$wall" -v n="$(nproc)" \
                 'BEGIN { printf "%.0f", 100 * (b - a) / hz / w / n }')
      # CPU spent on anything but this server and wrk: other jobs.  The
      # other server's idle processes count here too (a few ms).
      other="?" client="?"
      if [ ${#bench_timer[@]} -gt 0 ]; then
        client=$(awk '{ printf "%.2f", $1 + $2 }' "$work/client.time")
        other=$(awk -v a="$b0" -v b="$b1" -v s0="$s0" -v s1="$s1" -v hz="$bench_hz" -v c="$client" \
                    'BEGIN { printf "%.2f", ((b - a) - (s1 - s0)) / hz - c }')
      fi
      echo "$round,$page,$t,$rps,${non2xx:-0},$scpu,$busy,$p50,$p99,$client,$other" >>"$results"
      printf 'round %s  %-7s %-5s  %9s req/s  p50 %-8s p99 %-8s  non-2xx %s  CPU s: server %s wrk %s other %s  (machine busy %s%%)%s\n' \
        "$round" "$page" "$t" "$rps" "$p50" "$p99" "${non2xx:-0}" "$scpu" "$client" "$other" "$busy" \
        "${errs:+  ($errs)}"
    done
  done
done

# Medians over the undisturbed runs: other processes took at most OTHER_MAX
# (default 0.1) of the run's duration in CPU.  Without any, over all runs.
OTHER_MAX=${OTHER_MAX:-0.1}
secs=${DURATION%s}
rows() {  # page target -> its clean rows, or all its rows
  local clean
  clean=$(awk -F, -v p="$1" -v t="$2" -v m="$OTHER_MAX" -v d="$secs" \
              '$2 == p && $3 == t && $11 != "?" && $11 <= m * d' "$results")
  if [ -n "$clean" ]; then echo "$clean"
  else awk -F, -v p="$1" -v t="$2" '$2 == p && $3 == t' "$results"; fi
}
clean_count() {
  awk -F, -v p="$1" -v t="$2" -v m="$OTHER_MAX" -v d="$secs" \
      '$2 == p && $3 == t && $11 != "?" && $11 <= m * d' "$results" | wc -l
}
col() {  # page target column
  rows "$1" "$2" | awk -F, -v c="$3" '{ print $c }' | bench_median
}
echo
echo "| page | ephpm req/s | fpm req/s | fpm -n req/s | ephpm / fpm | ephpm / fpm -n | server CPU ms per 1000 req (ephpm / fpm / fpm -n) | undisturbed runs (ephpm, fpm, fpm -n; 0 = median of all) |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
for page in hello counter; do
  e=$(col "$page" ephpm 4); f=$(col "$page" fpm 4); n=$(col "$page" fpm-n 4)
  cpu_per() {  # target: median over rounds of server CPU ms per 1000 requests
    rows "$page" "$1" | awk -F, -v d="$secs" '{ printf "%.1f\n", 1e6 * $6 / ($4 * d) }' | bench_median
  }
  printf '| %s | %.0f | %.0f | %.0f | %.2f | %.2f | %s / %s / %s | %s, %s, %s of %s |\n' "$page" "$e" "$f" "$n" \
    "$(awk -v a="$e" -v b="$f" 'BEGIN { print a / b }')" \
    "$(awk -v a="$e" -v b="$n" 'BEGIN { print a / b }')" \
    "$(cpu_per ephpm)" "$(cpu_per fpm)" "$(cpu_per fpm-n)" \
    "$(clean_count "$page" ephpm)" "$(clean_count "$page" fpm)" "$(clean_count "$page" fpm-n)" "$ROUNDS"
done

# ---- 2. contention --------------------------------------------------------------
contended() {  # target -> prints "wall_s max_request_s final_counter codes"
  local t=$1 sid args=() i
  sid=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  for i in $(seq 1 20); do
    args+=(-o /dev/null "$(url_of "$t" contended.php)?i=$i")
  done
  local t0 t1
  t0=$(date +%s.%N)
  curl -s -Z --parallel-immediate --parallel-max 20 --max-time 60 \
       -H "Cookie: PHPSESSID=$sid" -w '%{http_code} %{time_total}\n' "${args[@]}" \
       >"$work/contended.out" 2>"$work/contended.err" || true
  t1=$(date +%s.%N)
  local final
  final=$(curl -s --max-time 10 -H "Cookie: PHPSESSID=$sid" "$(url_of "$t" read.php)")
  local codes maxt
  codes=$(awk '{ print $1 }' "$work/contended.out" | sort | uniq -c | awk '{ printf "%sx%s ", $1, $2 }')
  maxt=$(awk 'BEGIN { m = 0 } $2 > m { m = $2 } END { printf "%.3f", m }' "$work/contended.out")
  printf '%.3f %s %s %s\n' "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$maxt" \
    "$final" "$codes"
}
echo
echo "contention: 20 requests at once, one cookie, read / usleep(50000) / write +1 (floor 1.0 s)"
cres=$work/contended.csv  # trial,target,wall,maxreq,final
: >"$cres"
for trial in $(seq 1 "$TRIALS"); do
  for t in ephpm2 ephpm4 fpm2 fpm4; do
    read -r wall maxreq final codes <<<"$(contended "$t")"
    echo "$trial,$t,$wall,$maxreq,$final" >>"$cres"
    printf 'trial %s  %-6s  wall %ss  slowest request %ss  final counter %s  codes %s\n' \
      "$trial" "$t" "$wall" "$maxreq" "$final" "$codes"
  done
done
echo
echo "| target | wall s (median; min-max) | slowest request s (median) | final counter (all trials) |"
echo "|---|---:|---:|---|"
for t in ephpm2 ephpm4 fpm2 fpm4; do
  w=$(awk -F, -v t="$t" '$2 == t { print $3 }' "$cres" | bench_median)
  lo=$(awk -F, -v t="$t" '$2 == t { print $3 }' "$cres" | sort -g | head -n 1)
  hi=$(awk -F, -v t="$t" '$2 == t { print $3 }' "$cres" | sort -g | tail -n 1)
  m=$(awk -F, -v t="$t" '$2 == t { print $4 }' "$cres" | bench_median)
  f=$(awk -F, -v t="$t" '$2 == t { print $5 }' "$cres" | tr '\n' ' ')
  printf '| %s | %.3f; %.3f-%.3f | %.3f | %s|\n' "$t" "$w" "$lo" "$hi" "$m" "$f"
done
echo "loadavg after: $(cat /proc/loadavg)"
if [ -n "${OUT:-}" ]; then
  cp "$results" "$OUT.throughput.csv"
  cp "$cres" "$OUT.contended.csv"
fi
[ -s "$work/fpm-php-errors.log" ] && { echo "php-fpm PHP errors:"; tail -n 5 "$work/fpm-php-errors.log"; }
for f in "$work"/ephpm-*.err; do
  [ -s "$f" ] && { echo "$(basename "$f"):"; tail -n 5 "$f"; }
done
exit 0
