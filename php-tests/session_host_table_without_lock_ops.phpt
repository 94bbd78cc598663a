--TEST--
session: a host table without the lock's ops (del_if_eq, set_if_eq) or persist: the lock policy applies, no TTL is still no TTL (test build)
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
session.lazy_write=1
--FILE--
<?php
ob_start();
ephpm_kv_set('session:{old1}', 'v|i:1;', 5);
foreach (['short', 'no_persist'] as $variant) {
    echo "-- $variant\n";
    ephpm_test_install_host_ops($variant);
    foreach (['fail', 'readonly', 'proceed'] as $policy) {
        ini_set('ephpm.session_lock_failure', $policy);
        session_id('old1');
        var_dump(session_start());
        if (session_status() === PHP_SESSION_ACTIVE) {
            $_SESSION['v']++;
            var_dump(session_write_close());
        }
        var_dump(ephpm_kv_get('session:{old1}'));
    }
    // no TTL in the lazy_write refresh: without persist the data is written
    // again, without a TTL (never expire(0), which deletes)
    ini_set('session.gc_maxlifetime', '0');
    session_id('old1');
    session_start();
    session_write_close();
    var_dump(ephpm_kv_get('session:{old1}'), ephpm_kv_pttl('session:{old1}'));
    ini_set('session.gc_maxlifetime', '1440');
    ephpm_kv_expire('session:{old1}', 5);
}
echo ob_get_clean();
?>
--EXPECTF--
-- short

Warning: session_start(): Session old1: the session cannot be locked: the host's ops table has no del_if_eq or set_if_eq operation (upgrade the host program); gave up (ephpm.session_lock_failure=fail) in %s on line %d

Warning: session_start(): Failed to read session data: ephpm (path: ) in %s on line %d
bool(false)
string(6) "v|i:1;"

Warning: session_start(): Session old1: the session cannot be locked: the host's ops table has no del_if_eq or set_if_eq operation (upgrade the host program); reading without it, the data will not be written (ephpm.session_lock_failure=readonly) in %s on line %d
bool(true)

Warning: session_write_close(): Session old1: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly) in %s on line %d
bool(true)
string(6) "v|i:1;"

Warning: session_start(): Session old1: the session cannot be locked: the host's ops table has no del_if_eq or set_if_eq operation (upgrade the host program); proceeding without it (ephpm.session_lock_failure=proceed) in %s on line %d
bool(true)
bool(true)
string(6) "v|i:2;"

Warning: session_start(): Session old1: the session cannot be locked: the host's ops table has no del_if_eq or set_if_eq operation (upgrade the host program); proceeding without it (ephpm.session_lock_failure=proceed) in %s on line %d
string(6) "v|i:2;"
int(-1)
-- no_persist

Warning: session_start(): Session old1: the session cannot be locked: the host's ops table has no del_if_eq or set_if_eq operation (upgrade the host program); gave up (ephpm.session_lock_failure=fail) in %s on line %d

Warning: session_start(): Failed to read session data: ephpm (path: ) in %s on line %d
bool(false)
string(6) "v|i:2;"

Warning: session_start(): Session old1: the session cannot be locked: the host's ops table has no del_if_eq or set_if_eq operation (upgrade the host program); reading without it, the data will not be written (ephpm.session_lock_failure=readonly) in %s on line %d
bool(true)

Warning: session_write_close(): Session old1: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly) in %s on line %d
bool(true)
string(6) "v|i:2;"

Warning: session_start(): Session old1: the session cannot be locked: the host's ops table has no del_if_eq or set_if_eq operation (upgrade the host program); proceeding without it (ephpm.session_lock_failure=proceed) in %s on line %d
bool(true)
bool(true)
string(6) "v|i:3;"

Warning: session_start(): Session old1: the session cannot be locked: the host's ops table has no del_if_eq or set_if_eq operation (upgrade the host program); proceeding without it (ephpm.session_lock_failure=proceed) in %s on line %d
string(6) "v|i:3;"
int(-1)
