<?php
/**
 * ephpm object cache: a WordPress object-cache drop-in over ephpm's store.
 *
 * Install: copy this file to wp-content/object-cache.php. It needs nothing
 * but the ephpm extension (the ephpm host, or extension=ephpm in php.ini):
 * no Composer autoloader is involved. It implements the wp_cache_* API of
 * WordPress 6.1 (wp-includes/cache.php) and the WP_Object_Cache class that
 * backs it.
 *
 * Configuration (wp-config.php, optional):
 *
 *   define('EPHPM_CACHE_KEY_SALT', 'my-site');
 *       Every store key of this site starts with it, so several WordPress
 *       sites can share one store; wp_cache_flush() removes only the keys
 *       under it. When it is not defined, WP_CACHE_KEY_SALT is used if that
 *       is defined, else the default "wp-" followed by the first 16 hex
 *       digits of md5(ABSPATH): one install directory, one salt.
 *
 * Store keys: rawurlencode(salt) "|" rawurlencode(group) ":" scope ":" key,
 * where scope is "g" for a global group and the blog id otherwise (blog 1
 * outside multisite). Should that be longer than the store's 65536-byte
 * limit, the ":" key part becomes "#" sha256(key). Values are serialize()d,
 * except integers, which are stored as their decimal digits so that
 * wp_cache_incr()/wp_cache_decr() on them are the store's atomic increments.
 * Expirations are seconds; 0 or less means none.
 *
 * Groups given to wp_cache_add_non_persistent_groups() never reach the
 * store: they live in the request's memory only, as WordPress's own cache
 * does. Persistent values read or written during the request are kept in
 * the same runtime copy (wp_cache_flush_runtime() empties it; $force = true
 * on wp_cache_get() reads the store).
 *
 * Without the extension this cache does not fall back to anything: the
 * file itself loads, but wp_cache_init() (WP_Object_Cache's constructor)
 * throws a RuntimeException naming the missing extension, which WordPress
 * reports as a fatal error. Remove the drop-in, or load the extension.
 *
 * A value the store refuses (over ephpm.max_value_size, over the store's
 * memory limit) or serialize() refuses makes set/add/replace return false
 * and removes the key's old value, in the store and in the runtime copy.
 * The store's own warnings are not silenced.
 */

declare(strict_types=1);

/**
 * The object cache of one request, persisted in ephpm's store.
 */
#[AllowDynamicProperties]
class WP_Object_Cache
{
    /** The store's longest key, in bytes. */
    private const MAX_STORE_KEY_LENGTH = 65536;

    /** @var array<string, array<string, mixed>> group => id => value: the request's copy */
    private $cache = [];

    /** @var int */
    public $cache_hits = 0;

    /** @var int */
    public $cache_misses = 0;

    /** @var array<string, true> */
    protected $global_groups = [];

    /** @var array<string, true> */
    protected $non_persistent_groups = [];

    /** @var string the salt's part of every store key, rawurlencode(salt) . '|' */
    private $store_prefix;

    /** @var bool */
    private $multisite;

    /** @var int the current blog, 1 outside multisite */
    private $blog_id;

    public function __construct()
    {
        if (!extension_loaded('ephpm') || !function_exists('ephpm_kv_set')) {
            throw new RuntimeException(sprintf(
                'The ephpm object cache (%s) needs the ephpm extension, which this PHP (%s, SAPI "%s") has not '
                . 'loaded: run WordPress in the ephpm host or add extension=ephpm to php.ini, '
                . 'or remove wp-content/object-cache.php',
                __FILE__,
                PHP_VERSION,
                PHP_SAPI
            ));
        }
        $this->store_prefix = rawurlencode(self::key_salt()) . '|';
        $this->multisite = function_exists('is_multisite') && is_multisite();
        $this->blog_id = $this->multisite ? (int) get_current_blog_id() : 1;
    }

