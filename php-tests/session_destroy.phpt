--TEST--
session: session_destroy() removes the data and releases the lock
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
session_id('gone1');
session_start();
$_SESSION['x'] = 'y';
session_write_close();
var_dump(ephpm_kv_exists('session:{gone1}'));

session_id('gone1');
session_start();
var_dump(ephpm_kv_exists('session_lock:{gone1}'));  // held while the session is open
var_dump(session_destroy());
var_dump(ephpm_kv_exists('session:{gone1}'));
var_dump(ephpm_kv_exists('session_lock:{gone1}'));
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
bool(false)
bool(false)
