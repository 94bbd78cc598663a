--TEST--
Ephpm\Lock::acquire(): a failed attempt throws (never null, which means "held"), and an unconfirmed grant is given back (test build)
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!function_exists('ephpm_test_install_host_ops')) die('skip test build only'); ?>
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

echo "-- out of memory\n";
ephpm_test_install_host_ops('lock_oom');
show(fn() => Lock::acquire('n'));
show(fn() => Lock::block('n', 1, 1));

echo "-- owner unreachable\n";
ephpm_test_install_host_ops('unreachable');
show(fn() => Lock::acquire('n'));

echo "-- owner unreachable after the grant landed: given back by its token\n";
ephpm_test_install_host_ops('unreachable_landed');
$before = ephpm_test_op_calls()['del_if_eq'];
show(fn() => Lock::acquire('landed'));
var_dump(ephpm_test_op_calls()['del_if_eq'] - $before);
ephpm_test_install_host_ops('standalone');
var_dump(ephpm_kv_exists('landed'));
var_dump(Lock::acquire('landed') instanceof Lock);

echo "-- the lock's ops answer for their methods: release, refresh, isAcquired\n";
$l = Lock::acquire('held');
ephpm_test_install_host_ops('unreachable');
show(fn() => $l->release());
show(fn() => $l->refresh(5));
show(fn() => $l->isAcquired());
show(fn() => $l->remaining());
ephpm_test_install_host_ops('wrongtype');
show(fn() => $l->release());
ephpm_test_install_host_ops('standalone');
echo "-- still held after the failed release\n";
var_dump($l->isAcquired(), $l->release());
?>
--EXPECTF--
-- out of memory

Warning: Ephpm\Lock::acquire(): Out of memory: the store could not allocate in %s on line %d
Error: Ephpm\Lock::acquire(): out of memory

Warning: Ephpm\Lock::block(): Out of memory: the store could not allocate in %s on line %d
Error: Ephpm\Lock::block(): out of memory
-- owner unreachable

Warning: Ephpm\Lock::acquire(): The key's owner is unreachable, the outcome is unknown in %s on line %d
Error: Ephpm\Lock::acquire(): the key's owner is unreachable, the outcome is unknown
-- owner unreachable after the grant landed: given back by its token

Warning: Ephpm\Lock::acquire(): The key's owner is unreachable, the outcome is unknown in %s on line %d
Error: Ephpm\Lock::acquire(): the key's owner is unreachable, the outcome is unknown
int(1)
bool(false)
bool(true)
-- the lock's ops answer for their methods: release, refresh, isAcquired

Warning: Ephpm\Lock::release(): The key's owner is unreachable, the outcome is unknown in %s on line %d
Error: Ephpm\Lock::release(): the key's owner is unreachable, the outcome is unknown

Warning: Ephpm\Lock::refresh(): The key's owner is unreachable, the outcome is unknown in %s on line %d
Error: Ephpm\Lock::refresh(): the key's owner is unreachable, the outcome is unknown

Warning: Ephpm\Lock::isAcquired(): The key's owner is unreachable, the outcome is unknown in %s on line %d
Error: Ephpm\Lock::isAcquired(): the key's owner is unreachable, the outcome is unknown

Warning: Ephpm\Lock::remaining(): The key's owner is unreachable, the outcome is unknown in %s on line %d
Error: Ephpm\Lock::remaining(): the key's owner is unreachable, the outcome is unknown
Error: WRONGTYPE Operation against a key holding the wrong kind of value
-- still held after the failed release
bool(true)
bool(true)
