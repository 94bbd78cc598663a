<?php
// The session group: the session lock is released on fatal errors and exit().

declare(strict_types=1);

/** A fatal error and exit() both release the session lock. */
function group_session(array $env): void
{
    // A short lock wait keeps a failure fast; lock_waits counts it either way.
    $srv = Server::start($env['ephpm'], ['--docroot', $env['docroot'], '-d', 'ephpm.session_lock_wait_ms=300'], true);
    $sid = 'hosttest' . bin2hex(random_bytes(12));
    $cookie = ['Cookie' => "PHPSESSID=$sid"];
    $info = function () use ($srv, $sid): array {
        return json_of(http($srv, 'GET', "/sess_info.php?sid=$sid"), 'sess_info');
    };

    $i0 = $info();
    check_eq('before: no lock waits yet', 0, $i0['waits']);

    $r = http($srv, 'GET', '/sess_fatal.php', $cookie);
    check_contains('fatal: the request died with a fatal error', 'Call to undefined function ephpm_host_test_no_such_function()', $r['body']);
    $i1 = $info();
    check_eq('fatal: the lock key is gone afterwards', false, $i1['lock_exists']);
    check_eq('fatal: the lock was taken once', $i0['acquired'] + 1, $i1['acquired']);
    $r = http($srv, 'GET', '/sess_count.php', $cookie);
    $j = json_of($r, 'sess_count after fatal');
    check_eq('fatal: the next request acquires at its first attempt (session_lock_waits stays 0)', 0, $j['waits']);
    check_eq('fatal: the next request has no lock warning', [], $j['warnings']);
    check_eq('fatal: the next request took the lock', $i0['acquired'] + 2, $j['acquired']);
    check_eq('fatal: same session id', $sid, $j['sid']);

    $r = http($srv, 'GET', '/sess_exit.php', $cookie);
    check_eq('exit(): the request answered', [200, 'exited'], [$r['status'], $r['body']]);
    $i2 = $info();
    check_eq('exit(): the lock key is gone afterwards', false, $i2['lock_exists']);
    check_eq('exit(): the data was saved', true, $i2['data_exists']);
    $before = json_of(http($srv, 'GET', '/sess_count.php', $cookie), 'sess_count');
    $r = http($srv, 'GET', '/sess_count.php', $cookie);
    $j = json_of($r, 'sess_count after exit');
    check_eq('exit(): the next requests acquire at their first attempt (session_lock_waits stays 0)', [0, 0],
        [$before['waits'], $j['waits']]);
    check_eq('exit(): the counter went on in the session', $before['n'] + 1, $j['n']);
    check_eq('exit(): no lock warnings', [[], []], [$before['warnings'], $j['warnings']]);

    // Control: the counter does see a held lock.  Hold this session's lock
    // over RESP; the request waits (up to 300 ms), counted as one wait.
    $resp = new Conn($srv->resp_port);
    $sid2 = 'hostheld' . bin2hex(random_bytes(12));
    check_eq('control: lock held over RESP', 'OK', resp_command($resp, ['SET', "session_lock:{{$sid2}}", 'someone-else', 'PX', '5000']));
    $resp->close();
    $j = json_of(http($srv, 'GET', '/sess_count.php', ['Cookie' => "PHPSESSID=$sid2"]), 'sess_count held');
    check_eq('control: a held lock is counted in session_lock_waits', 1, $j['waits']);
    check_contains('control: ... and reported', 'the session lock is held by another request', implode("\n", $j['warnings']));
    $srv->stop();
}
