--TEST--
session: the fenced destroy through a host table: del_if_guard_eq, its errors, and the fallback of a host from before it (test build)
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
session.save_path=
--FILE--
<?php
function calls(): string {
    $c = ephpm_test_op_calls();
    return "del_if_guard_eq={$c['del_if_guard_eq']} set_if_eq={$c['set_if_eq']} del={$c['del']}"
         . " del_if_eq={$c['del_if_eq']}";
}

echo "-- a full table: one del_if_guard_eq, no plain del\n";
ephpm_test_install_host_ops('full');
ephpm_kv_set('session:{h1}', 'a|i:1;');
session_id('h1');
session_start();
var_dump(session_destroy());
echo calls(), "\n";
var_dump(ephpm_kv_exists('session:{h1}'), ephpm_kv_exists('session_lock:{h1}'));

echo "-- the owner becomes unreachable: the outcome is unknown, so destroy fails\n";
ephpm_test_install_host_ops('full');
ephpm_kv_set('session:{h2}', 'a|i:1;');
session_id('h2');
session_start();
ephpm_test_install_host_ops('unreachable');
var_dump(session_destroy());
echo calls(), "\n";
ephpm_test_install_host_ops('standalone');
var_dump(ephpm_kv_get('session:{h2}'));

echo "-- the guard is not a string\n";
ephpm_test_install_host_ops('full');
ephpm_kv_set('session:{h3}', 'a|i:1;');
session_id('h3');
session_start();
ephpm_test_install_host_ops('wrongtype');
var_dump(session_destroy());
echo calls(), "\n";
ephpm_test_install_host_ops('standalone');
var_dump(ephpm_kv_get('session:{h3}'));
ephpm_kv_flush_all();

echo "-- a host from before del_if_guard_eq: a fenced write of empty data that expires at once\n";
ephpm_test_install_host_ops('no_guard_delete');
ephpm_kv_set('session:{h4}', 'a|i:1;');
session_id('h4');
session_start();
var_dump(session_destroy());
echo calls(), "\n";
usleep(50000);  // more than the 1 ms TTL
var_dump(ephpm_kv_exists('session:{h4}'), ephpm_kv_exists('session_lock:{h4}'));
?>
--EXPECTF--
-- a full table: one del_if_guard_eq, no plain del
bool(true)
del_if_guard_eq=1 set_if_eq=0 del=0 del_if_eq=1
bool(false)
bool(false)
-- the owner becomes unreachable: the outcome is unknown, so destroy fails

Warning: session_destroy(): Session h2: destroying the session failed: owner unreachable in %s on line %d

Warning: session_destroy(): Session h2: releasing the session lock failed: owner unreachable in %s on line %d

Warning: session_destroy(): Session object destruction failed in %s on line %d
bool(false)
del_if_guard_eq=1 set_if_eq=0 del=0 del_if_eq=1
string(6) "a|i:1;"
-- the guard is not a string

Warning: session_destroy(): Session h3: destroying the session failed: wrong type in %s on line %d

Warning: session_destroy(): Session h3: releasing the session lock failed: wrong type in %s on line %d

Warning: session_destroy(): Session object destruction failed in %s on line %d
bool(false)
del_if_guard_eq=1 set_if_eq=0 del=0 del_if_eq=1
string(6) "a|i:1;"
-- a host from before del_if_guard_eq: a fenced write of empty data that expires at once
bool(true)
del_if_guard_eq=0 set_if_eq=1 del=0 del_if_eq=1
bool(false)
bool(false)
