<?php
// The cluster_strict group: three ephpm hosts in strict mode (lock decisions
// in etcd, docs/CLUSTER.md "Strict mode") with PHP, over a one-member etcd
// started by tests/etcd/etcd-cluster.sh.  RESP-level checks, quorum loss and
// fences across mode switches are in tests/e2e/etcd_{strict,fences}.sh.

declare(strict_types=1);

/**
 * Sessions and ephpm_kv_setnx through PHP when etcd decides the locks: 20
 * concurrent requests on one session spread over three hosts each see the
 * one before; a lock taken by PHP on one host is refused on the others and
 * carries etcd's fence; with etcd gone, PHP's lock calls answer false with
 * the unreachable warning and the session handler does what
 * ephpm.session_lock_failure says.
 */
function group_cluster_strict(array $env): void
{
    $script = dirname(__DIR__, 2) . '/etcd/etcd-cluster.sh';
    $dir = sys_get_temp_dir() . '/ephpm-host-etcd-' . getmypid();
    exec('bash ' . escapeshellarg($script) . ' start ' . escapeshellarg($dir) . ' 1 ' . getmypid()
        . ' 2>&1', $out, $rc);
    if (!check('etcd starts', $rc === 0, implode("\n", $out))) {
        return;
    }
    register_shutdown_function(function () use ($script, $dir) {
        exec('bash ' . escapeshellarg($script) . ' stop ' . escapeshellarg($dir) . ' 2>&1');
        exec('rm -rf ' . escapeshellarg($dir));
    });
    $endpoints = trim((string)file_get_contents("$dir/endpoints"));
    $prefix = '/ephpm-host-' . getmypid();
    $node = function (string $id, string $join) use ($env, $endpoints, $prefix): Server {
        $args = ['--docroot', $env['docroot'], '--cluster-node-id', $id,
                 '--cluster-listen', '127.0.0.1:0', '--cluster-arbiter', 'etcd',
                 '--etcd-endpoints', $endpoints, '--etcd-prefix', $prefix,
                 '--etcd-lease-ttl', '2', '-d', 'ephpm.session_lock_failure=fail'];
        if ($join !== '') {
            array_push($args, '--cluster-join', $join);
        }
        return Server::start($env['ephpm'], $args, true);
    };
    $n1 = $node('n1', '');
    $n2 = $node('n2', $n1->cluster_address);
    $n3 = $node('n3', $n2->cluster_address);
    $nodes = [$n1, $n2, $n3];
    $converged = eventually(15, function () use ($nodes) {
        foreach ($nodes as $n) {
            $info = cluster_info($n);
            if (($info['cluster_alive'] ?? '') !== '3' || ($info['cluster_ready'] ?? '') !== '1'
                || ($info['cluster_etcd_serving'] ?? '') !== '1') {
                return false;
            }
        }
        return true;
    });
    check('strict: every node sees 3 alive, is ready and holds its etcd lease', $converged,
        show(cluster_info($n3)));

    // The session lock is an etcd transaction, the data a fenced write by
    // its owner among the members.
    $sid = session_race($nodes, 'strict session');
    $info = cluster_info($n1);
    check('strict: n1 granted locks in etcd', (int)($info['cluster_etcd_grants'] ?? 0) > 0, show($info));

    // A lock through PHP: one holder over three hosts, etcd's fence.
    $set = fn(Server $n, string $tok) => json_of(http($n, 'GET',
        '/strict_lock.php?op=setnx&key=plock&token=' . $tok), 'strict_lock');
    check_eq('strict: ephpm_kv_setnx on n1 takes the lock', true, $set($n1, 'a')['result'] ?? null);
    check_eq('strict: ephpm_kv_setnx on n2 is refused', false, $set($n2, 'b')['result'] ?? null);
    $fence = resp_on($n3, ['LOCK.FENCE', 'plock', 'a']);
    check('strict: LOCK.FENCE on n3 reads the holder\'s fence', is_int($fence) && $fence > 0, show($fence));
    $del = fn(Server $n, string $tok) => json_of(http($n, 'GET',
        '/strict_lock.php?op=del&key=plock&token=' . $tok), 'strict_lock');
    check_eq('strict: ephpm_kv_del_if_eq with another token deletes nothing', false,
        $del($n3, 'b')['result'] ?? null);
    check_eq('strict: ephpm_kv_del_if_eq with the token releases', true, $del($n3, 'a')['result'] ?? null);

    // etcd gone: lock calls answer false with the warning, never a local
    // guess; reads go on; the session handler follows its policy (fail).
    exec('bash ' . escapeshellarg($script) . ' kill ' . escapeshellarg($dir) . ' 1 2>&1');
    $r = $set($n2, 'c');
    check_eq('strict, etcd down: ephpm_kv_setnx answers false', false, $r['result'] ?? null);
    check('strict, etcd down: ... with the unreachable warning',
        str_contains((string)($r['warning'] ?? ''), 'unreachable'), show($r));
    $s = http($n2, 'GET', '/sess_slow_incr.php', ['Cookie' => "PHPSESSID=$sid"]);
    check('strict, etcd down: session_start() gives up (ephpm.session_lock_failure=fail)',
        str_contains((string)($s['body'] ?? ''), 'gave up (ephpm.session_lock_failure=fail)'),
        show($s['body'] ?? null));
    check("strict, etcd down: the counter still reads 21",
        (json_of(http($n1, 'GET', "/sess_counter.php?sid=$sid"), 'sess_counter')['n'] ?? null) === 21);

    // Back: locks resume.
    exec('bash ' . escapeshellarg($script) . ' restart ' . escapeshellarg($dir) . ' 1 2>&1');
    check('strict, etcd back: PHP takes a lock again', eventually(15, function () use ($set, $n2) {
        return ($set($n2, 'd')['result'] ?? null) === true;
    }));

    // Pipelined: the INCRs go out together (a chain, docs/ARCHITECTURE.md
    // "Chains"); SETNX is decided in etcd, which no chain can join, so it
    // waits for the INCR before it and runs once, and the INCR after it
    // waits for it.  Replies in order.
    $c = new Conn($n1->resp_port);
    $pipe = '';
    foreach ([['INCR', 'pipe:n'], ['INCR', 'pipe:n'], ['SETNX', 'pipe:lock', 'v'], ['INCR', 'pipe:n'],
              ['SETNX', 'pipe:lock', 'w'], ['GET', 'pipe:n']] as $args) {
        $pipe .= '*' . count($args) . "\r\n";
        foreach ($args as $a) {
            $pipe .= '$' . strlen($a) . "\r\n$a\r\n";
        }
    }
    $c->send($pipe);
    $replies = [];
    for ($i = 0; $i < 6; $i++) {
        $replies[] = resp_read($c);
    }
    $c->close();
    check_eq('strict: a pipeline of INCRs and etcd-decided SETNXs answers in order, each run once',
        [1, 2, 1, 3, 0, '3'], $replies);

    // A paused node's membership lease runs out (2 s): etcd drops it from
    // the member list the others compute owners over; resumed, it finds
    // its lease gone and registers again.
    $n3->signal(19);  // SIGSTOP (php -n has no pcntl constants)
    $dropped = eventually(10, function () use ($n1, $n2) {
        return (cluster_info($n1)['cluster_etcd_members'] ?? '') === '2'
            && (cluster_info($n2)['cluster_etcd_members'] ?? '') === '2';
    });
    check('strict: a paused node leaves etcd\'s member list when its lease runs out', $dropped,
        show(cluster_info($n1)));
    $n3->signal(18);  // SIGCONT
    check('strict: resumed, it finds its lease lost and registers again',
        eventually(10, function () use ($n1, $n3) {
            $i3 = cluster_info($n3);
            return (int)($i3['cluster_etcd_lease_lost'] ?? 0) >= 1
                && ($i3['cluster_etcd_serving'] ?? '') === '1'
                && (cluster_info($n1)['cluster_etcd_members'] ?? '') === '3';
        }), show(cluster_info($n3)));
    foreach ($nodes as $n) {
        $n->stop();
    }
}
