<?php
// The leaks group: nothing of one request is visible to the next.

declare(strict_types=1);

/** Nothing of one request is visible to the next. */
function group_leaks(array $env): void
{
    $srv = Server::start($env['ephpm'], ['--docroot', $env['docroot']]);
    $root = $env['docroot'];
    $base = json_of(http($srv, 'GET', '/leak_check.php'), 'baseline');
    check_eq('baseline: script directory is the cwd', $root, $base['cwd']);

    $leaky_headers = [
        'Content-Type' => 'application/x-www-form-urlencoded',
        'Cookie' => 'leak_cookie=1',
        'X-Leak-Req' => '1',
        'Authorization' => 'Basic ' . base64_encode('leaky:user'),
    ];
    $compare = function (string $how, array $r) use ($base): void {
        check_eq("$how: status 200 (not the previous 418)", 200, $r['status']);
        check_eq("$how: no X-Leak header in the response", null, header_of($r, 'X-Leak'));
        check_eq("$how: no Set-Cookie from the previous request", null, header_of($r, 'Set-Cookie'));
        $j = json_of($r, $how);
        check_eq("$how: PHP sees status 200", 200, $j['status']);
        check_eq("$how: headers_list() without X-Leak", false,
            (bool)preg_grep('/^(X-Leak|Set-Cookie)/i', $j['headers_list']));
        foreach (['get', 'post', 'cookie', 'request', 'files', 'server_leaks'] as $k) {
            check_eq("$how: $k empty", [], $j[$k]);
        }
        check_eq("$how: QUERY_STRING empty", '', $j['query_string']);
        foreach (['precision', 'max_execution_time', 'display_errors', 'include_path', 'error_reporting',
                     'timezone', 'env', 'cwd', 'global', 'const', 'function', 'class', 'ob_level', 'session'] as $k) {
            check_eq("$how: $k as in the baseline", $base[$k], $j[$k]);
        }
    };

    // On a fresh connection.
    $r = http($srv, 'POST', '/leak_set.php?leak_get=1', $leaky_headers, 'leak_post=1');
    check_eq('leak_set: status 418 and X-Leak', [418, 'yes'], [$r['status'], header_of($r, 'X-Leak')]);
    $lines = explode("\n", $r['body']);
    $seen = json_decode($lines[0], true);
    check_eq('leak_set saw its own input', [['leak_get' => '1'], ['leak_post' => '1'], ['leak_cookie' => '1'], '1', 'leaky'],
        [$seen['get'] ?? null, $seen['post'] ?? null, $seen['cookie'] ?? null, $seen['x_leak_req'] ?? null, $seen['auth_user'] ?? null]);
    check_eq('leak_set: the unterminated buffer is flushed at the end', 'unterminated buffer', $lines[1] ?? null);
    foreach ($seen['state'] ?? [] as $k => $v) {
        check("leak_set changed $k (" . json_encode($base[$k]) . ' -> ' . json_encode($v) . ')', $v !== $base[$k]);
    }
    check_eq('leak_set reported 14 kinds of state', 14, count($seen['state'] ?? []));
    $compare('next request', http($srv, 'GET', '/leak_check.php'));

    // On the same kept-alive connection.
    $c = new Conn($srv->port);
    $c->send(build_request('POST', '/leak_set.php?leak_get=1', $leaky_headers, 'leak_post=1', false));
    $r = $c->readResponse();
    check_eq('keep-alive leak_set: 418', 418, $r['status'] ?? null);
    $c->send(build_request('GET', '/leak_check.php', [], '', false));
    $compare('next request on the same connection', $c->readResponse());
    // A static file after a PHP request that set headers.
    $c->send(build_request('POST', '/leak_set.php', $leaky_headers, 'leak_post=1', false));
    $c->readResponse();
    $c->send(build_request('GET', '/style.css'));
    $r = $c->readResponse();
    check_eq('static file after leak_set: 200, no X-Leak, no Set-Cookie', [200, null, null],
        [$r['status'], header_of($r, 'X-Leak'), header_of($r, 'Set-Cookie')]);
    $c->close();

    // An output buffer that swallows everything, never ended.
    $r = http($srv, 'GET', '/ob_swallow.php');
    check_eq('ob_swallow: its own output swallowed', '', $r['body']);
    $r = http($srv, 'GET', '/hello.php');
    check_eq('after ob_swallow: the next response is intact', [200, 'hello'], [$r['status'], $r['body']]);

    // $_SESSION is not carried to a request without the cookie.
    $r = http($srv, 'GET', '/sess_set.php');
    $sid = $r['body'];
    $r = http($srv, 'GET', '/sess_peek.php');
    $j = json_of($r, 'sess_peek');
    check_eq('$_SESSION not set before session_start()', false, $j['before']);
    check_eq('$_SESSION empty without the cookie', [], $j['session']);
    check('a new session id without the cookie', $j['sid'] !== $sid && $j['sid'] !== '', show([$sid, $j['sid']]));
    $j = json_of(http($srv, 'GET', '/sess_peek.php', ['Cookie' => "PHPSESSID=$sid"]), 'sess_peek with cookie');
    check_eq('$_SESSION with the cookie (control)', ['secret' => 's3cr3t'], $j['session']);
    $srv->stop();
}
