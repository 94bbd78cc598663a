--TEST--
session: a failed read releases the lock it just took (the undo path uses del_if_eq too)
--SKIPIF--
<?php if (!function_exists('ephpm_test_install_host_ops')) die('skip test build only'); ?>
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
--FILE--
<?php
ephpm_test_install_host_ops('get_fails');  // get() fails with WRONGTYPE
session_id('bad1');
var_dump(session_start());
$calls = ephpm_test_op_calls();
var_dump($calls['set_nx_ephemeral'], $calls['del_if_eq']);
ephpm_test_install_host_ops('standalone');
var_dump(ephpm_kv_exists('session_lock:{bad1}'));
?>
--EXPECTF--
Warning: session_start(): Session bad1: reading the session data failed: wrong type in %s on line %d

Warning: session_start(): Failed to read session data: ephpm (path: %S) in %s on line %d
bool(false)
int(1)
int(1)
bool(false)
