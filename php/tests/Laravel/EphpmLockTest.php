<?php

declare(strict_types=1);

namespace Ephpm\Tests\Laravel;

use Ephpm\Laravel\EphpmLock;
use Ephpm\Laravel\EphpmStore;
use Illuminate\Contracts\Cache\LockTimeoutException;

/**
 * The lock: ownership by token, release by compare-and-delete, and block()
 * woken by the store rather than by polling.
 */
final class EphpmLockTest extends LaravelTestCase
{
    private EphpmStore $store;
    private string $key;

    protected function setUp(): void
    {
        parent::setUp();
        $this->store = new EphpmStore($this->prefix);
        $this->key = $this->prefix . ':job';
    }

    public function testAcquireAndRelease(): void
    {
        $a = $this->store->lock('job', 30);
        $b = $this->store->lock('job', 30);
        self::assertTrue($a->acquire());
        self::assertFalse($b->acquire());
        self::assertFalse($a->acquire(), 'a lock is not reentrant');
        self::assertSame($a->owner(), ephpm_kv_get($this->key));
        $ttl = ephpm_kv_ttl($this->key);
        self::assertGreaterThanOrEqual(29, $ttl);
        self::assertLessThanOrEqual(30, $ttl);

        self::assertFalse($b->release(), 'only the owner releases');
        self::assertSame($a->owner(), ephpm_kv_get($this->key));
        self::assertTrue($a->release());
        self::assertNull(ephpm_kv_get($this->key));
        self::assertFalse($a->release(), 'a second release finds nothing');
        self::assertTrue($b->acquire());
    }

    public function testOwnersAre128BitTokens(): void
    {
        $owners = [];
        for ($i = 0; $i < 50; $i++) {
            $owner = $this->store->lock('job')->owner();
            self::assertMatchesRegularExpression('/\A[0-9a-f]{32}\z/', $owner);
            $owners[$owner] = true;
        }
        self::assertCount(50, $owners);
        self::assertSame('mine', $this->store->lock('job', 0, 'mine')->owner());
    }

    public function testNoTtlMeansNoExpiry(): void
    {
        self::assertTrue($this->store->lock('job')->acquire());
        self::assertSame(-1, ephpm_kv_ttl($this->key));
        self::assertTrue($this->store->lock('other', -5)->acquire());
        self::assertSame(-1, ephpm_kv_ttl($this->prefix . ':other'));
    }

    public function testRejectsANonNumericTtl(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->store->lock('job', 'soon');
    }

    public function testForceReleaseIgnoresTheOwner(): void
    {
        self::assertTrue($this->store->lock('job', 30)->acquire());
        $this->store->lock('job')->forceRelease();
        self::assertFalse(ephpm_kv_exists($this->key));
        $this->store->lock('job')->forceRelease(); // nothing to remove: no error
        self::assertFalse(ephpm_kv_exists($this->key));
    }

    public function testCurrentOwner(): void
    {
        $a = $this->store->lock('job', 30);
        $b = $this->store->lock('job', 30);
        self::assertNull(self::callProtected($a, 'getCurrentOwner'));
        $a->acquire();
        self::assertSame($a->owner(), self::callProtected($b, 'getCurrentOwner'));
        self::assertTrue(self::callProtected($a, 'isOwnedByCurrentProcess'));
        self::assertFalse(self::callProtected($b, 'isOwnedByCurrentProcess'));
    }

    public function testRestoreLockReleasesTheOriginalGrant(): void
    {
        $a = $this->store->lock('job', 30);
        self::assertTrue($a->acquire());
        $restored = $this->store->restoreLock('job', $a->owner());
        self::assertInstanceOf(EphpmLock::class, $restored);
        self::assertSame($a->owner(), $restored->owner());
        self::assertFalse($this->store->restoreLock('job', 'someone else')->release());
        self::assertTrue($restored->release());
        self::assertFalse(ephpm_kv_exists($this->key));
    }

    public function testGetWithCallbackRunsItAndReleases(): void
    {
        $lock = $this->store->lock('job', 30);
        self::assertSame('result', $lock->get(function () use ($lock): string {
            self::assertSame($lock->owner(), ephpm_kv_get($this->key));
            return 'result';
        }));
        self::assertFalse(ephpm_kv_exists($this->key));

        self::assertTrue($lock->get());
        $ran = false;
        self::assertFalse($this->store->lock('job', 30)->get(function () use (&$ran): void {
            $ran = true;
        }));
        self::assertFalse($ran);
        self::assertSame($lock->owner(), ephpm_kv_get($this->key));
    }

    public function testGetReleasesWhenTheCallbackThrows(): void
    {
        $lock = $this->store->lock('job', 30);
        try {
            $lock->get(static function (): void {
                throw new \RuntimeException('boom');
            });
            self::fail('the exception was swallowed');
        } catch (\RuntimeException $e) {
            self::assertSame('boom', $e->getMessage());
        }
        self::assertFalse(ephpm_kv_exists($this->key));
    }

