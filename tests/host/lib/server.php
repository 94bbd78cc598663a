<?php
// The ephpm server under test: starts the program, reads its addresses, stops it with SIGTERM.

declare(strict_types=1);

const SIGTERM_NO = 15;
const SIGKILL_NO = 9;

final class Server
{
    /** @var resource */
    private $proc;
    /** @var resource */
    private $stdout;
    public int $port = 0;
    public int $resp_port = 0;
    public string $cluster_address = '';
    public string $log;
    /** What the program printed on stdout before its address(es). */
    public string $startup_output = '';
    private ?int $exit_code = null;
    private static array $all = [];
    /** Arguments every server gets (run.php --workers N). */
    public static array $extra = [];

    /**
     * Starts `ephpm ARGS`; waits for the printed address(es).  `$wrapper`
     * goes before the program (a command that execs it, e.g. prlimit).
     */
    public static function start(string $bin, array $args, bool $with_resp = false,
                                 array $wrapper = []): Server
    {
        $s = new Server();
        $s->log = tempnam(sys_get_temp_dir(), 'ephpm-host-log-');
        $cmd = array_merge($wrapper, [$bin, '--listen', '127.0.0.1:0'],
            $with_resp ? ['--resp', '127.0.0.1:0'] : [], self::$extra, $args);
        $s->proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', $s->log, 'w']], $pipes);
        if (!is_resource($s->proc)) {
            throw new RuntimeException('cannot start ' . implode(' ', $cmd));
        }
        self::$all[] = $s;
        $s->stdout = $pipes[1];
        stream_set_blocking($s->stdout, false);
        $deadline = microtime(true) + 15;
        $out = '';
        while (($s->port === 0 || ($with_resp && $s->resp_port === 0)) && microtime(true) < $deadline) {
            $r = [$s->stdout];
            $w = $e = null;
            if (@stream_select($r, $w, $e, 0, 100000) > 0) {
                $chunk = fread($s->stdout, 4096);
                if ($chunk === '' && feof($s->stdout)) {
                    break;
                }
                $out .= $chunk;
            }
            if (preg_match('/^http listening on 127\.0\.0\.1:(\d+)$/m', $out, $m)) {
                $s->port = (int)$m[1];
            }
            if (preg_match('/^resp listening on 127\.0\.0\.1:(\d+)$/m', $out, $m)) {
                $s->resp_port = (int)$m[1];
            }
            if (preg_match('/^cluster node \S+ listening on (\S+)$/m', $out, $m)) {
                $s->cluster_address = $m[1];
            }
        }
        $s->startup_output = $out;
        if ($s->port === 0 || ($with_resp && $s->resp_port === 0)) {
            $s->kill();
            throw new RuntimeException("ephpm did not print its address(es); stdout: " . show($out) .
                "\nstderr: " . show((string)@file_get_contents($s->log)));
        }
        return $s;
    }

    /** The program's process id (a wrapper that execs it keeps the id). */
    public function pid(): int
    {
        return (int)proc_get_status($this->proc)['pid'];
    }

    public function running(): bool
    {
        if ($this->exit_code !== null) {
            return false;
        }
        $st = proc_get_status($this->proc);
        if ($st['running']) {
            return true;
        }
        // Only the first call after the exit reports the code.
        $this->exit_code = $st['signaled'] ? 128 + $st['termsig'] : $st['exitcode'];
        return false;
    }

    public function signal(int $sig): void
    {
        if ($this->running()) {
            proc_terminate($this->proc, $sig);
        }
    }

    /** Waits for the exit; the exit code, or null on timeout. */
    public function wait(float $seconds): ?int
    {
        $deadline = microtime(true) + $seconds;
        while ($this->running()) {
            if (microtime(true) > $deadline) {
                return null;
            }
            usleep(10000);
        }
        return $this->exit_code;
    }

    /** SIGTERM, then the check that it exits 0 in time. */
    public function stop(string $what = 'SIGTERM: exits with code 0'): void
    {
        $this->signal(SIGTERM_NO);
        $code = $this->wait(20);
        if ($code === null) {
            $this->kill();
        }
        check_eq($what, 0, $code);
        if ($code !== 0) {
            echo "        server log (tail):\n", preg_replace('/^/m', '        | ', $this->logTail()), "\n";
        }
        $this->cleanup();
    }

    public function logTail(int $lines = 25): string
    {
        $all = file((string)$this->log, FILE_IGNORE_NEW_LINES) ?: [];
        return implode("\n", array_slice($all, -$lines));
    }

    public function kill(): void
    {
        if ($this->running()) {
            proc_terminate($this->proc, SIGKILL_NO);
            $this->wait(5);
        }
    }

    private function cleanup(): void
    {
        if (is_resource($this->stdout)) {
            fclose($this->stdout);
        }
        if (is_resource($this->proc)) {
            proc_close($this->proc);
        }
        @unlink($this->log);
    }

    public static function killAll(): void
    {
        foreach (self::$all as $s) {
            if (is_resource($s->proc)) {
                $s->kill();
                $s->cleanup();
            }
        }
    }
}
