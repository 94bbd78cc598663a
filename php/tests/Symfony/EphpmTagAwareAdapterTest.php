<?php

declare(strict_types=1);

namespace Ephpm\Tests\Symfony;

use Ephpm\Symfony\Cache\EphpmAdapter;
use Psr\Cache\CacheItemPoolInterface;
use Symfony\Component\Cache\Adapter\TagAwareAdapter;
use Symfony\Component\Cache\Tests\Adapter\AdapterTestCase;
use Symfony\Component\Cache\Tests\Adapter\TagAwareTestTrait;

/**
 * EphpmAdapter as the items and tags pool of Symfony's TagAwareAdapter,
 * under AdapterTestCase and Symfony's TagAwareTestTrait (taken at test time
 * from Debian's symfony source package). Symfony's TagAwareAdapterTest
 * itself is not reused: its extra tests read and write a FilesystemAdapter
 * next to the pool under test.
 */
final class EphpmTagAwareAdapterTest extends AdapterTestCase
{
    use TagAwareTestTrait;

    protected $skippedTests = [
        'testPrune' => 'TagAwareAdapter is pruneable only over a pruneable pool; EphpmAdapter is not one, '
            . 'the store expires items itself',
    ];

    public function createCachePool(int $defaultLifetime = 0, ?string $testMethod = null): CacheItemPoolInterface
    {
        return new TagAwareAdapter(new EphpmAdapter('EphpmTagAware', $defaultLifetime, null, 'test-cache:'));
    }
}
