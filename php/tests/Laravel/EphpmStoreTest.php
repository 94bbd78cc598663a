<?php

declare(strict_types=1);

namespace Ephpm\Tests\Laravel;

use Ephpm\Laravel\EphpmLock;
use Ephpm\Laravel\EphpmStore;
use Illuminate\Cache\Repository;
use Illuminate\Contracts\Cache\LockProvider;
use Illuminate\Contracts\Cache\Store;

/** The cache store's methods against the extension's store, key by key. */
final class EphpmStoreTest extends LaravelTestCase
{
    private EphpmStore $store;

    protected function setUp(): void
    {
        parent::setUp();
        $this->store = new EphpmStore($this->prefix);
    }

    public function testContracts(): void
    {
        self::assertInstanceOf(Store::class, $this->store);
        self::assertInstanceOf(LockProvider::class, $this->store);
        self::assertSame($this->prefix . ':', $this->store->getPrefix());
        self::assertSame('', (new EphpmStore())->getPrefix());
        $this->store->setPrefix('other');
        self::assertSame('other:', $this->store->getPrefix());
    }

    public function testGetAndPutRoundTripWithThePrefix(): void
    {
        self::assertNull($this->store->get('missing'));
        $values = [
            'string' => 'hello',
            'empty' => '',
            'array' => ['a' => 1, 'b' => [true, null, 1.5]],
            'object' => (object) ['x' => 'y'],
            'true' => true,
            'false' => false,
            'float' => 0.1 + 0.2,
            'binary' => "\0\xff\n",
        ];
        foreach ($values as $key => $value) {
            self::assertTrue($this->store->put($key, $value, 60), $key);
        }
        foreach ($values as $key => $value) {
            self::assertEquals($value, $this->store->get($key), $key);
        }
        self::assertSame(0.1 + 0.2, $this->store->get('float'));
        self::assertSame(serialize('hello'), ephpm_kv_get($this->prefix . ':string'));
        self::assertNull(ephpm_kv_get('string'));
        $ttl = ephpm_kv_ttl($this->prefix . ':string');
        self::assertGreaterThanOrEqual(59, $ttl);
        self::assertLessThanOrEqual(60, $ttl);
    }

    public function testNumbersAreStoredRawAndReadBackAsRedisStoreDoes(): void
    {
        self::assertTrue($this->store->put('int', 42, 60));
        self::assertSame('42', ephpm_kv_get($this->prefix . ':int'));
        self::assertSame('42', $this->store->get('int'));
        self::assertTrue($this->store->put('numeric', '007', 60));
        self::assertSame('007', $this->store->get('numeric'));
        self::assertTrue($this->store->put('negative', -5, 60));
        self::assertSame('-5', $this->store->get('negative'));
    }

    public function testPutWithoutTimeLeftRemovesTheKey(): void
    {
        self::assertTrue($this->store->put('k', 'v', 60));
        self::assertTrue($this->store->put('k', 'new', 0));
        self::assertNull($this->store->get('k'));
        self::assertTrue($this->store->put('k', 'v', 60));
        self::assertTrue($this->store->put('k', 'new', -10));
        self::assertFalse(ephpm_kv_exists($this->prefix . ':k'));
    }

    public function testFractionalSecondsRoundUp(): void
    {
        self::assertTrue($this->store->put('k', 'v', 0.2));
        self::assertSame(1, ephpm_kv_ttl($this->prefix . ':k'));
    }

    public function testPutExpires(): void
    {
        self::assertTrue($this->store->put('k', 'v', 1));
        self::assertSame('v', $this->store->get('k'));
        usleep(1_100_000);
        self::assertNull($this->store->get('k'));
    }

    public function testManyKeepsOrderAndGivesNullForMissing(): void
    {
        $this->store->put('a', 'A', 60);
        $this->store->put('c', ['C'], 60);
        $this->store->put('n', 3, 60);
        self::assertSame(
            ['c' => ['C'], 'missing' => null, 'a' => 'A', 'n' => '3', 'missing2' => null],
            $this->store->many(['c', 'missing', 'a', 'n', 'missing2'])
        );
        self::assertSame([], $this->store->many([]));
    }

    public function testPutMany(): void
    {
        self::assertTrue($this->store->putMany(['a' => 1, 'b' => 'two', 'c' => [3]], 60));
        self::assertSame(['a' => '1', 'b' => 'two', 'c' => [3]], $this->store->many(['a', 'b', 'c']));
        self::assertGreaterThan(0, ephpm_kv_ttl($this->prefix . ':c'));
        // as Laravel's stores: nothing stored is not a success
        self::assertFalse($this->store->putMany([], 60));
        // one entry that cannot be stored makes the whole call false
        self::assertFalse($this->store->putMany(['ok' => 1, str_repeat('k', 70000) => 2], 60));
        self::assertSame('1', $this->store->get('ok'));
    }

