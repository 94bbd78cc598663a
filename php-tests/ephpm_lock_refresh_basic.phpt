--TEST--
Ephpm\Lock::refresh(): compare-and-expire by token, false once the lock is no longer this one's
--EXTENSIONS--
ephpm
--FILE--
<?php
use Ephpm\Lock;

$a = Lock::acquire('job', 1);
var_dump($a->refresh(60), ephpm_kv_ttl('job'));
var_dump($a->refresh(0.0001), ephpm_kv_pttl('job') <= 1);
usleep(10000);
echo "-- expired: false, and nothing to refresh\n";
var_dump($a->refresh(60), ephpm_kv_exists('job'));

echo "-- someone else's lock is not extended\n";
$b = Lock::acquire('b', 0.05);
usleep(100000);
$c = Lock::acquire('b', 2);
var_dump($b->refresh(100), ephpm_kv_ttl('b'));

echo "-- released: false\n";
$c->release();
var_dump($c->refresh(5));

echo "-- a refreshed lock outlives its first TTL\n";
$d = Lock::acquire('d', 0.1);
$d->refresh(5);
usleep(200000);
var_dump($d->isAcquired(), Lock::acquire('d'));
?>
--EXPECT--
bool(true)
int(60)
bool(true)
bool(true)
-- expired: false, and nothing to refresh
bool(false)
bool(false)
-- someone else's lock is not extended
bool(false)
int(2)
-- released: false
bool(false)
-- a refreshed lock outlives its first TTL
bool(true)
NULL