    /**
     * The salt of this site's store keys (see the file's header).
     */
    public static function key_salt(): string
    {
        if (defined('EPHPM_CACHE_KEY_SALT')) {
            return (string) constant('EPHPM_CACHE_KEY_SALT');
        }
        if (defined('WP_CACHE_KEY_SALT')) {
            return (string) constant('WP_CACHE_KEY_SALT');
        }
        return 'wp-' . substr(md5(defined('ABSPATH') ? (string) constant('ABSPATH') : ''), 0, 16);
    }

    /**
     * Adds data unless the key exists, in the runtime copy or in the store
     * (the store's set-if-absent: exactly one of concurrent requests wins).
     *
     * @param int|string $key
     * @param mixed      $data
     * @param string     $group
     * @param int        $expire seconds, 0 for none
     */
    public function add($key, $data, $group = 'default', $expire = 0): bool
    {
        if (function_exists('wp_suspend_cache_addition') && wp_suspend_cache_addition()) {
            return false;
        }
        if (!$this->is_valid_key($key, __FUNCTION__)) {
            return false;
        }
        $group = $this->group($group);
        $id = $this->id($key, $group);
        if ($this->in_runtime($id, $group)) {
            return false;
        }
        if (isset($this->non_persistent_groups[$group])) {
            $this->remember($id, $group, $data);
            return true;
        }
        $store_key = $this->store_key($key, $group);
        $encoded = $this->encode($data);
        if ($encoded === null) {
            return false;
        }
        try {
            $added = ephpm_kv_setnx($store_key, $encoded, self::ttl($expire));
        } catch (ValueError $e) {
            // Over ephpm.max_value_size: this value cannot be added.
            return false;
        }
        if ($added) {
            $this->remember($id, $group, $data);
        }
        return $added;
    }

    /**
     * @param array<int|string, mixed> $data
     *
     * @return array<int|string, bool>
     */
    public function add_multiple(array $data, $group = '', $expire = 0): array
    {
        $results = [];
        foreach ($data as $key => $value) {
            $results[$key] = $this->add($key, $value, $group, $expire);
        }
        return $results;
    }

    /**
     * Replaces data only if the key exists.
     *
     * @param int|string $key
     * @param mixed      $data
     */
    public function replace($key, $data, $group = 'default', $expire = 0): bool
    {
        if (!$this->is_valid_key($key, __FUNCTION__)) {
            return false;
        }
        $group = $this->group($group);
        $id = $this->id($key, $group);
        if (!$this->in_runtime($id, $group)
            && (isset($this->non_persistent_groups[$group]) || !ephpm_kv_exists($this->store_key($key, $group)))) {
            return false;
        }
        return $this->set($key, $data, $group, $expire);
    }

    /**
     * @param int|string $key
     * @param mixed      $data
     */
    public function set($key, $data, $group = 'default', $expire = 0): bool
    {
        if (!$this->is_valid_key($key, __FUNCTION__)) {
            return false;
        }
        $group = $this->group($group);
        $id = $this->id($key, $group);
        if (isset($this->non_persistent_groups[$group])) {
            $this->remember($id, $group, $data);
            return true;
        }
        $store_key = $this->store_key($key, $group);
        $encoded = $this->encode($data);
        $stored = false;
        if ($encoded !== null) {
            try {
                $stored = ephpm_kv_set($store_key, $encoded, self::ttl($expire));
            } catch (ValueError $e) {
                // Over ephpm.max_value_size: reported by false below.
                $stored = false;
            }
        }
        if (!$stored) {
            // No stale value behind a failed set, here or in the store.
            unset($this->cache[$group][$id]);
            ephpm_kv_del($store_key);
            return false;
        }
        $this->remember($id, $group, $data);
        return true;
    }

    /**
     * @param array<int|string, mixed> $data
     *
     * @return array<int|string, bool>
     */
    public function set_multiple(array $data, $group = '', $expire = 0): array
    {
        $results = [];
        foreach ($data as $key => $value) {
            $results[$key] = $this->set($key, $value, $group, $expire);
        }
        return $results;
    }

