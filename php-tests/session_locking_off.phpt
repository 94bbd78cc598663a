--TEST--
session: ephpm.session_locking=0 takes no lock
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
ephpm.session_locking=0
--FILE--
<?php
ephpm_kv_set('session_lock:{free1}', 'foreign-token');  // ignored
session_id('free1');
var_dump(session_start());
$_SESSION['a'] = 1;
session_write_close();
var_dump(ephpm_kv_get('session:{free1}'), ephpm_kv_get('session_lock:{free1}'));
var_dump(ephpm_kv_info()['session_lock_acquired']);
?>
--EXPECT--
bool(true)
string(6) "a|i:1;"
string(13) "foreign-token"
int(0)
