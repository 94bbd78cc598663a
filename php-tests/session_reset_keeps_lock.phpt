--TEST--
session: session_reset() keeps this request's lock (it must not wait on it)
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
ephpm.session_lock_wait_ms=2000
--FILE--
<?php
session_id('reset1');
session_start();
$_SESSION['n'] = 1;
session_write_close();

session_id('reset1');
session_start();
$token = ephpm_kv_get('session_lock:{reset1}');
$_SESSION['n'] = 99;       // discarded by the reset
var_dump(session_reset());
var_dump($_SESSION['n']);
var_dump(ephpm_kv_get('session_lock:{reset1}') === $token);
$info = ephpm_kv_info();
var_dump($info['session_lock_waits'], $info['session_lock_timeouts']);
$_SESSION['n']++;
session_write_close();      // still fenced by the same token
var_dump(ephpm_kv_get('session:{reset1}'), ephpm_kv_exists('session_lock:{reset1}'));
?>
--EXPECT--
bool(true)
int(1)
bool(true)
int(0)
int(0)
string(6) "n|i:2;"
bool(false)
