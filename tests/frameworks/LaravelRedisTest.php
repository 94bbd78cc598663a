<?php
// Laravel 8 (Debian's php-laravel-framework) over phpredis against a RESP
// server, the way an application configures it: the cache in database 1,
// sessions and queues in database 0, the phpredis client with a prefix.
// Run by tests/frameworks/run.sh against redis-server and against ephpm; the
// same assertions must hold on both.
//
//   REDIS_HOST=127.0.0.1:6379 phpunit tests/frameworks/LaravelRedisTest.php

declare(strict_types=1);

require_once '/usr/share/php/Illuminate/autoload.php';

use Illuminate\Cache\RateLimiter;
use Illuminate\Cache\RedisStore;
use Illuminate\Cache\Repository;
use Illuminate\Container\Container;
use Illuminate\Queue\RedisQueue;
use Illuminate\Redis\RedisManager;
use PHPUnit\Framework\TestCase;

final class LaravelRedisTest extends TestCase
{
    private RedisManager $redis;
    private Repository $cache;
    private RedisStore $store;
    private Container $app;

    protected function setUp(): void
    {
        [$host, $port] = explode(':', getenv('REDIS_HOST') ?: '127.0.0.1:6379');
        $server = ['host' => $host, 'port' => (int) $port, 'timeout' => 5.0];
        $this->app = new Container();
        // Laravel 8's config/database.php: 'default' in database 0, 'cache' in 1.
        $this->redis = new RedisManager($this->app, 'phpredis', [
            'options' => ['prefix' => 'laravel_database_'],
            'default' => $server + ['database' => 0],
            'cache' => $server + ['database' => 1],
        ]);
        foreach (['default', 'cache'] as $c) {
            $this->redis->connection($c)->client()->flushDb();
        }
        $this->store = new RedisStore($this->redis, 'laravel_cache', 'cache');
        $this->cache = new Repository($this->store);
    }

    protected function tearDown(): void
    {
        $this->redis->purge('default');
        $this->redis->purge('cache');
    }

    public function testCacheInDatabaseOneLeavesDatabaseZeroAlone(): void
    {
        $default = $this->redis->connection('default');
        $default->set('session:abc', 'payload');
        $this->cache->put('k', 'v', 60);
        $this->assertSame('v', $this->cache->get('k'));
        $this->assertSame(1, $this->redis->connection('cache')->client()->dbSize());

        $this->assertTrue($this->cache->flush());  // FLUSHDB on database 1
        $this->assertNull($this->cache->get('k'));
        $this->assertSame('payload', $default->get('session:abc'));
    }

    public function testAddIsSetIfAbsentWithTtl(): void
    {
        $this->assertTrue($this->cache->add('a', 'first', 60));
        $this->assertFalse($this->cache->add('a', 'second', 60));
        $this->assertSame('first', $this->cache->get('a'));
        $ttl = $this->redis->connection('cache')->ttl('laravel_cache:a');
        $this->assertGreaterThan(55, $ttl);
        $this->assertLessThanOrEqual(60, $ttl);
    }

    public function testPutManyManyIncrementForever(): void
    {
        $this->assertTrue($this->cache->putMany(['x' => 1, 'y' => 'two', 'z' => [3]], 60));
        // Laravel stores numbers unserialized, so they come back as strings.
        $this->assertSame(['x' => '1', 'y' => 'two', 'z' => [3], 'w' => null],
                          $this->cache->many(['x', 'y', 'z', 'w']));
        $this->assertSame(2, $this->cache->increment('x'));
        $this->assertSame(-3, $this->cache->decrement('x', 5));
        $this->assertTrue($this->cache->forever('f', 'kept'));
        $this->assertSame(-1, $this->redis->connection('cache')->ttl('laravel_cache:f'));
        $this->assertSame('kept', $this->cache->pull('f'));
        $this->assertFalse($this->cache->has('f'));
    }

