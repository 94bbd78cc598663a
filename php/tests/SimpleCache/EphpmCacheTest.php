<?php

declare(strict_types=1);

namespace Ephpm\Tests\SimpleCache;

use Ephpm\ExtensionMissingException;
use Ephpm\SimpleCache\EphpmCache;
use Ephpm\SimpleCache\InvalidArgumentException;
use PHPUnit\Framework\TestCase;

/**
 * EphpmCache's own edge cases, beyond the PSR-16 contract test.
 */
final class EphpmCacheTest extends TestCase
{
    private const PREFIX = 'psr16-own.';

    private EphpmCache $cache;

    protected function setUp(): void
    {
        $this->cache = new EphpmCache(self::PREFIX);
        $this->cache->clear();
    }

    protected function tearDown(): void
    {
        $this->cache->clear();
    }

    public function testKeysLiveUnderThePrefix(): void
    {
        self::assertTrue($this->cache->set('k', 'v'));
        self::assertSame(serialize('v'), ephpm_kv_get(self::PREFIX . 'k'));
        self::assertNull(ephpm_kv_get('k'));
    }

    public function testStoredFalseAndNullAreNotMisses(): void
    {
        $this->cache->set('false', false);
        $this->cache->set('null', null);
        self::assertFalse($this->cache->get('false', 'default'));
        self::assertNull($this->cache->get('null', 'default'));
        self::assertTrue($this->cache->has('false'));
        self::assertTrue($this->cache->has('null'));
        self::assertSame('default', $this->cache->get('missing', 'default'));
        self::assertSame(
            ['false' => false, 'null' => null, 'missing' => 'default'],
            $this->cache->getMultiple(['false', 'null', 'missing'], 'default')
        );
    }

    public function testValuesOfEveryTypeRoundTrip(): void
    {
        $object = new \ArrayObject(['a' => 1.5]);
        $values = ['int' => -7, 'float' => 0.1 + 0.2, 'string' => "\0bin\xff", 'array' => [1, [2]], 'object' => $object, 'true' => true];
        self::assertTrue($this->cache->setMultiple($values));
        $got = $this->cache->getMultiple(array_keys($values));
        self::assertSame(-7, $got['int']);
        self::assertSame(0.1 + 0.2, $got['float']);
        self::assertSame("\0bin\xff", $got['string']);
        self::assertSame([1, [2]], $got['array']);
        self::assertEquals($object, $got['object']);
        self::assertNotSame($object, $got['object']);
        self::assertTrue($got['true']);
    }

    public function testTtlZeroDeletesAndReturnsTrue(): void
    {
        $this->cache->set('k', 'v');
        self::assertTrue($this->cache->set('k', 'w', 0));
        self::assertFalse($this->cache->has('k'));
        self::assertNull(ephpm_kv_get(self::PREFIX . 'k'));
    }

    public function testNegativeTtlDeletesAndReturnsTrue(): void
    {
        $this->cache->set('k', 'v');
        self::assertTrue($this->cache->set('k', 'w', -1));
        self::assertFalse($this->cache->has('k'));
        $this->cache->setMultiple(['a' => 1, 'b' => 2]);
        self::assertTrue($this->cache->setMultiple(['a' => 3, 'b' => 4], -10));
        self::assertSame(['a' => null, 'b' => null], $this->cache->getMultiple(['a', 'b']));
    }

    public function testNegativeDateIntervalDeletes(): void
    {
        $this->cache->set('k', 'v');
        $past = new \DateInterval('PT5S');
        $past->invert = 1;
        self::assertTrue($this->cache->set('k', 'w', $past));
        self::assertFalse($this->cache->has('k'));
    }

    public function testIntAndDateIntervalTtlsReachTheStore(): void
    {
        $this->cache->set('int', 'v', 100);
        $this->cache->set('interval', 'v', new \DateInterval('PT1H'));
        $this->cache->set('none', 'v');
        $ttl = ephpm_kv_ttl(self::PREFIX . 'int');
        self::assertGreaterThanOrEqual(99, $ttl);
        self::assertLessThanOrEqual(100, $ttl);
        $ttl = ephpm_kv_ttl(self::PREFIX . 'interval');
        self::assertGreaterThanOrEqual(3599, $ttl);
        self::assertLessThanOrEqual(3600, $ttl);
        self::assertSame(-1, ephpm_kv_ttl(self::PREFIX . 'none'));
    }

