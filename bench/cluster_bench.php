<?php
// Cluster benchmarks on loopback: a three-node cluster against a single node,
// and (issue 18) a three-node cluster in strict mode, whose lock decisions
// are etcd transactions, against both.
//
//   php bench/cluster_bench.php --ephpm BUILD/sapi/ephpm [--rounds 3] [--workers 8]
//       [--resp-only | --gossip-only]
//   (bench/cluster-bench.sh builds a Release ephpm and runs this)
//
//  1. RESP write throughput (redis-benchmark SET and INCR, 50 clients, -P 1
//     and 16) on a single node and on node 1 of three (every SET replicated
//     to two nodes; two thirds of the INCRs forwarded to their owner).
//  2. Replication lag: SET on node 1, then GET on node 2 until the value is
//     there; the time from sending the SET to seeing it, against the SET's own
//     round trip.
//  3. Lock acquire+release cycles through PHP (ephpm_kv_setnx +
//     ephpm_kv_del_if_eq, one HTTP request to cluster-docroot/lock_cycle.php
//     runs them in a loop inside the host): cycles per second and each
//     cycle's p50/p99, on the single node, on node 1 of the gossip cluster
//     for keys owned locally and remotely, and on node 1 of the strict
//     cluster (etcd decides every lock, whoever owns the key).
//  4. Session requests (cluster-docroot/session.php: session_start(),
//     $_SESSION['n']++, session_write_close(), with the host's default
//     session.save_handler=ephpm) on the single node and on node 1 of each
//     cluster, driven by keep-alive HTTP clients in this process, each with
//     its own session cookie: 1 client (one request at a time), then 8 at
//     once; requests/s and p50/p99 of the 200s (session.php answers 503
//     when the session handler warned, e.g. served without the lock).
//  5. What etcd's fsync costs on this disk: etcd's own WAL fsync and backend
//     commit histograms (its /metrics) over the strict runs, per lock cycle
//     and per session request; sequential puts, lease grants and revokes on
//     the leader; and 4 KiB writes + fdatasync into a preallocated file next
//     to etcd's data directories.
// The strict cluster's etcd is three members on loopback, started by
// tests/etcd/etcd-cluster.sh (data under a temporary directory in /tmp) and
// stopped at exit.  Rounds interleave the modes.  --resp-only runs part 1
// alone (no etcd, no strict cluster); --gossip-only parts 1 to 3 without
// etcd (no strict run, no sessions).  Prints medians over the rounds.  Not a
// test: nothing here can fail.

declare(strict_types=1);

$ephpm = null;
$rounds = 3;
$workers = 0;  // 0: the host's default (a non-thread-safe PHP has exactly one)
$resp_only = false;
$gossip_only = false;
for ($i = 1; $i < $argc; $i++) {
    if ($argv[$i] === '--ephpm') {
        $ephpm = $argv[++$i] ?? null;
    } elseif ($argv[$i] === '--rounds') {
        $rounds = max(1, (int)($argv[++$i] ?? 3));
    } elseif ($argv[$i] === '--workers') {
        $workers = max(0, (int)($argv[++$i] ?? 0));
    } elseif ($argv[$i] === '--resp-only') {
        $resp_only = true;
    } elseif ($argv[$i] === '--gossip-only') {
        $gossip_only = true;
    }
}
if ($ephpm === null || !is_executable($ephpm)) {
    fwrite(STDERR, "usage: php bench/cluster_bench.php --ephpm PATH [--rounds N] [--workers N]\n");
    exit(2);
}
$docroot = __DIR__ . '/cluster-docroot';
$etcd_script = dirname(__DIR__) . '/tests/etcd/etcd-cluster.sh';

// ephpm first (a strict node's shutdown may still talk to etcd), then etcd.
$procs = [];
$etcd_dir = null;
register_shutdown_function(function () use (&$procs, &$etcd_dir, $etcd_script) {
    foreach ($procs as $p) {
        proc_terminate($p['proc'], 15);
    }
    foreach ($procs as $p) {
        proc_close($p['proc']);
    }
    if ($etcd_dir !== null) {
        exec('bash ' . escapeshellarg($etcd_script) . ' stop ' . escapeshellarg($etcd_dir) . ' 2>&1');
        exec('rm -rf ' . escapeshellarg($etcd_dir));
    }
});
// Ctrl-C and kill: exit, so that the shutdown function runs (etcd's
// watchdog would end the members anyway, once this process is gone).
if (function_exists('pcntl_async_signals')) {
    pcntl_async_signals(true);
    foreach ([SIGINT, SIGTERM, SIGHUP] as $sig) {
        pcntl_signal($sig, function () {
            exit(130);
        });
    }
}

