<?php

declare(strict_types=1);

namespace Ephpm\Tests\Symfony;

use Ephpm\ExtensionMissingException;
use Ephpm\Symfony\Lock\EphpmStore;
use PHPUnit\Framework\TestCase;
use Symfony\Component\Lock\Exception\InvalidArgumentException;
use Symfony\Component\Lock\Exception\InvalidTtlException;
use Symfony\Component\Lock\Exception\LockAcquiringException;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Exception\LockExpiredException;
use Symfony\Component\Lock\Exception\LockReleasingException;
use Symfony\Component\Lock\Exception\LockStorageException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\LockFactory;

/**
 * What Symfony's store contract does not check: the token discipline
 * (an expired holder cannot release or refresh the next holder's lock),
 * exact TTLs, and every error a user can run into.
 */
final class EphpmStoreGuaranteesTest extends TestCase
{
    private const PREFIX = 'test-lock:';

    private static function name(Key $key): string
    {
        return self::PREFIX . $key;
    }

    public function testTheTokenIs128RandomBitsAndTheStoredValue(): void
    {
        $store = new EphpmStore(30.0, self::PREFIX);
        $a = new Key(uniqid(__METHOD__, true));
        $b = new Key(uniqid(__METHOD__, true));
        $store->save($a);
        $store->save($b);
        $token = $a->getState(EphpmStore::class);
        $this->assertMatchesRegularExpression('/^[0-9a-f]{32}$/', $token);
        $this->assertNotSame($token, $b->getState(EphpmStore::class));
        $this->assertSame($token, ephpm_kv_get(self::name($a)));
        $store->delete($a);
        $store->delete($b);
    }

    public function testAnExpiredHolderCannotReleaseOrRefreshTheNextHoldersLock(): void
    {
        $store = new EphpmStore(0.1, self::PREFIX);
        $resource = uniqid(__METHOD__, true);
        $first = new Key($resource);
        $next = new Key($resource);

        $store->save($first);
        usleep(150000);
        $this->assertFalse($store->exists($first), 'the first lock did not expire');
        $longStore = new EphpmStore(30.0, self::PREFIX);
        $longStore->save($next);
        $pttl = ephpm_kv_pttl(self::name($next));

        $store->delete($first);
        $this->assertTrue($longStore->exists($next), 'the expired holder deleted the next holder\'s lock');
        try {
            $store->putOffExpiration($first, 0.05);
            $this->fail('an expired holder refreshed the next holder\'s lock');
        } catch (LockConflictedException) {
        }
        $this->assertGreaterThan($pttl - 1000, ephpm_kv_pttl(self::name($next)), 'the next holder\'s TTL changed');
        $this->assertFalse($store->exists($first));
        $this->assertTrue($longStore->exists($next));
        $longStore->delete($next);
        $this->assertFalse(ephpm_kv_exists(self::name($next)));
    }

    public function testALockReleasedAndTakenByAnotherIsNotDeletedByTheFormerHolder(): void
    {
        $store = new EphpmStore(30.0, self::PREFIX);
        $resource = uniqid(__METHOD__, true);
        $first = new Key($resource);
        $next = new Key($resource);
        $store->save($first);
        $store->delete($first);
        $store->save($next);
        $store->delete($first);
        $this->assertTrue($store->exists($next));
        $store->delete($next);
    }

    public function testSaveSetsTheTtlToTheMillisecondAndNeverLeavesNone(): void
    {
        $store = new EphpmStore(1.25, self::PREFIX);
        $key = new Key(uniqid(__METHOD__, true));
        $store->save($key);
        $pttl = ephpm_kv_pttl(self::name($key));
        $this->assertGreaterThan(1000, $pttl);
        $this->assertLessThanOrEqual(1250, $pttl);
        $this->assertEqualsWithDelta(1.25, $key->getRemainingLifetime(), 0.1);
        $store->delete($key);

        // A whole number of seconds is one setnx, still with its TTL.
        $store = new EphpmStore(2.0, self::PREFIX);
        $store->save($key);
        $pttl = ephpm_kv_pttl(self::name($key));
        $this->assertGreaterThan(1500, $pttl);
        $this->assertLessThanOrEqual(2000, $pttl);
        $store->delete($key);
    }

    public function testSavingAHeldKeyAgainRefreshesIt(): void
    {
        $store = new EphpmStore(0.4, self::PREFIX);
        $key = new Key(uniqid(__METHOD__, true));
        $store->save($key);
        usleep(250000);
        $key->resetLifetime();
        $store->save($key);
        usleep(250000);
        $this->assertTrue($store->exists($key), 'the second save did not refresh the TTL');
        $store->delete($key);
    }

