<?php

declare(strict_types=1);

namespace Ephpm\Tests\WordPress;

use Ephpm\Tests\SimpleCache\ChildPhp;

/**
 * The drop-in's wp_cache_* API (WordPress 6.1) in a fake WordPress.
 */
final class ObjectCacheTest extends WordPressTestCase
{
    public function testSetGetAndGroups(): void
    {
        self::assertTrue(wp_cache_set('k', 'in default'));
        self::assertTrue(wp_cache_set('k', 'in posts', 'posts'));
        self::assertSame('in default', wp_cache_get('k'));
        self::assertSame('in default', wp_cache_get('k', 'default'));
        self::assertSame('in posts', wp_cache_get('k', 'posts'));
        self::assertFalse(wp_cache_get('k', 'users'));
        self::newRequest();
        self::assertSame('in default', wp_cache_get('k', ''));
        self::assertSame('in posts', wp_cache_get('k', 'posts'));
    }

    public function testStoreKeysAndEncoding(): void
    {
        wp_cache_set('k', 'v', 'my group:1');
        wp_cache_set(7, 42, 'posts');
        wp_cache_set('f', 1.5, 'posts', 100);
        self::assertSame(serialize('v'), ephpm_kv_get(self::PREFIX . 'my%20group%3A1:1:k'));
        self::assertSame('42', ephpm_kv_get(self::PREFIX . 'posts:1:7'));
        self::assertSame(serialize(1.5), ephpm_kv_get(self::PREFIX . 'posts:1:f'));
        self::assertSame(-1, ephpm_kv_ttl(self::PREFIX . 'posts:1:7'));
        $ttl = ephpm_kv_ttl(self::PREFIX . 'posts:1:f');
        self::assertGreaterThanOrEqual(99, $ttl);
        self::assertLessThanOrEqual(100, $ttl);
        self::newRequest();
        self::assertSame(42, wp_cache_get(7, 'posts'));
        self::assertSame(1.5, wp_cache_get('f', 'posts'));
    }

    public function testExpiry(): void
    {
        wp_cache_set('k', 'v', 'default', 1);
        usleep(2_100_000);
        self::newRequest();
        self::assertFalse(wp_cache_get('k', 'default', false, $found));
        self::assertFalse($found);
    }

    public function testGlobalAndPerBlogKeysAcrossSwitchToBlog(): void
    {
        $GLOBALS['ephpm_fake_wp']['multisite'] = true;
        self::newRequest(['users']);
        wp_cache_set('k', 'blog 1 post', 'posts');
        wp_cache_set('k', 'shared user', 'users');
        wp_cache_switch_to_blog(2);
        self::assertFalse(wp_cache_get('k', 'posts', false, $found));
        self::assertFalse($found);
        self::assertSame('shared user', wp_cache_get('k', 'users'));
        wp_cache_set('k', 'blog 2 post', 'posts');
        wp_cache_switch_to_blog(1);
        self::assertSame('blog 1 post', wp_cache_get('k', 'posts'));
        self::assertSame(
            [self::PREFIX . 'posts:1:k', self::PREFIX . 'posts:2:k', self::PREFIX . 'users:g:k'],
            self::storeKeys()
        );

        // Another request, on blog 2.
        $GLOBALS['ephpm_fake_wp']['blog_id'] = 2;
        self::newRequest(['users']);
        self::assertSame('blog 2 post', wp_cache_get('k', 'posts'));
        self::assertSame('shared user', wp_cache_get('k', 'users'));
        wp_cache_set('k', 'changed user', 'users');
        wp_cache_switch_to_blog(1);
        self::assertSame('changed user', wp_cache_get('k', 'users'));
        self::assertSame('blog 1 post', wp_cache_get('k', 'posts'));
    }

