<?php

declare(strict_types=1);

namespace Ephpm\Laravel;

use Ephpm\ExtensionMissingException;
use Illuminate\Cache\TaggableStore;
use Illuminate\Contracts\Cache\LockProvider;

/**
 * Laravel's cache store over ephpm's in-process key-value store (the
 * `ephpm` driver of EphpmServiceProvider).
 *
 * It behaves as Laravel's RedisStore where an application can tell, so that
 * switching drivers changes nothing but speed: values are serialize()d,
 * except integers and numeric strings, which are stored as their text so
 * that increment() works on them (and come back as numeric strings, as from
 * Redis); floats are serialize()d so that they come back exactly. add() is
 * one atomic set-if-absent; increment() and decrement() are atomic, create a
 * missing key from the delta, and return false (as phpredis does) when the
 * value is not an integer or the result would overflow.
 *
 * The store's limits fail as a failed write, never as a silent one: a key
 * (prefix included) outside 1 to 65536 bytes or a value longer than the
 * store's ephpm.max_value_size makes put(), add(), forever() and
 * increment() return false and get() null; a write the store refuses for
 * memory returns false with the extension's warning.
 *
 * flush() removes only the keys under this store's prefix (one pass over
 * the matching keys: an entry written meanwhile may stay). The store is
 * shared by everything in the process or host (PHP sessions, Ephpm\Lock,
 * other applications), so without a prefix flush() refuses and returns
 * false instead of wiping their keys; Laravel's default config sets one.
 * Keys of a store whose prefix starts with this one followed by ":" are
 * inside it, too.
 *
 * Tags are Laravel's generic ones (TaggedCache): flushing a tag makes its
 * entries unreachable at once; they stay in memory until their TTL or a
 * flush().
 */
class EphpmStore extends TaggableStore implements LockProvider
{
    /** The longest key the extension takes (EPHPM_KV_MAX_KEY_SIZE). */
    public const MAX_KEY_BYTES = 65536;

    /** The prefix with its ":" separator, or "". */
    protected string $prefix = '';

    public function __construct(string $prefix = '')
    {
        ExtensionMissingException::assertLoaded(self::class);
        $this->setPrefix($prefix);
    }

    /**
     * @param string $key
     * @return mixed the value, or null when missing, expired or impossible
     */
    public function get($key)
    {
        // The hot path, so inline: the extension checks the key's length
        // (a ValueError: such a key cannot have been stored).
        try {
            $raw = \ephpm_kv_get($this->prefix . $key);
        } catch (\ValueError) {
            return null;
        }
        if ($raw === null) {
            return null;
        }
        return \is_numeric($raw) ? $raw : \unserialize($raw);
    }

    /**
     * @param array<int, string> $keys
     * @return array<string, mixed> every key, null for missing ones
     */
    public function many(array $keys)
    {
        $valid = [];
        foreach ($keys as $key) {
            $full = $this->prefix . $key;
            if ($this->validKey($full)) {
                $valid[(string) $key] = $full;
            }
        }
        $raws = $valid === [] ? [] : \ephpm_kv_mget(array_values($valid));
        $found = [];
        $i = 0;
        foreach ($valid as $key => $_) {
            $found[$key] = $raws[$i++];
        }
        $results = [];
        foreach ($keys as $key) {
            $raw = $found[(string) $key] ?? null;
            $results[$key] = $raw === null ? null : $this->unserialize($raw);
        }
        return $results;
    }

    /**
     * @param string $key
     * @param mixed $value
     * @param int $seconds 0 or less removes the key, as Laravel's Repository does
     */
    public function put($key, $value, $seconds)
    {
        // Repository passes whole seconds: that case without a call.
        $ttl = \is_int($seconds) && $seconds > 0 ? $seconds : self::ttl($seconds);
        if ($ttl === 0) {
            $full = $this->prefix . $key;
            return $this->validKey($full) && \ephpm_kv_del($full) !== false;
        }
        return $this->write((string) $key, $value, $ttl);
    }

    /**
     * One put() per entry (not atomic as a whole); true only if every one
     * was stored, false for an empty array (as Laravel's stores).
     *
     * @param array<string, mixed> $values
     * @param int $seconds
     */
    public function putMany(array $values, $seconds)
    {
        $all = null;
        foreach ($values as $key => $value) {
            $stored = $this->put((string) $key, $value, $seconds);
            $all = ($all ?? true) && $stored;
        }
        return $all ?? false;
    }

    /**
     * Stores the value only if the key is absent (expired counts as
     * absent), as one atomic step.
     *
     * @param string $key
     * @param mixed $value
     * @param int $seconds
     */
    public function add($key, $value, $seconds)
    {
        $ttl = self::ttl($seconds);
        if ($ttl === 0) {
            return false;
        }
        try {
            return \ephpm_kv_setnx($this->prefix . $key, $this->serialize($value), $ttl);
        } catch (\ValueError) {
            return false; // the key or the value is beyond the store's limits
        }
    }

    /**
     * @param string $key
     * @param int $value
     * @return int|false the new value; false when the stored value is not an
     *                   integer, the result would overflow, or the key is impossible
     */
    public function increment($key, $value = 1)
    {
        return $this->incrementBy((string) $key, self::delta($value));
    }

