--TEST--
session lock: taken with set_nx_ephemeral (not logged, not restored), with set_nx on a host table from before it
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
foreach (['full', 'no_ephemeral'] as $variant) {
    echo "-- $variant\n";
    ephpm_test_install_host_ops($variant);
    session_id("eph$variant");
    var_dump(session_start());
    $calls = ephpm_test_op_calls();
    printf("set_nx_ephemeral %d, set_nx %d\n", $calls['set_nx_ephemeral'], $calls['set_nx']);
    var_dump((bool)preg_match('/^[0-9a-f]{32}$/', ephpm_kv_get("session_lock:{eph$variant}")));
    $_SESSION['v'] = $variant;
    session_write_close();
    var_dump(ephpm_kv_exists("session_lock:{eph$variant}"), ephpm_test_op_calls()['del_if_eq']);
}
?>
--EXPECT--
-- full
bool(true)
set_nx_ephemeral 1, set_nx 0
bool(true)
bool(false)
int(1)
-- no_ephemeral
bool(true)
set_nx_ephemeral 0, set_nx 1
bool(true)
bool(false)
int(1)
