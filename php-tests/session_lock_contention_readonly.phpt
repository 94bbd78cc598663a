--TEST--
session lock contention, ephpm.session_lock_failure=readonly: the data is read, the write skipped
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
ephpm.session_lock_wait_ms=300
ephpm.session_lock_failure=readonly
--FILE--
<?php
ephpm_kv_set('session:{busy3}', 'n|i:41;');
ephpm_kv_set('session_lock:{busy3}', 'foreign-token', 30);
session_id('busy3');
var_dump(session_start());
var_dump($_SESSION['n']);
$_SESSION['n']++;
session_write_close();
var_dump(ephpm_kv_get('session:{busy3}'), ephpm_kv_get('session_lock:{busy3}'));
?>
--EXPECTF--
Warning: session_start(): Session busy3: the session lock is held by another request; reading without it after 300 ms, the data will not be written (ephpm.session_lock_failure=readonly) in %s on line %d
bool(true)
int(41)

Warning: session_write_close(): Session busy3: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly) in %s on line %d
string(7) "n|i:41;"
string(13) "foreign-token"