/** Starts ephpm; returns its addresses once printed. */
function start(string $bin, array $args, array &$procs): array
{
    global $workers;
    $cmd = array_merge([$bin, '--listen', '127.0.0.1:0', '--resp', '127.0.0.1:0',
                        '--log-level', 'warn'], $workers > 0 ? ['--workers', (string)$workers] : [],
                       $args);
    $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'],
                             2 => ['file', '/dev/null', 'w']], $pipes);
    $out = '';
    $s = ['proc' => $proc, 'http' => 0, 'resp' => 0, 'cluster' => ''];
    $deadline = microtime(true) + 15;
    stream_set_blocking($pipes[1], false);
    while (($s['http'] === 0 || $s['resp'] === 0) && microtime(true) < $deadline) {
        $r = [$pipes[1]];
        $w = $e = null;
        if (stream_select($r, $w, $e, 0, 100000) > 0) {
            $out .= (string)fread($pipes[1], 4096);
        }
        if (preg_match('/^http listening on 127\.0\.0\.1:(\d+)$/m', $out, $m)) {
            $s['http'] = (int)$m[1];
        }
        if (preg_match('/^resp listening on 127\.0\.0\.1:(\d+)$/m', $out, $m)) {
            $s['resp'] = (int)$m[1];
        }
        if (preg_match('/^cluster node \S+ listening on (\S+)$/m', $out, $m)) {
            $s['cluster'] = $m[1];
        }
    }
    if ($s['http'] === 0 || $s['resp'] === 0) {
        fwrite(STDERR, "ephpm did not start: $out\n");
        exit(1);
    }
    $procs[] = $s;
    return $s;
}

function resp_conn(int $port)
{
    $c = stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 5);
    if ($c === false) {
        throw new RuntimeException("connect: $errstr");
    }
    stream_set_timeout($c, 10);
    return $c;
}

function resp_call($c, array $args): string
{
    $out = '*' . count($args) . "\r\n";
    foreach ($args as $a) {
        $out .= '$' . strlen((string)$a) . "\r\n$a\r\n";
    }
    fwrite($c, $out);
    $line = (string)fgets($c);
    if ($line !== '' && $line[0] === '$' && (int)substr($line, 1) >= 0) {
        $len = (int)substr($line, 1);
        $data = '';
        while (strlen($data) < $len + 2) {
            $data .= (string)fread($c, $len + 2 - strlen($data));
        }
        return substr($data, 0, $len);
    }
    return rtrim($line, "\r\n");
}

function info_alive(int $port): int
{
    $c = resp_conn($port);
    $text = resp_call($c, ['INFO', 'ephpm-cluster']);
    fclose($c);
    return preg_match('/cluster_alive:(\d+)/', $text, $m) ? (int)$m[1] : 0;
}

function median(array $xs): float
{
    sort($xs);
    $n = count($xs);
    return $n === 0 ? 0.0 : ($n % 2 ? $xs[intdiv($n, 2)] : ($xs[$n / 2 - 1] + $xs[$n / 2]) / 2);
}

function pct(array $xs, float $p): float
{
    sort($xs);
    return $xs[min(count($xs) - 1, (int)floor($p * count($xs)))];
}

function redis_benchmark(int $port, string $test, int $pipeline): float
{
    $cmd = ['redis-benchmark', '-h', '127.0.0.1', '-p', (string)$port, '-t', $test,
            '-n', $pipeline > 1 ? '400000' : '100000', '-c', '50', '-r', '100000', '-d', '32',
            '-P', (string)$pipeline, '--csv', '-q'];
    $p = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
    $out = stream_get_contents($pipes[1]);
    stream_get_contents($pipes[2]);
    proc_close($p);
    return preg_match('/^"[A-Z]+[^"]*","([0-9.]+)"/m', (string)$out, $m) ? (float)$m[1] : 0.0;
}

function http_json(int $port, string $target): array
{
    $body = file_get_contents("http://127.0.0.1:$port$target");
    return json_decode((string)$body, true) ?: [];
}