    public function testAConflictingSaveLeavesTheHolderAlone(): void
    {
        $store = new EphpmStore(30.0, self::PREFIX);
        $resource = uniqid(__METHOD__, true);
        $holder = new Key($resource);
        $other = new Key($resource);
        $store->save($holder);
        ephpm_kv_pexpire(self::name($holder), 5000);
        try {
            $store->save($other);
            $this->fail('saved a held lock');
        } catch (LockConflictedException $e) {
            $this->assertStringContainsString($resource, $e->getMessage());
        }
        $this->assertSame($holder->getState(EphpmStore::class), ephpm_kv_get(self::name($holder)));
        $this->assertLessThanOrEqual(5000, ephpm_kv_pttl(self::name($holder)));
        $store->delete($holder);
    }

    public function testPutOffExpirationSetsTheTtlByTokenOnly(): void
    {
        $store = new EphpmStore(30.0, self::PREFIX);
        $key = new Key(uniqid(__METHOD__, true));
        $store->save($key);
        $store->putOffExpiration($key, 0.5);
        $pttl = ephpm_kv_pttl(self::name($key));
        $this->assertGreaterThan(300, $pttl);
        $this->assertLessThanOrEqual(500, $pttl);
        $store->delete($key);

        $this->expectException(LockConflictedException::class);
        $store->putOffExpiration($key, 10.0);
    }

    public function testPutOffExpirationOfAKeyNeverSaved(): void
    {
        $store = new EphpmStore(30.0, self::PREFIX);
        $key = new Key(uniqid(__METHOD__, true));
        try {
            $store->putOffExpiration($key, 10.0);
            $this->fail('refreshed a lock never taken');
        } catch (LockConflictedException) {
        }
        $this->assertFalse(ephpm_kv_exists(self::name($key)), 'a refresh created the key');
    }

    public function testAnExpiredKeyIsGivenBackAndReported(): void
    {
        $store = new EphpmStore(30.0, self::PREFIX);
        $key = new Key(uniqid(__METHOD__, true));
        $key->reduceLifetime(0);
        try {
            $store->save($key);
            $this->fail('saved an expired key');
        } catch (LockExpiredException $e) {
            $this->assertNull($e->getPrevious());
        }
        $this->assertFalse(ephpm_kv_exists(self::name($key)));
    }

    public function testWithSymfonysLockFactory(): void
    {
        $factory = new LockFactory(new EphpmStore(30.0, self::PREFIX));
        $resource = uniqid(__METHOD__, true);
        $lock = $factory->createLock($resource, 2.0);
        $this->assertTrue($lock->acquire());
        $this->assertFalse($factory->createLock($resource)->acquire());
        $lock->refresh(5.0);
        $this->assertGreaterThan(4000, ephpm_kv_pttl(self::PREFIX . $resource));

        $lock->release();
        $this->assertFalse($lock->isAcquired());
        $this->assertFalse(ephpm_kv_exists(self::PREFIX . $resource));
    }

    public function testASerializedKeyKeepsItsToken(): void
    {
        $store = new EphpmStore(30.0, self::PREFIX);
        $key = new Key(uniqid(__METHOD__, true));
        $store->save($key);
        $copy = unserialize(serialize($key));
        $this->assertTrue($store->exists($copy));
        $store->delete($copy);
        $this->assertFalse($store->exists($key));
    }

    /** @return iterable<string, array{float}> */
    public static function badTtls(): iterable
    {
        yield 'zero' => [0.0];
        yield 'negative' => [-1.0];
        yield 'NaN' => [\NAN];
        yield 'infinite' => [\INF];
        yield 'past the store\'s longest' => [5e15];
    }

    /** @dataProvider badTtls */
    public function testABadInitialTtlIsRefused(float $ttl): void
    {
        $this->expectException(InvalidTtlException::class);
        new EphpmStore($ttl);
    }

    /** @dataProvider badTtls */
    public function testABadRefreshTtlIsRefusedAndChangesNothing(float $ttl): void
    {
        $store = new EphpmStore(30.0, self::PREFIX);
        $key = new Key(uniqid(__METHOD__, true));
        $store->save($key);
        try {
            $store->putOffExpiration($key, $ttl);
            $this->fail('took a TTL of ' . var_export($ttl, true));
        } catch (InvalidTtlException) {
        }
        $this->assertGreaterThan(29000, ephpm_kv_pttl(self::name($key)));
        $store->delete($key);
    }

    public function testAKeyTooLongForTheStoreIsRefused(): void
    {
        $store = new EphpmStore(30.0, self::PREFIX);
        $key = new Key(str_repeat('k', 65537 - \strlen(self::PREFIX)));
        $this->expectException(InvalidArgumentException::class);
        $this->expectExceptionMessage('1 to 65536 bytes, 65537 given');
        $store->save($key);
    }

    public function testTheLongestKeyIsTaken(): void
    {
        $store = new EphpmStore(30.0, self::PREFIX);
        $key = new Key(str_repeat('k', 65536 - \strlen(self::PREFIX)));
        $store->save($key);
        $this->assertTrue($store->exists($key));
        $store->delete($key);
        $this->assertFalse($store->exists($key));
    }

