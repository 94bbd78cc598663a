--TEST--
ephpm_kv_incr(), ephpm_kv_incr_by(), ephpm_kv_decr(): an unreachable owner is false with a warning, the local value untouched (test build)
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!function_exists('ephpm_test_install_host_ops')) die('skip test build only'); ?>
--FILE--
<?php
ephpm_kv_set('n', '5');
ephpm_test_install_host_ops('unreachable');
var_dump(ephpm_kv_incr('n'));
var_dump(ephpm_kv_incr_by('n', 10));
var_dump(ephpm_kv_decr('n'));
var_dump(ephpm_kv_get('n'));
ephpm_test_install_host_ops('standalone');
var_dump(ephpm_kv_incr('n'));
?>
--EXPECTF--
Warning: ephpm_kv_incr(): The key's owner is unreachable, the outcome is unknown in %s on line %d
bool(false)

Warning: ephpm_kv_incr_by(): The key's owner is unreachable, the outcome is unknown in %s on line %d
bool(false)

Warning: ephpm_kv_decr(): The key's owner is unreachable, the outcome is unknown in %s on line %d
bool(false)
string(1) "5"
int(6)
