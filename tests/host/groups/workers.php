<?php
// The workers group (a thread-safe PHP only): what only parallel PHP workers can do.

declare(strict_types=1);

function group_workers(array $env): void
{
    // Request 1 waits in ephpm_kv_wait() for a gate that request 2 opens:
    // with one worker, or with requests run one after another, request 2
    // never runs while 1 waits, and request 1 times out.
    $srv = Server::start($env['ephpm'], ['--docroot', $env['docroot'], '--workers', '4']);
    $id = bin2hex(random_bytes(4));
    $waiter = new Conn($srv->port);
    $waiter->send(build_request('GET', "/gate_wait.php?id=$id"));
    usleep(200000);  // request 1 is waiting by now
    $opener = http($srv, 'GET', "/gate_open.php?id=$id");
    check_eq('request 2 ran while request 1 waited', 'opened', $opener['body']);
    $w = $waiter->readResponse();
    $waiter->close();
    check_eq('request 1 woke when request 2 opened the gate', 'opened by request 2', $w['body'] ?? null);

    // 20 concurrent requests with one session cookie, each reading a counter,
    // sleeping 50 ms, writing it back + 1: the session lock makes them take
    // turns, and the count is exact.
    $first = http($srv, 'GET', '/sess_slow_incr.php');
    check_eq('the first request counts 1', '1', $first['body']);
    preg_match('/PHPSESSID=([^;]+)/', (string)header_of($first, 'Set-Cookie'), $m);
    $cookie = 'PHPSESSID=' . ($m[1] ?? '');
    $responses = concurrently($srv, array_fill(0, 20,
        build_request('GET', '/sess_slow_incr.php', ['Cookie' => $cookie])));
    $bodies = array_map(fn($r) => (int)($r['body'] ?? 0), $responses);
    sort($bodies);
    check_eq('20 concurrent locked increments each saw the one before', range(2, 21), $bodies);
    $sid = substr($cookie, strlen('PHPSESSID='));
    $after = json_of(http($srv, 'GET', "/sess_counter.php?sid=$sid"), 'sess_counter');
    check_eq('the counter ends at 21', 21, $after['n'] ?? null);
    check('some of them waited for the lock', ($after['waits'] ?? 0) > 0, show($after));
    $srv->stop();

    // The same without the lock loses updates: this is why the lock exists.
    $srv = Server::start($env['ephpm'], ['--docroot', $env['docroot'], '--workers', '4',
        '-d', 'ephpm.session_locking=0']);
    $first = http($srv, 'GET', '/sess_slow_incr.php');
    preg_match('/PHPSESSID=([^;]+)/', (string)header_of($first, 'Set-Cookie'), $m);
    $cookie = 'PHPSESSID=' . ($m[1] ?? '');
    concurrently($srv, array_fill(0, 20,
        build_request('GET', '/sess_slow_incr.php', ['Cookie' => $cookie])));
    $sid = substr($cookie, strlen('PHPSESSID='));
    $after = json_of(http($srv, 'GET', "/sess_counter.php?sid=$sid"), 'sess_counter');
    check('without the lock, concurrent requests lose updates', ($after['n'] ?? 21) < 21,
        show($after));
    $srv->stop();
}