    public function testDefaultTtlAppliesToNullOnly(): void
    {
        $cache = new EphpmCache(self::PREFIX, 50);
        $cache->set('default', 'v');
        $cache->set('explicit', 'v', 500);
        self::assertGreaterThanOrEqual(49, ephpm_kv_ttl(self::PREFIX . 'default'));
        self::assertLessThanOrEqual(50, ephpm_kv_ttl(self::PREFIX . 'default'));
        self::assertGreaterThan(50, ephpm_kv_ttl(self::PREFIX . 'explicit'));
    }

    public function testExpiry(): void
    {
        $this->cache->set('k', 'v', 1);
        self::assertSame('v', $this->cache->get('k'));
        usleep(2_100_000);
        self::assertNull($this->cache->get('k'));
        self::assertFalse($this->cache->has('k'));
    }

    /** @return iterable<string, array{mixed}> */
    public static function invalidKeys(): iterable
    {
        foreach (str_split('{}()/\\@:') as $c) {
            yield "reserved {$c}" => ["a{$c}b"];
        }
        yield 'empty' => [''];
        yield 'int' => [1];
        yield 'null' => [null];
        yield 'float' => [1.0];
        yield 'bool' => [true];
        yield 'object' => [new \stdClass()];
        yield 'stringable' => [new class() {
            public function __toString(): string
            {
                return 'k';
            }
        }];
    }

    /**
     * @dataProvider invalidKeys
     *
     * @param mixed $key
     */
    public function testInvalidKeysAreRefusedEverywhere($key): void
    {
        $calls = [
            'get' => fn () => $this->cache->get($key),
            'set' => fn () => $this->cache->set($key, 1),
            'has' => fn () => $this->cache->has($key),
            'delete' => fn () => $this->cache->delete($key),
            'getMultiple' => fn () => $this->cache->getMultiple(['ok', $key]),
            'deleteMultiple' => fn () => $this->cache->deleteMultiple(new \ArrayIterator(['ok', $key])),
        ];
        if (\is_string($key)) {
            $calls['setMultiple'] = fn () => $this->cache->setMultiple(['ok' => 1, $key => 2]);
        }
        // An int key is what PHP makes of an array key such as '1': setMultiple()
        // takes it as that string, from an array or a Traversable alike.
        if (!\is_int($key)) {
            $calls['setMultiple generator'] = function () use ($key) {
                return $this->cache->setMultiple((static function () use ($key) {
                    yield 'ok' => 1;
                    yield $key => 2;
                })());
            };
        }
        foreach ($calls as $name => $call) {
            try {
                $call();
                self::fail("{$name}() accepted the key");
            } catch (InvalidArgumentException $e) {
                self::assertInstanceOf(\Psr\SimpleCache\InvalidArgumentException::class, $e);
            }
        }
        // The valid key of a refused batch was not written either.
        self::assertFalse($this->cache->has('ok'));
    }

    public function testNonIterableArgumentsAreRefused(): void
    {
        foreach ([
            fn () => $this->cache->getMultiple('k'),
            fn () => $this->cache->setMultiple('k'),
            fn () => $this->cache->deleteMultiple(null),
            fn () => $this->cache->getMultiple(new \stdClass()),
        ] as $i => $call) {
            try {
                $call();
                self::fail("call {$i} accepted a non-iterable");
            } catch (InvalidArgumentException $e) {
                self::assertStringContainsString('array or a Traversable', $e->getMessage());
            }
        }
    }

    public function testTraversableKeys(): void
    {
        $this->cache->setMultiple(new \ArrayIterator(['a' => 1, 'b' => 2, 'c' => 3]));
        $keys = (static function () {
            yield 'a';
            yield 'b';
            yield 'x';
        })();
        self::assertSame(['a' => 1, 'b' => 2, 'x' => 'd'], $this->cache->getMultiple($keys, 'd'));
        self::assertTrue($this->cache->deleteMultiple(new \ArrayIterator(['a', 'c'])));
        self::assertSame(['a' => null, 'b' => 2, 'c' => null], $this->cache->getMultiple(['a', 'b', 'c']));
    }

    /** @return iterable<string, array{mixed}> */
    public static function invalidTtls(): iterable
    {
        yield 'float' => [1.5];
        yield 'numeric string' => ['10'];
        yield 'bool' => [true];
        yield 'object' => [new \stdClass()];
        yield 'DateTime' => [new \DateTime()];
    }

    /**
     * @dataProvider invalidTtls
     *
     * @param mixed $ttl
     */
    public function testInvalidTtlsAreRefused($ttl): void
    {
        $this->cache->set('k', 'old');
        try {
            $this->cache->set('k', 'new', $ttl);
            self::fail('set() accepted the TTL');
        } catch (InvalidArgumentException $e) {
            self::assertSame('old', $this->cache->get('k'));
        }
        $this->expectException(InvalidArgumentException::class);
        $this->cache->setMultiple(['k' => 'new'], $ttl);
    }

