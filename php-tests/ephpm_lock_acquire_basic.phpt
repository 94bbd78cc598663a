--TEST--
Ephpm\Lock::acquire(): takes a free lock now, null while another holds it
--EXTENSIONS--
ephpm
--FILE--
<?php
use Ephpm\Lock;

$a = Lock::acquire('job', 10);
var_dump($a instanceof Lock, $a->name(), $a->isAcquired());
echo "-- the store holds the token, with the TTL\n";
var_dump(ephpm_kv_get('job') === $a->token());
$pttl = ephpm_kv_pttl('job');
var_dump($pttl > 9000 && $pttl <= 10000);

echo "-- a second acquire while it is held\n";
var_dump(Lock::acquire('job'));
var_dump(ephpm_kv_get('job') === $a->token());

echo "-- free again after release\n";
var_dump($a->release());
$b = Lock::acquire('job');
var_dump($b instanceof Lock, $b->fence() > $a->fence(), $b->token() !== $a->token());

echo "-- a name held by a plain key counts as held\n";
ephpm_kv_set('plain', 'x');
var_dump(Lock::acquire('plain'), ephpm_kv_get('plain'));

echo "-- the default TTL is 30 s\n";
$c = Lock::acquire('default');
var_dump(ephpm_kv_ttl('default'));
?>
--EXPECT--
bool(true)
string(3) "job"
bool(true)
-- the store holds the token, with the TTL
bool(true)
bool(true)
-- a second acquire while it is held
NULL
bool(true)
-- free again after release
bool(true)
bool(true)
bool(true)
bool(true)
-- a name held by a plain key counts as held
NULL
string(1) "x"
-- the default TTL is 30 s
int(30)