    public function testForever(): void
    {
        self::assertTrue($this->store->forever('k', ['v']));
        self::assertSame(['v'], $this->store->get('k'));
        self::assertSame(-1, ephpm_kv_ttl($this->prefix . ':k'));
    }

    public function testForget(): void
    {
        $this->store->put('k', 'v', 60);
        self::assertTrue($this->store->forget('k'));
        self::assertNull($this->store->get('k'));
        self::assertFalse($this->store->forget('k'));
    }

    public function testAddOnlyWhenAbsent(): void
    {
        self::assertTrue($this->store->add('k', 'first', 60));
        self::assertFalse($this->store->add('k', 'second', 60));
        self::assertSame('first', $this->store->get('k'));
        self::assertGreaterThan(0, ephpm_kv_ttl($this->prefix . ':k'));
        self::assertFalse($this->store->add('none', 'v', 0));
        self::assertNull($this->store->get('none'));
    }

    public function testAddAfterExpiry(): void
    {
        self::assertTrue($this->store->add('k', 'first', 1));
        usleep(1_100_000);
        self::assertTrue($this->store->add('k', 'second', 60));
        self::assertSame('second', $this->store->get('k'));
    }

    public function testIncrementAndDecrement(): void
    {
        // a missing key starts from the delta, as RedisStore and ArrayStore
        self::assertSame(1, $this->store->increment('missing'));
        self::assertSame(-3, $this->store->decrement('missing2', 3));
        self::assertSame(-1, ephpm_kv_ttl($this->prefix . ':missing'));

        $this->store->put('n', 10, 60);
        self::assertSame(15, $this->store->increment('n', 5));
        self::assertSame(14, $this->store->decrement('n'));
        self::assertSame(4, $this->store->decrement('n', 10));
        self::assertSame(6, $this->store->increment('n', '2'));
        self::assertSame('6', $this->store->get('n'));
        // the TTL of an existing key is kept
        self::assertGreaterThan(0, ephpm_kv_ttl($this->prefix . ':n'));

        $this->store->put('numeric', '12', 60);
        self::assertSame(13, $this->store->increment('numeric'));
    }

    public function testIncrementOfANonIntegerReturnsFalseAndKeepsTheValue(): void
    {
        $this->store->put('s', 'abc', 60);
        self::assertFalse($this->store->increment('s'));
        self::assertFalse($this->store->decrement('s'));
        self::assertSame('abc', $this->store->get('s'));

        $this->store->put('arr', [1], 60);
        self::assertFalse($this->store->increment('arr'));
        self::assertSame([1], $this->store->get('arr'));

        $this->store->put('float', 1.5, 60);
        self::assertFalse($this->store->increment('float'));
        $this->store->put('numericfloat', '1.5', 60);
        self::assertFalse($this->store->increment('numericfloat'));
        self::assertSame('1.5', $this->store->get('numericfloat'));
    }

    public function testIncrementOverflowReturnsFalse(): void
    {
        $this->store->forever('big', \PHP_INT_MAX);
        self::assertFalse($this->store->increment('big'));
        self::assertSame((string) \PHP_INT_MAX, $this->store->get('big'));
        $this->store->forever('small', \PHP_INT_MIN);
        self::assertFalse($this->store->decrement('small'));
        self::assertFalse($this->store->decrement('zero', \PHP_INT_MIN));
    }

    public function testIncrementRejectsANonIntegerDelta(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->store->increment('k', 1.5);
    }

    public function testOverlongKeysFailAsFailedWrites(): void
    {
        $long = str_repeat('k', 65536); // with the prefix it is over the store's limit
        self::assertFalse($this->store->put($long, 'v', 60));
        self::assertFalse($this->store->forever($long, 'v'));
        self::assertFalse($this->store->add($long, 'v', 60));
        self::assertFalse($this->store->increment($long));
        self::assertFalse($this->store->forget($long));
        self::assertNull($this->store->get($long));
        $this->store->put('short', 'v', 60);
        self::assertSame([$long => null, 'short' => 'v'], $this->store->many([$long, 'short']));

        // the limit is the store's: the longest key it takes works
        $fits = str_repeat('k', 65536 - \strlen($this->store->getPrefix()));
        self::assertTrue($this->store->put($fits, 'v', 60));
        self::assertSame('v', $this->store->get($fits));
        self::assertTrue($this->store->forget($fits));

        // an empty key without a prefix is no key at all
        $bare = new EphpmStore();
        self::assertFalse($bare->put('', 'v', 60));
        self::assertNull($bare->get(''));
    }