/**
 * Parses one complete HTTP/1.1 response off the front of $buf (Content-Length
 * or chunked): [status, body, close], or null while incomplete.
 */
function http_parse(string &$buf): ?array
{
    $h = strpos($buf, "\r\n\r\n");
    if ($h === false) {
        return null;
    }
    $head = substr($buf, 0, $h);
    $status = (int)substr($head, 9, 3);
    $close = (bool)preg_match('/^connection:\s*close/mi', $head);
    if (preg_match('/^transfer-encoding:\s*chunked/mi', $head)) {
        $at = $h + 4;
        $body = '';
        while (true) {
            $eol = strpos($buf, "\r\n", $at);
            if ($eol === false) {
                return null;
            }
            $size = hexdec(trim(substr($buf, $at, $eol - $at)));
            if (strlen($buf) < $eol + 2 + $size + 2) {
                return null;
            }
            $body .= substr($buf, $eol + 2, $size);
            $at = $eol + 2 + $size + 2;
            if ($size === 0) {
                $buf = (string)substr($buf, $at);
                return [$status, $body, $close];
            }
        }
    }
    $len = preg_match('/^content-length:\s*(\d+)/mi', $head, $m) ? (int)$m[1] : 0;
    if (strlen($buf) < $h + 4 + $len) {
        return null;
    }
    $body = substr($buf, $h + 4, $len);
    $buf = (string)substr($buf, $h + 4 + $len);
    return [$status, $body, $close];
}

/** A keep-alive connection to ADDR (host:port). */
function http_conn(string $addr)
{
    $c = stream_socket_client("tcp://$addr", $errno, $errstr, 5);
    if ($c === false) {
        throw new RuntimeException("connect $addr: $errstr");
    }
    stream_set_timeout($c, 30);
    stream_set_read_buffer($c, 0);
    return $c;
}

function http_request(string $method, string $target, string $body = '', string $headers = ''): string
{
    return "$method $target HTTP/1.1\r\nHost: 127.0.0.1\r\n$headers" .
        ($method === 'POST' ? "Content-Type: application/json\r\nContent-Length: " . strlen($body) . "\r\n" : '') .
        "\r\n$body";
}

/** One request on a keep-alive connection: [status, body, close]. */
function http_call($c, string $method, string $target, string $body = ''): array
{
    fwrite($c, http_request($method, $target, $body));
    $buf = '';
    while (($r = http_parse($buf)) === null) {
        $chunk = fread($c, 65536);
        if ($chunk === false || ($chunk === '' && feof($c))) {
            throw new RuntimeException("connection closed during $target");
        }
        $buf .= $chunk;
    }
    return $r;
}

/**
 * Session requests: $clients keep-alive connections to the host at $port,
 * client i always with the session id md5("$tag-$i"), each sending
 * GET /session.php again as soon as its answer is in.  After $warm seconds
 * the next $seconds count.  Returns the rate of 200 answers (session.php
 * answers 503 when the session handler warned: no lock, unknown outcome),
 * their p50/p99 (µs; requests sent after the warm-up), how many were 200
 * and how many not, and how many were answered in all and how many of them
 * with 200 (the warm-up's included).
 */
