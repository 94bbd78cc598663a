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
        // The hot path: no closure and no error handler per call (StoreCall
        // costs about 350 ns, more than the store).  The store reports a
        // failed read as a warning next to null: silenced here and read back
        // with error_get_last() when it was recorded; where the
        // application's error handler took it instead (it still sees it),
        // the item reads as a miss, which is what AbstractAdapter makes of
        // a failed fetch anyway.
        $keys = [];
        foreach ($ids as $id) {
            $keys[] = $this->keyPrefix . $id;
        }
        if ($keys === []) {
            return [];
        }
        error_clear_last();
        try {
            $values = \count($keys) === 1 ? [@ephpm_kv_get($keys[0])] : @ephpm_kv_mget($keys);
        } catch (\Error $e) {
            // A key of another type (a RESP client's list) is a miss, as in
            // an mget and as Redis's MGET has it.
            if (\count($keys) !== 1 || !str_starts_with($e->getMessage(), 'WRONGTYPE')) {
                throw new CacheException('Fetching items: ' . $e->getMessage(), 0, $e);
            }
            $values = [null];
        }
        $found = [];
        $i = 0;
        foreach ($ids as $id) {
            $value = $values[$i++];
            if ($value !== null) {
                $found[$id] = $this->marshaller->unmarshall($value);
            }
        }
        if ($found === [] && ($warning = error_get_last()) !== null) {
            throw new CacheException('Fetching items: ' . $warning['message']);
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
            // As in doFetch(): the store's refusal is false (a warning with
            // its reason, read back when recorded) or an Error (a value over
            // ephpm.max_value_size, WRONGTYPE).
            error_clear_last();
            try {
                if (@ephpm_kv_set($this->keyPrefix . $id, $value, $ttl)) {
                    continue;
                }
                $reason = error_get_last()['message'] ?? 'the store refused the write';
                $e = null;
            } catch (\Error $e) {
                $reason = $e->getMessage();
            }
            CacheItem::log($this->logger, 'Failed to save key "{key}": Saving an item: ' . $reason, [
                'key' => (string) $id, 'exception' => $e, 'cache-adapter' => get_debug_type($this),
            ]);
            $failed[] = $id;
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
