<?php
// Lock acquire + release cycles through PHP, for keys this node owns
// (kind=local), keys another node owns (kind=remote), or any (kind=any, the
// single-node and the strict-mode runs: in strict mode etcd decides every
// lock, whoever owns the key).  A key's kind is found by whether a probe
// cycle on it was forwarded (the cluster's routed_calls counter moves).
// Each cycle takes a fresh random 32-hex token and is timed on its own
// (hrtime; its two readings add about 0.1 µs to a cycle).
//   GET /lock_cycle.php?kind=local&n=20000
header('Content-Type: application/json');
$n = max(1, (int)($_GET['n'] ?? 10000));
$kind = $_GET['kind'] ?? 'any';
$routed = function (): int {
    $c = ephpm_kv_info()['cluster'];
    return $c === null ? 0 : $c['routed_calls'];
};
$keys = [];
for ($i = 0; count($keys) < 64 && $i < 100000; $i++) {
    $k = "bench:lock:$i";
    if ($kind !== 'any') {
        $before = $routed();
        ephpm_kv_setnx($k, 'probe', 30000);
        ephpm_kv_del_if_eq($k, 'probe');
        if (($routed() > $before) !== ($kind === 'remote')) {
            continue;
        }
    }
    $keys[] = $k;
}
$failed = 0;
$lat = [];
$t0 = hrtime(true);
for ($i = 0; $i < $n; $i++) {
    $k = $keys[$i & 63];
    $c0 = hrtime(true);
    $token = bin2hex(random_bytes(16));
    if (!@ephpm_kv_setnx($k, $token, 30000)) {
        $failed++;
        $lat[] = hrtime(true) - $c0;
        continue;
    }
    @ephpm_kv_del_if_eq($k, $token);
    $lat[] = hrtime(true) - $c0;
}
$seconds = (hrtime(true) - $t0) / 1e9;
sort($lat);
$at = fn (float $p): float => $lat[min($n - 1, (int)floor($p * $n))] / 1000;
echo json_encode(['kind' => $kind, 'cycles' => $n, 'failed' => $failed, 'seconds' => $seconds,
                  'per_second' => $n / $seconds, 'p50_us' => $at(0.5), 'p99_us' => $at(0.99)]);
