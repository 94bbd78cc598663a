<?php

declare(strict_types=1);

// The few pieces of WordPress the object-cache drop-in calls, for its tests:
// the constants wp-config.php defines and load.php/functions.php functions,
// steered through $GLOBALS['ephpm_fake_wp'] (see WordPressTestCase).

if (!defined('ABSPATH')) {
    define('ABSPATH', '/srv/ephpm-fake-wordpress/');
}

$GLOBALS['ephpm_fake_wp'] ??= ['multisite' => false, 'blog_id' => 1, 'suspend' => false, 'wrong' => [], 'deprecated' => []];

function is_multisite(): bool
{
    return $GLOBALS['ephpm_fake_wp']['multisite'];
}

function get_current_blog_id(): int
{
    return $GLOBALS['ephpm_fake_wp']['blog_id'];
}

function wp_suspend_cache_addition($suspend = null): bool
{
    return $GLOBALS['ephpm_fake_wp']['suspend'];
}

function _doing_it_wrong($function, $message, $version): void
{
    $GLOBALS['ephpm_fake_wp']['wrong'][] = $function . ': ' . $message;
}

function _deprecated_function($function, $version, $replacement = ''): void
{
    $GLOBALS['ephpm_fake_wp']['deprecated'][] = $function;
}

require_once dirname(__DIR__, 2) . '/wordpress/object-cache.php';
