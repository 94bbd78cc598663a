<?php
/*
 * One session cycle -- session_start(), $_SESSION counter + 1,
 * session_write_close() -- through three save handlers, in one PHP process:
 *
 *   ephpm   session.save_handler=ephpm (the extension's native handler, with
 *           its default ephpm.session_locking=1: set_nx lock with a CSPRNG
 *           token, fenced set_if_eq write, del_if_eq release)
 *   files   PHP's own handler, session.save_path a fresh directory (tmpfs
 *           when /dev/shm exists), flock() locking
 *   redis   phpredis's handler, redis.session.locking_enabled=1,
 *           session.save_path=tcp://127.0.0.1:PORT (a new connection per
 *           session_start, which is phpredis's default)
 *   redis-persistent  the same with ?persistent=1 (connection kept open)
 *
 *   php -d extension=/path/to/ephpm.so bench/php_session.php \
 *       [--cycles=20000] [--redis-cycles=2000] [--repeats=5] [--redis-port=N] [--dir=PATH]
 *
 * CLI settings for every handler: session.use_cookies=0,
 * session.cache_limiter='' (no headers), session.use_strict_mode=0, a fixed
 * session id per handler, session.gc_probability=0 (no GC inside the timed
 * cycles), session.lazy_write=1 (the data changes every cycle, so every
 * cycle writes).  The handler is switched with ini_set() between runs; this
 * script writes only to the STDOUT stream (never PHP's output layer), so PHP
 * never considers headers sent and allows the switch.
 *
 * Figures: µs per cycle, median of --repeats runs, runs interleaved across
 * handlers.  A benchmark, not a test: no thresholds.
 */

namespace EphpmBench;

function options(array $argv): array
{
    $o = [
        'cycles' => 20000,
        'redis-cycles' => 2000,
        'repeats' => 5,
        'redis-port' => (int) (getenv('EPHPM_BENCH_REDIS_PORT') ?: 0),
        'redis-host' => '127.0.0.1',
        'dir' => '',
    ];
    foreach (array_slice($argv, 1) as $arg) {
        if (!preg_match('/^--([a-z-]+)=(.*)$/', $arg, $m) || !array_key_exists($m[1], $o)) {
            fwrite(STDERR, "unknown argument: $arg\n");
            exit(2);
        }
        $o[$m[1]] = is_int($o[$m[1]]) ? (int) $m[2] : $m[2];
    }
    return $o;
}

function say(string $s): void
{
    fwrite(STDOUT, $s . "\n");
}

function fail(string $s): void
{
    fwrite(STDERR, "php_session.php: $s\n");
    exit(1);
}

function configure(array $h): void
{
    foreach (['session.save_handler' => $h['handler'], 'session.save_path' => $h['path']] as $k => $v) {
        if (ini_set($k, $v) === false) {
            fail("ini_set($k, $v) refused");
        }
    }
}

/** $n cycles on session $sid; returns elapsed ns. */
function cycles(string $sid, int $n): int
{
    $t = hrtime(true);
    for ($i = 0; $i < $n; ++$i) {
        session_id($sid);
        session_start();
        $_SESSION['n'] = ($_SESSION['n'] ?? 0) + 1;
        session_write_close();
    }
    return hrtime(true) - $t;
}

/** The counter as stored, read back with one more (untimed) cycle. */
function stored_counter(string $sid): int
{
    session_id($sid);
    session_start();
    $n = $_SESSION['n'] ?? 0;
    session_abort();
    return $n;
}

/** User + system CPU time of this process so far, in ns (µs resolution). */
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