    /**
     * A group both global and non-persistent lives only in the request's
     * copy, so only that copy can show whether it is keyed per blog: it
     * must not be (and a per-blog one must be).
     */
    public function testNonPersistentGroupsKeepTheirScopeAcrossSwitchToBlog(): void
    {
        $GLOBALS['ephpm_fake_wp']['multisite'] = true;
        self::newRequest(['shared-np'], ['shared-np', 'blog-np']);
        self::assertTrue(wp_cache_set('k', 'network-wide', 'shared-np'));
        self::assertTrue(wp_cache_set('k', 'blog 1 only', 'blog-np'));
        wp_cache_switch_to_blog(2);
        self::assertSame('network-wide', wp_cache_get('k', 'shared-np', false, $found));
        self::assertTrue($found);
        self::assertFalse(wp_cache_get('k', 'blog-np', false, $found));
        self::assertFalse($found);
        self::assertFalse(wp_cache_add('k', 'again', 'shared-np'));
        self::assertTrue(wp_cache_add('k', 'blog 2 only', 'blog-np'));
        wp_cache_switch_to_blog(1);
        self::assertSame('blog 1 only', wp_cache_get('k', 'blog-np'));
        self::assertSame([], self::storeKeys());
    }

    public function testWithoutMultisiteSwitchToBlogKeepsOneKeySpace(): void
    {
        wp_cache_set('k', 'v', 'posts');
        wp_cache_switch_to_blog(5);
        self::assertSame('v', wp_cache_get('k', 'posts'));
        self::assertSame([self::PREFIX . 'posts:1:k'], self::storeKeys());
    }

    public function testNonPersistentGroupsNeverReachTheStore(): void
    {
        self::newRequest([], ['np']);
        self::assertTrue(wp_cache_set('k', 'v', 'np'));
        self::assertTrue(wp_cache_add('a', 5, 'np'));
        self::assertFalse(wp_cache_add('a', 6, 'np'));
        self::assertSame(7, wp_cache_incr('a', 2, 'np'));
        self::assertTrue(wp_cache_replace('k', 'w', 'np'));
        self::assertFalse(wp_cache_replace('missing', 'w', 'np'));
        self::assertSame('w', wp_cache_get('k', 'np', true));
        self::assertSame(['k' => 'w', 'a' => 7, 'x' => false], wp_cache_get_multiple(['k', 'a', 'x'], 'np'));
        self::assertSame([], self::storeKeys());
        self::newRequest([], ['np']);
        self::assertFalse(wp_cache_get('k', 'np'));
        self::assertTrue(wp_cache_add('a', 5, 'np'));
        self::assertSame([], self::storeKeys());
    }

    public function testAddIsSetIfAbsentAcrossRequests(): void
    {
        self::assertTrue(wp_cache_add('k', 'first'));
        self::assertFalse(wp_cache_add('k', 'second'));
        self::newRequest();
        self::assertFalse(wp_cache_add('k', 'third'), 'a fresh WP_Object_Cache must see the stored key');
        self::assertSame('first', wp_cache_get('k'));
        self::assertTrue(wp_cache_delete('k'));
        self::assertTrue(wp_cache_add('k', 'fourth'));
        self::newRequest();
        self::assertSame('fourth', wp_cache_get('k'));
        self::assertSame(['k' => false, 'n' => true], wp_cache_add_multiple(['k' => 1, 'n' => 2]));
        self::assertSame(2, wp_cache_get('n'));
    }

    public function testAddHonoursSuspendedCacheAddition(): void
    {
        $GLOBALS['ephpm_fake_wp']['suspend'] = true;
        self::assertFalse(wp_cache_add('k', 'v'));
        self::assertFalse(wp_cache_get('k'));
        self::assertSame([], self::storeKeys());
    }

    /** @return iterable<string, array{mixed}> */
    public static function falsyValues(): iterable
    {
        yield 'false' => [false];
        yield 'zero' => [0];
        yield 'empty string' => [''];
        yield 'null' => [null];
        yield 'empty array' => [[]];
        yield 'string zero' => ['0'];
    }

