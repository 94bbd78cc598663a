--TEST--
session: ephpm.session_prefix names the keys; gc has nothing to collect
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
ephpm.session_prefix=myapp
--FILE--
<?php
session_id('pfx1');
session_start();
var_dump(ephpm_kv_exists('myapp_lock:{pfx1}'));
$_SESSION['a'] = 1;
var_dump(session_gc());
session_write_close();
var_dump(ephpm_kv_keys());
?>
--EXPECT--
bool(true)
int(0)
array(1) {
  [0]=>
  string(12) "myapp:{pfx1}"
}
