<?php
/*
 * The framework adapters in php/ against the frameworks' own APCu and Redis
 * stores, from one PHP process (bench/run-php-bench.sh runs it):
 *
 *   php -d extension=/path/to/ephpm.so -d apc.enable_cli=1 bench/php_adapters.php \
 *       --redis-port=N [--keys=2000] [--rounds=20] [--redis-rounds=1] [--repeats=5]
 *
 * Laravel 8 (Debian's illuminate/cache): Cache::get / Cache::put, i.e.
 * Illuminate\Cache\Repository over
 *   ephpm  Ephpm\Laravel\EphpmStore
 *   apcu   Illuminate\Cache\ApcStore
 *   redis  Illuminate\Cache\RedisStore over phpredis (Illuminate\Redis), TCP
 *          to a private redis-server on 127.0.0.1
 * Symfony 5.4 (Debian's symfony/cache): $pool->getItem()->get() and
 * $pool->save($pool->getItem()->set()) over
 *   ephpm  Ephpm\Symfony\Cache\EphpmAdapter
 *   apcu   Symfony\Component\Cache\Adapter\ApcuAdapter
 *   redis  Symfony\Component\Cache\Adapter\RedisAdapter over phpredis
 *
 * Same keys, the same 64-byte string value, every get a hit.  Each figure is
 * the median of --repeats timed runs, interleaved (ephpm, apcu, redis,
 * ephpm, ...) so that drift hits every backend alike; ns per operation.  A
 * benchmark, not a test: it prints figures and never fails on them.
 */

namespace EphpmBench;

use Illuminate\Cache\ApcStore;
use Illuminate\Cache\ApcWrapper;
use Illuminate\Cache\RedisStore;
use Illuminate\Cache\Repository;
use Illuminate\Redis\RedisManager;
use Symfony\Component\Cache\Adapter\AdapterInterface;
use Symfony\Component\Cache\Adapter\ApcuAdapter;
use Symfony\Component\Cache\Adapter\RedisAdapter;

$root = \dirname(__DIR__);
require $root . '/php/tests/bootstrap.php';
require_once '/usr/share/php/Illuminate/Redis/autoload.php';

function options(array $argv): array
{
    $o = ['keys' => 2000, 'rounds' => 20, 'redis-rounds' => 1, 'repeats' => 5, 'redis-port' => 0];
    foreach (\array_slice($argv, 1) as $arg) {
        if (!\preg_match('/^--([a-z-]+)=(\d+)$/', $arg, $m) || !\array_key_exists($m[1], $o)) {
            \fwrite(\STDERR, "unknown option $arg\n");
            exit(2);
        }
        $o[$m[1]] = (int) $m[2];
    }
    if ($o['redis-port'] <= 0) {
        \fwrite(\STDERR, "--redis-port=N is required (a redis-server to compare with)\n");
        exit(2);
    }
    return $o;
}

function laravel_get(Repository $c, array $keys, int $rounds): int
{
    $t = \hrtime(true);
    for ($r = 0; $r < $rounds; ++$r) {
        foreach ($keys as $k) {
            if ($c->get($k) === null) {
                throw new \RuntimeException("laravel get missed $k");
            }
        }
    }
    return \hrtime(true) - $t;
}

function laravel_put(Repository $c, array $keys, string $v, int $rounds): int
{
    $t = \hrtime(true);
    for ($r = 0; $r < $rounds; ++$r) {
        foreach ($keys as $k) {
            $c->put($k, $v, 3600);
        }
    }
    return \hrtime(true) - $t;
}

function symfony_get(AdapterInterface $p, array $keys, int $rounds): int
{
    $t = \hrtime(true);
    for ($r = 0; $r < $rounds; ++$r) {
        foreach ($keys as $k) {
            if ($p->getItem($k)->get() === null) {
                throw new \RuntimeException("symfony get missed $k");
            }
        }
    }
    return \hrtime(true) - $t;
}

function symfony_put(AdapterInterface $p, array $keys, string $v, int $rounds): int
{
    $t = \hrtime(true);
    for ($r = 0; $r < $rounds; ++$r) {
        foreach ($keys as $k) {
            $p->save($p->getItem($k)->set($v)->expiresAfter(3600));
        }
    }
    return \hrtime(true) - $t;
}

function median(array $xs): float
{
    \sort($xs);
    $n = \count($xs);
    return $n % 2 ? $xs[intdiv($n, 2)] : ($xs[$n / 2 - 1] + $xs[$n / 2]) / 2;
}

$o = options($argv);
$keys = [];
for ($i = 0; $i < $o['keys']; ++$i) {
    $keys[] = 'bench.key.' . $i;
}
$value = \str_repeat('v', 64);

$phpredis = new RedisManager(null, 'phpredis', ['default' => [
    'host' => '127.0.0.1', 'port' => $o['redis-port'], 'database' => 0]]);
$laravel = [
    'ephpm' => new Repository(new \Ephpm\Laravel\EphpmStore('bench:')),
    'apcu' => new Repository(new ApcStore(new ApcWrapper(), 'bench:')),
    'redis' => new Repository(new RedisStore($phpredis, 'bench:')),
];
$redisConn = new \Redis();
$redisConn->connect('127.0.0.1', $o['redis-port']);
$symfony = [
    'ephpm' => new \Ephpm\Symfony\Cache\EphpmAdapter('bench'),
    'apcu' => new ApcuAdapter('bench'),
    'redis' => new RedisAdapter($redisConn, 'bench'),
];

$rounds = static fn (string $b): int => $b === 'redis' ? $o['redis-rounds'] : $o['rounds'];
$results = [];
foreach (['laravel' => $laravel, 'symfony' => $symfony] as $fw => $backends) {
    foreach ($backends as $b => $c) {   // fill: every get below is a hit
        $fw === 'laravel' ? laravel_put($c, $keys, $value, 1) : symfony_put($c, $keys, $value, 1);
    }
    foreach (['get', 'put'] as $op) {
        $fn = __NAMESPACE__ . "\\{$fw}_{$op}";
        $runs = [];
        for ($rep = 0; $rep < $o['repeats']; ++$rep) {
            foreach ($backends as $b => $c) {
                $ns = $op === 'get' ? $fn($c, $keys, $rounds($b)) : $fn($c, $keys, $value, $rounds($b));
                $runs[$b][] = $ns / ($o['keys'] * $rounds($b));
            }
        }
        foreach ($runs as $b => $r) {
            $results[$fw][$op][$b] = median($r);
        }
    }
}

\printf("%-8s %-4s %10s %10s %10s %12s %12s\n", 'adapter', 'op', 'ephpm ns', 'apcu ns', 'redis ns',
    'ephpm/apcu', 'redis/ephpm');
foreach ($results as $fw => $ops) {
    foreach ($ops as $op => $r) {
        \printf("%-8s %-4s %10.0f %10.0f %10.0f %11.2fx %11.1fx\n", $fw, $op, $r['ephpm'], $r['apcu'],
            $r['redis'], $r['ephpm'] / $r['apcu'], $r['redis'] / $r['ephpm']);
    }
}
\printf("(%d keys, 64-byte values, median of %d interleaved runs; in-process backends %d passes "
    . "per run, redis %d; ephpm/apcu below 2 and redis/ephpm above 20 are the goals)\n",
    $o['keys'], $o['repeats'], $o['rounds'], $o['redis-rounds']);
