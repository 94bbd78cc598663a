--TEST--
ephpm_kv_get(): a WRONGTYPE status from the ops table is thrown as an Error (test build)
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

var_dump(ephpm_kv_set('k', 'v'));
ephpm_test_install_host_ops('wrongtype');
var_dump(ephpm_kv_info()['mode']);
show(fn() => ephpm_kv_get('k'));
show(fn() => ephpm_kv_get('missing'));
// the other operations of that table are the store's own
show(fn() => ephpm_kv_exists('k'));

ephpm_test_install_host_ops('standalone');
var_dump(ephpm_kv_info()['mode']);
show(fn() => ephpm_kv_get('k'));
?>
--EXPECT--
bool(true)
string(4) "host"
Error: WRONGTYPE Operation against a key holding the wrong kind of value
Error: WRONGTYPE Operation against a key holding the wrong kind of value
bool(true)
string(10) "standalone"
string(1) "v"
