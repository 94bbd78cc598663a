<?php
// The cluster group: three ephpm processes on loopback form a cluster.

declare(strict_types=1);

/** INFO ephpm-cluster of a node over RESP, as name => value. */
function cluster_info(Server $srv): array
{
    $c = new Conn($srv->resp_port);
    $text = resp_command($c, ['INFO', 'ephpm-cluster']);
    $c->close();
    $out = [];
    foreach (explode("\r\n", (string)$text) as $line) {
        if (preg_match('/^([a-z_0-9]+):(.*)$/', $line, $m)) {
            $out[$m[1]] = $m[2];
        }
    }
    return $out;
}

/** Polls $pred every 20 ms for up to $seconds; whether it came true. */
function eventually(float $seconds, callable $pred): bool
{
    $deadline = microtime(true) + $seconds;
    do {
        if ($pred()) {
            return true;
        }
        usleep(20000);
    } while (microtime(true) < $deadline);
    return false;
}

function resp_on(Server $srv, array $args)
{
    $c = new Conn($srv->resp_port);
    $r = resp_command($c, $args);
    $c->close();
    return $r;
}

/**
 * One session, 20 concurrent requests spread round-robin over the nodes
 * n1, n2, n3, each reading a counter, taking 50 ms, writing it + 1: every
 * request must see the one before, whichever node it ran on.  Returns the
 * session id.
 */
function session_race(array $nodes, string $label): string
{
    $first = http($nodes[0], 'GET', '/sess_slow_incr.php');
    check_eq("$label: the first request counts 1", '1', $first['body']);
    preg_match('/PHPSESSID=([^;]+)/', (string)header_of($first, 'Set-Cookie'), $m);
    $sid = $m[1] ?? '';
    $pairs = [];
    for ($i = 0; $i < 20; $i++) {
        $pairs[] = [$nodes[$i % 3], build_request('GET', '/sess_slow_incr.php', ['Cookie' => "PHPSESSID=$sid"])];
    }
    $bodies = array_map(fn($r) => (int)($r['body'] ?? 0), concurrently_on($pairs));
    sort($bodies);
    check_eq("$label: 20 locked increments over 3 nodes each saw the one before", range(2, 21), $bodies);
    foreach ($nodes as $i => $n) {
        $name = 'n' . ($i + 1);
        check("$label: the counter is 21 on $name", eventually(5, function () use ($n, $sid) {
            return (json_of(http($n, 'GET', "/sess_counter.php?sid=$sid"), 'sess_counter')['n'] ?? null) === 21;
        }));
    }
    return $sid;
}

/**
 * Three ephpm hosts form a cluster on loopback: n2 joins through n1, n3
 * through n2.  A write through RESP on one is read through RESP and through
 * PHP on the others; a killed node is seen dead; restarted, it catches up.
 */
