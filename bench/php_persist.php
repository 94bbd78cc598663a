<?php
/*
 * ephpm_kv_set with the store's persistence as the INI settings make it
 * (issue 14), against the call floor, from one PHP process.
 *
 *   php -d extension=/path/to/ephpm.so [-d ephpm.persistence=log -d ephpm.data_dir=DIR
 *       -d ephpm.fsync=everysec|always|no] bench/php_persist.php [--keys=10000]
 *       [--rounds=20] [--repeats=5]
 *
 * (bench/persistence.sh runs it once per mode, in interleaved rounds, and
 * turns the lines into a table.)
 *
 * One operation: ephpm_kv_set of an existing key with a 64-byte value, over
 * --keys keys, --rounds passes per timed run; the floor is the same loop
 * with strlen() in place of the call, as in bench/php_kv.php (the file is in
 * a namespace so that strlen is a real call).  Floor and set runs are
 * interleaved, --repeats of each, medians printed:
 *
 *   RESULT mode=<persistence/fsync> floor_ns=<per op> set_ns=<per op> set_cpu_ns=<per op>
 *
 * then one line per persistence figure of ephpm_kv_info() (the group-commit
 * batches with fsync=always).  A benchmark, not a test: it never fails on
 * its figures.
 */

namespace EphpmBench;

const VALUE_SIZE = 64;

function options(array $argv): array
{
    $o = ['keys' => 10000, 'rounds' => 20, 'repeats' => 5];
    foreach (array_slice($argv, 1) as $arg) {
        if (!preg_match('/^--([a-z-]+)=(\d+)$/', $arg, $m) || !array_key_exists($m[1], $o)) {
            fwrite(STDERR, "unknown argument: $arg\n");
            exit(2);
        }
        $o[$m[1]] = (int) $m[2];
    }
    return $o;
}

function floor_set(array $keys, string $v, int $rounds): int
{
    $t = hrtime(true);
    for ($r = 0; $r < $rounds; ++$r) {
        foreach ($keys as $k) {
            $x = strlen($k);
        }
    }
    return hrtime(true) - $t;
}

function ephpm_set(array $keys, string $v, int $rounds): int
{
    $t = hrtime(true);
    for ($r = 0; $r < $rounds; ++$r) {
        foreach ($keys as $k) {
            $x = ephpm_kv_set($k, $v);
        }
    }
    return hrtime(true) - $t;
}

/** User + system CPU time of this process so far, in ns. */
function cpu_ns(): int
{
    $r = getrusage();
    return ($r['ru_utime.tv_sec'] + $r['ru_stime.tv_sec']) * 1000000000
        + ($r['ru_utime.tv_usec'] + $r['ru_stime.tv_usec']) * 1000;
}

function median(array $xs): float
{
    sort($xs);
    $n = count($xs);
    return $n % 2 ? (float) $xs[intdiv($n, 2)] : ($xs[$n / 2 - 1] + $xs[$n / 2]) / 2.0;
}

/** The persistence figures of ephpm_kv_info(), flattened to name => value. */
function persistence_figures(): array
{
    $out = [];
    $walk = function ($v, string $path) use (&$walk, &$out) {
        if (is_array($v)) {
            foreach ($v as $k => $x) {
                $walk($x, $path === '' ? (string) $k : "$path.$k");
            }
        } elseif (preg_match('/persist|aof|fsync|commit|rewrite|log_|load/i', $path)) {
            $out[$path] = is_bool($v) ? ($v ? 'true' : 'false') : (string) $v;
        }
    };
    $walk(ephpm_kv_info(), '');
    return $out;
}

function main(array $argv): void
{
    $o = options($argv);
    if (!\function_exists('ephpm_kv_set')) {
        fwrite(STDERR, "the ephpm extension is not loaded\n");
        exit(2);
    }
    $mode = ini_get('ephpm.persistence') ?: 'off';
    if ($mode !== 'off') {
        $mode .= '/' . ini_get('ephpm.fsync');
    }
    $keys = [];
    for ($i = 0; $i < $o['keys']; ++$i) {
        $keys[] = sprintf('bench:%06d', $i);
    }
    $value = str_repeat('v', VALUE_SIZE - 8) . substr(bin2hex(random_bytes(4)), 0, 8);
    foreach ($keys as $k) {
        if (ephpm_kv_set($k, $value) !== true) {
            fwrite(STDERR, "ephpm_kv_set($k) failed\n");
            exit(1);
        }
    }
    // Warm-up, untimed.
    floor_set($keys, $value, 1);
    ephpm_set($keys, $value, 1);

    $n = $o['rounds'] * $o['keys'];
    $floor = $set = $set_cpu = [];
    for ($r = 0; $r < $o['repeats']; ++$r) {
        $floor[] = floor_set($keys, $value, $o['rounds']) / $n;
        $c = cpu_ns();
        $set[] = ephpm_set($keys, $value, $o['rounds']) / $n;
        $set_cpu[] = (cpu_ns() - $c) / $n;
    }
    printf("RESULT mode=%s floor_ns=%.1f set_ns=%.1f set_cpu_ns=%.1f ops=%d\n", $mode,
        median($floor), median($set), median($set_cpu), $n * $o['repeats']);
    foreach (persistence_figures() as $k => $v) {
        echo "INFO $k=$v\n";
    }
}

main($argv);
