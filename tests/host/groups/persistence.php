<?php
// The persistence group: a host with --data-dir keeps strings, hashes, TTLs,
// counters, sessions and RESP locks across a SIGTERM and a restart, but not
// a session lock (not even across a SIGKILL mid-request); a second host on
// the same data dir is refused; --check-data reports the stopped dir.

declare(strict_types=1);

/** Runs `ephpm ARGS` to its end: [exit code, stdout, stderr] (within 20 s). */
function run_ephpm(string $bin, array $args): array
{
    $proc = proc_open(array_merge([$bin], $args), [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
    if (!is_resource($proc)) {
        throw new RuntimeException('cannot start ' . $bin);
    }
    $out = $err = '';
    $deadline = microtime(true) + 20;
    stream_set_blocking($pipes[1], false);
    stream_set_blocking($pipes[2], false);
    while (microtime(true) < $deadline) {
        $out .= (string)stream_get_contents($pipes[1]);
        $err .= (string)stream_get_contents($pipes[2]);
        $st = proc_get_status($proc);
        if (!$st['running']) {
            $out .= (string)stream_get_contents($pipes[1]);
            $err .= (string)stream_get_contents($pipes[2]);
            fclose($pipes[1]);
            fclose($pipes[2]);
            proc_close($proc);
            return [$st['exitcode'], $out, $err];
        }
        usleep(20000);
    }
    proc_terminate($proc, SIGKILL_NO);
    proc_close($proc);
    return [null, $out, $err . '<still running after 20 s>'];
}

/** The value of `field` in an INFO reply, or null. */
function info_field(string $info, string $field): ?string
{
    return preg_match('/^' . preg_quote($field, '/') . ':(.*)\r$/m', $info, $m) ? $m[1] : null;
}

function group_persistence(array $env): void
{
    $base = sys_get_temp_dir() . '/ephpm-persist-' . bin2hex(random_bytes(6));
    mkdir($base);
    $data = "$base/data";
    $args = ['--docroot', $env['docroot'], '--data-dir', $data, '-d', 'ephpm.session_lock_wait_ms=300'];
    try {
        $srv = Server::start($env['ephpm'], $args, true);
        $sid = 'persist' . bin2hex(random_bytes(12));
        $cookie = ['Cookie' => "PHPSESSID=$sid"];

        // ---- writes: PHP, RESP, a session ----
        $t0 = microtime(true);
        check_eq('php: set a string', ['ok' => true], json_of(http($srv, 'GET', '/kv.php?op=set&k=php:str&v=hello'), 'set'));
        check_eq('php: set with a TTL of 100 s', ['ok' => true], json_of(http($srv, 'GET', '/kv.php?op=set&k=php:ttl&v=x&ttl=100'), 'set ttl'));
        foreach ([1, 2, 3] as $n) {
            json_of(http($srv, 'GET', '/kv.php?op=incr&k=php:n'), 'incr');
        }
        $resp = new Conn($srv->resp_port);
        check_eq('resp: SET', 'OK', resp_command($resp, ['SET', 'resp:str', "bin\0ary"]));
        check_eq('resp: HSET', 2, resp_command($resp, ['HSET', 'resp:h', 'f1', 'v1', 'f2', 'v2']));
        check_eq('resp: SET with PX 50000', 'OK', resp_command($resp, ['SET', 'resp:ttl', 'x', 'PX', '50000']));
        check_eq('resp: a lock (SET NX PX 30000)', 'OK', resp_command($resp, ['SET', 'lk', 'tok', 'NX', 'PX', '30000']));
        check_eq('resp: SET then DEL: gone for good', 1, resp_command($resp, ['SET', 'gone', 'x']) === 'OK' ? resp_command($resp, ['DEL', 'gone']) : null);
        $info = resp_command($resp, ['INFO', 'persistence']);
        check_eq('INFO persistence: aof_enabled:1', '1', info_field($info, 'aof_enabled'));
        check_eq('INFO persistence: fsync everysec by default', 'everysec', info_field($info, 'aof_fsync'));
        $resp->close();
        $r = http($srv, 'GET', '/sess_set.php', $cookie);
        check_eq('session: written under the cookie\'s id', $sid, $r['body']);

        // ---- a second host on the same data dir is refused ----
        [$code, $out, $err] = run_ephpm($env['ephpm'], ['--resp', '127.0.0.1:0', '--data-dir', $data]);
        check('second host on the held data dir: exits non-zero before serving', $code !== null && $code !== 0 && !str_contains($out, 'listening'), "exit $code, stdout " . show($out));
        check_contains('... with a message naming the dir', $data, $err);
        check_contains('... prefixed ephpm:', 'ephpm: ', $err);

        // ---- SIGTERM, then what --check-data reports ----
        $srv->stop('SIGTERM with a data dir: exits 0');
        [$code, $out, $err] = run_ephpm($env['ephpm'], ['--check-data', $data]);
        check_eq('--check-data on the stopped dir: exit 0', 0, $code);
        // php:str php:ttl php:n resp:str resp:h resp:ttl lk session:{sid}
        check_contains('--check-data: the key count', "\nkeys: 8\n", "\n$out");
        check_contains('--check-data: ok', "ok: yes\n", $out);
        check_eq('--check-data: nothing on stderr', '', $err);

        // A copy with a byte flipped in the middle of its log: corruption, not
        // a torn tail, so a start would refuse it, naming the file.
        $corrupt = "$base/corrupt";
        mkdir($corrupt);
        $largest = null;
        foreach (scandir($data) as $f) {
            if (is_file("$data/$f") && $f !== 'LOCK') {
                copy("$data/$f", "$corrupt/$f");
                if (str_starts_with($f, 'log.') && ($largest === null || filesize("$data/$f") > filesize("$data/$largest"))) {
                    $largest = $f;
                }
            }
        }
        check('the data dir holds a log', $largest !== null && filesize("$corrupt/$largest") > 100, show(scandir($data)));
        if ($largest !== null) {
            $bytes = file_get_contents("$corrupt/$largest");
            $bytes[12] = chr(ord($bytes[12]) ^ 0xff);
            file_put_contents("$corrupt/$largest", $bytes);
            [$code, $out, $err] = run_ephpm($env['ephpm'], ['--check-data', $corrupt]);
            check_eq('--check-data on a corrupt log: exit 1', 1, $code);
            check_contains('... the error names the file', $largest, $err);
            check('... on stderr, prefixed ephpm:', str_starts_with($err, 'ephpm: '), show($err));
            [$code, $out, $err] = run_ephpm($env['ephpm'], ['--resp', '127.0.0.1:0', '--data-dir', $corrupt]);
            check('a host on the corrupt dir refuses to start', $code !== null && $code !== 0 && !str_contains($out, 'listening'), "exit $code");
            check_contains('... naming the file', $largest, $err);
        }

        // ---- the restart ----
        $srv = Server::start($env['ephpm'], $args, true);
        $elapsed = microtime(true) - $t0;
        $get = fn(string $k) => json_of(http($srv, 'GET', '/kv.php?op=get&k=' . urlencode($k)), "get $k");
        check_eq('restart: the PHP string is back', 'hello', $get('php:str')['value']);
        $ttl = $get('php:ttl')['ttl'];
        check('restart: its TTL went on running (100 s minus the time passed)', $ttl <= 100 && $ttl >= 100 - (int)ceil($elapsed) - 2, "ttl $ttl after " . round($elapsed, 1) . ' s');
        check_eq('restart: the counter is back', '3', $get('php:n')['value']);
        $resp = new Conn($srv->resp_port);
        check_eq('restart: the RESP string is back (binary-safe)', "bin\0ary", resp_command($resp, ['GET', 'resp:str']));
        $pairs = resp_command($resp, ['HGETALL', 'resp:h']);
        $hash = [];
        for ($i = 0; $i + 1 < count($pairs); $i += 2) {
            $hash[$pairs[$i]] = $pairs[$i + 1];
        }
        ksort($hash);  // a hash's fields come in no particular order
        check_eq('restart: the hash is back', ['f1' => 'v1', 'f2' => 'v2'], $hash);
        $pttl = resp_command($resp, ['PTTL', 'resp:ttl']);
        check('restart: the RESP TTL went on running', is_int($pttl) && $pttl <= 50000 && $pttl >= 50000 - (int)ceil($elapsed * 1000) - 2000, show($pttl));
        check_eq('restart: the RESP lock is back (its holder is outside the process)', 'tok', resp_command($resp, ['GET', 'lk']));
        $pttl = resp_command($resp, ['PTTL', 'lk']);
        check('restart: ... with its TTL running', is_int($pttl) && $pttl > 0 && $pttl <= 30000, show($pttl));
        check_eq('restart: ... and it still excludes', null, resp_command($resp, ['SET', 'lk', 'other', 'NX', 'PX', '30000']));
        check_eq('restart: a deleted key stays deleted', 0, resp_command($resp, ['EXISTS', 'gone']));
        check_eq('restart: INFO says what was loaded', '8', info_field(resp_command($resp, ['INFO', 'persistence']), 'rdb_last_load_keys_loaded'));

        $i = json_of(http($srv, 'GET', "/sess_info.php?sid=$sid"), 'sess_info');
        check_eq('restart: the session data is back, its lock is not', [true, false], [$i['data_exists'], $i['lock_exists']]);
        $r = json_of(http($srv, 'GET', '/sess_peek.php', $cookie), 'sess_peek');
        check_eq('restart: the session reads its data', ['secret' => 's3cr3t'], $r['session']);
        $i = json_of(http($srv, 'GET', "/sess_info.php?sid=$sid"), 'sess_info');
        check_eq('restart: the session took its lock at the first attempt (session_lock_waits 0)', [0, 1], [$i['waits'], $i['acquired']]);

        // ---- SIGKILL while a request holds the session lock ----
        $hold = new Conn($srv->port);
        $hold->send(build_request('GET', '/sess_hold.php?s=10', $cookie));
        $deadline = microtime(true) + 10;
        while (resp_command($resp, ['EXISTS', "session_lock:{{$sid}}"]) !== 1 && microtime(true) < $deadline) {
            usleep(10000);
        }
        check('sigkill: the request holds the session lock', microtime(true) < $deadline);
        usleep(100000);  // past everysec's write interval: the lock would be in the log if it were logged
        $resp->close();
        $srv->kill();
        $hold->close();
        $srv = Server::start($env['ephpm'], $args, true);
        $resp = new Conn($srv->resp_port);
        check_eq('after SIGKILL: the lock of the request that died is not restored', 0, resp_command($resp, ['EXISTS', "session_lock:{{$sid}}"]));
        check_eq('after SIGKILL: the data written before is', 1, resp_command($resp, ['EXISTS', "session:{{$sid}}"]));
        $resp->close();
        $j = json_of(http($srv, 'GET', '/sess_count.php', $cookie), 'sess_count after SIGKILL');
        check_eq('after SIGKILL: the next request gets the lock at once, without a warning', [0, []], [$j['waits'], $j['warnings']]);
        $srv->stop('after SIGKILL and a restart: SIGTERM exits 0');
    } finally {
        remove_tree($base);
    }
}
