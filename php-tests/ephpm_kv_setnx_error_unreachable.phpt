--TEST--
ephpm_kv_setnx(): an unreachable owner is false with a warning, never a guess (test build)
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!function_exists('ephpm_test_install_host_ops')) die('skip test build only'); ?>
--FILE--
<?php
ephpm_test_install_host_ops('unreachable');
var_dump(ephpm_kv_info()['mode']);
var_dump(ephpm_kv_setnx('lock', 'token', 30));
var_dump(ephpm_kv_setnx('lock', 'token'));

echo "-- set and get go through the store as usual\n";
var_dump(ephpm_kv_set('k', 'v'), ephpm_kv_get('k'));

echo "-- argument checks still come first\n";
try {
    ephpm_kv_setnx('', 'token');
} catch (ValueError $e) {
    echo $e->getMessage(), "\n";
}

ephpm_test_install_host_ops('standalone');
var_dump(ephpm_kv_setnx('lock', 'token'));
?>
--EXPECTF--
string(4) "host"

Warning: ephpm_kv_setnx(): The key's owner is unreachable, the outcome is unknown in %s on line %d
bool(false)

Warning: ephpm_kv_setnx(): The key's owner is unreachable, the outcome is unknown in %s on line %d
bool(false)
-- set and get go through the store as usual
bool(true)
string(1) "v"
-- argument checks still come first
ephpm_kv_setnx(): Argument #1 ($key) must not be empty
bool(true)
