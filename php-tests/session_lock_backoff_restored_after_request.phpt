--TEST--
session lock: backoff bounds changed with ini_set() are restored at the end of the request in step with ini_get(), whatever the order (a second request in the same process)
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
--FILE--
<?php
require __DIR__ . '/session_server.inc';
$server = server_start(__DIR__ . '/session_lock_backoff_restored_after_request.inc');
$n = 0;
try {
    // Each order that ini_set() accepts; the request's end undoes the
    // changes in the order they were made, through pairs that are out of
    // line on the way (100 below 500; 10 above 5).
    foreach (['max:1000,min:500', 'min:1,max:5', 'min:50,max:500', 'max:500,min:200'] as $set) {
        echo "-- $set\n";
        echo server_get($server, ['set' => $set]);
        echo server_get($server, ['show' => ++$n]);
    }
} finally {
    server_stop($server);
}
?>
--EXPECT--
-- max:1000,min:500
  ini_set(max, 1000): was 100
  ini_set(min, 500): was 10
  500..1000
  next request: 10..100: 10, 20, 40, 80, 100...
-- min:1,max:5
  ini_set(min, 1): was 10
  ini_set(max, 5): was 100
  1..5
  next request: 10..100: 10, 20, 40, 80, 100...
-- min:50,max:500
  ini_set(min, 50): was 10
  ini_set(max, 500): was 100
  50..500
  next request: 10..100: 10, 20, 40, 80, 100...
-- max:500,min:200
  ini_set(max, 500): was 100
  ini_set(min, 200): was 10
  200..500
  next request: 10..100: 10, 20, 40, 80, 100...
