--TEST--
session lock: ini_set() and ini_restore() of the backoff bounds in either order keep them ordered, and ini_get() and the handler agree
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
require __DIR__ . '/session_backoff.inc';
function set(string $bound, string $ms): void {
    $r = ini_set("ephpm.session_lock_backoff_{$bound}_ms", $ms);
    echo "  ini_set($bound, $ms): ", $r === false ? 'refused' : "was $r", "\n";
}
function restore(string $bound): void {
    ini_restore("ephpm.session_lock_backoff_{$bound}_ms");
    echo "  ini_restore($bound)\n";
}
function show(): void {
    static $n = 0;
    echo "  ", bounds(), ": ", backoff_steps('o' . ++$n, 500), "\n";
}

echo "-- min then max, both in line\n";
set('min', '50'); set('max', '500'); show();
restore('min'); restore('max'); show();
echo "-- max then min, both in line\n";
set('max', '500'); set('min', '200'); show();
restore('min'); restore('max'); show();
echo "-- min above max, then max below min: both refused\n";
set('min', '500'); set('max', '5'); show();
echo "-- raised in the order that works, then undone in the order that does not\n";
set('max', '1000'); set('min', '200'); show();
restore('max');   // 100 would be below 200: refused, 1000 stays
show();
restore('min'); restore('max'); show();
?>
--EXPECTF--
-- min then max, both in line
  ini_set(min, 50): was 10
  ini_set(max, 500): was 100
  50..500: 50, 100, 200
  ini_restore(min)
  ini_restore(max)
  10..100: 10, 20, 40, 80, 100...
-- max then min, both in line
  ini_set(max, 500): was 100
  ini_set(min, 200): was 10
  200..500: 200
  ini_restore(min)
  ini_restore(max)
  10..100: 10, 20, 40, 80, 100...
-- min above max, then max below min: both refused

Warning: Invalid ephpm.session_lock_backoff_min_ms value "500": must be at most ephpm.session_lock_backoff_max_ms (100); keeping 10 in %s on line %d
  ini_set(min, 500): refused

Warning: Invalid ephpm.session_lock_backoff_max_ms value "5": must be at least ephpm.session_lock_backoff_min_ms (10); keeping 100 in %s on line %d
  ini_set(max, 5): refused
  10..100: 10, 20, 40, 80, 100...
-- raised in the order that works, then undone in the order that does not
  ini_set(max, 1000): was 100
  ini_set(min, 200): was 10
  200..1000: 200

Warning: Invalid ephpm.session_lock_backoff_max_ms value "100": must be at least ephpm.session_lock_backoff_min_ms (200); keeping 1000 in %s on line %d
  ini_restore(max)
  200..1000: 200
  ini_restore(min)
  ini_restore(max)
  10..100: 10, 20, 40, 80, 100...
