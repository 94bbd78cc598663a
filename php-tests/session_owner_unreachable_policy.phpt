--TEST--
session lock: an unreachable owner under ephpm.session_lock_failure=fail or readonly follows the policy and gives a landed grant back at once
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
echo "-- fail: session_start() returns false --\n";
ini_set('ephpm.session_lock_failure', 'fail');
ephpm_test_install_host_ops('unreachable_landed');
ephpm_kv_set('session:{far1}', 'v|i:7;');
session_id('far1');
var_dump(session_start());
$calls = ephpm_test_op_calls();
var_dump($calls['set_nx_ephemeral']);             // one attempt
var_dump($calls['del_if_eq']);                    // the landed grant given back at once
var_dump(ephpm_kv_exists('session_lock:{far1}'));
var_dump(session_status() === PHP_SESSION_ACTIVE);
var_dump(ephpm_kv_get('session:{far1}'));         // untouched

echo "-- readonly: read, never written --\n";
ini_set('ephpm.session_lock_failure', 'readonly');
ephpm_test_install_host_ops('unreachable_landed');
session_id('far1');
var_dump(session_start());
var_dump($_SESSION);
var_dump(ephpm_kv_exists('session_lock:{far1}'));
$_SESSION['v'] = 8;
session_write_close();
var_dump(ephpm_kv_get('session:{far1}'));         // still 7

echo "-- proceed (the default): as before --\n";
ini_set('ephpm.session_lock_failure', 'proceed');
ephpm_test_install_host_ops('unreachable_landed');
session_id('far1');
var_dump(session_start());
var_dump(ephpm_kv_exists('session_lock:{far1}')); // kept until close
session_write_close();
var_dump(ephpm_kv_exists('session_lock:{far1}'));
?>
--EXPECTF--
-- fail: session_start() returns false --

Warning: session_start(): Session far1: the session lock's owner is unreachable, the outcome is unknown; gave up (ephpm.session_lock_failure=fail) in %s on line %d

Warning: session_start(): Failed to read session data: ephpm (path: %S) in %s on line %d
bool(false)
int(1)
int(1)
bool(false)
bool(false)
string(6) "v|i:7;"
-- readonly: read, never written --

Warning: session_start(): Session far1: the session lock's owner is unreachable, the outcome is unknown; reading without it, the data will not be written (ephpm.session_lock_failure=readonly) in %s on line %d
bool(true)
array(1) {
  ["v"]=>
  int(7)
}
bool(false)

Warning: session_write_close(): %s in %s on line %d
string(6) "v|i:7;"
-- proceed (the default): as before --

Warning: session_start(): Session far1: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation in %s on line %d
bool(true)
bool(true)
bool(false)
