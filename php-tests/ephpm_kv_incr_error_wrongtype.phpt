--TEST--
ephpm_kv_incr(), ephpm_kv_decr(), ephpm_kv_incr_by(): WRONGTYPE is thrown as an Error (test build)
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!function_exists('ephpm_test_install_host_ops')) die('skip test build only'); ?>
--FILE--
<?php
function show(callable $f): void {
    try {
        var_dump($f());
    } catch (Throwable $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}

ephpm_kv_set('n', '10');
ephpm_test_install_host_ops('wrongtype');
show(fn() => ephpm_kv_incr('n'));
show(fn() => ephpm_kv_decr('n'));
show(fn() => ephpm_kv_incr_by('n', 5));
show(fn() => ephpm_kv_incr('missing'));
ephpm_test_install_host_ops('standalone');
show(fn() => ephpm_kv_get('n'));
show(fn() => ephpm_kv_exists('missing'));
?>
--EXPECT--
Error: WRONGTYPE Operation against a key holding the wrong kind of value
Error: WRONGTYPE Operation against a key holding the wrong kind of value
Error: WRONGTYPE Operation against a key holding the wrong kind of value
Error: WRONGTYPE Operation against a key holding the wrong kind of value
string(2) "10"
bool(false)
