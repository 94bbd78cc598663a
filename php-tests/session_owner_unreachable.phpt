--TEST--
session lock: an unreachable owner is one attempt, a warning, on without it; close still releases by token
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
echo "-- the grant landed on the owner, the answer was lost --\n";
ephpm_test_install_host_ops('unreachable_landed');
session_id('far1');
var_dump(session_start());
$calls = ephpm_test_op_calls();
var_dump($calls['set_nx_ephemeral']);  // one attempt, no retry loop
var_dump((bool)preg_match('/^[0-9a-f]{32}$/', ephpm_kv_get('session_lock:{far1}')));
$_SESSION['v'] = 1;
session_write_close();
var_dump(ephpm_test_op_calls()['del_if_eq']);          // close released by token
var_dump(ephpm_kv_exists('session_lock:{far1}'));     // ... and the landed lock is gone
var_dump(ephpm_kv_get('session:{far1}'));

echo "-- nothing reached the owner --\n";
ephpm_test_install_host_ops('unreachable');
session_id('far2');
var_dump(session_start());
var_dump(ephpm_test_op_calls()['set_nx_ephemeral']);
session_write_close();
var_dump(ephpm_test_op_calls()['del_if_eq']);
?>
--EXPECTF--
-- the grant landed on the owner, the answer was lost --

Warning: session_start(): Session far1: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation in %s on line %d
bool(true)
int(1)
bool(true)
int(1)
bool(false)
string(6) "v|i:1;"
-- nothing reached the owner --

Warning: session_start(): Session far2: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation in %s on line %d
bool(true)
int(1)

Warning: session_write_close(): Session far2: releasing the session lock failed: owner unreachable in %s on line %d
int(1)