    public function testClearRemovesOnlyThePrefixsKeys(): void
    {
        $other = new EphpmCache('psr16-other.');
        $glob = new EphpmCache('psr16-own*');
        try {
            $other->set('k', 'theirs');
            $glob->set('k', 'glob');
            ephpm_kv_set('psr16-unprefixed', 'raw');
            $this->cache->set('k', 'ours');
            $this->cache->set('j', 'ours');
            self::assertTrue($this->cache->clear());
            self::assertFalse($this->cache->has('k'));
            self::assertFalse($this->cache->has('j'));
            self::assertSame('theirs', $other->get('k'));
            self::assertSame('glob', $glob->get('k'));
            self::assertSame('raw', ephpm_kv_get('psr16-unprefixed'));
            // A prefix with glob characters matches only itself.
            self::assertTrue($glob->clear());
            self::assertNull($glob->get('k'));
            self::assertSame('theirs', $other->get('k'));
        } finally {
            $other->clear();
            $glob->clear();
            ephpm_kv_del('psr16-unprefixed');
        }
    }

    public function testKeysLongerThanTheStoreAllowsAreHashed(): void
    {
        $long = str_repeat('k', EphpmCache::MAX_STORE_KEY_LENGTH);
        $other = str_repeat('k', EphpmCache::MAX_STORE_KEY_LENGTH - 1) . 'j';
        self::assertTrue($this->cache->set($long, 'long'));
        self::assertTrue($this->cache->set($other, 'other'));
        self::assertSame('long', $this->cache->get($long));
        self::assertSame('other', $this->cache->get($other));
        self::assertSame(serialize('long'), ephpm_kv_get(self::PREFIX . 'sha256:' . hash('sha256', $long)));
        self::assertTrue($this->cache->delete($long));
        self::assertFalse($this->cache->has($long));
        self::assertTrue($this->cache->has($other));
    }

    public function testUnserializableValueIsNotStoredAndClearsTheOldOne(): void
    {
        $this->cache->set('k', 'old');
        self::assertFalse($this->cache->set('k', static fn () => 1));
        self::assertFalse($this->cache->has('k'));
        self::assertNull(ephpm_kv_get(self::PREFIX . 'k'));
    }

    public function testOversizeValueMakesSetReturnFalseAndClearsTheOldOne(): void
    {
        // ephpm.max_value_size is a system setting: a child PHP with 1K.
        [$code, $out, $err] = ChildPhp::run(<<<'PHP'
            $cache = new Ephpm\SimpleCache\EphpmCache('p.');
            var_dump($cache->set('k', 'old'));
            var_dump($cache->set('k', str_repeat('x', 2000)));
            var_dump($cache->has('k'), ephpm_kv_get('p.k'));
            var_dump($cache->setMultiple(['k' => 'small', 'big' => str_repeat('y', 2000)]));
            var_dump($cache->get('k'), $cache->has('big'));
            PHP, true, ['ephpm.max_value_size=1K']);
        self::assertSame(0, $code, $out . $err);
        self::assertSame('', $err);
        self::assertSame(
            "bool(true)\nbool(false)\nbool(false)\nNULL\nbool(false)\nstring(5) \"small\"\nbool(false)\n",
            $out
        );
    }

    public function testPrefixLimit(): void
    {
        new EphpmCache(str_repeat('p', EphpmCache::MAX_PREFIX_LENGTH));
        $this->expectException(InvalidArgumentException::class);
        new EphpmCache(str_repeat('p', EphpmCache::MAX_PREFIX_LENGTH + 1));
    }

    public function testNegativeDefaultTtlIsRefused(): void
    {
        $this->expectException(InvalidArgumentException::class);
        new EphpmCache('', -1);
    }

    public function testWithoutTheExtensionTheConstructorThrows(): void
    {
        [$code, $out, $err] = ChildPhp::run(<<<'PHP'
            var_dump(extension_loaded('ephpm'));
            try {
                new Ephpm\SimpleCache\EphpmCache();
                echo "constructed\n";
            } catch (Ephpm\ExtensionMissingException $e) {
                echo get_class($e), ': ', $e->getMessage(), "\n";
            }
            PHP, false);
        self::assertSame(0, $code, $out . $err);
        self::assertStringStartsWith(
            "bool(false)\n" . ExtensionMissingException::class . ': ' . EphpmCache::class . ' needs the ephpm extension',
            $out
        );
    }
}
