<?php

declare(strict_types=1);

namespace Ephpm\Tests\WordPress;

use PHPUnit\Framework\TestCase;

/**
 * Loads the drop-in in a fake WordPress (fake-wordpress.php) under the salt
 * SALT, and gives every test an emptied store for it and a fresh
 * $wp_object_cache.
 */
abstract class WordPressTestCase extends TestCase
{
    public const SALT = 'ephpm-wp-test';

    /** The store prefix of every key under SALT. */
    public const PREFIX = 'ephpm-wp-test|';

    public static function setUpBeforeClass(): void
    {
        if (!\defined('EPHPM_CACHE_KEY_SALT')) {
            \define('EPHPM_CACHE_KEY_SALT', self::SALT);
        }
        require_once __DIR__ . '/fake-wordpress.php';
    }

    protected function setUp(): void
    {
        $GLOBALS['ephpm_fake_wp'] = ['multisite' => false, 'blog_id' => 1, 'suspend' => false, 'wrong' => [], 'deprecated' => []];
        \wp_cache_init();
        self::assertTrue(\wp_cache_flush());
    }

    protected function tearDown(): void
    {
        \wp_cache_flush();
        unset($GLOBALS['wp_object_cache']);
    }

    /**
     * A new request: a fresh WP_Object_Cache, with the groups WordPress
     * would declare.
     *
     * @param string[] $global
     * @param string[] $nonPersistent
     */
    protected static function newRequest(array $global = [], array $nonPersistent = []): void
    {
        \wp_cache_init();
        \wp_cache_add_global_groups($global);
        \wp_cache_add_non_persistent_groups($nonPersistent);
    }

    /** @return string[] the store keys under SALT */
    protected static function storeKeys(): array
    {
        $keys = \ephpm_kv_keys(addcslashes(self::PREFIX, '\\*?[]') . '*');
        sort($keys);
        return $keys;
    }
}
