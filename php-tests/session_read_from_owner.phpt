--TEST--
session read: under its lock the data is read on the owner (get_from_owner); an unreachable owner falls back to this node's copy with a warning
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
ephpm_kv_set('session:{own1}', 'n|i:41;');

echo "-- lock held: one read, on the owner --\n";
ephpm_test_install_host_ops('full');
session_id('own1');
var_dump(session_start());
var_dump($_SESSION);
$calls = ephpm_test_op_calls();
var_dump($calls['get_from_owner'], $calls['get']);
$_SESSION['n']++;
session_write_close();

echo "-- the owner cannot be asked: this node's copy, and a warning --\n";
ephpm_test_install_host_ops('owner_read_unreachable');
session_id('own1');
var_dump(session_start());
var_dump($_SESSION);
$calls = ephpm_test_op_calls();
var_dump($calls['get_from_owner'], $calls['get']);
session_write_close();
var_dump(ephpm_kv_exists('session_lock:{own1}'));  // released as usual

echo "-- no lock (ephpm.session_locking=0): a plain read --\n";
ini_set('ephpm.session_locking', '0');
ephpm_test_install_host_ops('full');
session_id('own1');
var_dump(session_start());
$calls = ephpm_test_op_calls();
var_dump($calls['get_from_owner'], $calls['get']);
session_write_close();
?>
--EXPECTF--
-- lock held: one read, on the owner --
bool(true)
array(1) {
  ["n"]=>
  int(41)
}
int(1)
int(0)
-- the owner cannot be asked: this node's copy, and a warning --

Warning: session_start(): Session own1: the session data's owner is unreachable; reading this node's copy, which may miss the latest write in %s on line %d
bool(true)
array(1) {
  ["n"]=>
  int(42)
}
int(1)
int(1)
bool(false)
-- no lock (ephpm.session_locking=0): a plain read --
bool(true)
int(0)
int(1)
