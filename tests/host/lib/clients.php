<?php
// Raw HTTP/1.1 and RESP clients: a connection, request building, reply parsing, parallel requests.

declare(strict_types=1);

const IO_TIMEOUT = 20.0;  // seconds any single read may take before the check fails

final class Conn
{
    /** @var resource */
    public $sock;
    public string $buf = '';

    public function __construct(int $port)
    {
        $s = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 5);
        if ($s === false) {
            throw new RuntimeException("connect to 127.0.0.1:$port failed: $errstr");
        }
        stream_set_timeout($s, (int)IO_TIMEOUT);
        $this->sock = $s;
    }

    public function localPort(): int
    {
        $name = stream_socket_get_name($this->sock, false);
        return (int)substr($name, strrpos($name, ':') + 1);
    }

    /** Writes everything; false when the peer closed meanwhile. */
    public function send(string $bytes): bool
    {
        while ($bytes !== '') {
            $n = @fwrite($this->sock, $bytes);
            if ($n === false || $n === 0) {
                return false;
            }
            $bytes = substr($bytes, $n);
        }
        return true;
    }

    /** Reads more into the buffer; false at EOF (or reset). */
    private function fill(): bool
    {
        $chunk = @fread($this->sock, 65536);
        if ($chunk === false || $chunk === '') {
            $meta = stream_get_meta_data($this->sock);
            if ($meta['timed_out']) {
                throw new RuntimeException('read timed out after ' . IO_TIMEOUT . ' s');
            }
            if (feof($this->sock) || $chunk === false) {
                return false;
            }
            return true;
        }
        $this->buf .= $chunk;
        return true;
    }

    private function take(int $n): string
    {
        $out = substr($this->buf, 0, $n);
        $this->buf = (string)substr($this->buf, $n);
        return $out;
    }

    public function readLine(): ?string
    {
        while (($p = strpos($this->buf, "\r\n")) === false) {
            if (!$this->fill()) {
                return null;
            }
        }
        $line = $this->take($p + 2);
        return substr($line, 0, -2);
    }

    public function readExactly(int $n): ?string
    {
        while (strlen($this->buf) < $n) {
            if (!$this->fill()) {
                return null;
            }
        }
        return $this->take($n);
    }

    /** True when the server closed the connection (nothing more to read). */
    public function atEof(): bool
    {
        if ($this->buf !== '') {
            return false;
        }
        return !$this->fill() && $this->buf === '';
    }

    /**
     * One HTTP response: ['status' => int, 'headers' => [[name, value]...],
     * 'h' => [lowercase name => [values]], 'body' => string], or null when the
     * connection closed before a status line.  1xx responses are skipped.
     */
    public function readResponse(bool $head_request = false): ?array
    {
        for (;;) {
            while (($p = strpos($this->buf, "\r\n\r\n")) === false) {
                if (!$this->fill()) {
                    if ($this->buf !== '') {
                        throw new RuntimeException('connection closed inside a response head: ' . show($this->buf));
                    }
                    return null;
                }
            }
            $head = $this->take($p + 4);
            $lines = explode("\r\n", substr($head, 0, -4));
            if (!preg_match('#^HTTP/1\.[01] (\d{3})(?: (.*))?$#', $lines[0], $m)) {
                throw new RuntimeException('bad status line ' . show($lines[0]));
            }
            $status = (int)$m[1];
            $headers = [];
            $h = [];
            foreach (array_slice($lines, 1) as $line) {
                $c = strpos($line, ':');
                if ($c === false) {
                    throw new RuntimeException('bad header line ' . show($line));
                }
                $name = substr($line, 0, $c);
                $value = trim(substr($line, $c + 1), " \t");
                $headers[] = [$name, $value];
                $h[strtolower($name)][] = $value;
            }
            if ($status >= 100 && $status < 200) {
                continue;  // 100 Continue
            }
            $body = '';
            if ($head_request || $status === 204 || $status === 304) {
                // no body
            } elseif (isset($h['transfer-encoding']) && stripos(end($h['transfer-encoding']), 'chunked') !== false) {
                for (;;) {
                    $size_line = $this->readLine();
                    if ($size_line === null) {
                        throw new RuntimeException('closed inside a chunked body');
                    }
                    $size = hexdec(trim(explode(';', $size_line)[0]));
                    if ($size === 0) {
                        while (($l = $this->readLine()) !== null && $l !== '') {
                        }
                        break;
                    }
                    $body .= (string)$this->readExactly((int)$size);
                    $this->readLine();
                }
            } elseif (isset($h['content-length'])) {
                $body = $this->readExactly((int)$h['content-length'][0]);
                if ($body === null) {
                    throw new RuntimeException('closed inside a body of ' . $h['content-length'][0] . ' bytes');
                }
            } else {
                while ($this->fill()) {
                }
                $body = $this->take(strlen($this->buf));
            }
            return ['status' => $status, 'headers' => $headers, 'h' => $h, 'body' => $body];
        }
    }

    public function close(): void
    {
        if (is_resource($this->sock)) {
            fclose($this->sock);
        }
    }
}