    /**
     * @dataProvider falsyValues
     *
     * @param mixed $value
     */
    public function testFoundTellsAStoredFalsyValueFromAMiss($value): void
    {
        wp_cache_set('k', $value);
        self::assertSame($value, wp_cache_get('k', 'default', false, $found));
        self::assertTrue($found, 'runtime copy');
        self::newRequest();
        self::assertSame($value, wp_cache_get('k', 'default', false, $found));
        self::assertTrue($found, 'store');
        self::assertSame($value, wp_cache_get('k', 'default', true, $found));
        self::assertTrue($found, 'forced');
        self::assertFalse(wp_cache_get('missing', 'default', false, $found));
        self::assertFalse($found);
        self::assertFalse(wp_cache_get('missing', 'default', true, $found));
        self::assertFalse($found);
    }

    public function testGetMultiple(): void
    {
        wp_cache_set('stored', 'from store', 'g');
        wp_cache_set('zero', 0, 'g');
        self::newRequest();
        wp_cache_set('runtime', 'from runtime', 'g');
        $hits = $GLOBALS['wp_object_cache']->cache_hits;
        $misses = $GLOBALS['wp_object_cache']->cache_misses;
        self::assertSame(
            ['stored' => 'from store', 'missing' => false, 'runtime' => 'from runtime', 'zero' => 0],
            wp_cache_get_multiple(['stored', 'missing', 'runtime', 'zero'], 'g')
        );
        self::assertSame($hits + 3, $GLOBALS['wp_object_cache']->cache_hits);
        self::assertSame($misses + 1, $GLOBALS['wp_object_cache']->cache_misses);
        // Without $force the runtime copy answers; with it, the store.
        ephpm_kv_set(self::PREFIX . 'g:1:runtime', serialize('changed'));
        self::assertSame(['runtime' => 'from runtime'], wp_cache_get_multiple(['runtime'], 'g'));
        self::assertSame(['runtime' => 'changed'], wp_cache_get_multiple(['runtime'], 'g', true));
        self::assertSame([], wp_cache_get_multiple([], 'g'));
    }

    public function testForceReadsTheStore(): void
    {
        wp_cache_set('k', 'old');
        ephpm_kv_set(self::PREFIX . 'default:1:k', serialize('written by another request'));
        self::assertSame('old', wp_cache_get('k'));
        self::assertSame('written by another request', wp_cache_get('k', '', true));
        self::assertSame('written by another request', wp_cache_get('k'));
        ephpm_kv_del(self::PREFIX . 'default:1:k');
        self::assertFalse(wp_cache_get('k', '', true, $found));
        self::assertFalse($found);
        self::assertFalse(wp_cache_get('k', '', false, $found), 'a forced miss drops the runtime copy');
        self::assertFalse($found);
    }

    public function testReplace(): void
    {
        self::assertFalse(wp_cache_replace('k', 'v'));
        self::assertFalse(wp_cache_get('k'));
        wp_cache_set('k', 'v');
        self::newRequest();
        self::assertTrue(wp_cache_replace('k', 'w'), 'the key is in the store only');
        self::newRequest();
        self::assertSame('w', wp_cache_get('k'));
    }

    public function testDelete(): void
    {
        self::assertFalse(wp_cache_delete('k'));
        wp_cache_set('k', 'v');
        self::newRequest();
        self::assertTrue(wp_cache_delete('k'));
        self::assertNull(ephpm_kv_get(self::PREFIX . 'default:1:k'));
        self::assertFalse(wp_cache_get('k'));
        wp_cache_set_multiple(['a' => 1, 'b' => 2], 'g');
        self::assertSame(['a' => true, 'x' => false, 'b' => true], wp_cache_delete_multiple(['a', 'x', 'b'], 'g'));
        self::assertSame([], self::storeKeys());
    }

    public function testSetMultiple(): void
    {
        self::assertSame(['a' => true, 'b' => true, 3 => true], wp_cache_set_multiple(['a' => 'x', 'b' => null, 3 => [1]], 'g', 50));
        self::newRequest();
        self::assertSame(['a' => 'x', 'b' => null, 3 => [1]], wp_cache_get_multiple(['a', 'b', 3], 'g'));
        self::assertGreaterThan(0, ephpm_kv_ttl(self::PREFIX . 'g:1:a'));
    }

