--TEST--
ephpm_kv_del_if_eq(): a WRONGTYPE status is thrown as an Error and removes nothing (test build)
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!function_exists('ephpm_test_install_host_ops')) die('skip test build only'); ?>
--FILE--
<?php
ephpm_kv_set('lock', 'token');
ephpm_test_install_host_ops('wrongtype');
try {
    var_dump(ephpm_kv_del_if_eq('lock', 'token'));
} catch (Error $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
var_dump(ephpm_kv_exists('lock'));
ephpm_test_install_host_ops('standalone');
var_dump(ephpm_kv_del_if_eq('lock', 'token'));
?>
--EXPECT--
Error: WRONGTYPE Operation against a key holding the wrong kind of value
bool(true)
bool(true)
