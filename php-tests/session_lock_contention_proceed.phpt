--TEST--
session lock contention, ephpm.session_lock_failure=proceed: warn, read, run without the lock
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
ephpm.session_lock_wait_ms=300
--FILE--
<?php
ephpm_kv_set('session:{busy1}', 'n|i:41;');
ephpm_kv_set('session_lock:{busy1}', 'foreign-token', 30);
session_id('busy1');
var_dump(session_start());
var_dump($_SESSION['n']);
$_SESSION['n']++;
var_dump(session_write_close());
var_dump(ephpm_kv_get('session:{busy1}'));                 // written, unfenced
var_dump(ephpm_kv_get('session_lock:{busy1}'));            // the holder's lock untouched
$info = ephpm_kv_info();
var_dump($info['session_lock_waits'], $info['session_lock_timeouts'], $info['session_lock_acquired']);
?>
--EXPECTF--
Warning: session_start(): Session busy1: the session lock is held by another request; proceeding without it after 300 ms (ephpm.session_lock_failure=proceed) in %s on line %d
bool(true)
int(41)
bool(true)
string(7) "n|i:42;"
string(13) "foreign-token"
int(1)
int(1)
int(0)
