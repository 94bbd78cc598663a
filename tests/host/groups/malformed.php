<?php
// The malformed group: malformed and hostile requests get 4xx, the server keeps serving.

declare(strict_types=1);

/** Malformed and hostile requests get 4xx; the server keeps serving. */
function group_malformed(array $env): void
{
    $srv = Server::start($env['ephpm'], ['--docroot', $env['docroot'], '--max-header-size', '8K',
        '--max-body-size', '64K', '--request-timeout', '1']);
    $alive = function (string $after) use ($srv): void {
        try {
            $r = http($srv, 'GET', '/hello.php');
            check_eq("still serving after $after", [200, 'hello'], [$r['status'], $r['body']]);
        } catch (Throwable $e) {
            check("still serving after $after", false, $e->getMessage());
        }
    };
    $expect = function (string $name, $status, string $bytes, array $secrets = []) use ($srv, $alive): void {
        try {
            $r = raw($srv, $bytes);
            check_eq("$name -> $status", $status, $r['status'] ?? 'no response');
            if ($secrets) {
                $leaked = array_values(array_filter($secrets, function ($secret) use ($r) {
                    return strpos($r['body'] ?? '', $secret) !== false;
                }));
                check("$name: the body leaks no secret", $leaked === [], 'leaked: ' . show($leaked));
            }
        } catch (Throwable $e) {
            check("$name -> $status", false, $e->getMessage());
        }
        $alive($name);
    };

    $get = function (string $target): string {
        return "GET $target HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    };
    // Garbage and broken framing.
    $expect('garbage request line', 400, "GARBAGE\r\n\r\n");
    $expect('binary junk', 400, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n");
    $expect('request line without version', 400, "GET /hello.php\r\nHost: x\r\n\r\n");
    $expect('header line without colon', 400, "GET /hello.php HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n");
    $expect('space in a header name', 400, "GET /hello.php HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n");
    $expect('empty header name', 400, "GET /hello.php HTTP/1.1\r\nHost: x\r\n: v\r\n\r\n");
    $expect('control character in a header value', 400, "GET /hello.php HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n");
    $expect('non-numeric Content-Length', 400, "POST /echo.php HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n");
    $expect('conflicting Content-Lengths', 400, "POST /echo.php HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd");
    $expect('invalid chunk size', 400, "POST /echo.php HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nhello\r\n0\r\n\r\n");
    $expect('chunk longer than its size', 400, "POST /echo.php HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n");
    $expect('chunk without CRLF after the data', 400, "POST /echo.php HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n");
    $expect('OPTIONS * (not a path)', 400, "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");

    // Size limits.
    $expect('header block over --max-header-size (8K)', 431,
        "GET /hello.php HTTP/1.1\r\nHost: x\r\nX-Big: " . str_repeat('a', 10000) . "\r\n\r\n");
    $many = '';
    for ($i = 0; $i < 300; $i++) {
        $many .= "X-Header-$i: " . str_repeat('v', 30) . "\r\n";
    }
    $expect('many headers over --max-header-size', 431, "GET /hello.php HTTP/1.1\r\nHost: x\r\n$many\r\n");
    $expect('huge request URI', 431, $get('/hello.php?' . str_repeat('q', 9000)));
    $r = http($srv, 'GET', '/hello.php', ['X-Big' => str_repeat('a', 6000)]);
    check_eq('header block under the limit is fine', 200, $r['status']);
    $expect('Content-Length over --max-body-size (64K)', 413,
        "POST /echo.php HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n");
    $expect('Expect: 100-continue with a too large body', 413,
        "POST /echo.php HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n");
    $expect('chunked body over --max-body-size', 413,
        "POST /echo.php HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n20000\r\n" . str_repeat('b', 1000));
    $body = str_repeat('c', 60000);
    $r = http($srv, 'POST', '/echo.php', ['Content-Type' => 'text/plain'], $body);
    check_eq('body under the limit is fine', [200, 60000], [$r['status'], json_of($r, 'echo')['len'] ?? null]);
    $c = new Conn($srv->port);
    $c->send("POST /echo.php HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n");
    $cont = $c->readLine();
    check_eq('Expect: 100-continue gets 100 Continue first', 'HTTP/1.1 100 Continue', $cont);
    $c->readLine();
    $c->send('12345');
    $r = $c->readResponse();
    $c->close();
    check_eq('... then the response to the body', [200, 5], [$r['status'] ?? null, ($r ? json_of($r, 'echo 100') : [])['len'] ?? null]);

    // Traversal and hidden files.
    $secrets = ['dotenv-secret', 'gitconfig-secret', 'hidden-secret', 'outside-secret', 'root:x:0'];
    foreach ([
        '/../hello.php' => 403,
        '/../../../../etc/passwd' => 403,
        '/%2e%2e/%2e%2e/etc/passwd' => 403,
        '/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd' => 403,
        '/sub/..%2f..%2f..%2fetc%2fpasswd' => 403,
        '/sub/../../outside/secret.txt' => 403,
        '/..%5c..%5cetc%5cpasswd' => 400,
        '/sub\\..\\..\\etc\\passwd' => 400,
        '/hello.php%00.txt' => 400,
        '/%zz' => 400,
        '/.env' => 403,
        '/%2eenv' => 403,
        '/.git/config' => 403,
        '/.git/' => 403,
        '/sub/.hidden' => 403,
    ] as $target => $status) {
        $expect("GET $target", $status, $get($target), $secrets);
    }
    $expect('absolute-form with traversal', 403, $get('http://localhost/../hello.php'), $secrets);
    $r = raw($srv, $get('//etc/passwd'));
    check_not_contains('GET //etc/passwd does not serve /etc/passwd', 'root:x:0', $r['body'] ?? '');
    // A refusal keeps a kept-alive connection usable.
    $c = new Conn($srv->port);
    $c->send("GET /.env HTTP/1.1\r\nHost: x\r\n\r\nGET /hello.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    $r1 = $c->readResponse();
    $r2 = $c->readResponse();
    $c->close();
    check_eq('403 then a normal request on the same connection', [403, 200, 'hello'],
        [$r1['status'] ?? null, $r2['status'] ?? null, $r2['body'] ?? null]);

    // Timeouts (--request-timeout 1): a request that never completes gets
    // 408; a PHP script running longer than that is still answered.
    $c = new Conn($srv->port);
    $c->send("GET /hello.php HTTP/1.1\r\nHost: x\r\n");
    $t = microtime(true);
    $r = $c->readResponse();
    $c->close();
    check_eq('incomplete request -> 408 after --request-timeout', 408, $r['status'] ?? 'no response');
    check('408 came within 10 s', microtime(true) - $t < 10, sprintf('%.1f s', microtime(true) - $t));
    $alive('408');
    $r = http($srv, 'GET', '/slow.php?s=2');
    check_eq('a script slower than --request-timeout is still answered', [200, 'slow done'], [$r['status'], $r['body']]);
    $srv->stop();
}
