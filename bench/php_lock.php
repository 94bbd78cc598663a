<?php
/*
 * Ephpm\Lock against the raw lock cycle it wraps, from one PHP process; and,
 * inside the ephpm host, the handover from a releasing holder to a blocked
 * waiter.
 *
 *   php -d extension=/path/to/ephpm.so bench/php_lock.php [--cycles=20000] [--repeats=7]
 *
 * Cycle (CLI, the extension's standalone store):
 *   raw    $t = bin2hex(random_bytes(16)); ephpm_kv_setnx($k, $t, 30);
 *          ephpm_kv_del_if_eq($k, $t)        the hand-made token lock
 *   lock   Ephpm\Lock::acquire($k, 30.0)->release()
 *          (a fenced, ephemeral grant, the object, its release by token)
 *   floor  the same loop with strlen() in place of each store call and of
 *          the object's construction
 * over 1000 lock names.  Each figure is the median of --repeats runs; the
 * runs are interleaved (floor, raw, lock, floor, ...).  A benchmark, not a
 * test: it prints figures and never fails on them.
 *
 * Handover (run by bench/lock-handover.sh through the host, see there): this
 * file, requested with ?handover=N, takes the lock "bench:handover" N times
 * with Ephpm\Lock::block, holds it 2 ms, notes the release time and
 * releases; each grant that follows another worker's release reports the
 * time from that release to the grant (hrtime, one process).
 */

namespace EphpmBench;

use Ephpm\Lock;

if (PHP_SAPI !== 'cli' && isset($_GET['handover'])) {
    handover((int) $_GET['handover']);
    return;
}

function handover(int $n): void
{
    $me = getmypid() . ':' . \spl_object_id(new \stdClass()) . ':' . \bin2hex(\random_bytes(4));
    $samples = [];
    for ($i = 0; $i < $n; $i++) {
        $lock = Lock::block('bench:handover', 30.0, 30.0);
        $got = \hrtime(true);
        if ($lock === null) {
            echo "timeout\n";
            return;
        }
        $last = \ephpm_kv_get('bench:handover:released');
        if (\is_string($last)) {
            [$who, $at] = \explode('|', $last);
            if ($who !== $me) $samples[] = $got - (int) $at;
        }
        \usleep(2000);
        \ephpm_kv_set('bench:handover:released', $me . '|' . \hrtime(true));
        $lock->release();
    }
    echo \implode("\n", $samples), "\n";
}

function options(array $argv): array
{
    $o = ['cycles' => 20000, 'repeats' => 7];
    foreach (\array_slice($argv, 1) as $a) {
        if (!\preg_match('/^--(cycles|repeats)=(\d+)$/', $a, $m)) {
            \fwrite(STDERR, "usage: php_lock.php [--cycles=N] [--repeats=N]\n");
            exit(2);
        }
        $o[$m[1]] = (int) $m[2];
    }
    return $o;
}

function floor_cycle(array $names): int
{
    $t0 = \hrtime(true);
    foreach ($names as $k) {
        $t = \bin2hex(\random_bytes(16));
        if (\strlen($k) > 0) {
            \strlen($t);
        }
    }
    return \hrtime(true) - $t0;
}

function raw_cycle(array $names): int
{
    $t0 = \hrtime(true);
    foreach ($names as $k) {
        $t = \bin2hex(\random_bytes(16));
        if (\ephpm_kv_setnx($k, $t, 30)) {
            \ephpm_kv_del_if_eq($k, $t);
        }
    }
    return \hrtime(true) - $t0;
}

function lock_cycle(array $names): int
{
    $t0 = \hrtime(true);
    foreach ($names as $k) {
        $l = Lock::acquire($k, 30.0);
        if ($l !== null) {
            $l->release();
        }
    }
    return \hrtime(true) - $t0;
}

function median(array $v): float
{
    \sort($v);
    $n = \count($v);
    return $n % 2 ? $v[intdiv($n, 2)] : ($v[$n / 2 - 1] + $v[$n / 2]) / 2;
}

$o = options($argv);
$names = [];
for ($i = 0; $i < $o['cycles']; $i++) $names[] = 'lock:' . ($i % 1000);
// Warm up: allocate the keys' table, load the code paths.
raw_cycle($names);
lock_cycle($names);
$runs = ['floor' => [], 'raw' => [], 'lock' => []];
for ($r = 0; $r < $o['repeats']; $r++) {
    $runs['floor'][] = floor_cycle($names) / $o['cycles'];
    $runs['raw'][] = raw_cycle($names) / $o['cycles'];
    $runs['lock'][] = lock_cycle($names) / $o['cycles'];
}
$m = \array_map(__NAMESPACE__ . '\median', $runs);
\printf("%-6s %10s %14s\n", 'cycle', 'ns/cycle', 'above floor');
foreach ($m as $k => $ns) {
    \printf("%-6s %10.0f %14.0f\n", $k, $ns, $ns - $m['floor']);
}
\printf("lock/raw: %.2fx (whole cycle), %.2fx (above floor)\n",
    $m['lock'] / $m['raw'], ($m['lock'] - $m['floor']) / ($m['raw'] - $m['floor']));