function session_load(int $port, string $tag, int $clients, float $warm, float $seconds): array
{
    $t_start = hrtime(true);
    $warm_end = $t_start + (int)($warm * 1e9);
    $end = $warm_end + (int)($seconds * 1e9);
    $give_up = $end + 60 * 1000000000;
    $cl = [];
    $send = function (int $i) use (&$cl, $port) {
        if ($cl[$i]['c'] === null) {
            $cl[$i]['c'] = http_conn("127.0.0.1:$port");
            $cl[$i]['buf'] = '';
        }
        $cl[$i]['t0'] = hrtime(true);
        fwrite($cl[$i]['c'], $cl[$i]['req']);
    };
    for ($i = 0; $i < $clients; $i++) {
        $cl[$i] = ['c' => null, 'buf' => '', 't0' => 0, 'busy' => true,
                   'req' => http_request('GET', '/session.php', '', 'Cookie: PHPSESSID=' . md5("$tag-$i") . "\r\n")];
        $send($i);
    }
    $lat = [];
    $done = $errors = $total = $total_ok = 0;
    $last = $warm_end;
    while (true) {
        $read = [];
        foreach ($cl as $i => $x) {
            if ($x['busy']) {
                $read[$i] = $x['c'];
            }
        }
        if ($read === [] || hrtime(true) > $give_up) {
            break;
        }
        $w = $e = null;
        if (stream_select($read, $w, $e, 1) < 1) {
            continue;
        }
        foreach ($read as $i => $c) {
            $chunk = fread($c, 65536);
            if ($chunk === false || ($chunk === '' && feof($c))) {  // the server closed: count, reconnect
                $errors++;
                fclose($c);
                $cl[$i]['c'] = null;
                $cl[$i]['busy'] = hrtime(true) < $end;
                if ($cl[$i]['busy']) {
                    $send($i);
                }
                continue;
            }
            $cl[$i]['buf'] .= $chunk;
            $r = http_parse($cl[$i]['buf']);
            if ($r === null) {
                continue;
            }
            $now = hrtime(true);
            $total++;
            $total_ok += $r[0] === 200 ? 1 : 0;
            if ($now >= $warm_end) {
                $last = $now;
                if ($r[0] !== 200) {
                    $errors++;
                } else {
                    $done++;
                    if ($cl[$i]['t0'] >= $warm_end) {
                        $lat[] = ($now - $cl[$i]['t0']) / 1000;
                    }
                }
            }
            if ($r[2]) {
                fclose($c);
                $cl[$i]['c'] = null;
            }
            $cl[$i]['busy'] = $now < $end;
            if ($cl[$i]['busy']) {
                $send($i);
            }
        }
    }
    foreach ($cl as $x) {
        if ($x['c'] !== null) {
            fclose($x['c']);
        }
    }
    $secs = max(1e-9, ($last - $warm_end) / 1e9);
    return ['rate' => $done / $secs, 'p50' => $lat ? pct($lat, 0.5) : 0.0,
            'p99' => $lat ? pct($lat, 0.99) : 0.0, 'requests' => $done, 'errors' => $errors,
            'total' => $total, 'total_ok' => $total_ok];
}

/** Strict mode's counters (INFO ephpm-cluster, cluster_etcd_*) of the node at RESP $port. */
function etcd_node_counters(int $port): array
{
    $c = resp_conn($port);
    $text = resp_call($c, ['INFO', 'ephpm-cluster']);
    fclose($c);
    $out = [];
    foreach (['grants', 'refused', 'lease_lost'] as $k) {
        $out[$k] = preg_match("/cluster_etcd_$k:(\\d+)/", $text, $m) ? (int)$m[1] : 0;
    }
    return $out;
}

/** The session handler's counters of the host at $port (process-wide). */
function session_counters(int $port): array
{
    $i = http_json($port, '/info.php');
    return ['acquired' => $i['session_lock_acquired'] ?? 0, 'waits' => $i['session_lock_waits'] ?? 0,
            'timeouts' => $i['session_lock_timeouts'] ?? 0,
            'fenced_refused' => $i['session_fenced_writes_refused'] ?? 0];
}

/**
 * etcd's disk and Raft counters, summed over the members at $clients
 * (host:port each): WAL fsyncs and their seconds, backend commits and their
 * seconds; and the Raft entries committed (the highest member's count).
 */
function etcd_metrics(array $clients): array
{
    $t = ['wal_count' => 0.0, 'wal_sum' => 0.0, 'commit_count' => 0.0, 'commit_sum' => 0.0,
          'committed' => 0.0];
    $names = ['wal' => 'etcd_disk_wal_fsync_duration_seconds',
              'commit' => 'etcd_disk_backend_commit_duration_seconds'];
    foreach ($clients as $addr) {
        $text = (string)@file_get_contents("http://$addr/metrics");
        foreach ($names as $k => $name) {
            foreach (['sum', 'count'] as $f) {
                if (preg_match("/^{$name}_$f (\\S+)$/m", $text, $m)) {
                    $t["{$k}_$f"] += (float)$m[1];
                }
            }
        }
        if (preg_match('/^etcd_server_proposals_committed_total (\S+)$/m', $text, $m)) {
            $t['committed'] = max($t['committed'], (float)$m[1]);
        }
    }
    return $t;
}

function metrics_delta(array $a, array $b): array
{
    $d = [];
    foreach ($a as $k => $v) {
        $d[$k] = $b[$k] - $v;
    }
    return $d;
}

