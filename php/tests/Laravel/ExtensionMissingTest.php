<?php

declare(strict_types=1);

namespace Ephpm\Tests\Laravel;

/**
 * Without the extension the adapters refuse to start, and say why, rather
 * than cache or lock somewhere else.
 */
final class ExtensionMissingTest extends LaravelTestCase
{
    /** @return array<string, array{string}> */
    public static function adapters(): array
    {
        return [
            'store' => ['new Ephpm\Laravel\EphpmStore("p");'],
            'lock' => ['new Ephpm\Laravel\EphpmLock("p:l", 10);'],
        ];
    }

    /** @dataProvider adapters */
    public function testConstructionWithoutTheExtensionThrows(string $construct): void
    {
        $script = 'require $argv[1];'
            . 'if (extension_loaded("ephpm")) { echo "loaded"; exit(2); }'
            . 'try { ' . $construct . ' echo "constructed"; exit(1); }'
            . ' catch (Ephpm\ExtensionMissingException $e) { echo $e->getMessage(); exit(0); }';
        [$rc, $out, $err] = self::runPhp(['-n', '-r', $script, \dirname(__DIR__) . '/bootstrap.php']);
        self::assertSame('', $err);
        self::assertSame(0, $rc, $out);
        $class = str_contains($construct, 'Lock') ? 'Ephpm\Laravel\EphpmLock' : 'Ephpm\Laravel\EphpmStore';
        self::assertStringStartsWith($class . ' needs the ephpm extension, which this PHP (', $out);
        self::assertStringContainsString('SAPI "cli"', $out);
        self::assertStringContainsString('add extension=ephpm to its php.ini', $out);
    }
}