    /**
     * @param int|string $key
     * @param bool       $force read the store even when the runtime copy has the key
     * @param bool|null  $found set to whether the key was found (a stored false included)
     *
     * @return mixed the value, or false when not found
     */
    public function get($key, $group = 'default', $force = false, &$found = null)
    {
        if (!$this->is_valid_key($key, __FUNCTION__)) {
            $found = false;
            return false;
        }
        $group = $this->group($group);
        $id = $this->id($key, $group);
        $persistent = !isset($this->non_persistent_groups[$group]);
        if ((!$force || !$persistent) && $this->in_runtime($id, $group)) {
            return $this->hit($id, $group, $found);
        }
        if ($persistent) {
            $raw = ephpm_kv_get($this->store_key($key, $group));
            if ($raw !== null) {
                $this->cache[$group][$id] = $this->decode($raw);
                return $this->hit($id, $group, $found);
            }
            unset($this->cache[$group][$id]);
        }
        $found = false;
        ++$this->cache_misses;
        return false;
    }

    /**
     * @param array<int|string> $keys
     *
     * @return array<int|string, mixed> key => value, false for a key not found
     */
    public function get_multiple($keys, $group = 'default', $force = false): array
    {
        $group = $this->group($group);
        $persistent = !isset($this->non_persistent_groups[$group]);
        // The store is asked once, for the keys the runtime copy lacks.
        $fetch = [];
        foreach ($keys as $key) {
            if ($this->is_valid_key($key, __FUNCTION__) && $persistent
                && ($force || !$this->in_runtime($this->id($key, $group), $group))) {
                $fetch[(string) $key] = $this->store_key($key, $group);
            }
        }
        if ($fetch !== []) {
            $raws = ephpm_kv_mget(array_values($fetch));
            $i = 0;
            foreach ($fetch as $key => $store_key) {
                $raw = $raws[$i++];
                $id = $this->id($key, $group);
                if ($raw === null) {
                    unset($this->cache[$group][$id]);
                } else {
                    $this->cache[$group][$id] = $this->decode($raw);
                }
            }
        }
        $values = [];
        foreach ($keys as $key) {
            if (!$this->is_valid_key($key, __FUNCTION__)) {
                $values[$key] = false;
                continue;
            }
            $id = $this->id($key, $group);
            if ($this->in_runtime($id, $group)) {
                $values[$key] = $this->hit($id, $group, $found);
            } else {
                ++$this->cache_misses;
                $values[$key] = false;
            }
        }
        return $values;
    }

    /**
     * @param int|string $key
     * @param bool       $deprecated unused, as in WordPress
     *
     * @return bool whether the key existed
     */
    public function delete($key, $group = 'default', $deprecated = false): bool
    {
        if (!$this->is_valid_key($key, __FUNCTION__)) {
            return false;
        }
        $group = $this->group($group);
        $id = $this->id($key, $group);
        $existed = $this->in_runtime($id, $group);
        unset($this->cache[$group][$id]);
        if (!isset($this->non_persistent_groups[$group])) {
            $removed = ephpm_kv_del($this->store_key($key, $group));
            $existed = $existed || $removed === 1;
        }
        return $existed;
    }

    /**
     * @param array<int|string> $keys
     *
     * @return array<int|string, bool>
     */
    public function delete_multiple(array $keys, $group = ''): array
    {
        $results = [];
        foreach ($keys as $key) {
            $results[$key] = $this->delete($key, $group);
        }
        return $results;
    }

    /**
     * Adds $offset to a numeric value; a non-numeric one counts as 0, the
     * result never goes below 0 (WordPress's rules). False when the key does
     * not exist.
     *
     * @param int|string $key
     *
     * @return int|float|false
     */
    public function incr($key, $offset = 1, $group = 'default')
    {
        if (!$this->is_valid_key($key, __FUNCTION__)) {
            return false;
        }
        return $this->add_to($key, (int) $offset, $this->group($group));
    }

    /**
     * As incr(), subtracting $offset.
     *
     * @param int|string $key
     *
     * @return int|float|false
     */
    public function decr($key, $offset = 1, $group = 'default')
    {
        if (!$this->is_valid_key($key, __FUNCTION__)) {
            return false;
        }
        return $this->add_to($key, -(int) $offset, $this->group($group));
    }

