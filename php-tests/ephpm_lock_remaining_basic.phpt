--TEST--
Ephpm\Lock::remaining(): seconds left as a float, null once the lock is no longer this one's
--EXTENSIONS--
ephpm
--FILE--
<?php
use Ephpm\Lock;

$a = Lock::acquire('job', 2.5);
$r = $a->remaining();
var_dump(is_float($r), $r > 2.3 && $r <= 2.5);
$a->refresh(0.75);
$r = $a->remaining();
var_dump($r > 0.6 && $r <= 0.75);
echo "-- millisecond precision\n";
$b = Lock::acquire('ms', 0.001);
var_dump($b->remaining() <= 0.001);
usleep(5000);
echo "-- expired, released, taken by another: null\n";
var_dump($b->remaining());
$a->release();
var_dump($a->remaining());
$c = Lock::acquire('c', 0.05);
usleep(100000);
$d = Lock::acquire('c', 5);
var_dump($c->remaining(), $d->remaining() > 4.5);
echo "-- its TTL removed behind its back: INF\n";
ephpm_kv_persist('c');
var_dump($d->remaining());
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
-- millisecond precision
bool(true)
-- expired, released, taken by another: null
NULL
NULL
NULL
bool(true)
-- its TTL removed behind its back: INF
float(INF)