    public function testAnEmptyNameIsRefused(): void
    {
        $store = new EphpmStore(30.0, '');
        $this->expectException(InvalidArgumentException::class);
        $store->exists(new Key(''));
    }

    public function testAPrefixTooLongIsRefused(): void
    {
        $this->expectException(InvalidArgumentException::class);
        new EphpmStore(30.0, str_repeat('p', 65536));
    }

    public function testAStoreOutOfMemoryFailsTheAcquireWithItsReason(): void
    {
        [$rc, $out, $err] = Harness::runPhp(<<<'PHP'
            $store = new Ephpm\Symfony\Lock\EphpmStore(30.0);
            // Fill the store up to its limit, to the last bytes, then ask for a lock.
            $i = 0;
            foreach ([4096, 512, 64, 1] as $size) {
                while (@ephpm_kv_set('fill:' . $i++, str_repeat('x', $size)));
            }
            try {
                $store->save(new Symfony\Component\Lock\Key('report'));
                echo "saved\n";
            } catch (Symfony\Component\Lock\Exception\LockConflictedException $e) {
                echo "conflict\n";
            } catch (Symfony\Component\Lock\Exception\LockAcquiringException $e) {
                echo get_class($e), ': ', $e->getMessage(), "\n";
            }
            PHP, ['ephpm.memory_limit' => '1M']);
        $this->assertSame(0, $rc, $err);
        $this->assertStringStartsWith(LockAcquiringException::class . ': Saving the "report" lock: ', $out);
        $this->assertStringContainsString('memory limit', $out);
    }

    public function testAStoreErrorWhileReadingIsAStorageException(): void
    {
        Harness::requireHost($this, 'Only a RESP client can give a key another type than string');
        $store = new EphpmStore(30.0, self::PREFIX);
        $key = new Key(uniqid(__METHOD__, true));
        $this->assertSame('1', Harness::resp('HSET', self::name($key), 'f', 'v'));
        try {
            $this->expectException(LockStorageException::class);
            $this->expectExceptionMessage('WRONGTYPE');
            $store->exists($key);
        } finally {
            Harness::resp('DEL', self::name($key));
        }
    }

    public function testAStoreErrorWhileSavingIsAnAcquiringException(): void
    {
        Harness::requireHost($this, 'Only a RESP client can give a key another type than string');
        $store = new EphpmStore(30.5, self::PREFIX);
        $key = new Key(uniqid(__METHOD__, true));
        $this->assertSame('1', Harness::resp('HSET', self::name($key), 'f', 'v'));
        try {
            // setnx finds a key; the compare-and-expire that would refresh
            // our own lock meets a hash: the store's error, not a conflict.
            $this->expectException(LockAcquiringException::class);
            $this->expectExceptionMessage('Saving the "' . $key . '" lock: WRONGTYPE');
            $store->save($key);
        } finally {
            Harness::resp('DEL', self::name($key));
        }
    }

    public function testStoreErrorsWhileReleasingRefreshingAndWaiting(): void
    {
        Harness::requireHost($this, 'Only a RESP client can give a key another type than string');
        $store = new EphpmStore(30.0, self::PREFIX);
        $key = new Key(uniqid(__METHOD__, true));
        $store->save($key);
        // Another client replaces the lock with a hash.
        $this->assertSame('1', Harness::resp('DEL', self::name($key)));
        $this->assertSame('1', Harness::resp('HSET', self::name($key), 'f', 'v'));
        try {
            $cases = [
                [LockReleasingException::class, 'Releasing', static fn () => $store->delete($key)],
                [LockStorageException::class, 'Refreshing', static fn () => $store->putOffExpiration($key, 5.0)],
                [LockAcquiringException::class, 'Saving', static fn () => $store->waitAndSave($key)],
            ];
            foreach ($cases as [$class, $verb, $call]) {
                try {
                    $call();
                    $this->fail($verb . ' over a hash did not fail');
                } catch (\Exception $e) {
                    $this->assertSame($class, \get_class($e), $e->getMessage());
                    $this->assertSame($verb . ' the "' . $key . '" lock: WRONGTYPE Operation against a key holding the wrong kind of value', $e->getMessage());
                    $this->assertInstanceOf(\Error::class, $e->getPrevious());
                }
            }
            $this->assertSame('hash', Harness::resp('TYPE', self::name($key)));
        } finally {
            Harness::resp('DEL', self::name($key));
        }
    }

    public function testConstructionWithoutTheExtensionThrows(): void
    {
        [$rc, $out, $err] = Harness::runPhp(<<<'PHP'
            try {
                new Ephpm\Symfony\Lock\EphpmStore();
                echo "constructed\n";
            } catch (Ephpm\ExtensionMissingException $e) {
                echo $e->getMessage(), "\n";
            }
            PHP, null);
        $this->assertSame(0, $rc, $err);
        $this->assertStringStartsWith(EphpmStore::class . ' needs the ephpm extension, which this PHP', $out);
        $this->assertTrue(class_exists(ExtensionMissingException::class));
    }
}