function metrics_add(array &$total, array $d): void
{
    foreach ($d as $k => $v) {
        $total[$k] = ($total[$k] ?? 0.0) + $v;
    }
}

/** POSTs JSON to etcd's gateway on a keep-alive connection: the decoded answer. */
function etcd_call($c, string $path, array $body): array
{
    $r = http_call($c, 'POST', $path, json_encode($body, JSON_FORCE_OBJECT));
    return json_decode($r[1], true) ?: [];
}

// ---- start ------------------------------------------------------------------
$single = start($ephpm, ['--docroot', $docroot], $procs);
$n1 = start($ephpm, ['--docroot', $docroot, '--cluster-node-id', 'n1'], $procs);
$n2 = start($ephpm, ['--docroot', $docroot, '--cluster-node-id', 'n2', '--cluster-join', $n1['cluster']], $procs);
$n3 = start($ephpm, ['--docroot', $docroot, '--cluster-node-id', 'n3', '--cluster-join', $n1['cluster']], $procs);
$ready = function (array $nodes, bool $strict): bool {
    foreach ($nodes as $n) {
        $c = resp_conn($n['resp']);
        $text = resp_call($c, ['INFO', 'ephpm-cluster']);
        fclose($c);
        if (!preg_match('/cluster_alive:3\b/', $text) ||
            ($strict && !preg_match('/cluster_etcd_serving:1\b/', $text))) {
            return false;
        }
    }
    return true;
};

if ($resp_only || $gossip_only) {
    $deadline = microtime(true) + 20;
    while (microtime(true) < $deadline && !$ready([$n1, $n2, $n3], false)) {
        usleep(50000);
    }
    printf("ephpm %s, %d rounds, %s\n", $ephpm, $rounds, $resp_only ? 'RESP only' : 'gossip only');
} else {
    // The strict cluster: three etcd members (this process their owner, for
    // the script's watchdog), then three nodes with --cluster-arbiter etcd.
    $etcd_dir = rtrim((string)shell_exec('mktemp -d /tmp/ephpm-cluster-bench-etcd.XXXXXX'));
    exec('bash ' . escapeshellarg($etcd_script) . ' start ' . escapeshellarg($etcd_dir) . ' 3 ' .
         getmypid() . ' 2>&1', $etcd_out, $rc);
    if ($rc !== 0) {
        fwrite(STDERR, "etcd did not start:\n" . implode("\n", $etcd_out) . "\n");
        exit(1);
    }
    $etcd_endpoints = trim((string)file_get_contents("$etcd_dir/endpoints"));
    $etcd_clients = explode(',', $etcd_endpoints);
    $strict_args = ['--docroot', $docroot, '--cluster-arbiter', 'etcd', '--etcd-endpoints', $etcd_endpoints];
    $s1 = start($ephpm, array_merge($strict_args, ['--cluster-node-id', 's1']), $procs);
    $s2 = start($ephpm, array_merge($strict_args, ['--cluster-node-id', 's2', '--cluster-join', $s1['cluster']]), $procs);
    $s3 = start($ephpm, array_merge($strict_args, ['--cluster-node-id', 's3', '--cluster-join', $s1['cluster']]), $procs);

    $deadline = microtime(true) + 20;
    while (microtime(true) < $deadline && (!$ready([$n1, $n2, $n3], false) || !$ready([$s1, $s2, $s3], true))) {
        usleep(50000);
    }
    printf("ephpm %s, %d rounds, %d cores, PHP workers per host: %s; etcd %s (3 members, data in %s)\n",
        $ephpm, $rounds, (int)trim((string)shell_exec('nproc')), $workers > 0 ? $workers : 'default',
        trim((string)shell_exec('etcd --version 2>/dev/null | head -n 1')), $etcd_dir);
}
printf("load average at start: %s\n\n", implode(' ', array_map(fn ($x) => sprintf('%.2f', $x), sys_getloadavg())));

// ---- 1. RESP throughput ---------------------------------------------------------
$rps = [];
for ($r = 0; $r < $rounds; $r++) {
    foreach (['set', 'incr'] as $test) {
        foreach ([1, 16] as $pl) {
            $rps["$test -P $pl"]['single'][] = redis_benchmark($single['resp'], $test, $pl);
            $rps["$test -P $pl"]['cluster'][] = redis_benchmark($n1['resp'], $test, $pl);
        }
    }
}
echo "RESP requests/s (redis-benchmark -c 50 -r 100000 -d 32), medians\n";
printf("%-12s %12s %14s %8s\n", 'test', 'single node', 'node 1 of 3', 'ratio');
foreach ($rps as $name => $v) {
    $s = median($v['single']);
    $c = median($v['cluster']);
    printf("%-12s %12.0f %14.0f %8.2f\n", $name, $s, $c, $s > 0 ? $c / $s : 0);
}
if ($resp_only) {
    exit(0);
}

