--TEST--
Ephpm\Lock::release(): compare-and-delete by token; false once the lock is no longer this one's
--EXTENSIONS--
ephpm
--FILE--
<?php
use Ephpm\Lock;

$a = Lock::acquire('job');
var_dump($a->release(), ephpm_kv_exists('job'));
echo "-- twice\n";
var_dump($a->release(), $a->isAcquired());

echo "-- after expiry and a new holder: false, and the new holder keeps it\n";
$old = Lock::acquire('job', 0.05);
usleep(100000);
$new = Lock::acquire('job', 10);
var_dump($old->release(), $new->isAcquired(), ephpm_kv_get('job') === $new->token());

echo "-- a lock deleted behind its back\n";
$c = Lock::acquire('gone');
ephpm_kv_del('gone');
var_dump($c->release());

echo "-- a lock overwritten behind its back is left alone\n";
$d = Lock::acquire('over');
ephpm_kv_set('over', 'someone else');
var_dump($d->release(), ephpm_kv_get('over'));

echo "-- arguments\n";
try {
    $new->release(1);
} catch (ArgumentCountError $e) {
    echo $e->getMessage(), "\n";
}
?>
--EXPECT--
bool(true)
bool(false)
-- twice
bool(false)
bool(false)
-- after expiry and a new holder: false, and the new holder keeps it
bool(false)
bool(true)
bool(true)
-- a lock deleted behind its back
bool(false)
-- a lock overwritten behind its back is left alone
bool(false)
string(12) "someone else"
-- arguments
Ephpm\Lock::release() expects exactly 0 arguments, 1 given