    public function testTagsFlushOnlyTheirEntries(): void
    {
        $this->cache->tags(['people', 'artists'])->put('john', 'doe', 60);
        $this->cache->tags(['people'])->put('anne', 'smith', 60);
        $this->cache->tags(['other'])->forever('keep', 'me');
        $this->assertSame('doe', $this->cache->tags(['people', 'artists'])->get('john'));

        $this->cache->tags(['artists'])->flush();
        $this->assertNull($this->cache->tags(['people', 'artists'])->get('john'));
        $this->assertSame('smith', $this->cache->tags(['people'])->get('anne'));
        $this->assertSame('me', $this->cache->tags(['other'])->get('keep'));

        $this->cache->tags(['people'])->flush();
        $this->assertNull($this->cache->tags(['people'])->get('anne'));
        $this->assertSame('me', $this->cache->tags(['other'])->get('keep'));
    }

    public function testLockIsExclusiveAndReleasedOnlyByItsOwner(): void
    {
        $a = $this->store->lock('report', 10);
        $b = $this->store->lock('report', 10);
        $this->assertTrue($a->get());
        $this->assertFalse($b->get());
        $this->assertFalse($b->release(), 'another owner must not release the lock');
        $this->assertFalse($this->store->lock('report', 10)->get());
        $this->assertTrue($a->release());
        $this->assertTrue($b->get());

        // restoreLock with the owner token releases; a wrong token does not.
        $this->assertFalse($this->store->restoreLock('report', 'not-the-owner')->release());
        $this->assertTrue($this->store->restoreLock('report', $b->owner())->release());
        $this->assertSame('ran', $this->store->lock('report', 10)->get(fn () => 'ran'));
        // get($callback) released it again.
        $this->assertTrue($this->store->lock('report', 10)->get());
    }

    public function testLockTtlForceReleaseAndBlock(): void
    {
        $a = $this->store->lock('job', 5);
        $this->assertTrue($a->acquire());
        $ttl = $this->redis->connection('cache')->ttl('laravel_cache:job');
        $this->assertGreaterThan(0, $ttl);
        $this->assertLessThanOrEqual(5, $ttl);

        $this->store->lock('job')->forceRelease();
        $b = $this->store->lock('job', 5);
        $this->assertTrue($b->block(1));
        $this->assertFalse($a->release());
        $this->assertTrue($b->release());

        $c = $this->store->lock('job', 5);
        $this->assertTrue($c->acquire());
        try {
            $this->store->lock('job', 5)->betweenBlockedAttemptsSleepFor(50)->block(0.3);
            $this->fail('block() on a held lock must time out');
        } catch (\Illuminate\Contracts\Cache\LockTimeoutException $e) {
            $this->assertTrue($c->release());
        }
    }

    public function testRateLimiter(): void
    {
        $limiter = new RateLimiter($this->cache);
        for ($i = 1; $i <= 3; $i++) {
            $this->assertFalse($limiter->tooManyAttempts('login:1', 3));
            $this->assertSame($i, $limiter->hit('login:1', 60));
        }
        $this->assertTrue($limiter->tooManyAttempts('login:1', 3));
        $this->assertSame(0, $limiter->remaining('login:1', 3));
        $this->assertGreaterThan(55, $limiter->availableIn('login:1'));
        $limiter->clear('login:1');
        $this->assertFalse($limiter->tooManyAttempts('login:1', 3));
        $this->assertSame(3, $limiter->remaining('login:1', 3));
    }

    public function testRedisThrottleAndFunnel(): void
    {
        $conn = $this->redis->connection('default');
        $granted = 0;
        for ($i = 0; $i < 5; $i++) {
            $conn->throttle('api')->allow(3)->every(60)->then(function () use (&$granted) {
                $granted++;
            }, function () {
            });
        }
        $this->assertSame(3, $granted);

        $slot = (new \Illuminate\Redis\Limiters\ConcurrencyLimiter($conn, 'funnel', 2, 60));
        $this->assertSame('a', $slot->block(0, fn () => 'a'));
        $held = new \Illuminate\Redis\Limiters\ConcurrencyLimiter($conn, 'funnel2', 1, 60);
        $inner = null;
        $held->block(0, function () use ($conn, &$inner) {
            try {
                (new \Illuminate\Redis\Limiters\ConcurrencyLimiter($conn, 'funnel2', 1, 60))
                    ->block(0, fn () => 'never');
                $inner = 'ran';
            } catch (\Illuminate\Contracts\Redis\LimiterTimeoutException $e) {
                $inner = 'refused';
            }
        });
        $this->assertSame('refused', $inner);
    }