// ---- 2. replication lag -----------------------------------------------------------
$a = resp_conn($n1['resp']);
$b = resp_conn($n2['resp']);
$lag = $rtt = [];
for ($r = 0; $r < $rounds; $r++) {
    for ($i = 0; $i < 2000; $i++) {
        $key = "lag:$r:$i";
        $t0 = hrtime(true);
        resp_call($a, ['SET', $key, "v$i"]);
        $t1 = hrtime(true);
        while (resp_call($b, ['GET', $key]) !== "v$i") {
        }
        $lag[] = (hrtime(true) - $t0) / 1000;
        $rtt[] = ($t1 - $t0) / 1000;
    }
}
echo "\nReplication lag, SET on node 1 until GET on node 2 sees it (µs; includes the SET's round trip)\n";
printf("  lag: median %.0f, p90 %.0f, p99 %.0f, max %.0f (%d writes)\n",
    median($lag), pct($lag, 0.9), pct($lag, 0.99), max($lag), count($lag));
printf("  the SET's own round trip: median %.0f, p99 %.0f\n", median($rtt), pct($rtt, 0.99));

// ---- 3. lock cycles through PHP, and 4. session requests, interleaved -----------
$lock_runs = [
    'single node' => [$single['http'], 'any', 20000],
    'gossip, local owner' => [$n1['http'], 'local', 20000],
    'gossip, remote owner' => [$n1['http'], 'remote', 5000],
];
if (!$gossip_only) {
    // etcd's background (the nodes' membership leases, Raft heartbeats) over
    // two idle seconds, before any strict load.
    http_json($s1['http'], '/lock_cycle.php?kind=any&n=50');  // a first strict grant (fence offset)
    $m0 = etcd_metrics($etcd_clients);
    $t_idle = hrtime(true);
    sleep(2);
    $idle = metrics_delta($m0, etcd_metrics($etcd_clients));
    $idle_seconds = (hrtime(true) - $t_idle) / 1e9;
    $lock_runs['strict (etcd)'] = [$s1['http'], 'any', 400];
}
$session_hosts = $gossip_only ? [] : ['single node' => $single['http'], 'gossip, 3 nodes' => $n1['http'],
                                      'strict (etcd), 3 nodes' => $s1['http']];
$session_clients = $gossip_only ? [] : [1, 8];
$cycles = $lock_failed = [];
$sessions = [];
$strict_lock = [];  // etcd counter deltas over the strict runs
$strict_session = [1 => [], 8 => []];  // the same per session clients
$strict_lock_cycles = 0;
$strict_session_ok = [1 => 0, 8 => 0];  // 200s of the strict session runs, warm-up included
$strict_node = ['lock cycles' => [], 'sessions, 1 client' => [], 'sessions, 8 clients' => []];  // s1's etcd counter deltas
$counters_before = [];
foreach ($session_hosts as $mode => $port) {
    $counters_before[$mode] = session_counters($port);
}
for ($r = 0; $r < $rounds; $r++) {
    foreach ($lock_runs as $name => [$port, $kind, $n]) {
        $before = $name === 'strict (etcd)' ? etcd_metrics($etcd_clients) : null;
        $node_before = $before !== null ? etcd_node_counters($s1['resp']) : null;
        $res = http_json($port, "/lock_cycle.php?kind=$kind&n=$n");
        if ($before !== null) {
            metrics_add($strict_lock, metrics_delta($before, etcd_metrics($etcd_clients)));
            metrics_add($strict_node['lock cycles'], metrics_delta($node_before, etcd_node_counters($s1['resp'])));
            $strict_lock_cycles += $n;
        }
        $cycles[$name]['rate'][] = $res['per_second'] ?? 0;
        $cycles[$name]['p50'][] = $res['p50_us'] ?? 0;
        $cycles[$name]['p99'][] = $res['p99_us'] ?? 0;
        $lock_failed[$name] = ($lock_failed[$name] ?? 0) + ($res['failed'] ?? 0);
    }
    foreach ($session_clients as $clients) {
        foreach ($session_hosts as $mode => $port) {
            $strict = str_starts_with($mode, 'strict');
            $before = $strict ? etcd_metrics($etcd_clients) : null;
            $node_before = $strict ? etcd_node_counters($s1['resp']) : null;
            $res = $clients > 1 ? session_load($port, "$mode", $clients, 0.5, 5.0)
                                : session_load($port, "$mode-alone", 1, 0.3, 4.0);
            if ($before !== null) {
                metrics_add($strict_session[$clients], metrics_delta($before, etcd_metrics($etcd_clients)));
                metrics_add($strict_node["sessions, $clients client" . ($clients > 1 ? 's' : '')],
                            metrics_delta($node_before, etcd_node_counters($s1['resp'])));
                $strict_session_ok[$clients] += $res['total_ok'];  // the warm-up's wrote to etcd too
            }
            foreach (['rate', 'p50', 'p99'] as $f) {
                $sessions[$clients][$mode][$f][] = $res[$f];
            }
            $sessions[$clients][$mode]['requests'] = ($sessions[$clients][$mode]['requests'] ?? 0) + $res['requests'];
            $sessions[$clients][$mode]['errors'] = ($sessions[$clients][$mode]['errors'] ?? 0) + $res['errors'];
        }
    }
}