function group_cluster(array $env): void
{
    $node = function (string $id, string $join) use ($env): Server {
        $args = ['--docroot', $env['docroot'], '--cluster-node-id', $id,
                 '--cluster-listen', '127.0.0.1:0'];
        if ($join !== '') {
            array_push($args, '--cluster-join', $join);
        }
        return Server::start($env['ephpm'], $args, true);
    };
    $n1 = $node('n1', '');
    check('n1 prints its cluster address', $n1->cluster_address !== '', $n1->logTail());
    $n2 = $node('n2', $n1->cluster_address);
    $n3 = $node('n3', $n2->cluster_address);
    $nodes = [$n1, $n2, $n3];
    $converged = eventually(10, function () use ($nodes) {
        foreach ($nodes as $n) {
            $info = cluster_info($n);
            if (($info['cluster_alive'] ?? '') !== '3' || ($info['cluster_ready'] ?? '') !== '1') {
                return false;
            }
        }
        return true;
    });
    check('membership converges: every node sees 3 alive and is ready', $converged,
        show(cluster_info($n3)));
    $info = cluster_info($n3);
    check_eq('INFO names the node', 'n3', $info['cluster_node_id'] ?? null);
    check('INFO lists n1 alive', (bool)preg_match('/^id=n1,address=[^,]+,state=alive,/',
        $info['cluster_member0'] ?? ''), show($info));

    // ephpm_kv_info() from PHP on n2.
    $j = json_of(http($n2, 'GET', '/cluster_info.php'), 'cluster_info');
    check_eq('ephpm_kv_info()[cluster][node_id]', 'n2', $j['node_id'] ?? null);
    check_eq('ephpm_kv_info()[cluster][alive]', 3, $j['alive'] ?? null);
    check_eq('ephpm_kv_info()[cluster][members] ids',
        ['n1', 'n2', 'n3'], array_column($j['members'] ?? [], 'id'));
    check_eq('ephpm_kv_info()[cluster][members] states',
        ['alive', 'alive', 'alive'], array_column($j['members'] ?? [], 'state'));

    // RESP write on n1; RESP and PHP reads on n2 and n3.
    $key = 'cluster:' . bin2hex(random_bytes(4));
    check_eq('SET through RESP on n1', 'OK', resp_on($n1, ['SET', $key, 'from n1', 'EX', '100']));
    foreach (['n2' => $n2, 'n3' => $n3] as $name => $n) {
        check("RESP GET on $name reads it", eventually(5, function () use ($n, $key) {
            return resp_on($n, ['GET', $key]) === 'from n1';
        }));
        $j = json_of(http($n, 'GET', '/kv.php?op=get&k=' . rawurlencode($key)), 'kv get');
        check_eq("PHP on $name reads it", 'from n1', $j['value']);
        check("PHP on $name sees its TTL", $j['ttl'] > 90 && $j['ttl'] <= 100, show($j));
    }
    // PHP write on n3, read through RESP on n1; a hash; an increment; a delete.
    $k2 = 'cluster:php:' . bin2hex(random_bytes(4));
    json_of(http($n3, 'GET', '/kv.php?op=set&k=' . rawurlencode($k2) . '&v=php'), 'kv set');
    check('RESP on n1 reads what PHP on n3 set', eventually(5, function () use ($n1, $k2) {
        return resp_on($n1, ['GET', $k2]) === 'php';
    }));
    resp_on($n2, ['HSET', "$key:h", 'f', 'v']);
    check('a hash written on n2 is read on n3', eventually(5, function () use ($n3, $key) {
        return resp_on($n3, ['HGET', "$key:h", 'f']) === 'v';
    }));
    resp_on($n1, ['INCRBY', "$key:n", '41']);
    check('an increment on n1 is read on n2', eventually(5, function () use ($n2, $key) {
        return resp_on($n2, ['GET', "$key:n"]) === '41';
    }));
    check_eq('DEL on n2', 1, resp_on($n2, ['DEL', $key]));
    check('the delete reaches PHP on n3', eventually(5, function () use ($n3, $key) {
        $j = json_of(http($n3, 'GET', '/kv.php?op=get&k=' . rawurlencode($key)), 'kv get');
        return $j['value'] === null;
    }));

    // One session, 20 concurrent requests spread round-robin over the three
    // nodes, each reading a counter, taking 50 ms, writing it + 1: the lock
    // is decided by the session's owner and the data read there, so every
    // request sees the one before, whichever node it ran on.
    session_race($nodes, 'session');

    // RESP contention: for each lock, one client on each node sends
    // SET NX at the same moment; exactly one wins.
    $conns = array_map(fn($n) => new Conn($n->resp_port), $nodes);
    $one_winner = 0;
    $winners = [];
    for ($i = 0; $i < 30; $i++) {
        $lock = "lock:race:$i:" . bin2hex(random_bytes(3));
        foreach ($conns as $j => $c) {
            $args = ['SET', $lock, "t$j", 'NX', 'PX', '30000'];
            $out = '*' . count($args) . "\r\n";
            foreach ($args as $a) {
                $out .= '$' . strlen($a) . "\r\n$a\r\n";
            }
            $c->send($out);
        }
        $replies = array_map(fn($c) => resp_read($c), $conns);
        $ok = array_keys($replies, 'OK', true);
        $nil = array_keys($replies, null, true);
        $one_winner += (count($ok) === 1 && count($nil) === 2) ? 1 : 0;
        $winners[] = [$lock, $ok[0] ?? 0];
    }
    check_eq('RESP: one winner per lock across the three nodes (30 locks)', 30, $one_winner);
    [$lock, $w] = $winners[0];
    $other = $conns[($w + 1) % 3];
    check_eq('RESP: DELIFEQ with another token on another node is refused', 0,
        resp_command($other, ['DELIFEQ', $lock, 't' . (($w + 1) % 3)]));
    check_eq("RESP: DELIFEQ with the winner's token on another node releases", 1,
        resp_command($other, ['DELIFEQ', $lock, "t$w"]));
    foreach ($conns as $c) {
        $c->close();
    }

    // Multi-key commands need one owner.
    $crossslot = ['error' => "CROSSSLOT Keys in request don't hash to the same slot"];
    $found = null;
    for ($i = 1; $i < 40 && $found === null; $i++) {
        if (resp_on($n1, ['MSET', 'ck0', 'v', "ck$i", 'v']) === $crossslot) {
            $found = "ck$i";
        }
    }
    check('MSET over two owners answers CROSSSLOT', $found !== null);
    check_eq('... and wrote nothing', null, resp_on($n1, ['GET', (string)$found]));
    check_eq('MGET over two owners answers CROSSSLOT', $crossslot, resp_on($n2, ['MGET', 'ck0', (string)$found]));
    check_eq('DEL over two owners answers CROSSSLOT', $crossslot, resp_on($n3, ['DEL', 'ck0', (string)$found]));
    check_eq('keys with one hash tag share an owner', 'OK', resp_on($n1, ['MSET', '{t}a', '1', '{t}b', '2']));
    check('... MGET reads them on another node', eventually(5, function () use ($n2) {
        return resp_on($n2, ['MGET', '{t}a', '{t}b']) === ['1', '2'];
    }));

    // Kill n3 outright.  Until it is declared dead, a lock it owns cannot
    // be decided: RESP answers CLUSTERDOWN, PHP's setnx false with a warning.
    $n3->kill();
    $t0 = microtime(true);
    $down = [];
    for ($i = 0; $i < 12 && microtime(true) - $t0 < 0.8; $i++) {
        $r = resp_on($n1, ['SET', "owned:$i", 'x', 'NX', 'PX', '30000']);
        if (is_array($r)) {
            $down[] = "owned:$i";
            check_eq('RESP: an unreachable owner is CLUSTERDOWN',
                "CLUSTERDOWN the key's owner is unreachable, the outcome is unknown", $r['error'] ?? $r);
        }
    }
    check("some of the keys were n3's", $down !== []);
    if ($down !== []) {
        $j = json_of(http($n2, 'GET', '/kv.php?op=setnx&k=' . rawurlencode($down[0]) . '&v=y'), 'kv setnx');
        if (microtime(true) - $t0 < 1.0) {  // still before the failure can be detected
            check_eq('PHP: ephpm_kv_setnx is false', false, $j['ok']);
            check_contains('... with a warning', 'owner is unreachable', (string)$j['warning']);
        }
    }
    // n1 and n2 see it dead within the default bound (3.4 s for three
    // members, docs/CLUSTER.md) and, having caught up with each other
    // (cluster_ready: the decisions that could not be confirmed meanwhile
    // made them ask for each other's state), the locks it owned can be taken.
    $dead = eventually(10, function () use ($n1, $n2) {
        return (cluster_info($n1)['cluster_alive'] ?? '') === '2' &&
               (cluster_info($n2)['cluster_alive'] ?? '') === '2' &&
               (cluster_info($n1)['cluster_ready'] ?? '') === '1' &&
               (cluster_info($n2)['cluster_ready'] ?? '') === '1';
    });
    check('a killed node is seen dead by the others', $dead, show(cluster_info($n1)));
    printf("        n3 seen dead after %.1f s\n", microtime(true) - $t0);
    // A CLUSTERDOWN answer means "unknown": a decision that every member
    // but the dead one had confirmed may have landed.  Whichever way it went,
    // the two nodes agree on it, and a lock nobody asked for can be taken.
    if ($down !== []) {
        check_eq('an unknown outcome reads the same on both nodes',
            resp_on($n1, ['GET', $down[0]]), resp_on($n2, ['GET', $down[0]]));
    }
    check_eq('after the failure is detected, a lock can be taken', 'OK',
        resp_on($n1, ['SET', 'owned:after', 'x', 'NX', 'PX', '30000']));
    check_eq('... once', null, resp_on($n2, ['SET', 'owned:after', 'y', 'NX', 'PX', '30000']));
    // Written while n3 is down; n3 restarted (same id, through n1) gets it.
    resp_on($n1, ['SET', "$key:missed", 'while down']);
    $n3 = $node('n3', $n1->cluster_address);
    check('the restarted node catches up', eventually(10, function () use ($n3, $key) {
        return resp_on($n3, ['GET', "$key:missed"]) === 'while down';
    }));
    check('... and has the older writes too', resp_on($n3, ['GET', $k2]) === 'php');
    check('every node sees 3 alive again', eventually(10, function () use ($n1, $n2, $n3) {
        foreach ([$n1, $n2, $n3] as $n) {
            if ((cluster_info($n)['cluster_alive'] ?? '') !== '3') {
                return false;
            }
        }
        return true;
    }), show(cluster_info($n1)));

    // Bad cluster flags are refused with a message.
    foreach ([
        [['--cluster-listen', '127.0.0.1:0'], 'need --cluster-node-id'],
        [['--cluster-node-id', 'a b'], 'letters, digits'],
        [['--cluster-node-id', 'x', '--cluster-join', 'nohost'], 'is not host:port'],
        [['--cluster-node-id', 'x', '--cluster-listen', 'nonsense'], 'host:port'],
        [['--cluster-node-id', 'x', '--cluster-probe-interval', '0'], 'milliseconds'],
        [['--cluster-node-id', 'x', '--cluster-max-clock-skew', '-1'], 'milliseconds'],
        [['--cluster-node-id', 'x', '--cluster-max-clock-skew', '500'], 'less than --cluster-request-timeout'],
        [['--cluster-node-id', 'x', '--cluster-request-timeout', '50'], 'less than --cluster-request-timeout'],
    ] as [$args, $message]) {
        $cmd = array_merge([$env['ephpm'], '--resp', '127.0.0.1:0'], $args);
        $p = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        $code = proc_close($p);
        check_eq('refused: ' . implode(' ', $args), 2, $code);
        check_contains('... with a message', $message, $err);
    }

    foreach ([$n1, $n2, $n3] as $n) {
        $n->stop();
    }
}
