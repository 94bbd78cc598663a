<?php

declare(strict_types=1);

namespace Ephpm\Tests\Laravel;

use PHPUnit\Framework\TestCase;

/**
 * The Laravel suite's common ground: Illuminate's Config component (which
 * the shared bootstrap does not load) and, per test, a prefix of its own,
 * so that tests never see each other's keys in the host's shared store;
 * every key under it is removed afterwards.
 */
abstract class LaravelTestCase extends TestCase
{
    protected string $prefix;

    public static function setUpBeforeClass(): void
    {
        require_once '/usr/share/php/Illuminate/Config/autoload.php';
    }

    protected function setUp(): void
    {
        $this->prefix = 'lt' . bin2hex(random_bytes(6));
    }

    protected function tearDown(): void
    {
        foreach (ephpm_kv_keys($this->prefix . '*') as $key) {
            ephpm_kv_del($key);
        }
    }

    protected static function isHost(): bool
    {
        return getenv('EPHPM_TEST_MODE') === 'host';
    }

    /** The PHP CLI binary, for child processes (the host's PHP_BINARY is not one). */
    protected static function phpCli(): string
    {
        if (\PHP_SAPI === 'cli' && \PHP_BINARY !== '') {
            return \PHP_BINARY;
        }
        $php = \PHP_BINDIR . '/php';
        self::assertTrue(is_executable($php), "no PHP CLI at {$php}");
        return $php;
    }

    /**
     * Runs a PHP CLI child; returns [exit code, stdout, stderr].
     *
     * @param list<string> $args
     * @return array{int, string, string}
     */
    protected static function runPhp(array $args): array
    {
        $proc = proc_open(array_merge([self::phpCli()], $args), [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        self::assertIsResource($proc, 'proc_open failed');
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        return [proc_close($proc), (string) $out, (string) $err];
    }
}
