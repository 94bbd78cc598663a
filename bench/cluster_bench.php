<?php
// Cluster benchmarks on loopback: a three-node cluster against a single node.
//
//   php bench/cluster_bench.php --ephpm BUILD/sapi/ephpm [--rounds 3]
//   (bench/cluster-bench.sh builds a Release ephpm and runs this)
//
//  1. RESP write throughput (redis-benchmark SET and INCR, 50 clients, -P 1
//     and 16) on a single node and on node 1 of three (every SET replicated
//     to two nodes; two thirds of the INCRs forwarded to their owner).
//  2. Replication lag: SET on node 1, then GET on node 2 until the value is
//     there; the time from sending the SET to seeing it, against the SET's own
//     round trip.
//  3. Lock acquire+release cycles per second through PHP (ephpm_kv_setnx +
//     ephpm_kv_del_if_eq) for keys owned locally and remotely, against the
//     single node.
// Prints medians over the rounds.  Not a test: nothing here can fail.

declare(strict_types=1);

$ephpm = null;
$rounds = 3;
for ($i = 1; $i < $argc; $i++) {
    if ($argv[$i] === '--ephpm') {
        $ephpm = $argv[++$i] ?? null;
    } elseif ($argv[$i] === '--rounds') {
        $rounds = max(1, (int)($argv[++$i] ?? 3));
    }
}
if ($ephpm === null || !is_executable($ephpm)) {
    fwrite(STDERR, "usage: php bench/cluster_bench.php --ephpm PATH [--rounds N]\n");
    exit(2);
}
$docroot = __DIR__ . '/cluster-docroot';

$procs = [];
register_shutdown_function(function () use (&$procs) {
    foreach ($procs as $p) {
        proc_terminate($p['proc'], 15);
        proc_close($p['proc']);
    }
});

/** Starts ephpm; returns its addresses once printed. */
function start(string $bin, array $args, array &$procs): array
{
    $cmd = array_merge([$bin, '--listen', '127.0.0.1:0', '--resp', '127.0.0.1:0',
                        '--log-level', 'warn'], $args);
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

// ---- start ------------------------------------------------------------------
$single = start($ephpm, ['--docroot', $docroot], $procs);
$n1 = start($ephpm, ['--docroot', $docroot, '--cluster-node-id', 'n1'], $procs);
$n2 = start($ephpm, ['--docroot', $docroot, '--cluster-node-id', 'n2', '--cluster-join', $n1['cluster']], $procs);
$n3 = start($ephpm, ['--docroot', $docroot, '--cluster-node-id', 'n3', '--cluster-join', $n1['cluster']], $procs);
$deadline = microtime(true) + 15;
while (microtime(true) < $deadline &&
       (info_alive($n1['resp']) !== 3 || info_alive($n2['resp']) !== 3 || info_alive($n3['resp']) !== 3)) {
    usleep(50000);
}
printf("ephpm %s, %d rounds, %d cores\n\n", $ephpm, $rounds, (int)trim((string)shell_exec('nproc')));

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

// ---- 3. lock cycles through PHP ---------------------------------------------------------
$cycles = ['single node' => [], 'local owner' => [], 'remote owner' => []];
for ($r = 0; $r < $rounds; $r++) {
    $cycles['single node'][] = http_json($single['http'], '/lock_cycle.php?kind=any&n=20000')['per_second'] ?? 0;
    $cycles['local owner'][] = http_json($n1['http'], '/lock_cycle.php?kind=local&n=20000')['per_second'] ?? 0;
    $cycles['remote owner'][] = http_json($n1['http'], '/lock_cycle.php?kind=remote&n=5000')['per_second'] ?? 0;
}
echo "\nLock acquire+release cycles/s through PHP (ephpm_kv_setnx + ephpm_kv_del_if_eq), medians\n";
$base = median($cycles['single node']);
foreach ($cycles as $name => $v) {
    printf("  %-14s %10.0f  (%.2fx single)\n", $name, median($v), $base > 0 ? median($v) / $base : 0);
}