    public function testIncrAndDecr(): void
    {
        self::assertFalse(wp_cache_incr('missing'));
        self::assertFalse(wp_cache_decr('missing'));
        self::assertSame([], self::storeKeys(), 'incr of a missing key creates nothing');

        wp_cache_set('n', 5, 'default', 100);
        self::assertSame(6, wp_cache_incr('n'));
        self::assertSame(10, wp_cache_incr('n', 4));
        self::assertSame(8, wp_cache_decr('n', '2'));
        self::assertSame(0, wp_cache_decr('n', 100), 'never below 0');
        self::assertSame(0, wp_cache_decr('n'));
        self::assertSame(3, wp_cache_incr('n', 3));
        self::assertSame('3', ephpm_kv_get(self::PREFIX . 'default:1:n'));
        self::assertGreaterThan(90, ephpm_kv_ttl(self::PREFIX . 'default:1:n'), 'the TTL survives');
        self::newRequest();
        self::assertSame(3, wp_cache_get('n'));

        wp_cache_set('s', '5');
        self::assertSame(7, wp_cache_incr('s', 2), 'a numeric string');
        wp_cache_set('t', 'not a number', 'default', 100);
        self::assertSame(4, wp_cache_incr('t', 4), 'non-numeric counts as 0');
        self::assertGreaterThan(90, ephpm_kv_ttl(self::PREFIX . 'default:1:t'), 'the TTL survives');
        wp_cache_set('u', ['array']);
        self::assertSame(0, wp_cache_decr('u', 4));
        wp_cache_set('f', 1.5);
        self::assertSame(3.5, wp_cache_incr('f', 2));
        wp_cache_set('b', true);
        self::assertSame(1, wp_cache_incr('b'));
        wp_cache_set('max', PHP_INT_MAX);
        self::assertSame((float) PHP_INT_MAX + 1, wp_cache_incr('max'), 'past PHP_INT_MAX as PHP computes it');

        self::newRequest();
        self::assertSame(7, wp_cache_get('s'));
        self::assertSame(4, wp_cache_get('t'));
        self::assertSame(0, wp_cache_get('u'));
        self::assertSame(3.5, wp_cache_get('f'));
    }

    public function testIncrSeesOtherRequestsIncrements(): void
    {
        wp_cache_set('n', 1);
        self::assertSame(1, wp_cache_get('n'));
        // Another request increments meanwhile.
        ephpm_kv_incr_by(self::PREFIX . 'default:1:n', 10);
        self::assertSame(12, wp_cache_incr('n'));
        self::assertSame(12, wp_cache_get('n'));
        self::assertFalse(wp_cache_incr('n', 1, 'other'));
        ephpm_kv_del(self::PREFIX . 'default:1:n');
        self::assertFalse(wp_cache_incr('n'), 'deleted by another request');
        self::assertFalse(wp_cache_get('n'));
    }

    public function testFlushRemovesOnlyThisSitesKeys(): void
    {
        $others = [
            // another site's salt, one that merely starts with ours, a raw key
            rawurlencode('other-site') . '|default:1:k',
            rawurlencode(self::SALT . '2') . '|default:1:k',
            self::SALT . '-k',
        ];
        foreach ($others as $key) {
            ephpm_kv_set($key, 'theirs');
        }
        try {
            wp_cache_set('k', 'v');
            wp_cache_set('k', 'v', 'posts');
            self::assertCount(2, self::storeKeys());
            self::assertTrue(wp_cache_flush());
            self::assertSame([], self::storeKeys());
            self::assertFalse(wp_cache_get('k'), 'the runtime copy is flushed too');
            foreach ($others as $key) {
                self::assertSame('theirs', ephpm_kv_get($key), $key);
            }
        } finally {
            foreach ($others as $key) {
                ephpm_kv_del($key);
            }
        }
    }