    /**
     * Removes this site's keys (those under its salt) from the store, and the
     * runtime copy.
     */
    public function flush(): bool
    {
        $this->cache = [];
        return $this->delete_matching(self::glob_escape($this->store_prefix) . '*');
    }

    /**
     * Empties the runtime copy only.
     */
    public function flush_runtime(): bool
    {
        $this->cache = [];
        return true;
    }

    /**
     * Removes one group, of every blog, from the store and the runtime copy.
     */
    public function flush_group($group): bool
    {
        $group = $this->group($group);
        unset($this->cache[$group]);
        if (isset($this->non_persistent_groups[$group])) {
            return true;
        }
        return $this->delete_matching(self::glob_escape($this->store_prefix . rawurlencode($group)) . ':*');
    }

    /**
     * @param string|string[] $groups
     */
    public function add_global_groups($groups): void
    {
        foreach ((array) $groups as $group) {
            $this->global_groups[(string) $group] = true;
        }
    }

    /**
     * @param string|string[] $groups
     */
    public function add_non_persistent_groups($groups): void
    {
        foreach ((array) $groups as $group) {
            $this->non_persistent_groups[(string) $group] = true;
        }
    }

    /**
     * @param int $blog_id
     */
    public function switch_to_blog($blog_id): void
    {
        $this->blog_id = $this->multisite ? (int) $blog_id : 1;
    }

    /**
     * Deprecated since WordPress 3.5: drops the runtime copy of the
     * non-global groups.
     */
    public function reset(): void
    {
        if (function_exists('_deprecated_function')) {
            _deprecated_function(__FUNCTION__, '3.5.0', 'WP_Object_Cache::switch_to_blog()');
        }
        foreach (array_keys($this->cache) as $group) {
            if (!isset($this->global_groups[$group])) {
                unset($this->cache[$group]);
            }
        }
    }

    public function close(): bool
    {
        return true;
    }

    /**
     * Prints the hits, the misses and the runtime copy's groups, as
     * WordPress's own cache does.
     */
    public function stats(): void
    {
        echo '<p>';
        echo "<strong>Cache Hits:</strong> {$this->cache_hits}<br />";
        echo "<strong>Cache Misses:</strong> {$this->cache_misses}<br />";
        echo '</p>';
        echo '<ul>';
        foreach ($this->cache as $group => $values) {
            echo '<li><strong>Group:</strong> ' . htmlspecialchars((string) $group, ENT_QUOTES)
                . ' - ( ' . number_format(strlen(serialize($values)) / 1024, 2) . 'k )</li>';
        }
        echo '</ul>';
    }

    /**
     * WordPress 6.1's key rule: an int, or a string that is not blank.
     *
     * @param mixed $key
     */
    protected function is_valid_key($key, string $method): bool
    {
        if (is_int($key) || (is_string($key) && trim($key) !== '')) {
            return true;
        }
        if (function_exists('_doing_it_wrong')) {
            _doing_it_wrong(
                __CLASS__ . '::' . $method,
                is_string($key)
                    ? 'Cache key must not be an empty string.'
                    : sprintf('Cache key must be integer or non-empty string, %s given.', gettype($key)),
                '6.1.0'
            );
        }
        return false;
    }

