<?php

declare(strict_types=1);

namespace Ephpm\Symfony\Cache;

use Ephpm\ExtensionMissingException;
use Ephpm\Symfony\StoreCall;
use Symfony\Component\Cache\Adapter\AbstractAdapter;
use Symfony\Component\Cache\CacheItem;
use Symfony\Component\Cache\Exception\CacheException;
use Symfony\Component\Cache\Exception\InvalidArgumentException;
use Symfony\Component\Cache\Marshaller\DefaultMarshaller;
use Symfony\Component\Cache\Marshaller\MarshallerInterface;

/**
 * Symfony Cache pool over ephpm's store, shared by every worker of the host.
 *
 * Every item lives under "<key prefix><namespace>:<key>": the key prefix
 * sets the pool's keys apart from the application's own ephpm_kv_* keys, so
 * clear() removes only its namespace's items (with the empty namespace:
 * every item under the key prefix, as Symfony's Redis and APCu pools do).
 *
 * The store expires items itself, so there is nothing to prune: no
 * PruneableInterface. An item the store refuses (a value over
 * ephpm.max_value_size, its memory limit, a log it cannot write) or the
 * marshaller cannot serialize fails save() and is removed, so that the pool
 * never goes on serving the value it was meant to replace.
 */
class EphpmAdapter extends AbstractAdapter
{
    /** The longest key the store takes. */
    private const MAX_KEY_BYTES = 65536;

    /** The longest TTL in seconds the store takes (EPHPM_KV_MAX_TTL_MS / 1000). */
    private const MAX_TTL_SECONDS = 4_611_686_018_427_387;

    private readonly MarshallerInterface $marshaller;
    private readonly string $keyPrefix;

    /**
     * @param string $keyPrefix put before every id to make the store's key; not empty,
     *                          so that clear() never reaches keys that are not the pool's
     */
    public function __construct(
        string $namespace = '',
        int $defaultLifetime = 0,
        ?MarshallerInterface $marshaller = null,
        string $keyPrefix = 'sf-cache:'
    ) {
        ExtensionMissingException::assertLoaded(self::class);
        // Room for the namespace (AbstractAdapter keeps 24 bytes for the key).
        if ($keyPrefix === '' || \strlen($keyPrefix) > self::MAX_KEY_BYTES - 1024) {
            throw new InvalidArgumentException(\sprintf(
                'The key prefix must be 1 to %d bytes, %d given.',
                self::MAX_KEY_BYTES - 1024,
                \strlen($keyPrefix)
            ));
        }
        $this->keyPrefix = $keyPrefix;
        // Longer ids are hashed by AbstractAdapter::getId() to fit the store.
        $this->maxIdLength = self::MAX_KEY_BYTES - \strlen($keyPrefix);
        parent::__construct($namespace, $defaultLifetime);
        $this->marshaller = $marshaller ?? new DefaultMarshaller();
    }

    protected function doFetch(array $ids): iterable
    {
        if ($ids === []) {
            return [];
        }
        $ids = array_values($ids);
        $keys = array_map(fn (string $id): string => $this->keyPrefix . $id, $ids);
        $values = StoreCall::run(CacheException::class, 'Fetching items', static fn () => ephpm_kv_mget($keys));
        $found = [];
        foreach ($values as $i => $value) {
            if ($value !== null) {
                $found[$ids[$i]] = $this->marshaller->unmarshall($value);
            }
        }
        return $found;
    }

    protected function doHave(string $id): bool
    {
        $key = $this->keyPrefix . $id;
        return StoreCall::run(CacheException::class, 'Looking up an item', static fn () => ephpm_kv_exists($key));
    }

    protected function doClear(string $namespace): bool
    {
        $pattern = self::globQuote($this->keyPrefix . $namespace) . '*';
        $keys = StoreCall::run(CacheException::class, 'Listing the items to clear', static fn () => ephpm_kv_keys($pattern));
        foreach ($keys as $key) {
            StoreCall::run(CacheException::class, 'Clearing an item', static fn () => ephpm_kv_del($key));
        }
        return true;
    }

    protected function doDelete(array $ids): bool
    {
        foreach ($ids as $id) {
            $key = $this->keyPrefix . $id;
            StoreCall::run(CacheException::class, 'Deleting an item', static fn () => ephpm_kv_del($key));
        }
        return true;
    }

    /**
     * @return string[] the ids that were not saved (AbstractAdapter logs each)
     */
    protected function doSave(array $values, int $lifetime): array
    {
        $failed = [];
        $marshalled = $this->marshaller->marshall($values, $failed);
        $ttl = min($lifetime, self::MAX_TTL_SECONDS);
        foreach ($marshalled as $id => $value) {
            $key = $this->keyPrefix . $id;
            try {
                StoreCall::run(CacheException::class, 'Saving an item', static fn () => ephpm_kv_set($key, $value, $ttl));
            } catch (CacheException $e) {
                CacheItem::log($this->logger, 'Failed to save key "{key}": ' . $e->getMessage(), [
                    'key' => (string) $id, 'exception' => $e, 'cache-adapter' => get_debug_type($this),
                ]);
                $failed[] = $id;
            }
        }
        // The entries a failed save was meant to replace must not be served.
        // An error here is thrown: AbstractAdapter then reports every item
        // of the batch as failed, which is still the truth for those.
        foreach ($failed as $id) {
            $key = $this->keyPrefix . $id;
            StoreCall::run(CacheException::class, 'Removing an item that could not be saved', static fn () => ephpm_kv_del($key));
        }
        return $failed;
    }

    /** $s as a glob pattern that matches only itself (ephpm_kv_keys' syntax). */
    private static function globQuote(string $s): string
    {
        return addcslashes($s, '\\*?[]');
    }
}
