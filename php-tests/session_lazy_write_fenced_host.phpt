--TEST--
session: the lazy_write refresh through a host table: expire_if_guard_eq, its errors, and a host from before it (test build)
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
session.lazy_write=1
session.gc_maxlifetime=600
--FILE--
<?php
function calls(): string {
    $c = ephpm_test_op_calls();
    return "expire_if_guard_eq={$c['expire_if_guard_eq']} set_if_eq={$c['set_if_eq']}";
}

echo "-- a full table: the refresh is one expire_if_guard_eq\n";
ephpm_test_install_host_ops('full');
ephpm_kv_set('session:{r1}', 'a|i:1;', 5);
session_id('r1');
session_start();
var_dump(session_write_close());
echo calls(), "\n";
var_dump(ephpm_kv_ttl('session:{r1}'));

echo "-- the data is gone meanwhile: written back, fenced\n";
ephpm_test_install_host_ops('full');
session_id('r1');
session_start();
ephpm_kv_del('session:{r1}');
var_dump(session_write_close());
echo calls(), "\n";
var_dump(ephpm_kv_get('session:{r1}'), ephpm_kv_ttl('session:{r1}'));

echo "-- the owner becomes unreachable: nothing is refreshed or written\n";
ephpm_test_install_host_ops('full');
ephpm_kv_set('session:{r2}', 'a|i:1;', 5);
session_id('r2');
session_start();
ephpm_test_install_host_ops('unreachable');
var_dump(session_write_close());
echo calls(), "\n";
ephpm_test_install_host_ops('standalone');
var_dump(ephpm_kv_ttl('session:{r2}'));

echo "-- a host from before expire_if_guard_eq: a plain expire, as before\n";
ephpm_test_install_host_ops('no_guard_expire');
ephpm_kv_set('session:{r3}', 'a|i:1;', 5);
session_id('r3');
session_start();
var_dump(session_write_close());
echo calls(), "\n";
var_dump(ephpm_kv_ttl('session:{r3}'));
?>
--EXPECTF--
-- a full table: the refresh is one expire_if_guard_eq
bool(true)
expire_if_guard_eq=1 set_if_eq=0
int(600)
-- the data is gone meanwhile: written back, fenced
bool(true)
expire_if_guard_eq=1 set_if_eq=1
string(6) "a|i:1;"
int(600)
-- the owner becomes unreachable: nothing is refreshed or written

Warning: session_write_close(): Session r2: writing the session data failed: owner unreachable in %s on line %d

Warning: session_write_close(): Failed to write session data (ephpm). %s

Warning: session_write_close(): Session r2: releasing the session lock failed: owner unreachable in %s on line %d
bool(true)
expire_if_guard_eq=1 set_if_eq=1
int(5)
-- a host from before expire_if_guard_eq: a plain expire, as before
bool(true)
expire_if_guard_eq=0 set_if_eq=0
int(600)