    public function testFlushGroup(): void
    {
        $GLOBALS['ephpm_fake_wp']['multisite'] = true;
        self::newRequest(['users'], ['np']);
        wp_cache_set('k', 1, 'posts');
        wp_cache_set('k', 1, 'posts2');
        wp_cache_set('k', 1, 'users');
        wp_cache_set('k', 1, 'np');
        wp_cache_switch_to_blog(2);
        wp_cache_set('k', 2, 'posts');
        self::assertTrue(wp_cache_flush_group('posts'));
        self::assertSame([self::PREFIX . 'posts2:1:k', self::PREFIX . 'users:g:k'], self::storeKeys());
        self::assertFalse(wp_cache_get('k', 'posts'));
        wp_cache_switch_to_blog(1);
        self::assertFalse(wp_cache_get('k', 'posts'));
        self::assertSame(1, wp_cache_get('k', 'posts2'));
        self::assertTrue(wp_cache_flush_group('np'));
        self::assertFalse(wp_cache_get('k', 'np'));
        self::assertTrue(wp_cache_flush_group('users'));
        self::assertSame([self::PREFIX . 'posts2:1:k'], self::storeKeys());
    }

    public function testFlushRuntimeKeepsTheStore(): void
    {
        wp_cache_set('k', 'v');
        ephpm_kv_set(self::PREFIX . 'default:1:k', serialize('newer'));
        self::assertTrue(wp_cache_flush_runtime());
        self::assertSame('newer', wp_cache_get('k'));
        self::assertSame([self::PREFIX . 'default:1:k'], self::storeKeys());
    }

    public function testCountersAndStats(): void
    {
        $cache = $GLOBALS['wp_object_cache'];
        self::assertSame(0, $cache->cache_hits);
        self::assertSame(0, $cache->cache_misses);
        wp_cache_get('missing');
        wp_cache_set('k', 'v', 'posts');
        wp_cache_get('k', 'posts');
        wp_cache_get('k', 'posts', true);
        wp_cache_get('k', 'nope');
        self::assertSame(2, $cache->cache_hits);
        self::assertSame(2, $cache->cache_misses);
        ob_start();
        $cache->stats();
        $html = (string) ob_get_clean();
        self::assertStringContainsString('<strong>Cache Hits:</strong> 2<br />', $html);
        self::assertStringContainsString('<strong>Cache Misses:</strong> 2<br />', $html);
        self::assertStringContainsString('<strong>Group:</strong> posts - (', $html);
    }

    public function testObjectsAreCopies(): void
    {
        $object = new \stdClass();
        $object->v = 'original';
        wp_cache_set('o', $object);
        $object->v = 'changed after set';
        $got = wp_cache_get('o');
        self::assertSame('original', $got->v);
        $got->v = 'changed after get';
        self::assertSame('original', wp_cache_get('o')->v);
        self::newRequest();
        self::assertEquals((object) ['v' => 'original'], wp_cache_get('o'));
    }

    /** @return iterable<string, array{mixed}> */
    public static function invalidKeys(): iterable
    {
        yield 'empty' => [''];
        yield 'blank' => [' '];
        yield 'null' => [null];
        yield 'float' => [1.5];
        yield 'array' => [['k']];
    }

    /**
     * @dataProvider invalidKeys
     *
     * @param mixed $key
     */
    public function testInvalidKeysAreRefusedAsWordPressDoes($key): void
    {
        self::assertFalse(wp_cache_set($key, 'v'));
        self::assertFalse(wp_cache_add($key, 'v'));
        self::assertFalse(wp_cache_get($key, '', false, $found));
        self::assertFalse($found);
        self::assertFalse(wp_cache_delete($key));
        self::assertFalse(wp_cache_incr($key));
        self::assertSame([], self::storeKeys());
        self::assertCount(5, $GLOBALS['ephpm_fake_wp']['wrong']);
        self::assertStringStartsWith('WP_Object_Cache::set: Cache key must', $GLOBALS['ephpm_fake_wp']['wrong'][0]);
    }

    public function testLongKeysAreHashed(): void
    {
        $long = str_repeat('k', 70000);
        self::assertTrue(wp_cache_set($long, 'v'));
        self::assertSame([self::PREFIX . 'default:1#' . hash('sha256', $long)], self::storeKeys());
        self::newRequest();
        self::assertSame('v', wp_cache_get($long));
        self::assertTrue(wp_cache_flush_group('default'));
        self::assertSame([], self::storeKeys());
    }

