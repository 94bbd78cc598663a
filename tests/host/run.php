<?php
// End-to-end tests of the ephpm host program: starts `ephpm` on free
// loopback ports, talks raw HTTP/1.1 (so malformed requests go out byte for
// byte) and RESP to it, and checks what comes back.
//
//   php tests/host/run.php --ephpm BUILD/sapi/ephpm --examples examples/ [GROUP ...]
//
// GROUPs: lock basics session resp leaks malformed timeout shutdown workers cluster cluster_strict persistence
// compat fds (default: all).  Every group starts its own server(s) and ends with SIGTERM, which
// must give exit code 0.  Prints one line per check; exits 1 if any failed.
// lib/ holds the checks, the server, the clients and the fixtures;
// groups/GROUP.php holds group_GROUP().

declare(strict_types=1);

error_reporting(E_ALL);
set_error_handler(function (int $no, string $msg, string $file, int $line): bool {
    if (!(error_reporting() & $no)) {
        return false;  // silenced with @
    }
    throw new ErrorException($msg, 0, $no, $file, $line);
});

require_once __DIR__ . '/lib/checks.php';
require_once __DIR__ . '/lib/server.php';
require_once __DIR__ . '/lib/clients.php';
require_once __DIR__ . '/lib/fixtures.php';
require_once __DIR__ . '/groups/lock.php';
require_once __DIR__ . '/groups/basics.php';
require_once __DIR__ . '/groups/session.php';
require_once __DIR__ . '/groups/resp.php';
require_once __DIR__ . '/groups/cluster.php';
require_once __DIR__ . '/groups/cluster_strict.php';
require_once __DIR__ . '/groups/leaks.php';
require_once __DIR__ . '/groups/malformed.php';
require_once __DIR__ . '/groups/timeout.php';
require_once __DIR__ . '/groups/shutdown.php';
require_once __DIR__ . '/groups/workers.php';
require_once __DIR__ . '/groups/persistence.php';
require_once __DIR__ . '/groups/compat.php';
require_once __DIR__ . '/groups/fds.php';

// ---- main -------------------------------------------------------------------------------

function main(array $argv): int
{
    $groups = ['lock', 'basics', 'session', 'resp', 'leaks', 'malformed', 'timeout', 'shutdown', 'workers',
               'cluster', 'cluster_strict', 'persistence', 'compat', 'fds'];
    $env = ['ephpm' => null, 'examples' => null];
    $only = [];
    for ($i = 1; $i < count($argv); $i++) {
        if ($argv[$i] === '--ephpm' || $argv[$i] === '--examples') {
            $env[substr($argv[$i], 2)] = $argv[++$i] ?? null;
        } elseif ($argv[$i] === '--workers') {
            Server::$extra = ['--workers', (string)(int)($argv[++$i] ?? '1')];
        } elseif (in_array($argv[$i], $groups, true)) {
            $only[] = $argv[$i];
        } else {
            fwrite(STDERR, "usage: run.php --ephpm BIN --examples DIR [--workers N] [" . implode('|', $groups) . " ...]\n");
            return 2;
        }
    }
    if (!$env['ephpm'] || !is_executable($env['ephpm']) || !$env['examples'] || !is_dir($env['examples'])) {
        fwrite(STDERR, "run.php: --ephpm must name the ephpm binary and --examples the examples directory\n");
        return 2;
    }
    $env['examples'] = realpath($env['examples']);
    // The ephpm under test embeds the PHP running this script (the build
    // configures both from one php-config).
    $env['zts'] = PHP_ZTS === 1;
    [$base, $env['docroot']] = make_docroot(__DIR__ . '/docroot');
    register_shutdown_function(function () use ($base) {
        Server::killAll();
        remove_tree($base);
    });

    $t0 = microtime(true);
    foreach ($only ?: $groups as $g) {
        Checks::$group = $g;
        $tg = microtime(true);
        try {
            ('group_' . $g)($env);
        } catch (Throwable $e) {
            check('no exception', false, get_class($e) . ': ' . $e->getMessage() . "\n" . $e->getTraceAsString());
            Server::killAll();
        }
        printf("--    %s: %.1f s\n", $g, microtime(true) - $tg);
    }
    printf("\n%d checks passed, %d failed (%.1f s)\n", Checks::$passed, count(Checks::$failed), microtime(true) - $t0);
    foreach (Checks::$failed as $f) {
        echo "  FAILED: $f\n";
    }
    return Checks::$failed ? 1 : 0;
}

exit(main($argv));
