--TEST--
Ephpm\Lock and the fenced functions on a host table from before the lock ops: only they throw (test build)
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

$held = Lock::acquire('held');
$token = $held->token();

ephpm_test_install_host_ops('no_lock_ops');
show(fn() => Lock::acquire('n'));
show(fn() => Lock::block('n'));
show(fn() => Lock::restore('n', $token));
show(fn() => $held->refresh(5));
show(fn() => $held->isAcquired());
show(fn() => $held->remaining());
show(fn() => ephpm_kv_set_fenced('k', 'v', 1));
show(fn() => ephpm_kv_expire_if_eq('k', 'v', 1));
echo "-- what needs no new op still works\n";
show(fn() => $held->name());
show(fn() => $held->token() === $token);
show(fn() => $held->fence() > 0);
show(fn() => ephpm_kv_setnx('k', 'v'));
show(fn() => $held->release());
echo "-- argument errors come before the missing op\n";
show(fn() => Lock::acquire(''));
show(fn() => ephpm_kv_set_fenced('k', 'v', 0));

echo "-- a host from before del_if_eq: acquire needs the lock ops, which it lacks too\n";
ephpm_test_install_host_ops('short');
show(fn() => Lock::acquire('n'));

ephpm_test_install_host_ops('standalone');
show(fn() => Lock::acquire('n') instanceof Lock);
?>
--EXPECTF--
Error: Ephpm\Lock::acquire(): the host's ops table (ABI %d, %d bytes) has no set_nx_fenced operation; upgrade the host program
Error: Ephpm\Lock::block(): the host's ops table (ABI %d, %d bytes) has no set_nx_fenced operation; upgrade the host program
Error: Ephpm\Lock::restore(): the host's ops table (ABI %d, %d bytes) has no lock_state operation; upgrade the host program
Error: Ephpm\Lock::refresh(): the host's ops table (ABI %d, %d bytes) has no expire_if_eq operation; upgrade the host program
Error: Ephpm\Lock::isAcquired(): the host's ops table (ABI %d, %d bytes) has no lock_state operation; upgrade the host program
Error: Ephpm\Lock::remaining(): the host's ops table (ABI %d, %d bytes) has no lock_state operation; upgrade the host program
Error: ephpm_kv_set_fenced(): the host's ops table (ABI %d, %d bytes) has no set_fenced operation; upgrade the host program
Error: ephpm_kv_expire_if_eq(): the host's ops table (ABI %d, %d bytes) has no expire_if_eq operation; upgrade the host program
-- what needs no new op still works
string(4) "held"
bool(true)
bool(true)
bool(true)
bool(true)
-- argument errors come before the missing op
ValueError: Ephpm\Lock::acquire(): Argument #1 ($name) must not be empty
ValueError: ephpm_kv_set_fenced(): Argument #3 ($fence) must be greater than 0
-- a host from before del_if_eq: acquire needs the lock ops, which it lacks too
Error: Ephpm\Lock::acquire(): the host's ops table (ABI %d, %d bytes) has no set_nx_fenced operation; upgrade the host program
bool(true)
