<?php

declare(strict_types=1);

namespace Ephpm\Tests\Symfony;

use PHPUnit\Framework\TestCase;

/**
 * What the Symfony suite's own tests need beyond PHPUnit: a PHP of their own
 * (without the extension, or with a small store) and, in host mode, a client
 * of the host's RESP port, which reaches the same store as PHP from outside
 * it.
 */
final class Harness
{
    public static function mode(): string
    {
        return (string) getenv('EPHPM_TEST_MODE');
    }

    /** Skips the test unless it runs in the host, with RESP. */
    public static function requireHost(TestCase $test, string $why): void
    {
        if (self::mode() !== 'host' || !getenv('EPHPM_TEST_RESP_PORT')) {
            $test->markTestSkipped($why);
        }
    }

    /**
     * Runs $code (after php/tests/bootstrap.php) in a PHP CLI of its own:
     * run.sh's PHP with no php.ini and, given $ini, the extension with those
     * ephpm.* settings (null: without the extension).
     *
     * @param array<string, string>|null $ini
     *
     * @return array{int, string, string} exit code, stdout, stderr
     */
    public static function runPhp(string $code, ?array $ini): array
    {
        $php = (string) getenv('EPHPM_TEST_PHP');
        $ext = (string) getenv('EPHPM_TEST_EXTENSION');
        TestCase::assertNotSame('', $php, 'EPHPM_TEST_PHP is not set (run the suite with php/tests/run.sh)');
        $cmd = [$php, '-n'];
        if ($ini !== null) {
            TestCase::assertFileExists($ext, 'EPHPM_TEST_EXTENSION names no file (run the suite with php/tests/run.sh)');
            $cmd[] = '-d';
            $cmd[] = 'extension=' . $ext;
            foreach ($ini as $name => $value) {
                $cmd[] = '-d';
                $cmd[] = $name . '=' . $value;
            }
        }
        $cmd[] = '-r';
        $cmd[] = 'require ' . var_export(\dirname(__DIR__) . '/bootstrap.php', true) . ';' . $code;
        $env = ['PATH' => (string) getenv('PATH')];
        $symfony = getenv('SYMFONY_TESTS_ROOT');
        if (\is_string($symfony)) {
            $env['SYMFONY_TESTS_ROOT'] = $symfony;
        }
        $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
        TestCase::assertIsResource($proc, 'could not start ' . $php);
        $out = (string) stream_get_contents($pipes[1]);
        $err = (string) stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        return [proc_close($proc), $out, $err];
    }

    /**
     * Runs one command through redis-cli against the host's RESP port and
     * returns its reply as redis-cli prints it (trimmed).
     */
    public static function resp(string ...$args): string
    {
        $cmd = array_merge(['redis-cli', '-p', (string) getenv('EPHPM_TEST_RESP_PORT')], $args);
        $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        TestCase::assertIsResource($proc, 'could not start redis-cli');
        $out = (string) stream_get_contents($pipes[1]);
        $err = (string) stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        $rc = proc_close($proc);
        TestCase::assertSame(0, $rc, 'redis-cli ' . implode(' ', $args) . ' failed: ' . $err);
        return trim($out);
    }
}
