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

    group_lock_class($env);
}

/**
 * Ephpm\Lock across requests of one host: holds that never overlap and
 * whose fences grow in hold order, a waiter woken by the holder's release,
 * and the release of a lock a request ends with (exit, fatal error).
 */
function group_lock_class(array $env): void
{
    $srv = Server::start($env['ephpm'], ['--docroot', $env['docroot']], true);

    // Contention: 12 requests at once, each holding the lock 30 ms.  With
    // several workers (a thread-safe PHP) they wait for one another in
    // block(); every hold is recorded and none may overlap another.
    $n = 12;
    $responses = concurrently($srv, array_fill(0, $n,
        build_request('GET', '/lock_hold.php?name=contended&hold_ms=30&ttl=10&wait=20')));
    $holds = [];
    foreach ($responses as $i => $r) {
        $h = json_decode($r['body'] ?? '', true);
        if (!is_array($h) || !($h['got'] ?? false)) {
            check("contention: request $i got the lock", false, show($r));
            continue;
        }
        $holds[] = $h;
    }
    check_eq('contention: every request got the lock', $n, count($holds));
    usort($holds, fn($a, $b) => $a['start'] <=> $b['start']);
    $overlaps = [];
    $fences_grow = true;
    for ($i = 1; $i < count($holds); $i++) {
        if ($holds[$i]['start'] < $holds[$i - 1]['end']) {
            $overlaps[] = [$holds[$i - 1], $holds[$i]];
        }
        if ($holds[$i]['fence'] <= $holds[$i - 1]['fence']) {
            $fences_grow = false;
        }
    }
    check('contention: no two holds overlap', $overlaps === [], show($overlaps));
    check('contention: fences strictly increase in hold order', $fences_grow,
        show(array_map(fn($h) => [$h['start'], $h['fence']], $holds)));
    check('contention: every holder wrote with its fence and read its own write',
        array_filter($holds, fn($h) => !$h['written'] || !$h['seen'] || !$h['released']) === [],
        show($holds));
    if ($env['zts']) {
        $waited = array_filter($holds, fn($h) => $h['waited'] > 0.02);
        check('contention: requests waited for one another (parallel workers)', count($waited) >= 2,
            show(array_column($holds, 'waited')));
    }
    $last = end($holds);
    $res = json_of(http($srv, 'GET', '/kv.php?op=get&k=res:contended'), 'kv get');
    check_eq('contention: the resource holds the last holder\'s fence', (string)($last['fence'] ?? ''),
        $res['value'] ?? null);

    // Handover: a RESP client holds the lock; the PHP request waits in
    // block() until the client deletes it (300 ms later), long before the
    // holder's 30 s TTL.
    $resp = new Conn($srv->resp_port);
    check_eq('handover: a RESP client takes the lock', 'OK',
        resp_command($resp, ['SET', 'handed', 'resp-holder', 'NX', 'PX', '30000']));
    $waiter = new Conn($srv->port);
    $waiter->send(build_request('GET', '/lock_hold.php?name=handed&ttl=10&wait=20'));
    usleep(300000);
    check_eq('handover: the client releases it', 1, resp_command($resp, ['DEL', 'handed']));
    $r = $waiter->readResponse();
    $waiter->close();
    $h = json_decode($r['body'] ?? '', true);
    check('handover: the waiter got the lock', ($h['got'] ?? false) === true, show($r));
    check('handover: woken by the release, not the TTL', ($h['waited'] ?? 99) >= 0.25 && ($h['waited'] ?? 99) < 3,
        show($h));

    // Handover between two PHP requests (parallel workers only): B waits
    // in block() while A holds the lock for 500 ms, and takes it as A
    // releases it, with a higher fence.
    if ($env['zts']) {
        $a = new Conn($srv->port);
        $a->send(build_request('GET', '/lock_hold.php?name=php_handover&hold_ms=500&ttl=30'));
        usleep(100000);
        $b = new Conn($srv->port);
        $b->send(build_request('GET', '/lock_hold.php?name=php_handover&ttl=30&wait=20'));
        $ha = json_decode($a->readResponse()['body'] ?? '', true);
        $hb = json_decode($b->readResponse()['body'] ?? '', true);
        $a->close();
        $b->close();
        check('php handover: both got the lock', ($ha['got'] ?? false) && ($hb['got'] ?? false),
            show([$ha, $hb]));
        $gap = ($hb['start'] ?? 0) - ($ha['end'] ?? 0);
        check('php handover: B held it only after A, and soon after', $gap >= 0 && $gap < 0.3,
            show([$ha, $hb]));
        check('php handover: B waited for A', ($hb['waited'] ?? 0) > 0.3, show($hb));
        check('php handover: B\'s fence is greater', ($hb['fence'] ?? 0) > ($ha['fence'] ?? 0),
            show([$ha, $hb]));
    }

    // A waiter whose wait runs out gets null, and the holder keeps it.
    check_eq('timeout: a RESP client takes the lock', 'OK',
        resp_command($resp, ['SET', 'kept', 'resp-holder', 'NX', 'PX', '30000']));
    $h = json_of(http($srv, 'GET', '/lock_hold.php?name=kept&wait=0.3'), 'lock_hold');
    check('timeout: null after the wait', ($h['got'] ?? true) === false && $h['waited'] >= 0.29, show($h));
    check_eq('timeout: the holder keeps it', 'resp-holder', resp_command($resp, ['GET', 'kept']));

    // A request that ends holding the lock gives it back, however it ends:
    // the next request takes it at once (wait 0).
    // (The fatal error comes after the output: the status stays 200.)
    foreach (['leave', 'exit', 'fatal'] as $end) {
        $r = http($srv, 'GET', "/lock_hold.php?name=end_$end&ttl=30&end=$end");
        check_eq("request end ($end): status", 200, $r['status']);
        check_contains("request end ($end): it held the lock", '"got":true', $r['body']);
        $h = json_of(http($srv, 'GET', "/lock_hold.php?name=end_$end&wait=0"), 'lock_hold');
        check("request end ($end): the next request takes it at once", ($h['got'] ?? false) === true, show($h));
    }
    $resp->close();
    $srv->stop();
}