    private function queue(?int $blockFor = null): RedisQueue
    {
        $queue = new RedisQueue($this->redis, 'default', 'default', 60, $blockFor);
        $queue->setContainer($this->app);
        $queue->setConnectionName('redis');
        return $queue;
    }

    public function testQueuePushPopDelete(): void
    {
        $queue = $this->queue();
        $id = $queue->push('App\\Jobs\\SendMail', ['to' => 'a@example.org']);
        $this->assertIsString($id);
        $queue->push('App\\Jobs\\SendMail', ['to' => 'b@example.org']);
        $this->assertSame(2, $queue->size());

        $job = $queue->pop();
        $this->assertNotNull($job);
        $this->assertSame($id, $job->getJobId());
        $this->assertSame(['to' => 'a@example.org'], $job->payload()['data']);
        $this->assertSame(1, $job->attempts());
        $this->assertSame(2, $queue->size(), 'a reserved job still counts');

        $job->delete();
        $this->assertSame(1, $queue->size());
        $second = $queue->pop();
        $this->assertSame(['to' => 'b@example.org'], $second->payload()['data']);
        $second->delete();
        $this->assertSame(0, $queue->size());
        $this->assertNull($queue->pop());
    }

    public function testQueueLaterAndRelease(): void
    {
        $queue = $this->queue();
        $queue->later(1, 'App\\Jobs\\Report', ['n' => 1]);
        $this->assertSame(1, $queue->size());
        $this->assertNull($queue->pop(), 'a delayed job is not ready yet');
        usleep(1_300_000);
        $job = $queue->pop();
        $this->assertNotNull($job, 'the delayed job migrated to the ready list');
        $this->assertSame(['n' => 1], $job->payload()['data']);

        $job->release(0);  // back to the delayed set, ready at once
        $again = $queue->pop();
        $this->assertNotNull($again);
        $this->assertSame(2, $again->attempts());
        $again->delete();
        $this->assertSame(0, $queue->size());
    }

    public function testQueueExpiredReservationComesBack(): void
    {
        $queue = new RedisQueue($this->redis, 'default', 'default', 1, null);
        $queue->setContainer($this->app);
        $queue->setConnectionName('redis');
        $queue->push('App\\Jobs\\Slow', []);
        $job = $queue->pop();
        $this->assertNotNull($job);
        usleep(1_300_000);  // retry_after 1 s: the reservation expired
        $retry = $queue->pop();
        $this->assertNotNull($retry, 'an expired reservation is handed out again');
        $this->assertSame($job->getJobId(), $retry->getJobId());
        $this->assertSame(2, $retry->attempts());
        $retry->delete();
    }

    public function testQueueBlockingPopWaitsForAPush(): void
    {
        $queue = $this->queue(1);
        $this->assertNull($queue->pop(), 'BLPOP with a timeout of 1 s on an empty queue');
        $queue->push('App\\Jobs\\Quick', ['q' => 1]);
        $job = $queue->pop();
        $this->assertNotNull($job);
        $this->assertSame(['q' => 1], $job->payload()['data']);
        $job->delete();
    }

    public function testQueueClear(): void
    {
        $queue = $this->queue();
        $queue->push('App\\Jobs\\A', []);
        $queue->later(60, 'App\\Jobs\\B', []);
        $queue->pop();
        $queue->push('App\\Jobs\\C', []);
        $this->assertSame(3, $queue->size());
        $this->assertSame(3, $queue->clear('default'));
        $this->assertSame(0, $queue->size());
    }

    public function testTransactionIsAtomic(): void
    {
        $conn = $this->redis->connection('default');
        $result = $conn->transaction(function ($tx) {
            $tx->set('t1', 'a');
            $tx->incr('t2');
            $tx->rpush('t3', 'x', 'y');
        });
        $this->assertSame([true, 1, 2], $result);
        $this->assertSame(['x', 'y'], $conn->lrange('t3', 0, -1));
    }
}