    public function testFlushRemovesOnlyThisPrefixsKeys(): void
    {
        $other = new EphpmStore($this->prefix . 'other');
        $this->store->put('a', 1, 60);
        $this->store->forever('b', 'x');
        $this->store->lock('l', 60)->acquire();
        $other->put('a', 'kept', 60);
        ephpm_kv_set($this->prefix . 'bare', 'kept');
        // glob characters in a prefix are literal
        $star = new EphpmStore($this->prefix . '*');
        $star->put('s', 'gone', 60);

        self::assertTrue($this->store->flush());
        self::assertSame(['a' => null, 'b' => null], $this->store->many(['a', 'b']));
        self::assertFalse(ephpm_kv_exists($this->prefix . ':l'));
        self::assertSame('kept', $other->get('a'));
        self::assertSame('kept', ephpm_kv_get($this->prefix . 'bare'));
        self::assertSame('gone', $star->get('s'));

        self::assertTrue($star->flush());
        self::assertNull($star->get('s'));
        self::assertSame('kept', $other->get('a'));
        self::assertSame('kept', ephpm_kv_get($this->prefix . 'bare'));
    }

    public function testFlushWithoutAPrefixRefusesAndKeepsEverything(): void
    {
        $bare = new EphpmStore();
        self::assertTrue($bare->put($this->prefix . 'bare', 'v', 60));
        self::assertFalse($bare->flush());
        self::assertSame('v', $bare->get($this->prefix . 'bare'));
    }

    public function testLocksAreMadeUnderThePrefix(): void
    {
        $lock = $this->store->lock('job', 30);
        self::assertInstanceOf(EphpmLock::class, $lock);
        self::assertTrue($lock->acquire());
        self::assertSame($lock->owner(), ephpm_kv_get($this->prefix . ':job'));
        self::assertMatchesRegularExpression('/\A[0-9a-f]{32}\z/', $lock->owner());
        self::assertNotSame($lock->owner(), $this->store->lock('job')->owner());

        $restored = $this->store->restoreLock('job', $lock->owner());
        self::assertSame($lock->owner(), $restored->owner());
        self::assertTrue($restored->release());
        self::assertFalse(ephpm_kv_exists($this->prefix . ':job'));
    }

    public function testTagsThroughARepository(): void
    {
        $cache = new Repository($this->store);
        $cache->tags(['people', 'artists'])->put('john', 'Doe', 60);
        $cache->tags(['people'])->put('anne', 'Smith', 60);
        self::assertSame('Doe', $cache->tags(['people', 'artists'])->get('john'));
        self::assertSame(2, $cache->tags(['people', 'artists'])->increment('count', 2));

        $cache->tags(['artists'])->flush();
        self::assertNull($cache->tags(['people', 'artists'])->get('john'));
        self::assertNull($cache->tags(['people', 'artists'])->get('count'));
        self::assertSame('Smith', $cache->tags(['people'])->get('anne'));
        // the tags' own keys are the store's, under its prefix
        self::assertTrue(ephpm_kv_exists($this->prefix . ':tag:people:key'));
    }

    public function testOverlongValuesFailAsFailedWrites(): void
    {
        // ephpm.max_value_size is fixed at startup: a child PHP with a small one
        $maps = (string) file_get_contents('/proc/self/maps');
        if (preg_match('~\s(/\S*/ephpm\.so)$~m', $maps, $m) !== 1) {
            self::markTestSkipped('the extension is not loaded from an ephpm.so here (the standalone run covers this)');
        }
        $script = <<<'PHP'
            require $argv[1];
            $store = new Ephpm\Laravel\EphpmStore('p');
            $small = str_repeat('s', 100);
            $large = str_repeat('x', 5000);
            echo json_encode([
                'max' => ephpm_kv_info()['max_value_size'],
                'put' => $store->put('k', $large, 60),
                'forever' => $store->forever('k', $large),
                'add' => $store->add('k', $large, 60),
                'putMany' => $store->putMany(['a' => $small, 'k' => $large], 60),
                'get' => $store->get('k'),
                'a' => $store->get('a'),
                'putSmall' => $store->put('k', $small, 60),
                'getSmall' => $store->get('k') === $small,
            ]);
            PHP;
        [$rc, $out, $err] = self::runPhp([
            '-n', '-d', 'extension=' . $m[1], '-d', 'ephpm.max_value_size=4K',
            '-r', $script, \dirname(__DIR__) . '/bootstrap.php',
        ]);
        self::assertSame(0, $rc, $out . $err);
        self::assertSame('', $err);
        self::assertSame([
            'max' => 4096, 'put' => false, 'forever' => false, 'add' => false, 'putMany' => false,
            'get' => null, 'a' => str_repeat('s', 100), 'putSmall' => true, 'getSmall' => true,
        ], json_decode($out, true, 4, \JSON_THROW_ON_ERROR));
    }
}
