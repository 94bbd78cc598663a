--TEST--
Ephpm\Lock: a lock still held when its object is destroyed is released by its token
--EXTENSIONS--
ephpm
--FILE--
<?php
use Ephpm\Lock;

$a = Lock::acquire('job');
unset($a);
var_dump(ephpm_kv_exists('job'));

echo "-- leaving a function's scope\n";
function work(): void {
    $l = Lock::acquire('scoped');
    var_dump(ephpm_kv_exists('scoped'));
}
work();
var_dump(ephpm_kv_exists('scoped'));

echo "-- an acquire() result never stored\n";
Lock::acquire('temp');
var_dump(ephpm_kv_exists('temp'));

echo "-- overwritten variable\n";
$b = Lock::acquire('first');
$b = Lock::acquire('second');
var_dump(ephpm_kv_exists('first'), ephpm_kv_exists('second'));

echo "-- a lock already taken over is not touched\n";
$c = Lock::acquire('over', 0.05);
usleep(100000);
ephpm_kv_set('over', 'new holder');
unset($c);
var_dump(ephpm_kv_get('over'));

echo "-- in a cycle: released when the collector frees it\n";
$o = new stdClass;
$o->self = $o;
$o->lock = Lock::acquire('cycle');
unset($o);
var_dump(ephpm_kv_exists('cycle'));
gc_collect_cycles();
var_dump(ephpm_kv_exists('cycle'));
?>
--EXPECT--
bool(false)
-- leaving a function's scope
bool(true)
bool(false)
-- an acquire() result never stored
bool(false)
-- overwritten variable
bool(false)
bool(true)
-- a lock already taken over is not touched
string(10) "new holder"
-- in a cycle: released when the collector frees it
bool(true)
bool(false)