echo "\nLock acquire+release cycles through PHP (ephpm_kv_setnx + ephpm_kv_del_if_eq, fresh 32-hex token\n";
echo "per cycle, one request to lock_cycle.php on the single node / node 1 of each cluster), medians\n";
printf("  %-22s %10s %9s %10s %10s\n", '', 'cycles/s', 'x single', 'p50 µs', 'p99 µs');
$base = median($cycles['single node']['rate']);
foreach ($cycles as $name => $v) {
    printf("  %-22s %10.0f %9.4f %10.1f %10.1f%s\n", $name, median($v['rate']),
        $base > 0 ? median($v['rate']) / $base : 0, median($v['p50']), median($v['p99']),
        $lock_failed[$name] > 0 ? "  ({$lock_failed[$name]} set_nx refused or failed)" : '');
}
if ($gossip_only) {
    exit(0);
}

foreach ($session_clients as $clients) {
    printf("\nSession requests (session_start, \$_SESSION['n']++, session_write_close) on the single node / node 1,\n" .
        "%s, medians; req/s and latency count the 200s only (503: the handler warned)\n",
        $clients > 1 ? "$clients keep-alive clients at once, each its own session id"
                     : 'one client alone (one request at a time)');
    printf("  %-24s %10s %10s %10s %9s %8s\n", '', 'req/s', 'p50 µs', 'p99 µs', '200s', 'non-200');
    foreach ($sessions[$clients] as $mode => $v) {
        printf("  %-24s %10.0f %10.0f %10.0f %9d %8d\n", $mode, median($v['rate']), median($v['p50']),
            median($v['p99']), $v['requests'], $v['errors']);
    }
    $g = median($sessions[$clients]['gossip, 3 nodes']['rate']);
    $st = median($sessions[$clients]['strict (etcd), 3 nodes']['rate']);
    printf("  strict / gossip: %.3f (the goal: at least 0.5)\n", $g > 0 ? $st / $g : 0);
}
echo "\nSession handler counters over all session runs (lock acquired / waited / timed out / fenced write refused)\n";
foreach ($session_hosts as $mode => $port) {
    $after = session_counters($port);
    $d = [];
    foreach ($after as $k => $v) {
        $d[$k] = $v - $counters_before[$mode][$k];
    }
    printf("  %-24s %d / %d / %d / %d\n", $mode, $d['acquired'], $d['waits'], $d['timeouts'], $d['fenced_refused']);
}

echo "\nStrict node 1's etcd counters over its runs (lock grants / set_nx refused or not served / membership leases lost)\n";
foreach ($strict_node as $what => $d) {
    printf("  %-24s %d / %d / %d\n", $what, $d['grants'], $d['refused'], $d['lease_lost']);
}