    /**
     * @param int|string $key
     *
     * @return int|float|false
     */
    private function add_to($key, int $offset, string $group)
    {
        $id = $this->id($key, $group);
        if (isset($this->non_persistent_groups[$group])) {
            if (!$this->in_runtime($id, $group)) {
                return false;
            }
            $value = self::apply_offset($this->cache[$group][$id], $offset);
            $this->cache[$group][$id] = $value;
            return $value;
        }
        $store_key = $this->store_key($key, $group);
        $raw = ephpm_kv_get($store_key);
        if ($raw === null) {
            unset($this->cache[$group][$id]);
            return false;
        }
        $current = $this->decode($raw);
        $value = null;
        if (is_int($current)) {
            // The store's atomic increment, unless it would overflow an int
            // or go below 0 (both cases take the path below).
            $next = $current + $offset;
            if (is_int($next) && $next >= 0) {
                try {
                    $value = ephpm_kv_incr_by($store_key, $offset);
                } catch (Error $e) {
                    // Another request changed the value meanwhile to one
                    // that is no integer or would overflow: recomputed below.
                    $value = null;
                    $raw = ephpm_kv_get($store_key);
                    if ($raw === null) {
                        unset($this->cache[$group][$id]);
                        return false;
                    }
                    $current = $this->decode($raw);
                }
                if ($value === false) {
                    // The store refused the write (its warning is out): the
                    // runtime copy may no longer hold the stored value.
                    unset($this->cache[$group][$id]);
                    return false;
                }
                if (is_int($value) && $value < 0) {
                    // Another request decremented meanwhile.
                    $current = $value;
                    $value = null;
                    $offset = 0;
                }
            }
        }
        if ($value === null) {
            $value = self::apply_offset($current, $offset);
            $pttl = ephpm_kv_pttl($store_key);
            if (!ephpm_kv_set($store_key, (string) $this->encode($value), 0)) {
                unset($this->cache[$group][$id]);
                ephpm_kv_del($store_key);
                return false;
            }
            if ($pttl > 0) {
                ephpm_kv_pexpire($store_key, $pttl);
            }
        }
        $this->cache[$group][$id] = $value;
        return $value;
    }

    /**
     * @param mixed $current
     *
     * @return int|float
     */
    private static function apply_offset($current, int $offset)
    {
        if (!is_numeric($current)) {
            $current = 0;
        }
        $value = $current + $offset;
        return $value < 0 ? 0 : $value;
    }

    private function group($group): string
    {
        return empty($group) ? 'default' : (string) $group;
    }

    /**
     * The runtime copy's id of a key: the blog id in front for a non-global
     * group in multisite.
     *
     * @param int|string $key
     */
    private function id($key, string $group): string
    {
        if ($this->multisite && !isset($this->global_groups[$group])) {
            return $this->blog_id . ':' . $key;
        }
        return (string) $key;
    }

    /**
     * @param int|string $key
     */
    private function store_key($key, string $group): string
    {
        $head = $this->store_prefix . rawurlencode($group) . ':'
            . (isset($this->global_groups[$group]) ? 'g' : (string) $this->blog_id);
        $store_key = $head . ':' . $key;
        if (strlen($store_key) > self::MAX_STORE_KEY_LENGTH) {
            return $head . '#' . hash('sha256', (string) $key);
        }
        return $store_key;
    }

    private function in_runtime(string $id, string $group): bool
    {
        return isset($this->cache[$group]) && array_key_exists($id, $this->cache[$group]);
    }

    /**
     * @param bool|null $found
     *
     * @return mixed
     */
    private function hit(string $id, string $group, &$found)
    {
        $found = true;
        ++$this->cache_hits;
        $value = $this->cache[$group][$id];
        return is_object($value) ? clone $value : $value;
    }

    /**
     * @param mixed $data
     */
    private function remember(string $id, string $group, $data): void
    {
        $this->cache[$group][$id] = is_object($data) ? clone $data : $data;
    }

    /**
     * The stored form of a value, or null when serialize() refuses it.
     *
     * @param mixed $data
     */
    private function encode($data): ?string
    {
        if (is_int($data)) {
            return (string) $data;
        }
        try {
            return serialize($data);
        } catch (Exception $e) {
            // A closure or an object that forbids serialization cannot be
            // stored: the caller reports false.
            return null;
        }
    }

    /**
     * @return mixed
     */
    private function decode(string $raw)
    {
        if (preg_match('/\A(?:0|-?[1-9][0-9]*)\z/', $raw) === 1) {
            $int = filter_var($raw, FILTER_VALIDATE_INT);
            if ($int !== false) {
                return $int;
            }
        }
        if ($raw === 'b:0;') {
            return false;
        }
        $value = unserialize($raw);
        if ($value === false) {
            // Not a value this cache wrote (unserialize() has raised its
            // notice): treated as false, as a corrupt entry would be.
            return false;
        }
        return $value;
    }

