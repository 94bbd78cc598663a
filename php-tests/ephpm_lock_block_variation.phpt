--TEST--
Ephpm\Lock::block(): wait 0 is acquire(), a release from another thread wakes the waiter (test build)
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!function_exists('ephpm_test_delete_after')) die('skip test build only'); ?>
--FILE--
<?php
use Ephpm\Lock;

$holder = Lock::acquire('job', 30);

echo "-- wait 0: one attempt, no waiting\n";
$t = microtime(true);
var_dump(Lock::block('job', 10, 0));
var_dump(microtime(true) - $t < 0.05);
$t = microtime(true);
var_dump(Lock::block('job', 10, 0.0001));
var_dump(microtime(true) - $t < 0.05);

echo "-- woken by the release (another thread, after 300 ms), not by the TTL (30 s)\n";
ephpm_test_delete_after('job', 300);
$t = microtime(true);
$b = Lock::block('job', 10, 10);
$waited = microtime(true) - $t;
var_dump($b instanceof Lock, $waited >= 0.25 && $waited < 1.5, $b->fence() > $holder->fence());
var_dump($holder->isAcquired(), $b->isAcquired());

echo "-- the wait sleeps (no busy loop): CPU time far below the wall time\n";
$c = Lock::acquire('cpu', 30);
$r0 = getrusage();
$t = microtime(true);
var_dump(Lock::block('cpu', 10, 0.6));
$wall = microtime(true) - $t;
$r1 = getrusage();
$cpu = ($r1['ru_utime.tv_sec'] - $r0['ru_utime.tv_sec']) + ($r1['ru_utime.tv_usec'] - $r0['ru_utime.tv_usec']) / 1e6
     + ($r1['ru_stime.tv_sec'] - $r0['ru_stime.tv_sec']) + ($r1['ru_stime.tv_usec'] - $r0['ru_stime.tv_usec']) / 1e6;
var_dump($wall >= 0.55, $cpu < $wall / 4);
?>
--EXPECT--
-- wait 0: one attempt, no waiting
NULL
bool(true)
NULL
bool(true)
-- woken by the release (another thread, after 300 ms), not by the TTL (30 s)
bool(true)
bool(true)
bool(true)
bool(false)
bool(true)
-- the wait sleeps (no busy loop): CPU time far below the wall time
NULL
bool(true)
bool(true)