    public function testUnserializableValueIsRefusedAndClearsTheOldOne(): void
    {
        wp_cache_set('k', 'old');
        self::assertFalse(wp_cache_set('k', static fn () => 1));
        self::assertFalse(wp_cache_get('k'));
        self::assertSame([], self::storeKeys());
    }

    public function testSupportsCloseAndReset(): void
    {
        foreach (['add_multiple', 'set_multiple', 'get_multiple', 'delete_multiple', 'flush_runtime', 'flush_group'] as $feature) {
            self::assertTrue(wp_cache_supports($feature), $feature);
        }
        self::assertFalse(wp_cache_supports('something_else'));
        self::assertTrue(wp_cache_close());

        $GLOBALS['ephpm_fake_wp']['multisite'] = true;
        self::newRequest(['users'], ['np']);
        wp_cache_set('k', 'v', 'np');
        wp_cache_set('k', 'v', 'users');
        wp_cache_reset();
        self::assertSame(['wp_cache_reset', 'reset'], $GLOBALS['ephpm_fake_wp']['deprecated']);
        self::assertFalse(wp_cache_get('k', 'np'), 'non-global runtime values are dropped');
        self::assertSame('v', wp_cache_get('k', 'users'));
    }

    public function testOversizeValueIsRefusedAndClearsTheOldOne(): void
    {
        // ephpm.max_value_size is a system setting: a child PHP with 1K.
        [$code, $out, $err] = ChildPhp::run(str_replace('WP_DIR', __DIR__, <<<'PHP'
            define('EPHPM_CACHE_KEY_SALT', 's');
            require 'WP_DIR/fake-wordpress.php';
            wp_cache_init();
            var_dump(wp_cache_set('k', 'old'));
            var_dump(wp_cache_set('k', str_repeat('x', 2000)));
            var_dump(wp_cache_get('k', '', false, $found), $found, ephpm_kv_get('s|default:1:k'));
            var_dump(wp_cache_add('n', str_repeat('x', 2000)), ephpm_kv_exists('s|default:1:n'));
            PHP), true, ['ephpm.max_value_size=1K']);
        self::assertSame(0, $code, $out . $err);
        self::assertSame('', $err);
        self::assertSame("bool(true)\nbool(false)\nbool(false)\nbool(false)\nNULL\nbool(false)\nbool(false)\n", $out);
    }

    public function testDefaultSaltAndWpCacheKeySalt(): void
    {
        $script = <<<'PHP'
            require 'WP_DIR/fake-wordpress.php';
            wp_cache_init();
            wp_cache_set('k', 'v');
            echo implode(',', ephpm_kv_keys('*')), "\n";
            PHP;
        [$code, $out, $err] = ChildPhp::run(str_replace('WP_DIR', __DIR__, $script), true);
        self::assertSame(0, $code, $out . $err);
        self::assertSame('wp-' . substr(md5('/srv/ephpm-fake-wordpress/'), 0, 16) . "|default:1:k\n", $out);
        [$code, $out, $err] = ChildPhp::run("define('WP_CACHE_KEY_SALT', 'a b');\n" . str_replace('WP_DIR', __DIR__, $script), true);
        self::assertSame(0, $code, $out . $err);
        self::assertSame("a%20b|default:1:k\n", $out);
    }

    public function testWithoutTheExtensionWpCacheInitFailsLoudly(): void
    {
        [$code, $out, $err] = ChildPhp::run(str_replace('WP_DIR', __DIR__, <<<'PHP'
            require 'WP_DIR/fake-wordpress.php';
            var_dump(extension_loaded('ephpm'), function_exists('wp_cache_get'));
            try {
                wp_cache_init();
                echo "initialised\n";
            } catch (RuntimeException $e) {
                echo $e->getMessage(), "\n";
            }
            PHP), false);
        self::assertSame(0, $code, $out . $err);
        self::assertStringStartsWith("bool(false)\nbool(true)\nThe ephpm object cache (", $out);
        self::assertStringContainsString('needs the ephpm extension', $out);
    }
}
