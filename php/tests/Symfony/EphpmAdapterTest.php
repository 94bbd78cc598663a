<?php

declare(strict_types=1);

namespace Ephpm\Tests\Symfony;

use Ephpm\Symfony\Cache\EphpmAdapter;
use Psr\Cache\CacheItemPoolInterface;
use Symfony\Component\Cache\Tests\Adapter\AdapterTestCase;

/**
 * EphpmAdapter under Symfony's own adapter contract (AdapterTestCase and the
 * PSR-6 integration tests it extends), taken at test time from Debian's
 * symfony source package. testPrune is skipped by AdapterTestCase itself:
 * the adapter is not pruneable, the store expires items on its own.
 */
final class EphpmAdapterTest extends AdapterTestCase
{
    public function createCachePool(int $defaultLifetime = 0, ?string $testMethod = null): CacheItemPoolInterface
    {
        return new EphpmAdapter(str_replace('\\', '.', __CLASS__), $defaultLifetime, null, 'test-cache:');
    }
}