/** Builds a request; Host and (with a body) Content-Length are added unless given. */
function build_request(string $method, string $target, array $headers = [], string $body = '', bool $close = true): string
{
    $names = array_map('strtolower', array_keys($headers));
    $req = "$method $target HTTP/1.1\r\n";
    if (!in_array('host', $names, true)) {
        $req .= "Host: localhost\r\n";
    }
    foreach ($headers as $k => $v) {
        foreach ((array)$v as $one) {
            $req .= "$k: $one\r\n";
        }
    }
    if ($body !== '' && !in_array('content-length', $names, true) && !in_array('transfer-encoding', $names, true)) {
        $req .= 'Content-Length: ' . strlen($body) . "\r\n";
    }
    if ($close && !in_array('connection', $names, true)) {
        $req .= "Connection: close\r\n";
    }
    return $req . "\r\n" . $body;
}

/** One request on its own connection. */
function http(Server $srv, string $method, string $target, array $headers = [], string $body = ''): array
{
    $c = new Conn($srv->port);
    $c->send(build_request($method, $target, $headers, $body));
    $r = $c->readResponse($method === 'HEAD');
    $c->close();
    if ($r === null) {
        throw new RuntimeException("no response to $method $target");
    }
    return $r;
}

/** Raw bytes on their own connection; the response, or null if it closed without one. */
function raw(Server $srv, string $bytes): ?array
{
    $c = new Conn($srv->port);
    $c->send($bytes);
    try {
        return $c->readResponse();
    } finally {
        $c->close();
    }
}

function header_of(array $r, string $name): ?string
{
    $v = $r['h'][strtolower($name)] ?? null;
    return $v === null ? null : implode(', ', $v);
}

function json_of(array $r, string $what)
{
    $v = json_decode($r['body'], true);
    if (!is_array($v)) {
        throw new RuntimeException("$what: not JSON: " . show($r['body']) . " (status {$r['status']})");
    }
    return $v;
}

/** A RESP2 command and its reply, decoded (errors as ['error' => text]). */
function resp_command(Conn $c, array $args)
{
    $out = '*' . count($args) . "\r\n";
    foreach ($args as $a) {
        $a = (string)$a;
        $out .= '$' . strlen($a) . "\r\n$a\r\n";
    }
    $c->send($out);
    return resp_read($c);
}

function resp_read(Conn $c)
{
    $line = $c->readLine();
    if ($line === null) {
        throw new RuntimeException('RESP connection closed');
    }
    $rest = substr($line, 1);
    switch ($line[0]) {
        case '+': return $rest;
        case '-': return ['error' => $rest];
        case ':': return (int)$rest;
        case '$':
            if ((int)$rest < 0) {
                return null;
            }
            $v = $c->readExactly((int)$rest + 2);
            return substr((string)$v, 0, -2);
        case '*':
            $n = (int)$rest;
            if ($n < 0) {
                return null;
            }
            $items = [];
            for ($i = 0; $i < $n; $i++) {
                $items[] = resp_read($c);
            }
            return $items;
    }
    throw new RuntimeException('bad RESP reply ' . show($line));
}

/** Sends every [Server, request bytes] pair at once; the responses in order. */
function concurrently_on(array $pairs): array
{
    $conns = [];
    foreach ($pairs as $i => [$srv, $bytes]) {
        $conns[$i] = new Conn($srv->port);
        $conns[$i]->send($bytes);
    }
    $out = [];
    foreach ($conns as $i => $c) {
        $out[$i] = $c->readResponse();
        $c->close();
    }
    return $out;
}

/** Sends every request at once on its own connection; returns the responses in order. */
function concurrently(Server $srv, array $requests): array
{
    return concurrently_on(array_map(fn(string $bytes) => [$srv, $bytes], $requests));
}
