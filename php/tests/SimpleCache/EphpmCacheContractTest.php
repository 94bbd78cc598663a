<?php

declare(strict_types=1);

namespace Ephpm\Tests\SimpleCache;

use Cache\IntegrationTests\SimpleCacheTest;
use Ephpm\SimpleCache\EphpmCache;

/**
 * The PSR-16 contract (php-cache/integration-tests, Debian's
 * php-cache-integration-tests) against EphpmCache, under a prefix of its
 * own so that its clear() touches nothing else in a shared store.
 */
final class EphpmCacheContractTest extends SimpleCacheTest
{
    public function createSimpleCache()
    {
        return new EphpmCache('psr16-contract.');
    }
}
