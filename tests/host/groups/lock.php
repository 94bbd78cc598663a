<?php
// The lock group: examples/lock.php's scenario through the host.

declare(strict_types=1);

/** The design note's lock scenario through examples/lock.php, line by line. */
function group_lock(array $env): void
{
    $srv = Server::start($env['ephpm'], ['--docroot', $env['examples']]);
    $expected = [
        'del' => [
            "A acquires (1s TTL):     true",
            "B acquires (30s TTL):    true",
            "A releases with del:     1",
            "C tries to acquire:      true",
            "lock holder now:         'c'",
        ],
        'del_if_eq' => [
            "A acquires (1s TTL):     true",
            "B acquires (30s TTL):    true",
            "A releases with del_if_eq: false",
            "C tries to acquire:      false",
            "lock holder now:         'B'",
        ],
    ];
    foreach ($expected as $release => $lines) {
        $r = http($srv, 'GET', "/lock.php?release=$release");
        check_eq("lock.php?release=$release: status", 200, $r['status']);
        $got = explode("\n", rtrim($r['body'], "\n"));
        check_eq("lock.php?release=$release: line count", count($lines), count($got));
        foreach ($lines as $i => $line) {
            check_eq("lock.php?release=$release: line " . ($i + 1), $line, $got[$i] ?? null);
        }
    }
    $r = http($srv, 'GET', '/lock.php?release=bogus');
    check_eq('lock.php?release=bogus: 400', 400, $r['status']);
    // The example session counter counts per cookie.
    $r1 = http($srv, 'GET', '/session.php');
    preg_match('/PHPSESSID=([^;]+)/', (string)header_of($r1, 'Set-Cookie'), $m);
    check('session.php sets a PHPSESSID cookie', isset($m[1]), show($r1['headers']));
    $r2 = http($srv, 'GET', '/session.php', ['Cookie' => 'PHPSESSID=' . ($m[1] ?? 'x')]);
    check_contains('session.php: first request counts 1', "count: 1\n", $r1['body']);
    check_contains('session.php: same cookie counts 2', "count: 2\n", $r2['body']);
    $srv->stop();
}