    /**
     * @param string $key
     * @param int $value
     * @return int|false as increment()
     */
    public function decrement($key, $value = 1)
    {
        $delta = self::delta($value);
        if ($delta === \PHP_INT_MIN) {
            return false; // its negation is out of range, as the result would be
        }
        return $this->incrementBy((string) $key, -$delta);
    }

    /**
     * @param string $key
     * @param mixed $value
     */
    public function forever($key, $value)
    {
        return $this->write((string) $key, $value, 0);
    }

    /**
     * @param string $key
     * @return bool whether an entry was removed
     */
    public function forget($key)
    {
        $full = $this->prefix . $key;
        if (!$this->validKey($full)) {
            return false;
        }
        $removed = \ephpm_kv_del($full);
        return $removed !== false && $removed > 0;
    }

    /**
     * Removes the keys under this store's prefix; without a prefix, removes
     * nothing and returns false (see the class doc).
     */
    public function flush()
    {
        if ($this->prefix === '') {
            return false;
        }
        $ok = true;
        foreach (\ephpm_kv_keys(self::globEscape($this->prefix) . '*') as $key) {
            if (\ephpm_kv_del($key) === false) {
                $ok = false;
            }
        }
        return $ok;
    }

    /** @return string the prefix with its ":" separator, or "" */
    public function getPrefix()
    {
        return $this->prefix;
    }

    /** A prefix of "" means none; any other gets ":" appended, as RedisStore. */
    public function setPrefix(string $prefix): void
    {
        $this->prefix = $prefix !== '' ? $prefix . ':' : '';
    }

    /**
     * @param string $name
     * @param int $seconds 0 = the lock does not expire
     * @param string|null $owner null = a new 128-bit random token
     */
    public function lock($name, $seconds = 0, $owner = null)
    {
        return new EphpmLock($this->prefix . $name, $seconds, $owner);
    }

    /**
     * @param string $name
     * @param string $owner the owner() of the lock that acquired it
     */
    public function restoreLock($name, $owner)
    {
        return $this->lock($name, 0, $owner);
    }

    /**
     * The stored form of a value: integers and numeric strings as text
     * (increment() needs them so), everything else serialize()d.
     */
    protected function serialize(mixed $value): string
    {
        if (\is_int($value)) {
            return (string) $value;
        }
        if (\is_string($value) && is_numeric($value)) {
            return $value;
        }
        return serialize($value);
    }

    protected function unserialize(string $raw): mixed
    {
        return is_numeric($raw) ? $raw : unserialize($raw);
    }

    private function write(string $key, mixed $value, int $ttl): bool
    {
        $payload = \is_int($value) || (\is_string($value) && \is_numeric($value))
            ? (string) $value : \serialize($value);
        // The extension refuses a key outside 1..65536 bytes and a value over
        // ephpm.max_value_size with a ValueError (the only ValueErrors it
        // has for a set with a valid TTL), checked in C instead of here.
        try {
            return \ephpm_kv_set($this->prefix . $key, $payload, $ttl);
        } catch (\ValueError) {
            return false;
        }
    }

    private function incrementBy(string $key, int $delta): int|false
    {
        $full = $this->prefix . $key;
        if (!$this->validKey($full)) {
            return false;
        }
        try {
            return \ephpm_kv_incr_by($full, $delta);
        } catch (\Error $e) {
            // The store's refusals of the value (not an integer, overflow,
            // not a string) are plain Errors; phpredis answers them with
            // false, so does this store. Anything else is a bug: rethrow.
            if ($e::class === \Error::class && self::isValueRefusal($e->getMessage())) {
                return false;
            }
            throw $e;
        }
    }

    private static function isValueRefusal(string $message): bool
    {
        return str_starts_with($message, 'The value is not an integer')
            || str_starts_with($message, 'Increment or decrement would overflow')
            || str_starts_with($message, 'WRONGTYPE');
    }

    private function validKey(string $fullKey): bool
    {
        $length = \strlen($fullKey);
        return $length >= 1 && $length <= self::MAX_KEY_BYTES;
    }

    /** Laravel's seconds as the store's: whole seconds, rounded up; 0 for none left. */
    private static function ttl(mixed $seconds): int
    {
        if (!is_numeric($seconds)) {
            throw new \InvalidArgumentException('The TTL must be a number of seconds, got ' . get_debug_type($seconds));
        }
        $seconds = +$seconds;
        if ($seconds <= 0) {
            return 0;
        }
        return \is_int($seconds) ? $seconds : (int) ceil($seconds);
    }

    private static function delta(mixed $value): int
    {
        if (\is_int($value)) {
            return $value;
        }
        if (\is_string($value) && preg_match('/\A[+-]?\d+\z/', $value) === 1) {
            $int = filter_var($value, \FILTER_VALIDATE_INT);
            if ($int !== false) {
                return $int;
            }
        }
        throw new \InvalidArgumentException('The increment must be an integer, got ' . get_debug_type($value));
    }

    /** Escapes the glob characters of the store's pattern syntax. */
    private static function globEscape(string $literal): string
    {
        return addcslashes($literal, '\\*?[]');
    }
}
