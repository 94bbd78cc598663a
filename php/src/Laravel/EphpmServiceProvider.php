<?php

declare(strict_types=1);

namespace Ephpm\Laravel;

use Illuminate\Cache\CacheManager;
use Illuminate\Support\ServiceProvider;

/**
 * Registers the `ephpm` cache driver (package discovery names this class
 * in composer.json), so that an application switches with
 * CACHE_DRIVER=ephpm. A store's config is ['driver' => 'ephpm'] with an
 * optional 'prefix' (default: cache.prefix, as for Laravel's drivers); a
 * store named "ephpm" with that config is added when the application's
 * cache config has none.
 *
 * The driver is added when the cache manager is built (or at once if it
 * already is), not at boot: whatever resolves the cache first, even
 * another provider's register(), gets the driver, and a bare Container
 * works as well as an Application.
 */
class EphpmServiceProvider extends ServiceProvider
{
    public function register(): void
    {
        if ($this->app->bound('config') && $this->app['config']->get('cache.stores.ephpm') === null) {
            $this->app['config']->set('cache.stores.ephpm', ['driver' => 'ephpm']);
        }

        if ($this->app->resolved('cache')) {
            self::extend($this->app->make('cache'));
        } else {
            $this->app->afterResolving('cache', static function (CacheManager $manager): void {
                self::extend($manager);
            });
        }
    }

    private static function extend(CacheManager $manager): void
    {
        // CacheManager binds the creator to itself: getPrefix() and
        // repository() are its own (protected) methods.
        $manager->extend('ephpm', function ($app, array $config) {
            return $this->repository(new EphpmStore((string) $this->getPrefix($config)));
        });
    }
}