    private function delete_matching(string $pattern): bool
    {
        $ok = true;
        foreach (ephpm_kv_keys($pattern) as $store_key) {
            $ok = ephpm_kv_del((string) $store_key) !== false && $ok;
        }
        return $ok;
    }

    private static function glob_escape(string $text): string
    {
        return addcslashes($text, '\\*?[]');
    }

    /**
     * @param mixed $expire
     */
    private static function ttl($expire): int
    {
        $seconds = (int) $expire;
        return $seconds > 0 ? $seconds : 0;
    }
}

function wp_cache_init()
{
    $GLOBALS['wp_object_cache'] = new WP_Object_Cache();
}

function wp_cache_add($key, $data, $group = '', $expire = 0)
{
    global $wp_object_cache;
    return $wp_object_cache->add($key, $data, $group, (int) $expire);
}

function wp_cache_add_multiple(array $data, $group = '', $expire = 0)
{
    global $wp_object_cache;
    return $wp_object_cache->add_multiple($data, $group, $expire);
}

function wp_cache_replace($key, $data, $group = '', $expire = 0)
{
    global $wp_object_cache;
    return $wp_object_cache->replace($key, $data, $group, (int) $expire);
}

function wp_cache_set($key, $data, $group = '', $expire = 0)
{
    global $wp_object_cache;
    return $wp_object_cache->set($key, $data, $group, (int) $expire);
}

function wp_cache_set_multiple(array $data, $group = '', $expire = 0)
{
    global $wp_object_cache;
    return $wp_object_cache->set_multiple($data, $group, $expire);
}

function wp_cache_get($key, $group = '', $force = false, &$found = null)
{
    global $wp_object_cache;
    return $wp_object_cache->get($key, $group, $force, $found);
}

function wp_cache_get_multiple($keys, $group = '', $force = false)
{
    global $wp_object_cache;
    return $wp_object_cache->get_multiple($keys, $group, $force);
}

function wp_cache_delete($key, $group = '')
{
    global $wp_object_cache;
    return $wp_object_cache->delete($key, $group);
}

function wp_cache_delete_multiple(array $keys, $group = '')
{
    global $wp_object_cache;
    return $wp_object_cache->delete_multiple($keys, $group);
}

function wp_cache_incr($key, $offset = 1, $group = '')
{
    global $wp_object_cache;
    return $wp_object_cache->incr($key, $offset, $group);
}

function wp_cache_decr($key, $offset = 1, $group = '')
{
    global $wp_object_cache;
    return $wp_object_cache->decr($key, $offset, $group);
}

function wp_cache_flush()
{
    global $wp_object_cache;
    return $wp_object_cache->flush();
}

function wp_cache_flush_runtime()
{
    global $wp_object_cache;
    return $wp_object_cache->flush_runtime();
}

function wp_cache_flush_group($group)
{
    global $wp_object_cache;
    return $wp_object_cache->flush_group($group);
}

function wp_cache_supports($feature)
{
    switch ($feature) {
        case 'add_multiple':
        case 'set_multiple':
        case 'get_multiple':
        case 'delete_multiple':
        case 'flush_runtime':
        case 'flush_group':
            return true;
        default:
            return false;
    }
}

function wp_cache_close()
{
    global $wp_object_cache;
    return $wp_object_cache->close();
}

function wp_cache_add_global_groups($groups)
{
    global $wp_object_cache;
    $wp_object_cache->add_global_groups($groups);
}

function wp_cache_add_non_persistent_groups($groups)
{
    global $wp_object_cache;
    $wp_object_cache->add_non_persistent_groups($groups);
}

function wp_cache_switch_to_blog($blog_id)
{
    global $wp_object_cache;
    $wp_object_cache->switch_to_blog($blog_id);
}

function wp_cache_reset()
{
    if (function_exists('_deprecated_function')) {
        _deprecated_function(__FUNCTION__, '3.5.0', 'wp_cache_switch_to_blog()');
    }
    global $wp_object_cache;
    $wp_object_cache->reset();
}
