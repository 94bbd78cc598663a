--TEST--
Ephpm\Lock::isAcquired(): the token compared at the owner, now
--EXTENSIONS--
ephpm
--FILE--
<?php
use Ephpm\Lock;

$a = Lock::acquire('job', 0.2);
var_dump($a->isAcquired());
echo "-- the check asks the store each time\n";
ephpm_kv_set('job', $a->token() . 'x');
var_dump($a->isAcquired());
ephpm_kv_set('job', $a->token(), 1);
var_dump($a->isAcquired());
echo "-- expired\n";
$b = Lock::acquire('b', 0.05);
usleep(100000);
var_dump($b->isAcquired());
echo "-- released\n";
$c = Lock::acquire('c');
$c->release();
var_dump($c->isAcquired());
echo "-- deleted behind its back\n";
$d = Lock::acquire('d');
ephpm_kv_del('d');
var_dump($d->isAcquired());
?>
--EXPECT--
bool(true)
-- the check asks the store each time
bool(false)
bool(true)
-- expired
bool(false)
-- released
bool(false)
-- deleted behind its back
bool(false)
