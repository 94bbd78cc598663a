<?php
// The shutdown group: SIGTERM with a request in flight answers it, then exits 0.

declare(strict_types=1);

/** SIGTERM while a request is in flight: it is answered, then exit 0. */
function group_shutdown(array $env): void
{
    $srv = Server::start($env['ephpm'], ['--docroot', $env['docroot']], true);
    // An idle kept-alive connection, to be closed by the shutdown.
    $idle = new Conn($srv->port);
    $idle->send(build_request('GET', '/hello.php', [], '', false));
    $r = $idle->readResponse();
    check_eq('idle connection: first response', 200, $r['status'] ?? null);

    $mark = bin2hex(random_bytes(6));
    $slow = new Conn($srv->port);
    $slow->send(build_request('GET', "/slow.php?s=1&mark=$mark"));
    // Wait until the script runs (it marks the store), then SIGTERM.
    $resp = new Conn($srv->resp_port);
    $deadline = microtime(true) + 10;
    while (resp_command($resp, ['GET', 'slow:started']) !== $mark && microtime(true) < $deadline) {
        usleep(5000);
    }
    $resp->close();
    check('slow.php started', microtime(true) < $deadline);
    $srv->signal(SIGTERM_NO);
    $t_term = microtime(true);
    $r = $slow->readResponse();
    $slow->close();
    check_eq('in-flight request answered after SIGTERM', [200, 'slow done'], [$r['status'] ?? null, $r['body'] ?? null]);
    check_eq('... with Connection: close', 'close', $r ? header_of($r, 'Connection') : null);
    check('idle kept-alive connection closed by the shutdown', $idle->atEof());
    $idle->close();
    $code = $srv->wait(20);
    check('exited within 10 s of SIGTERM', $code !== null && microtime(true) - $t_term < 10,
        sprintf('%.1f s', microtime(true) - $t_term));
    $srv->stop('exit code 0 after draining');
    $refused = @stream_socket_client("tcp://127.0.0.1:{$srv->port}", $errno, $errstr, 2);
    check('no longer listening after exit', $refused === false);
}
