<?php

declare(strict_types=1);

namespace Ephpm\Tests\Symfony;

use Ephpm\Symfony\Lock\EphpmStore;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\PersistingStoreInterface;
use Symfony\Component\Lock\Tests\Store\AbstractStoreTestCase;
use Symfony\Component\Lock\Tests\Store\BlockingStoreTestTrait;
use Symfony\Component\Lock\Tests\Store\ExpiringStoreTestTrait;

/**
 * EphpmStore under Symfony's own store contract (taken from Debian's symfony
 * source package at test time), plus a blocking test whose holder really is
 * another client of the store: Symfony's forks a process, which under the
 * CLI has a store of its own.
 */
final class EphpmStoreTest extends AbstractStoreTestCase
{
    use BlockingStoreTestTrait {
        testBlockingLocks as private symfonyBlockingLocks;
    }
    use ExpiringStoreTestTrait;

    protected function getClockDelay(): int
    {
        return 250000;
    }

    protected function getStore(): PersistingStoreInterface
    {
        return new EphpmStore();
    }

    /**
     * Symfony's test forks the process and has parent and child hold the
     * lock in turn. Neither mode shares the store with a fork: the CLI's
     * store is the process's own memory (the child gets a copy), and forking
     * the host copies it too, besides leaving a stray multi-threaded host
     * behind (its SIGHUP, blocked only in the forking thread, hangs the
     * real one up). testWaitAndSaveWakesOnReleaseByAnotherClient has a real
     * second holder instead.
     */
    public function testBlockingLocks(): void
    {
        $this->markTestSkipped(Harness::mode() === 'standalone'
            ? 'In the CLI every forked process has a store of its own, so the child\'s lock never blocks the parent'
            : 'Forking the multi-threaded host neither shares its store nor leaves it running');
        $this->symfonyBlockingLocks();
    }

    /**
     * The holder is redis-cli on the host's RESP port: waitAndSave() must
     * block while it holds the key and take the lock as soon as it DELs it
     * (the store's wait wakes on the release; a missed wake would show as
     * the wait step of a second).
     */
    public function testWaitAndSaveWakesOnReleaseByAnotherClient(): void
    {
        Harness::requireHost($this, 'Needs a client of the same store outside PHP: the host\'s RESP port');
        $store = new EphpmStore(30.0, 'test-lock:');
        $key = new Key(uniqid(__METHOD__, true));
        $name = 'test-lock:' . $key;

        $this->assertSame('OK', Harness::resp('SET', $name, 'held-by-redis-cli', 'PX', '30000'));
        try {
            $store->save($key);
            $this->fail('saved a key redis-cli holds');
        } catch (\Symfony\Component\Lock\Exception\LockConflictedException) {
        }

        // Releases 200 ms from now; prints when it starts the DEL.
        $script = 'sleep 0.2; date +%s.%N; redis-cli -p "$0" DEL "$1"';
        $releaser = proc_open(['sh', '-c', $script, (string) getenv('EPHPM_TEST_RESP_PORT'), $name],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $this->assertIsResource($releaser);
        $start = microtime(true);
        $store->waitAndSave($key);
        $acquiredAt = microtime(true);
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        $this->assertSame(0, proc_close($releaser), 'the releaser failed: ' . $err);
        [$delStartedAt, $delReply] = explode("\n", trim($out)) + ['', ''];
        $this->assertSame('1', $delReply, 'redis-cli did not delete the key');

        $this->assertGreaterThanOrEqual((float) $delStartedAt, $acquiredAt, 'waitAndSave() returned before the release');
        $this->assertGreaterThanOrEqual(0.2, $acquiredAt - $start);
        $this->assertLessThan(0.5, $acquiredAt - (float) $delStartedAt, 'waitAndSave() was not woken by the release');
        $this->assertTrue($store->exists($key));
        $this->assertSame($key->getState(EphpmStore::class), Harness::resp('GET', $name));
        $store->delete($key);
        $this->assertSame('0', Harness::resp('EXISTS', $name));
    }

    /**
     * A holder that never releases: the wait wakes when its TTL runs out
     * (the store moves the key's version at expiry), in both modes.
     */
    public function testWaitAndSaveWakesOnTheHoldersExpiry(): void
    {
        $store = new EphpmStore(30.0, 'test-lock:');
        $key = new Key(uniqid(__METHOD__, true));
        $name = 'test-lock:' . $key;
        $this->assertTrue(ephpm_kv_set($name, 'another-holder', 10));
        $this->assertTrue(ephpm_kv_pexpire($name, 300));

        $start = microtime(true);
        $store->waitAndSave($key);
        $elapsed = microtime(true) - $start;

        $this->assertGreaterThanOrEqual(0.29, $elapsed, 'waitAndSave() took a lock still held');
        $this->assertLessThan(0.8, $elapsed, 'waitAndSave() was not woken by the expiry');
        $this->assertSame($key->getState(EphpmStore::class), ephpm_kv_get($name));
        $this->assertGreaterThan(29000, ephpm_kv_pttl($name));
        $store->delete($key);
    }

    public function testWaitAndSaveTakesAFreeKeyAtOnceAndRefreshesItsOwn(): void
    {
        $store = new EphpmStore(2.5, 'test-lock:');
        $key = new Key(uniqid(__METHOD__, true));
        $store->waitAndSave($key);
        $this->assertTrue($store->exists($key));
        $pttl = ephpm_kv_pttl('test-lock:' . $key);
        $this->assertGreaterThan(2000, $pttl);
        $this->assertLessThanOrEqual(2500, $pttl);
        // Holding it already: returns at once instead of waiting for itself.
        $start = microtime(true);
        $store->waitAndSave($key);
        $this->assertLessThan(0.5, microtime(true) - $start);
        $this->assertTrue($store->exists($key));
        $store->delete($key);
        $this->assertFalse($store->exists($key));
    }
}
