--TEST--
Ephpm\Lock::acquire(): TTL rounding up to whole ms, int TTLs, binary names, expiry
--EXTENSIONS--
ephpm
--FILE--
<?php
use Ephpm\Lock;

echo "-- a TTL is rounded up to whole milliseconds, never down to 0\n";
$l = Lock::acquire('tiny', 0.0001);
var_dump($l instanceof Lock, ephpm_kv_pttl('tiny') <= 1);
$l = Lock::acquire('frac', 1.0004);
var_dump(ephpm_kv_pttl('frac') <= 1001 && ephpm_kv_pttl('frac') > 900);

echo "-- an int TTL is coerced to float\n";
$l = Lock::acquire('int', 5);
var_dump(ephpm_kv_ttl('int'));

echo "-- binary-safe names\n";
$l = Lock::acquire("a\0b");
var_dump($l->name() === "a\0b", Lock::acquire("a\0c") instanceof Lock, Lock::acquire("a\0b"));

echo "-- an expired lock is free, and the next grant has a higher fence\n";
$first = Lock::acquire('short', 0.05);
usleep(120000);
$second = Lock::acquire('short', 5);
var_dump($second instanceof Lock, $second->fence() > $first->fence());
var_dump($first->isAcquired(), $first->release(), $second->isAcquired());

echo "-- fences grow across names too\n";
$x = Lock::acquire('x');
$y = Lock::acquire('y');
var_dump($y->fence() > $x->fence());
?>
--EXPECT--
-- a TTL is rounded up to whole milliseconds, never down to 0
bool(true)
bool(true)
bool(true)
-- an int TTL is coerced to float
int(5)
-- binary-safe names
bool(true)
bool(true)
NULL
-- an expired lock is free, and the next grant has a higher fence
bool(true)
bool(true)
bool(false)
bool(false)
bool(true)
-- fences grow across names too
bool(true)
