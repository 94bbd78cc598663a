<?php

declare(strict_types=1);

namespace Ephpm\Tests\Laravel;

use Ephpm\Laravel\EphpmLock;
use Ephpm\Laravel\EphpmServiceProvider;
use Ephpm\Laravel\EphpmStore;
use Illuminate\Cache\CacheManager;
use Illuminate\Cache\CacheServiceProvider;
use Illuminate\Cache\RateLimiter;
use Illuminate\Cache\Repository;
use Illuminate\Config\Repository as Config;
use Illuminate\Container\Container;
use Illuminate\Contracts\Cache\LockTimeoutException;
use Illuminate\Support\Facades\Cache;
use Illuminate\Support\Facades\Facade;

/**
 * End to end without a full application: a Container with the config,
 * Laravel's CacheServiceProvider and ours, used through the Cache facade
 * as an application would after CACHE_DRIVER=ephpm.
 */
final class ServiceProviderTest extends LaravelTestCase
{
    private Container $app;

    protected function setUp(): void
    {
        parent::setUp();
        $this->app = new Container();
        $this->app->instance('config', new Config(['cache' => [
            'default' => 'ephpm',
            'prefix' => $this->prefix,
            'limiter' => 'ephpm',
            'stores' => [
                'array' => ['driver' => 'array'],
                'other' => ['driver' => 'ephpm', 'prefix' => $this->prefix . 'other'],
            ],
        ]]));
        (new CacheServiceProvider($this->app))->register();
        (new EphpmServiceProvider($this->app))->register();
        Facade::setFacadeApplication($this->app);
    }

    protected function tearDown(): void
    {
        Facade::clearResolvedInstances();
        Facade::setFacadeApplication(null);
        parent::tearDown();
    }

    public function testTheDriverIsRegisteredWithTheConfiguredPrefix(): void
    {
        self::assertSame(['driver' => 'ephpm'], $this->app['config']->get('cache.stores.ephpm'));
        $repository = Cache::store();
        self::assertInstanceOf(Repository::class, $repository);
        self::assertInstanceOf(EphpmStore::class, $repository->getStore());
        self::assertSame($this->prefix . ':', $repository->getStore()->getPrefix());
        self::assertSame($this->prefix . 'other:', Cache::store('other')->getStore()->getPrefix());
        self::assertNotInstanceOf(EphpmStore::class, Cache::store('array')->getStore());
    }

    public function testAStoreConfigOfTheAppIsKept(): void
    {
        $app = new Container();
        $app->instance('config', new Config(['cache' => [
            'default' => 'ephpm', 'prefix' => 'ignored',
            'stores' => ['ephpm' => ['driver' => 'ephpm', 'prefix' => $this->prefix . 'own']],
        ]]));
        (new CacheServiceProvider($app))->register();
        (new EphpmServiceProvider($app))->register();
        self::assertSame($this->prefix . 'own:', $app['cache']->store()->getStore()->getPrefix());
    }

    public function testRegisteringAfterTheManagerWasBuiltStillAddsTheDriver(): void
    {
        $app = new Container();
        $app->instance('config', new Config(['cache' => [
            'default' => 'ephpm', 'prefix' => $this->prefix, 'stores' => [],
        ]]));
        (new CacheServiceProvider($app))->register();
        self::assertInstanceOf(CacheManager::class, $app->make('cache'));
        (new EphpmServiceProvider($app))->register();
        self::assertInstanceOf(EphpmStore::class, $app['cache']->store()->getStore());
    }