    public function testBlockOnAFreeLock(): void
    {
        $lock = $this->store->lock('job', 30);
        self::assertTrue($lock->block(1));
        self::assertSame($lock->owner(), ephpm_kv_get($this->key));
        $lock->release();
        self::assertSame(7, $this->store->lock('job', 30)->block(1, static fn (): int => 7));
        self::assertFalse(ephpm_kv_exists($this->key));
    }

    public function testBlockTimesOut(): void
    {
        $holder = $this->store->lock('job');
        self::assertTrue($holder->acquire());
        $waiter = $this->store->lock('job', 30);
        $start = hrtime(true);
        try {
            $waiter->block(1);
            self::fail('block() acquired a held lock');
        } catch (LockTimeoutException $e) {
        }
        $elapsed = (hrtime(true) - $start) / 1e9;
        self::assertGreaterThanOrEqual(0.99, $elapsed);
        self::assertLessThan(2.5, $elapsed);
        self::assertSame($holder->owner(), ephpm_kv_get($this->key));

        $start = hrtime(true);
        try {
            $waiter->block(0, static function (): void {
                self::fail('the callback ran without the lock');
            });
            self::fail('block(0) acquired a held lock');
        } catch (LockTimeoutException $e) {
        }
        self::assertLessThan(0.2, (hrtime(true) - $start) / 1e9);
    }

    public function testBlockIsWokenByTheExpiryNotByPolling(): void
    {
        self::assertTrue($this->store->lock('job', 1)->acquire());
        // a single wait may last 10 s: only the store's wake-up can end it in time
        $waiter = $this->store->lock('job', 30)->betweenBlockedAttemptsSleepFor(10_000);
        $start = hrtime(true);
        self::assertTrue($waiter->block(5));
        $elapsed = (hrtime(true) - $start) / 1e9;
        // the expiry is at 1 s; a poll would come at 10 s
        self::assertGreaterThan(0.8, $elapsed);
        self::assertLessThan(3.0, $elapsed);
        self::assertSame($waiter->owner(), ephpm_kv_get($this->key));
    }

    /**
     * The design note's scenario: A's lock expires while A still works, B
     * takes it; A's late release must not free B's lock for C.
     */
    public function testAnExpiredHolderCannotReleaseTheNextHoldersLock(): void
    {
        $a = $this->store->lock('job', 1);
        self::assertTrue($a->acquire());
        usleep(1_200_000);
        $b = $this->store->lock('job', 30);
        self::assertTrue($b->acquire());
        self::assertFalse($a->release());
        self::assertSame($b->owner(), ephpm_kv_get($this->key));
        self::assertFalse($this->store->lock('job', 30)->acquire(), 'C got in while B holds the lock');
        self::assertTrue($b->release());
    }

    public function testBlockIsWokenByAnotherHoldersRelease(): void
    {
        $port = getenv('EPHPM_TEST_RESP_PORT');
        if (!self::isHost() || !\is_string($port) || $port === '') {
            self::markTestSkipped('needs another client of the same store: the host run covers this');
        }
        $holder = $this->store->lock('job');
        self::assertTrue($holder->acquire());
        $waiter = $this->store->lock('job', 30)->betweenBlockedAttemptsSleepFor(10_000);

        // Another holder's wrong token at 200 ms must not let the waiter in;
        // the owner's release at 400 ms must wake it at once.
        $cli = sprintf('redis-cli -p %d DELIFEQ %s', (int) $port, escapeshellarg($this->key));
        $script = sprintf('sleep 0.2; %s wrong; sleep 0.2; %s %s', $cli, $cli, escapeshellarg($holder->owner()));
        $start = hrtime(true);
        $proc = proc_open(['sh', '-c', $script], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        self::assertIsResource($proc);
        try {
            self::assertTrue($waiter->block(5));
            $elapsed = (hrtime(true) - $start) / 1e9;
        } finally {
            $out = stream_get_contents($pipes[1]);
            $err = stream_get_contents($pipes[2]);
            fclose($pipes[1]);
            fclose($pipes[2]);
            $rc = proc_close($proc);
        }
        self::assertSame(0, $rc, $err);
        self::assertSame("0\n1\n", $out, 'redis-cli: ' . $out . $err);
        self::assertGreaterThanOrEqual(0.4, $elapsed);
        self::assertLessThan(3.0, $elapsed, 'a poll would come at 10 s');
        self::assertSame($waiter->owner(), ephpm_kv_get($this->key));
    }

    private static function callProtected(object $object, string $method): mixed
    {
        return (new \ReflectionMethod($object, $method))->invoke($object);
    }
}
