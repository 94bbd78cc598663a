--TEST--
session lock: ephpm.session_lock_backoff_min_ms above the default max at startup is refused, and the handler really keeps 10..100 (not a 0 ms step)
--SKIPIF--
<?php if (!function_exists('ephpm_test_session_trace')) die('skip test build only'); ?>
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
ephpm.session_lock_backoff_min_ms=500
--FILE--
<?php
require __DIR__ . '/session_backoff.inc';
echo bounds(), "\n";
echo backoff_steps('b1', 500), "\n";
?>
--EXPECT--
Warning: Invalid ephpm.session_lock_backoff_min_ms value "500": must be at most ephpm.session_lock_backoff_max_ms (100); keeping 10 in Unknown on line 0
10..100
10, 20, 40, 80, 100...
