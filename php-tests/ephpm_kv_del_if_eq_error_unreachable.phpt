--TEST--
ephpm_kv_del_if_eq(): an unreachable owner is false with a warning (test build)
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!function_exists('ephpm_test_install_host_ops')) die('skip test build only'); ?>
--FILE--
<?php
ephpm_kv_set('lock', 'token');
ephpm_test_install_host_ops('unreachable');
var_dump(ephpm_kv_del_if_eq('lock', 'token'));
var_dump(ephpm_kv_del_if_eq('missing', 'token'));
// the local copy is not touched: the outcome is the owner's to decide
var_dump(ephpm_kv_get('lock'));
ephpm_test_install_host_ops('standalone');
var_dump(ephpm_kv_del_if_eq('lock', 'token'));
?>
--EXPECTF--
Warning: ephpm_kv_del_if_eq(): The key's owner is unreachable, the outcome is unknown in %s on line %d
bool(false)

Warning: ephpm_kv_del_if_eq(): The key's owner is unreachable, the outcome is unknown in %s on line %d
bool(false)
string(5) "token"
bool(true)