function main(array $argv): void
{
    $o = options($argv);
    foreach ([
        'session.use_cookies' => '0',
        'session.use_only_cookies' => '0',
        'session.cache_limiter' => '',
        'session.use_strict_mode' => '0',
        'session.gc_probability' => '0',
        'session.lazy_write' => '1',
        'session.serialize_handler' => 'php',
    ] as $k => $v) {
        if (ini_set($k, $v) === false) {
            fail("ini_set($k) refused");
        }
    }

    $handlers = [];
    $notes = [];

    if (\extension_loaded('ephpm')) {
        $handlers['ephpm'] = ['handler' => 'ephpm', 'path' => '', 'redis' => false];
    } else {
        $notes[] = 'ephpm: extension not loaded';
    }

    $dir = $o['dir'];
    $made_dir = false;
    if ($dir === '') {
        $base = is_dir('/dev/shm') && is_writable('/dev/shm') ? '/dev/shm' : sys_get_temp_dir();
        $dir = $base . '/ephpm-session-bench-' . getmypid();
        if (!mkdir($dir, 0700)) {
            fail("cannot create $dir");
        }
        $made_dir = true;
    }
    $handlers['files'] = ['handler' => 'files', 'path' => $dir, 'redis' => false];

    if (!\extension_loaded('redis')) {
        $notes[] = 'redis: phpredis not loaded';
    } elseif ($o['redis-port'] <= 0) {
        $notes[] = 'redis: no --redis-port given';
    } elseif (ini_get('redis.session.locking_enabled') !== '1') {
        $notes[] = 'redis: needs -d redis.session.locking_enabled=1 on the command line';
    } else {
        $url = sprintf('tcp://%s:%d', $o['redis-host'], $o['redis-port']);
        $handlers['redis'] = ['handler' => 'redis', 'path' => $url, 'redis' => true];
        $handlers['redis-persistent'] = ['handler' => 'redis', 'path' => $url . '?persistent=1',
            'redis' => true];
    }

    // Distinct fixed ids, so handlers never see each other's data.
    $sid = [];
    foreach ($handlers as $name => $h) {
        $sid[$name] = 'bench' . str_replace('-', '', $name) . '0123456789abcdefghijk';
    }

    // Sanity and warm-up: 100 untimed cycles each, then the counter must say 100.
    foreach ($handlers as $name => $h) {
        configure($h);
        cycles($sid[$name], 100);
        $got = stored_counter($sid[$name]);
        if ($got !== 100) {
            fail("$name: counter is $got after 100 cycles, expected 100");
        }
    }

    $done = array_fill_keys(array_keys($handlers), 100);
    $samples = [];
    $cpu = [];
    for ($rep = 0; $rep < $o['repeats']; ++$rep) {
        foreach ($handlers as $name => $h) {
            configure($h);
            $n = $h['redis'] ? $o['redis-cycles'] : $o['cycles'];
            $c0 = cpu_ns();
            $samples[$name][] = cycles($sid[$name], $n) / $n / 1000.0;  // µs per cycle
            $cpu[$name][] = (cpu_ns() - $c0) / $n / 1000.0;
            $done[$name] += $n;
        }
    }
    foreach ($handlers as $name => $h) {
        configure($h);
        $got = stored_counter($sid[$name]);
        if ($got !== $done[$name]) {
            fail("$name: counter is $got, expected {$done[$name]}");
        }
    }

    if ($made_dir) {
        array_map('unlink', glob($dir . '/sess_*') ?: []);
        rmdir($dir);
    }

    // ---- report ----------------------------------------------------------
    say(sprintf('PHP %s %s; session.serialize_handler=php, lazy_write=1, gc_probability=0, '
        . 'use_strict_mode=0', PHP_VERSION, PHP_ZTS ? 'ZTS' : 'NTS'));
    say(sprintf('cycles per run: %d (redis: %d), median of %d runs; files in %s (%s)',
        $o['cycles'], $o['redis-cycles'], $o['repeats'], $dir,
        str_starts_with($dir, '/dev/shm') ? 'tmpfs' : 'see df'));
    if (isset($handlers['ephpm'])) {
        say(sprintf('ephpm: session_locking=%s, lock_ttl_ms=%s', ini_get('ephpm.session_locking'),
            ini_get('ephpm.session_lock_ttl_ms')));
    }
    if (isset($handlers['redis'])) {
        say(sprintf('phpredis %s: redis.session.locking_enabled=%s, lock_expire=%s; server %s:%d',
            phpversion('redis'), ini_get('redis.session.locking_enabled'),
            ini_get('redis.session.lock_expire'), $o['redis-host'], $o['redis-port']));
    }
    foreach ($notes as $n) {
        say("skipped: $n");
    }
    say('');
    say('| handler          | µs/cycle (wall) | wall min..max   | µs/cycle (CPU) | x files (wall / CPU) |');
    say('|------------------|----------------:|-----------------|---------------:|---------------------:|');
    $med = array_map(fn($xs) => median($xs), $samples);
    $cmed = array_map(fn($xs) => median($xs), $cpu);
    foreach ($samples as $name => $xs) {
        $isRedis = $handlers[$name]['redis'];
        say(sprintf('| %-16s | %15.2f | %6.2f..%-7.2f | %14s | %20s |', $name, $med[$name],
            min($xs), max($xs), $isRedis ? '-' : sprintf('%.2f', $cmed[$name]),
            $isRedis ? sprintf('%.2f / -', $med[$name] / $med['files'])
                : sprintf('%.2f / %.2f', $med[$name] / $med['files'], $cmed[$name] / $cmed['files'])));
    }
    say('');
    say('wall = hrtime around the cycles; CPU = getrusage user+system of this process (not');
    say('meaningful for redis, where the process mostly waits for the server).');
    if (isset($med['ephpm'])) {
        $rw = $med['ephpm'] / $med['files'];
        $rc = $cmed['ephpm'] / $cmed['files'];
        foreach (['redis', 'redis-persistent'] as $r) {
            if (isset($med[$r])) {
                say(sprintf('ephpm / %s = %.3f (wall)', $r, $med['ephpm'] / $med[$r]));
            }
        }
        say(sprintf('ephpm / files = %.2f wall, %.2f CPU (goal <= 0.50: %s)', $rw, $rc,
            max($rw, $rc) <= 0.5 ? 'met' : (min($rw, $rc) <= 0.5 ? 'met by one measure only' : 'not met')));
    }
}

main($argv);