    public function testTheCacheFacade(): void
    {
        self::assertTrue(Cache::add('k', 'first', 60));
        self::assertFalse(Cache::add('k', 'second', 60));
        self::assertSame('first', Cache::get('k'));
        self::assertSame(serialize('first'), ephpm_kv_get($this->prefix . ':k'));

        self::assertSame(1, Cache::increment('counter'));
        self::assertSame(11, Cache::increment('counter', 10));
        self::assertSame(8, Cache::decrement('counter', 3));

        $calls = 0;
        $compute = static function () use (&$calls): array {
            $calls++;
            return ['computed'];
        };
        self::assertSame(['computed'], Cache::remember('r', 60, $compute));
        self::assertSame(['computed'], Cache::remember('r', 60, $compute));
        self::assertSame(1, $calls);
        self::assertSame('forever', Cache::rememberForever('f', static fn (): string => 'forever'));
        self::assertSame(-1, ephpm_kv_ttl($this->prefix . ':f'));

        self::assertTrue(Cache::put('p', 'v', 60));
        self::assertTrue(Cache::put('p', 'v', 0), 'a TTL of 0 forgets the key');
        self::assertFalse(Cache::has('p'));
        self::assertSame('first', Cache::pull('k'));
        self::assertNull(Cache::get('k'));

        self::assertTrue(Cache::store('other')->put('k', 'other', 60));
        self::assertTrue(Cache::flush());
        self::assertNull(Cache::get('counter'));
        self::assertSame('other', Cache::store('other')->get('k'));
    }

    public function testTagsThroughTheFacade(): void
    {
        Cache::tags(['posts'])->put('1', 'post one', 60);
        Cache::tags(['posts', 'users'])->put('2', 'post two', 60);
        self::assertSame('post one', Cache::tags(['posts'])->get('1'));
        Cache::tags(['posts'])->flush();
        self::assertNull(Cache::tags(['posts'])->get('1'));
        self::assertNull(Cache::tags(['posts', 'users'])->get('2'));
    }

    public function testLocksThroughTheFacade(): void
    {
        $lock = Cache::lock('report', 30);
        self::assertInstanceOf(EphpmLock::class, $lock);
        self::assertTrue($lock->block(2));
        self::assertSame($lock->owner(), ephpm_kv_get($this->prefix . ':report'));

        $start = hrtime(true);
        try {
            Cache::lock('report', 30)->block(1);
            self::fail('a held lock was acquired');
        } catch (LockTimeoutException $e) {
        }
        self::assertGreaterThanOrEqual(0.99, (hrtime(true) - $start) / 1e9);

        self::assertTrue(Cache::restoreLock('report', $lock->owner())->release());
        self::assertSame('done', Cache::lock('report', 30)->block(1, static fn (): string => 'done'));
        self::assertFalse(ephpm_kv_exists($this->prefix . ':report'));
    }

    public function testRateLimiter(): void
    {
        $limiter = $this->app->make(RateLimiter::class);
        self::assertInstanceOf(EphpmStore::class, (new \ReflectionProperty($limiter, 'cache'))->getValue($limiter)->getStore());
        self::assertFalse($limiter->tooManyAttempts('login:ann', 3));
        self::assertSame(1, $limiter->hit('login:ann', 60));
        self::assertSame(2, $limiter->hit('login:ann', 60));
        self::assertFalse($limiter->tooManyAttempts('login:ann', 3));
        self::assertSame(3, $limiter->hit('login:ann', 60));
        self::assertTrue($limiter->tooManyAttempts('login:ann', 3));
        self::assertSame(0, $limiter->remaining('login:ann', 3));
        $available = $limiter->availableIn('login:ann');
        self::assertGreaterThanOrEqual(59, $available);
        self::assertLessThanOrEqual(60, $available);
        self::assertFalse($limiter->tooManyAttempts('login:bob', 3));

        $limiter->clear('login:ann');
        self::assertFalse($limiter->tooManyAttempts('login:ann', 3));
        self::assertSame(0, $limiter->attempts('login:ann'));
        self::assertSame(1, $limiter->hit('login:ann', 60));
    }

    public function testRateLimiterWindowExpires(): void
    {
        $limiter = $this->app->make(RateLimiter::class);
        self::assertSame(1, $limiter->hit('api', 1));
        self::assertTrue($limiter->tooManyAttempts('api', 1));
        usleep(1_100_000);
        self::assertFalse($limiter->tooManyAttempts('api', 1));
        self::assertSame(1, $limiter->hit('api', 1));
    }
}
