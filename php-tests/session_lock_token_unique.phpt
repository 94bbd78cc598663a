--TEST--
session lock: every acquisition uses a fresh token
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
$tokens = [];
for ($i = 0; $i < 20; $i++) {
    session_id('tokens1');
    session_start();
    $tokens[] = ephpm_kv_get('session_lock:{tokens1}');
    session_write_close();
}
var_dump(count($tokens), count(array_unique($tokens)));
var_dump(count(preg_grep('/^[0-9a-f]{32}$/', $tokens)));
var_dump(ephpm_kv_info()['session_lock_acquired']);
?>
--EXPECT--
int(20)
int(20)
int(20)
int(20)
