<?php
// The fds group: a host out of file descriptors waits for one to come free
// instead of spinning, then serves the connections that waited.

declare(strict_types=1);

/** The CPU time (user + system, in seconds) process `$pid` has used so far. */
function process_cpu_seconds(int $pid): float
{
    $stat = (string)file_get_contents("/proc/$pid/stat");
    // Fields after the parenthesised name: state is the first, utime the 12th.
    $fields = explode(' ', substr($stat, strrpos($stat, ')') + 2));
    return ((int)$fields[11] + (int)$fields[12]) / 100;  // USER_HZ: 100 on Linux
}

/**
 * How many of the descriptors below `$limit` process `$pid` has open (one
 * it inherited may be numbered higher; an open() fails with EMFILE once
 * every number below the limit is taken).
 */
function open_fds(int $pid, int $limit): int
{
    return count(array_filter(scandir("/proc/$pid/fd"), function (string $n) use ($limit): bool {
        return preg_match('/^\d+$/', $n) === 1 && (int)$n < $limit;
    }));
}

/**
 * An accept that fails for want of a descriptor (EMFILE) leaves the
 * connection queued, so accepting again at once fails again at once: each of
 * the three listeners (HTTP, RESP, the cluster's) must wait a little before
 * trying again, and take the queued connection once a descriptor is free.
 */
function group_fds(array $env): void
{
    $limit = 256;
    $srv = Server::start($env['ephpm'], ['--docroot', $env['docroot'], '--request-timeout', '60',
        '--cluster-node-id', 'fds', '--cluster-listen', '127.0.0.1:0'], true,
        ['prlimit', "--nofile=$limit:$limit"]);
    $pid = $srv->pid();
    check('the cluster listener is up', $srv->cluster_address !== '', $srv->startup_output);

    // Idle HTTP connections until the host has no descriptor left: each one
    // it accepts takes one; the rest wait in the listener's queue.
    $fillers = [];
    $want = $limit - open_fds($pid, $limit) + 8;
    for ($i = 0; $i < $want; $i++) {
        $fillers[] = new Conn($srv->port);
    }
    $deadline = microtime(true) + 10;
    while (open_fds($pid, $limit) < $limit && microtime(true) < $deadline) {
        usleep(10000);
    }
    check_eq('the host has used every descriptor it may open', $limit, open_fds($pid, $limit));

    // One connection to each listener, with a request on it, queued.
    $http = new Conn($srv->port);
    $http->send(build_request('GET', '/hello.php'));
    $resp = new Conn($srv->resp_port);
    $resp->send("*1\r\n\$4\r\nPING\r\n");
    $cluster = new Conn((int)substr($srv->cluster_address, strrpos($srv->cluster_address, ':') + 1));
    $cluster->send(str_repeat('not a cluster frame ', 4));

    // Every listener's accept now fails, again and again while the shortage
    // lasts: retrying at once spun a core (1.0-2.0 s of CPU a second, with
    // the HTTP or the cluster listener in that state); a retry after a pause
    // costs next to nothing.
    usleep(200000);
    $before = process_cpu_seconds($pid);
    sleep(1);
    $used = process_cpu_seconds($pid) - $before;
    check('out of descriptors, the host does not spin (CPU ' . sprintf('%.2f', $used) . ' s in 1 s)',
        $used < 0.3);

    // Descriptors come free: the queued connections are taken and served.
    foreach (array_splice($fillers, 0, 16) as $c) {
        $c->close();
    }
    try {
        $r = $http->readResponse();
        check_eq('the queued HTTP request is served', [200, 'hello'], [$r['status'] ?? null, $r['body'] ?? null]);
    } catch (Throwable $e) {
        check('the queued HTTP request is served', false, $e->getMessage());
    }
    try {
        check_eq('the queued RESP command is answered', 'PONG', resp_read($resp));
    } catch (Throwable $e) {
        check('the queued RESP command is answered', false, $e->getMessage());
    }
    try {
        // Not a frame: the cluster's listener took the connection and closed it.
        check('the queued cluster connection is taken (and its garbage refused)', $cluster->atEof());
    } catch (Throwable $e) {
        check('the queued cluster connection is taken (and its garbage refused)', false, $e->getMessage());
    }
    foreach ([$http, $resp, $cluster] as $c) {
        $c->close();
    }
    foreach ($fillers as $c) {
        $c->close();
    }
    $r = http($srv, 'GET', '/hello.php');
    check_eq('still serving once every descriptor is back', [200, 'hello'], [$r['status'], $r['body']]);
    $srv->stop();
}
