<?php
// The compat group: what nginx, Apache, FPM and PHP's CLI server do that
// applications count on: symlinks out of the docroot followed (Debian's
// DokuWiki keeps lib/tpl as one; --symlinks root keeps them inside),
// getallheaders() / apache_request_headers(), and an extension that fails to
// load at startup reported as text, not HTML.

declare(strict_types=1);

function group_compat(array $env): void
{
    $root = $env['docroot'];
    $secrets = ['dotenv-secret', 'tpl-hidden-secret', 'outside-dot-secret', 'root:x:0'];
    $refused = function (Server $srv, string $target, int $status) use ($secrets): void {
        $r = http($srv, 'GET', $target);
        check_eq("GET $target -> $status", $status, $r['status']);
        foreach ($secrets as $s) {
            check_not_contains("GET $target does not leak $s", $s, $r['body']);
        }
    };
    $logo = file_get_contents("$root/pixel.png");

    // --symlinks follow (the default): a static file and a PHP script behind
    // a symlinked directory outside the root, under their URL path.
    $srv = Server::start($env['ephpm'], ['--docroot', $root]);
    $r = http($srv, 'GET', '/lib/tpl/images/logo.png');
    check_eq('follow: image behind lib/tpl (outside the root)', [200, 'image/png', $logo],
        [$r['status'], header_of($r, 'Content-Type'), $r['body']]);
    $r = http($srv, 'GET', '/lib/tpl/show.php/extra?x=1');
    check_eq('follow: PHP behind lib/tpl runs, includes its sibling, under its URL path', [
        'who' => 'tpl show',
        'part' => 'part ok',
        'script_name' => '/lib/tpl/show.php',
        'script_filename' => "$root/lib/tpl/show.php",
        'path_info' => '/extra',
    ], json_of($r, 'tpl show'));
    $r = http($srv, 'GET', '/escape.txt');
    check_eq('follow: a symlinked file outside the root', [200, "outside-secret\n"], [$r['status'], $r['body']]);
    $r = http($srv, 'GET', '/inside-link.txt');
    check_eq('follow: a symlink inside the root', [200, file_get_contents("$root/readme.txt")],
        [$r['status'], $r['body']]);
    // What following does not open up.
    foreach ([
        '/lib/tpl/.hidden' => 403,                     // a dotfile behind the symlink
        '/.tpl-dot/images/logo.png' => 403,            // a symlink with a dot name
        '/%2etpl-dot/show.php' => 403,
        '/lib/dot-target.txt' => 403,                  // a symlink onto a dotfile
        '/lib/tpl/../../../etc/passwd' => 403,         // '..' above the root, via the symlink
        '/lib/tpl/%2e%2e/%2e%2e/%2e%2e/outside/.env-outside' => 403,
        '/.env' => 403,
    ] as $target => $status) {
        $refused($srv, $target, $status);
    }
    // '..' after a symlink is taken on the URL path (back to /lib), never
    // in the target's parent: the file system would find outside/secret.txt
    // at lib/tpl/../secret.txt; the URL path /lib/secret.txt does not exist.
    $r = http($srv, 'GET', '/lib/tpl/../tpl/images/logo.png');
    check_eq("follow: '..' after the symlink stays on the URL path", [200, $logo], [$r['status'], $r['body']]);
    $r = http($srv, 'GET', '/lib/tpl/../secret.txt');
    check_eq("follow: '..' after the symlink never reaches the target's parent",
        [200, 'front controller: /lib/tpl/../secret.txt script=/index.php'], [$r['status'], $r['body']]);

    // getallheaders(): the names as sent, a repeated header once with its
    // values joined, the alias identical.
    $raw = "GET /headers.php HTTP/1.1\r\nHost: example.test\r\nX-Mixed-Case: v1\r\nx-lower: v2\r\n" .
        "X-Dup: one\r\nx-dup: two\r\nX-DUP: three\r\nCookie: a=1\r\nCookie: b=2\r\nX-Empty:\r\n" .
        "123: numeric name\r\nConnection: close\r\n\r\n";
    $j = json_of(raw($srv, $raw), 'getallheaders');
    check_eq('getallheaders(): names as sent, repeats joined in order, Cookie with "; "', [
        'Host' => 'example.test',
        'X-Mixed-Case' => 'v1',
        'x-lower' => 'v2',
        'X-Dup' => 'one, two, three',
        'Cookie' => 'a=1; b=2',
        'X-Empty' => '',
        123 => 'numeric name',
        'Connection' => 'close',
    ], $j['all']);
    check_eq('apache_request_headers() is getallheaders()', $j['all'], $j['apache']);
    $r = http($srv, 'POST', '/headers.php', ['Content-Type' => 'text/plain'], 'body');
    check_eq('getallheaders(): Content-Type and Content-Length are there too',
        ['text/plain', '4'], [json_of($r, 'post')['all']['Content-Type'] ?? null, json_of($r, 'post')['all']['Content-Length'] ?? null]);
    // The same request (no repeated header: PHP 8.2's CLI server garbles
    // those) against php -S gives the same array.
    $single = "GET /headers.php HTTP/1.1\r\nHost: example.test\r\nX-Mixed-Case: v1\r\nx-lower: v2\r\n" .
        "X-Empty:\r\n123: numeric name\r\nAccept: */*\r\nConnection: close\r\n\r\n";
    $ours = json_of(raw($srv, $single), 'getallheaders, single')['all'];
    $cli = php_cli_server_response($root, $single);
    check_eq("getallheaders() as PHP's CLI server gives it", json_of($cli, 'php -S')['all'] ?? null, $ours);
    $srv->stop();

    // --symlinks root: only what stays inside the root.
    $srv = Server::start($env['ephpm'], ['--docroot', $root, '--symlinks', 'root']);
    foreach (['/lib/tpl/images/logo.png', '/lib/tpl/show.php', '/escape.txt', '/escape_dir/secret.txt',
              '/lib/dot-target.txt', '/lib/tpl/.hidden'] as $target) {
        $r = http($srv, 'GET', $target);
        check_eq("root: GET $target -> 403", 403, $r['status']);
        check_not_contains("root: GET $target does not leak", 'outside-secret', $r['body']);
    }
    $r = http($srv, 'GET', '/inside-link.txt');
    check_eq('root: a symlink inside the root is served', [200, file_get_contents("$root/readme.txt")],
        [$r['status'], $r['body']]);
    $srv->stop();

    // Under a sanitizer (ASan, TSan) the runtime refuses PHP's
    // dlopen(RTLD_DEEPBIND) of any extension and ends the process before PHP
    // can report anything (google/sanitizers#611), so a sanitized host
    // cannot show how a failed load is reported: that part runs in the
    // other builds (CMake sets EPHPM_HOST_SANITIZER for the sanitized host
    // groups).
    if (getenv('EPHPM_HOST_SANITIZER') === '1') {
        echo "skip  compat: a bad extension (a sanitized host cannot dlopen one; checked in the other builds)\n";
        return;
    }
    // An extension that does not load: the host still starts, and says so
    // in text, as PHP's CLI does: the same display line on stdout (where it
    // was HTML before), and with log_errors=1 the same log line.
    $cli = escapeshellarg(PHP_BINARY) . ' -n -d extension=does_not_exist -d log_errors=1 -r ""';
    $cli_line = trim((string)shell_exec("$cli 2>/dev/null"));
    $cli_log = trim((string)shell_exec("$cli 2>&1 >/dev/null"));
    check_contains("the CLI's own message (for comparison)",
        "Warning: PHP Startup: Unable to load dynamic library 'does_not_exist'", $cli_line);
    check_contains("the CLI's own log line (for comparison)",
        "PHP Warning:  PHP Startup: Unable to load dynamic library 'does_not_exist'", $cli_log);
    $srv = Server::start($env['ephpm'],
        ['--docroot', $root, '-d', 'extension=does_not_exist', '-d', 'log_errors=1']);
    $r = http($srv, 'GET', '/hello.php');
    check_eq('bad extension: the host serves anyway', [200, 'hello'], [$r['status'], $r['body']]);
    $stderr = (string)file_get_contents($srv->log);
    check_contains('bad extension: stdout has the CLI\'s line, word for word', $cli_line, $srv->startup_output);
    check_contains("bad extension: the log has the CLI's log line, word for word", $cli_log, $stderr);
    foreach (['<b>', '<br />', '&#039;'] as $html) {
        check_not_contains("bad extension: no $html on stdout", $html, $srv->startup_output);
        check_not_contains("bad extension: no $html in the log", $html, $stderr);
    }
    // Pages still get PHP's default HTML errors (html_errors is only off
    // while PHP starts).
    $r = http($srv, 'GET', '/html_errors.php');
    check_eq('bad extension: html_errors is back on for requests', ['1', true],
        [json_of($r, 'html_errors')['ini'] ?? null, json_of($r, 'html_errors')['html'] ?? null]);
    $srv->stop();
}

/** Sends `raw` to `php -n -S` serving `root`; its response. */
function php_cli_server_response(string $root, string $raw): array
{
    $probe = stream_socket_server('tcp://127.0.0.1:0');
    $port = (int)substr(strrchr(stream_socket_get_name($probe, false), ':'), 1);
    fclose($probe);
    $proc = proc_open([PHP_BINARY, '-n', '-S', "127.0.0.1:$port", '-t', $root],
        [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
    try {
        $deadline = microtime(true) + 10;
        while (($s = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 1)) === false) {
            if (microtime(true) > $deadline) {
                throw new RuntimeException("php -S did not listen on $port: $errstr");
            }
            usleep(50000);
        }
        fclose($s);
        $c = new Conn($port);
        $c->send($raw);
        $r = $c->readResponse();
        $c->close();
        if ($r === null) {
            throw new RuntimeException('no response from php -S');
        }
        return $r;
    } finally {
        proc_terminate($proc, SIGTERM_NO);
        proc_close($proc);
    }
}
