--TEST--
session lock contention, ephpm.session_lock_failure=fail: session_start() returns false
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
ephpm.session_lock_wait_ms=300
ephpm.session_lock_failure=fail
--FILE--
<?php
ephpm_kv_set('session:{busy2}', 'n|i:41;');
ephpm_kv_set('session_lock:{busy2}', 'foreign-token', 30);
session_id('busy2');
var_dump(session_start());
var_dump(session_status() === PHP_SESSION_ACTIVE);
var_dump(ephpm_kv_get('session:{busy2}'), ephpm_kv_get('session_lock:{busy2}'));
?>
--EXPECTF--
Warning: session_start(): Session busy2: the session lock is held by another request; gave up after 300 ms (ephpm.session_lock_failure=fail) in %s on line %d

Warning: session_start(): Failed to read session data: ephpm (path: %S) in %s on line %d
bool(false)
bool(false)
string(7) "n|i:41;"
string(13) "foreign-token"
