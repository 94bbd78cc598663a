<?php
// The basics group: request bodies, cookies, $_SERVER, keep-alive, static files, routing, status codes, phpinfo().

declare(strict_types=1);

function group_basics(array $env): void
{
    $srv = Server::start($env['ephpm'], ['--docroot', $env['docroot']]);
    $root = $env['docroot'];

    // Forms, JSON bodies, uploads, cookies.
    $form = 'name=Ada+Lovelace&tags%5B%5D=x&tags%5B%5D=y&empty=';
    $r = http($srv, 'POST', '/echo.php', ['Content-Type' => 'application/x-www-form-urlencoded'], $form);
    $j = json_of($r, 'form POST');
    check_eq('POST form: $_POST', ['name' => 'Ada Lovelace', 'tags' => ['x', 'y'], 'empty' => ''], $j['post']);
    check_eq('POST form: CONTENT_TYPE', 'application/x-www-form-urlencoded', $j['content_type']);
    check_eq('POST form: CONTENT_LENGTH', (string)strlen($form), $j['content_length']);

    $payload = ['k' => [1, 2, 3], 'nested' => ['a' => 'ü'], 'n' => null];
    $r = http($srv, 'POST', '/json.php', ['Content-Type' => 'application/json'], json_encode($payload));
    $j = json_of($r, 'JSON POST');
    check_eq('JSON body: php://input decodes', $payload, $j['decoded']);
    check_eq('JSON body: php://input reads twice', true, $j['again']);
    check_eq('JSON body: $_POST stays empty', [], $j['post']);

    $chunked_body = "5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n";
    $r = http($srv, 'POST', '/echo.php', ['Transfer-Encoding' => 'chunked', 'Content-Type' => 'text/plain'], $chunked_body);
    $j = json_of($r, 'chunked POST');
    check_eq('chunked request body reaches php://input', [12, md5('hello, world')], [$j['len'], $j['md5']]);

    $file = "binary\0data\xff\r\n--not-a-boundary\r\n" . str_repeat('z', 3000);
    $b = 'ephpmBoundary' . bin2hex(random_bytes(4));
    $mp = "--$b\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nmy upload\r\n" .
        "--$b\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"report.bin\"\r\n" .
        "Content-Type: application/x-test\r\n\r\n$file\r\n--$b--\r\n";
    $r = http($srv, 'POST', '/upload.php', ['Content-Type' => "multipart/form-data; boundary=$b"], $mp);
    $j = json_of($r, 'upload');
    check_eq('multipart: text field in $_POST', ['title' => 'my upload'], $j['post']);
    $f = $j['files']['doc'] ?? [];
    check_eq('multipart: $_FILES entry', ['report.bin', 'application/x-test', strlen($file), 0, md5($file)],
        [$f['name'] ?? null, $f['type'] ?? null, $f['size'] ?? null, $f['error'] ?? null, $f['md5'] ?? null]);
    $r = http($srv, 'GET', '/exists.php?path=' . rawurlencode((string)($f['tmp_name'] ?? '')));
    check_eq('multipart: the temporary file is removed after the request', ['exists' => false], json_of($r, 'exists'));

    $r = http($srv, 'GET', '/cookies.php', ['Cookie' => ['a=1; b=two%20words', 'c=3']]);
    check_eq('cookies in $_COOKIE (two Cookie headers, decoded)', ['a' => '1', 'b' => 'two words', 'c' => '3'],
        json_of($r, 'cookies'));
    check_eq('Set-Cookie: one header per cookie', [
        'first=1',
        'second=two%20words; path=/app; HttpOnly',
    ], $r['h']['set-cookie'] ?? null);
    check_eq('header(..., false) keeps both values', ['a', 'b'], $r['h']['x-multi'] ?? null);

    // $_SERVER.
    $c = new Conn($srv->port);
    $c->send(build_request('GET', '/server.php/extra/path?x=1&y=two%20words',
        ['Host' => 'example.test:8080', 'X-Custom-Thing' => 'custom value', 'Authorization' => 'Basic ' . base64_encode('user:pa:ss')]));
    $s = json_of($c->readResponse(), '$_SERVER');
    $local_port = $c->localPort();
    $c->close();
    $want = [
        'REQUEST_METHOD' => 'GET',
        'REQUEST_URI' => '/server.php/extra/path?x=1&y=two%20words',
        'QUERY_STRING' => 'x=1&y=two%20words',
        'SCRIPT_FILENAME' => "$root/server.php",
        'SCRIPT_NAME' => '/server.php',
        'PHP_SELF' => '/server.php/extra/path',
        'PATH_INFO' => '/extra/path',
        'DOCUMENT_ROOT' => $root,
        'REMOTE_ADDR' => '127.0.0.1',
        'REMOTE_PORT' => (string)$local_port,
        'SERVER_NAME' => 'example.test',
        'SERVER_PORT' => (string)$srv->port,
        'SERVER_PROTOCOL' => 'HTTP/1.1',
        'HTTP_HOST' => 'example.test:8080',
        'HTTP_X_CUSTOM_THING' => 'custom value',
        'PHP_AUTH_USER' => 'user',
        'PHP_AUTH_PW' => 'pa:ss',
    ];
    foreach ($want as $k => $v) {
        check_eq("\$_SERVER['$k']", $v, $s[$k] ?? null);
    }
    check_eq("\$_SERVER['HTTPS'] is absent over plain HTTP", false, array_key_exists('HTTPS', $s));
    check('$_SERVER REQUEST_TIME_FLOAT is set', is_float($s['REQUEST_TIME_FLOAT'] ?? null) || is_int($s['REQUEST_TIME_FLOAT'] ?? null));

    // HTTP/1.0 without Host: SERVER_NAME falls back to the address; the
    // connection closes after the response.
    $c = new Conn($srv->port);
    $c->send("GET /server.php HTTP/1.0\r\n\r\n");
    $r = $c->readResponse();
    $s = json_of($r, 'HTTP/1.0');
    check_eq('HTTP/1.0: SERVER_PROTOCOL and SERVER_NAME', ['HTTP/1.0', '127.0.0.1'],
        [$s['SERVER_PROTOCOL'] ?? null, $s['SERVER_NAME'] ?? null]);
    check('HTTP/1.0: connection closed after the response', $c->atEof());
    $c->close();

    // HTTP/1.0 asking for keep-alive (as ab -k does): the response says it
    // is kept, else the client would wait for the close that never comes;
    // the next request on it is served; one without the header closes it.
    $c = new Conn($srv->port);
    $c->send("GET /hello.php HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
    $r = $c->readResponse();
    check_eq('HTTP/1.0 keep-alive: answered with Connection: keep-alive and a length',
        [200, 'hello', 'keep-alive', '5'],
        [$r['status'] ?? null, $r['body'] ?? null, strtolower((string)header_of($r ?? [], 'Connection')),
         header_of($r ?? [], 'Content-Length')]);
    $c->send("GET /readme.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    $r = $c->readResponse();
    check_eq('HTTP/1.0 keep-alive: a static file keeps the connection too', [200, 'keep-alive'],
        [$r['status'] ?? null, strtolower((string)header_of($r ?? [], 'Connection'))]);
    $c->send("GET /.hidden HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    $r = $c->readResponse();
    check_eq("HTTP/1.0 keep-alive: the server's own error keeps it too", [403, 'keep-alive'],
        [$r['status'] ?? null, strtolower((string)header_of($r ?? [], 'Connection'))]);
    $c->send("GET /hello.php HTTP/1.0\r\n\r\n");
    $r = $c->readResponse();
    check_eq('HTTP/1.0 keep-alive: a request without it is answered, then the connection closes',
        [200, 'hello', 'close'],
        [$r['status'] ?? null, $r['body'] ?? null, strtolower((string)header_of($r ?? [], 'Connection'))]);
    check('HTTP/1.0 keep-alive: closed after the request without it', $c->atEof());
    $c->close();

    // Absolute-form target.
    $r = http($srv, 'GET', "http://localhost:{$srv->port}/server.php?abs=1");
    $s = json_of($r, 'absolute-form');
    check_eq('absolute-form target: REQUEST_URI and SCRIPT_NAME', ['/server.php?abs=1', '/server.php'],
        [$s['REQUEST_URI'] ?? null, $s['SCRIPT_NAME'] ?? null]);

    // Keep-alive: two (then three, pipelined) requests on one connection.
    $c = new Conn($srv->port);
    $c->send(build_request('GET', '/server.php?n=1', [], '', false));
    $r1 = $c->readResponse();
    $c->send(build_request('GET', '/server.php?n=2', [], '', false));
    $r2 = $c->readResponse();
    check_eq('keep-alive: both answered 200', [200, 200], [$r1['status'] ?? 0, $r2['status'] ?? 0]);
    check_eq('keep-alive: same client port for both', json_of($r1, 'ka1')['REMOTE_PORT'], json_of($r2, 'ka2')['REMOTE_PORT']);
    check_eq('keep-alive: second request saw its own query', 'n=2', json_of($r2, 'ka2')['QUERY_STRING']);
    $c->send(build_request('GET', '/hello.php', [], '', false) . build_request('GET', '/style.css', [], '', false) .
        build_request('GET', '/hello.php?last', [], '', true));
    $p1 = $c->readResponse();
    $p2 = $c->readResponse();
    $p3 = $c->readResponse();
    check_eq('pipelined requests answered in order', ['hello', file_get_contents("$root/style.css"), 'hello'],
        [$p1['body'] ?? null, $p2['body'] ?? null, $p3['body'] ?? null]);
    check('Connection: close honoured', $c->atEof());
    $c->close();

    // Static files.
    foreach ([
        '/style.css' => 'text/css; charset=utf-8',
        '/data.json' => 'application/json',
        '/readme.txt' => 'text/plain; charset=utf-8',
        '/pixel.png' => 'image/png',
    ] as $path => $type) {
        $r = http($srv, 'GET', $path);
        check_eq("static $path: 200 + Content-Type", [200, $type], [$r['status'], header_of($r, 'Content-Type')]);
        check_eq("static $path: body is the file", file_get_contents($root . $path), $r['body']);
    }
    $r = http($srv, 'GET', '/style.css');
    $etag = header_of($r, 'ETag');
    $lm = header_of($r, 'Last-Modified');
    check('static: ETag and Last-Modified present', $etag !== null && $lm !== null, show($r['headers']));
    $r = http($srv, 'GET', '/style.css', ['If-None-Match' => (string)$etag]);
    check_eq('If-None-Match: same ETag -> 304 without body', [304, ''], [$r['status'], $r['body']]);
    $r = http($srv, 'GET', '/style.css', ['If-None-Match' => '"other", ' . $etag]);
    check_eq('If-None-Match: ETag in a list -> 304', 304, $r['status']);
    $r = http($srv, 'GET', '/style.css', ['If-None-Match' => '"not-it"']);
    check_eq('If-None-Match: other ETag -> 200', 200, $r['status']);
    $r = http($srv, 'GET', '/style.css', ['If-Modified-Since' => (string)$lm]);
    check_eq('If-Modified-Since: Last-Modified -> 304', 304, $r['status']);
    $r = http($srv, 'GET', '/style.css', ['If-Modified-Since' => 'Mon, 01 Jan 1990 00:00:00 GMT']);
    check_eq('If-Modified-Since: 1990 -> 200', 200, $r['status']);
    $r = http($srv, 'HEAD', '/style.css');
    check_eq('HEAD static: 200, Content-Length of the file, no body',
        [200, (string)filesize("$root/style.css"), ''], [$r['status'], header_of($r, 'Content-Length'), $r['body']]);
    $r = http($srv, 'HEAD', '/hello.php');
    check_eq('HEAD PHP: 200, PHP headers, no body', [200, 'world', ''], [$r['status'], header_of($r, 'X-Hello'), $r['body']]);
    check('HEAD PHP: no Content-Length other than the GET one (5)',
        in_array(header_of($r, 'Content-Length'), [null, '5'], true), show($r['headers']));
    $r = http($srv, 'HEAD', '/sized.php');
    check_eq("HEAD PHP: the script's own Content-Length passes", [200, '11', ''],
        [$r['status'], header_of($r, 'Content-Length'), $r['body']]);
    $c = new Conn($srv->port);
    $c->send(build_request('HEAD', '/hello.php', [], '', false) . build_request('GET', '/sized.php'));
    $r1 = $c->readResponse(true);
    $r2 = $c->readResponse();
    $c->close();
    check_eq('HEAD then GET on one connection: framing intact', [200, 200, 'hello world'],
        [$r1['status'] ?? null, $r2['status'] ?? null, $r2['body'] ?? null]);
    $r = http($srv, 'POST', '/style.css', [], 'x=1');
    check_eq('POST to a static file: 405 with Allow', [405, 'GET, HEAD'], [$r['status'], header_of($r, 'Allow')]);

    // Routing through the server.
    $r = http($srv, 'GET', '/pretty/url/here?q=1');
    check_eq('pretty URL -> index.php front controller',
        [200, 'front controller: /pretty/url/here?q=1 script=/index.php', 'yes'],
        [$r['status'], $r['body'], header_of($r, 'X-Front-Controller')]);
    $r = http($srv, 'GET', '/');
    check_eq('/ -> index.php', 'front controller: / script=/index.php', $r['body']);
    $r = http($srv, 'GET', '/app/');
    check_eq('directory index.php', 'app index: /app/index.php', $r['body']);
    $r = http($srv, 'GET', '/sub/');
    check_eq('directory index.html', [200, 'text/html; charset=utf-8', file_get_contents("$root/sub/index.html")],
        [$r['status'], header_of($r, 'Content-Type'), $r['body']]);
    $r = http($srv, 'GET', '/pixel.png/more');
    check_eq('/pixel.png/more -> front controller', 'front controller: /pixel.png/more script=/index.php', $r['body']);

    // Status codes and headers from PHP.
    $r = http($srv, 'GET', '/status.php?mode=code');
    check_eq('http_response_code(201)', [201, 'created'], [$r['status'], $r['body']]);
    $r = http($srv, 'GET', '/status.php?mode=line');
    check_eq("header('HTTP/1.1 404 Not Found')", [404, 'not here'], [$r['status'], $r['body']]);
    $r = http($srv, 'GET', '/status.php?mode=redirect');
    check_eq('Location with 302', [302, '/hello.php'], [$r['status'], header_of($r, 'Location')]);
    $r = http($srv, 'GET', '/status.php?mode=teapot');
    check_eq("header(..., true, 418)", [418, 'teapot'], [$r['status'], header_of($r, 'X-Status')]);
    $r = http($srv, 'GET', '/status.php');
    check_eq('default status 200 with text/html', [200, 'text/html; charset=UTF-8'],
        [$r['status'], header_of($r, 'Content-Type')]);
    check_eq('Content-Length frames the PHP body', (string)strlen('default'), header_of($r, 'Content-Length'));

    // phpinfo(): the ephpm section says Mode => host.
    $r = http($srv, 'GET', '/phpinfo.php');
    $rows = phpinfo_section($r['body'], 'ephpm');
    check('phpinfo(): has an "ephpm" section', $rows !== null, show($r['body']));
    check_eq('phpinfo(): Mode => host', 'host', $rows['Mode'] ?? null);
    check_eq('phpinfo(): ephpm support => enabled', 'enabled', $rows['ephpm support'] ?? null);

    $srv->stop();
}

/** The name => value rows of one module's phpinfo() section (HTML or text). */
function phpinfo_section(string $out, string $module): ?array
{
    if (strpos($out, '<table') !== false) {
        if (!preg_match('#<h2><a name="module_' . preg_quote($module, '#') . '"[^>]*>[^<]*</a></h2>(.*?)(<h2>|$)#s', $out, $m)) {
            return null;
        }
        preg_match_all('#<tr><td class="e">(.*?)</td><td class="v">(.*?)</td>#s', $m[1], $rows, PREG_SET_ORDER);
        $res = [];
        foreach ($rows as $row) {
            $res[trim(html_entity_decode(strip_tags($row[1])))] = trim(html_entity_decode(strip_tags($row[2])));
        }
        return $res;
    }
    if (!preg_match('/^' . preg_quote($module, '/') . '\n\n(.*?)(\n\n\S|$)/ms', $out, $m)) {
        return null;
    }
    $res = [];
    foreach (explode("\n", $m[1]) as $line) {
        $parts = explode(' => ', $line);
        if (count($parts) >= 2) {
            $res[trim($parts[0])] = trim($parts[1]);
        }
    }
    return $res;
}
