<?php
// The timeout group: max_execution_time counts the PHP thread's CPU time.

declare(strict_types=1);

/** utime + stime of a /proc/.../stat file, in seconds (USER_HZ is 100 on Linux). */
function cpu_seconds(string $stat_file): float
{
    $stat = (string)file_get_contents($stat_file);
    $fields = explode(' ', substr($stat, strrpos($stat, ')') + 2));
    // Fields from the state on: utime and stime are the 12th and 13th.
    return ((int)$fields[11] + (int)$fields[12]) / 100.0;
}

/**
 * max_execution_time counts the PHP thread's CPU time, not the process's:
 * an endless loop is stopped after 1 s while other connections keep the I/O
 * threads busy.
 */
function group_timeout(array $env): void
{
    $srv = Server::start($env['ephpm'], ['--docroot', $env['docroot']], true);
    $root = $env['docroot'];
    $css = file_get_contents("$root/style.css");

    // The PHP worker thread, for its CPU time (utime + stime in /proc).
    $tid_path = http($srv, 'GET', '/tid.php')['body'];
    check('tid.php names the PHP thread', (bool)preg_match('#^\d+/task/\d+$#', $tid_path), show($tid_path));
    $pid = (int)$tid_path;
    $worker0 = cpu_seconds("/proc/$tid_path/stat");
    $process0 = cpu_seconds("/proc/$pid/stat");

    $busy = new Conn($srv->port);
    $t0 = microtime(true);
    $busy->send(build_request('GET', '/busy.php'));
    stream_set_blocking($busy->sock, false);

    // Hammer: keep-alive static requests, pipelined 20 at a time, on 2
    // connections; RESP batches of 400 commands on 2 connections.
    $static = [];
    for ($i = 0; $i < 2; $i++) {
        $c = new Conn($srv->port);
        stream_set_blocking($c->sock, false);
        $static[] = ['c' => $c, 'want' => 0];
    }
    $resp = [];
    for ($i = 0; $i < 2; $i++) {
        $c = new Conn($srv->resp_port);
        stream_set_blocking($c->sock, false);
        $resp[] = ['c' => $c, 'want' => 0];
    }
    $one_static = build_request('GET', '/style.css', [], '', false);
    $static_ok = $static_bad = $resp_ok = $resp_bad = $incrs = 0;
    $counter = 'hammer:' . bin2hex(random_bytes(4));
    $batch = '';
    for ($i = 0; $i < 200; $i++) {
        $batch .= "*1\r\n\$4\r\nPING\r\n*2\r\n\$4\r\nINCR\r\n\$" . strlen($counter) . "\r\n$counter\r\n";
    }
    $busy_buf = '';
    $done = false;
    while (!$done && microtime(true) - $t0 < 30) {
        foreach ($static as &$s) {
            if ($s['want'] === 0) {
                $s['c']->send(str_repeat($one_static, 20));
                $s['want'] = 20;
            }
        }
        unset($s);
        foreach ($resp as &$s) {
            if ($s['want'] === 0) {
                $s['c']->send($batch);
                $s['want'] = 400;
                $incrs += 200;
            }
        }
        unset($s);
        $read = [$busy->sock];
        foreach (array_merge($static, $resp) as $s) {
            $read[] = $s['c']->sock;
        }
        $w = $e = null;
        usleep(500);  // busy enough; leaves the PHP thread some CPU on small machines
        if (stream_select($read, $w, $e, 0, 200000) === 0) {
            continue;
        }
        foreach ($read as $sock) {
            if ($sock === $busy->sock) {
                $chunk = fread($sock, 65536);
                if ($chunk === '' || $chunk === false) {
                    if (feof($sock)) {
                        $done = true;
                    }
                } else {
                    $busy_buf .= $chunk;
                }
                continue;
            }
            foreach ($static as &$s) {
                if ($s['c']->sock !== $sock) {
                    continue;
                }
                $s['c']->buf .= (string)fread($sock, 65536);
                // Complete responses: head + Content-Length body.
                while (($p = strpos($s['c']->buf, "\r\n\r\n")) !== false) {
                    $head = substr($s['c']->buf, 0, $p);
                    if (!preg_match('/\r\nContent-Length: (\d+)/i', $head, $m)) {
                        $static_bad++;
                        $s['c']->buf = '';
                        $s['want'] = 0;
                        break;
                    }
                    $len = (int)$m[1];
                    if (strlen($s['c']->buf) < $p + 4 + $len) {
                        break;
                    }
                    $body = substr($s['c']->buf, $p + 4, $len);
                    $s['c']->buf = (string)substr($s['c']->buf, $p + 4 + $len);
                    (strncmp($head, 'HTTP/1.1 200', 12) === 0 && $body === $css) ? $static_ok++ : $static_bad++;
                    $s['want']--;
                }
            }
            unset($s);
            foreach ($resp as &$s) {
                if ($s['c']->sock !== $sock) {
                    continue;
                }
                $s['c']->buf .= (string)fread($sock, 65536);
                while (($p = strpos($s['c']->buf, "\r\n")) !== false) {
                    $line = substr($s['c']->buf, 0, $p);
                    $s['c']->buf = (string)substr($s['c']->buf, $p + 2);
                    ($line === '+PONG' || preg_match('/^:\d+$/', $line)) ? $resp_ok++ : $resp_bad++;
                    $s['want']--;
                }
            }
            unset($s);
        }
    }
    $elapsed = microtime(true) - $t0;
    $worker = cpu_seconds("/proc/$tid_path/stat") - $worker0;
    $others = cpu_seconds("/proc/$pid/stat") - $process0 - $worker;
    // Finish the RESP batches in flight, then read the counter.
    foreach ($resp as $s) {
        stream_set_blocking($s['c']->sock, true);
        for ($i = 0; $i < $s['want']; $i++) {
            $line = $s['c']->readLine();
            ($line === '+PONG' || preg_match('/^:\d+$/', (string)$line)) ? $resp_ok++ : $resp_bad++;
        }
    }
    $final = resp_command($resp[0]['c'], ['GET', $counter]);
    foreach (array_merge($static, $resp) as $s) {
        $s['c']->close();
    }
    $busy->close();

    check('busy.php answered (before the 30 s guard)', $done, sprintf('%.1f s, got %s', $elapsed, show($busy_buf)));
    check_contains('busy.php: "Maximum execution time of 1 second exceeded"',
        'Maximum execution time of 1 second exceeded', $busy_buf);
    check('busy.php: not stopped before 1 s of its own CPU time (>= 0.95 s wall)', $elapsed >= 0.95, sprintf('%.2f s', $elapsed));
    if ($env['zts'] ?? false) {
        // A thread-safe PHP times each request itself, with a per-thread
        // timer on CLOCK_BOOTTIME (wall time): other threads' CPU cannot
        // shorten it, which the >= 0.95 s check above shows.
        check('busy.php: PHP\'s per-thread timer ran about 1 s of wall time (0.95 to 10 s)',
            $elapsed >= 0.95 && $elapsed <= 10.0, sprintf('%.2f s', $elapsed));
    } else {
        check('busy.php: the PHP thread itself used about 1 s of CPU (0.9 to 3 s), not the process',
            $worker >= 0.9 && $worker <= 3.0, sprintf('PHP thread %.2f s CPU, other threads %.2f s', $worker, $others));
    }
    check('other threads burned CPU meanwhile (>= 0.1 s)', $others >= 0.1,
        sprintf('PHP thread %.2f s CPU, other threads %.2f s', $worker, $others));
    check('busy.php: answered within 20 s (liveness guard)', $elapsed < 20, sprintf('%.2f s', $elapsed));
    check('static files were served while PHP was busy', $static_ok > 0 && $static_bad === 0,
        "ok $static_ok, bad $static_bad");
    check('RESP was served while PHP was busy', $resp_ok > 0 && $resp_bad === 0, "ok $resp_ok, bad $resp_bad");
    check_eq('RESP INCRs all applied', (string)$incrs, $final);
    printf("        (busy.php: %.2f s wall, PHP thread %.2f s CPU, other threads %.2f s CPU; %d static responses, %d RESP replies)\n",
        $elapsed, $worker, $others, $static_ok, $resp_ok);
    $r = http($srv, 'GET', '/hello.php');
    check_eq('PHP serves again after the timeout', [200, 'hello'], [$r['status'], $r['body']]);
    $srv->stop();
}