// ---- 5. what etcd's fsync costs -------------------------------------------------------
echo "\netcd (3 members on this machine's one disk; counts summed over the members)\n";
$per = function (array $d, float $units, string $what) {
    printf("  %.2f Raft entries, %.2f WAL fsyncs (%.2f per member), %.2f backend commits per %s;\n",
        $d['committed'] / $units, $d['wal_count'] / $units, $d['wal_count'] / 3 / $units,
        $d['commit_count'] / $units, $what);
    printf("     WAL fsync mean %.3f ms, backend commit mean %.3f ms (%d fsyncs in all)\n",
        $d['wal_count'] > 0 ? $d['wal_sum'] / $d['wal_count'] * 1000 : 0,
        $d['commit_count'] > 0 ? $d['commit_sum'] / $d['commit_count'] * 1000 : 0, $d['wal_count']);
};
printf("  idle (2 s, the strict nodes' leases and Raft heartbeats): %.1f Raft entries/s, %.1f WAL fsyncs/s\n",
    $idle['committed'] / $idle_seconds, $idle['wal_count'] / $idle_seconds);
$per($strict_lock, max(1, $strict_lock_cycles), 'strict lock cycle');
foreach ($strict_session as $clients => $d) {
    $per($d, max(1, $strict_session_ok[$clients]),
         "strict session request served (200), $clients client" . ($clients > 1 ? 's' : ''));
}

// A Raft write alone: sequential puts and lease grants (+ revokes) on the
// leader's gateway, over one keep-alive connection.
$leader = $etcd_clients[0];
foreach ($etcd_clients as $addr) {
    $st = json_decode((string)@file_get_contents("http://$addr/v3/maintenance/status", false,
        stream_context_create(['http' => ['method' => 'POST', 'content' => '{}']])), true) ?: [];
    if (($st['leader'] ?? '') !== '' && ($st['header']['member_id'] ?? '') === $st['leader']) {
        $leader = $addr;
    }
}
$ec = http_conn($leader);
$put = $grant = $revoke = $get = [];
for ($i = 0; $i < 300; $i++) {
    $t0 = hrtime(true);
    etcd_call($ec, '/v3/kv/put', ['key' => base64_encode("/bench/put/" . ($i % 16)), 'value' => base64_encode(str_repeat('x', 32))]);
    $t1 = hrtime(true);
    etcd_call($ec, '/v3/kv/range', ['key' => base64_encode("/bench/put/" . ($i % 16))]);
    $t2 = hrtime(true);
    $lease = etcd_call($ec, '/v3/lease/grant', ['TTL' => 30])['ID'] ?? '0';
    $t3 = hrtime(true);
    etcd_call($ec, '/v3/lease/revoke', ['ID' => $lease]);
    $t4 = hrtime(true);
    $put[] = ($t1 - $t0) / 1000;
    $get[] = ($t2 - $t1) / 1000;
    $grant[] = ($t3 - $t2) / 1000;
    $revoke[] = ($t4 - $t3) / 1000;
}
fclose($ec);
echo "  one request at a time to the leader's JSON gateway (300 each), µs:\n";
foreach (['put (1 Raft write)' => $put, 'linearizable range (no write)' => $get,
          'lease grant (1 Raft write)' => $grant, 'lease revoke (1 Raft write)' => $revoke] as $what => $xs) {
    printf("    %-30s p50 %7.0f  p99 %7.0f  mean %7.0f\n", $what, pct($xs, 0.5), pct($xs, 0.99),
        array_sum($xs) / count($xs));
}

// The disk alone: 4 KiB written in place into a preallocated file (as
// etcd's WAL, whose segments are preallocated) and fdatasync'ed, 300 times.
$f = fopen("$etcd_dir/fsync-probe", 'c+');
fwrite($f, str_repeat("\0", 300 * 4096));
fsync($f);
rewind($f);
$sync = [];
$block = str_repeat('w', 4096);
for ($i = 0; $i < 300; $i++) {
    fwrite($f, $block);
    fflush($f);
    $t0 = hrtime(true);
    fdatasync($f);
    $sync[] = (hrtime(true) - $t0) / 1000;
}
fclose($f);
unlink("$etcd_dir/fsync-probe");
printf("  the disk alone (4 KiB write + fdatasync in %s, 300 times), µs: p50 %.0f  p99 %.0f  mean %.0f\n",
    $etcd_dir, pct($sync, 0.5), pct($sync, 0.99), array_sum($sync) / count($sync));
printf("\nload average at the end: %s\n", implode(' ', array_map(fn ($x) => sprintf('%.2f', $x), sys_getloadavg())));
