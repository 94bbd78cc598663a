--TEST--
Ephpm\Lock: final, not constructible with new, not cloneable, not serializable
--EXTENSIONS--
ephpm
--FILE--
<?php
use Ephpm\Lock;

function show(callable $f): void {
    try {
        var_dump($f());
    } catch (Throwable $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}

$rc = new ReflectionClass(Lock::class);
var_dump($rc->isFinal(), $rc->isInstantiable(), $rc->getConstructor()->isPrivate());
show(fn() => new Lock);
show(fn() => $rc->newInstanceWithoutConstructor());
show(fn() => $rc->newInstance());

$l = Lock::acquire('job');
show(fn() => clone $l);
show(fn() => serialize($l));
show(fn() => unserialize('O:10:"Ephpm\Lock":0:{}'));
show(fn() => unserialize('C:10:"Ephpm\Lock":0:{}'));
show(fn() => $l->dynamic = 1);
show(fn() => json_encode($l));
show(fn() => (array)$l);
var_dump($l);
show(fn() => eval('class Sub extends Ephpm\Lock {}'));
var_dump($l->isAcquired());
?>
--EXPECTF--
bool(true)
bool(false)
bool(true)
Error: Cannot directly construct Ephpm\Lock, use Ephpm\Lock::acquire(), Ephpm\Lock::block() or Ephpm\Lock::restore()
ReflectionException: Class Ephpm\Lock is an internal class marked as final that cannot be instantiated without invoking its constructor
Error: Cannot directly construct Ephpm\Lock, use Ephpm\Lock::acquire(), Ephpm\Lock::block() or Ephpm\Lock::restore()
Error: Trying to clone an uncloneable object of class Ephpm\Lock
Exception: Serialization of 'Ephpm\Lock' is not allowed
Exception: Unserialization of 'Ephpm\Lock' is not allowed
Exception: Unserialization of 'Ephpm\Lock' is not allowed
Error: Cannot create dynamic property Ephpm\Lock::$dynamic
string(2) "{}"
array(0) {
}
object(Ephpm\Lock)#%d (2) {
  ["name"]=>
  string(3) "job"
  ["fence"]=>
  int(%d)
}

Fatal error: Class Sub cannot extend final class Ephpm\Lock in %s on line %d
