--TEST--
session: data round-trips across two session_start()s with one id, with a TTL of gc_maxlifetime
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
session.gc_maxlifetime=1440
session.serialize_handler=php
--FILE--
<?php
session_id('basic1');
var_dump(session_start());
var_dump($_SESSION);
$_SESSION['n'] = 1;
$_SESSION['name'] = "a\0b";
var_dump(session_write_close());

var_dump(str_replace("\0", '\0', ephpm_kv_get('session:{basic1}')));
var_dump(ephpm_kv_ttl('session:{basic1}'));
var_dump(ephpm_kv_exists('session_lock:{basic1}'));  // released by close

session_id('basic1');
var_dump(session_start());
var_dump($_SESSION['n'], $_SESSION['name'] === "a\0b");
$_SESSION['n']++;
session_write_close();
session_id('basic1');
session_start();
var_dump($_SESSION['n']);
session_write_close();
?>
--EXPECT--
bool(true)
array(0) {
}
bool(true)
string(22) "n|i:1;name|s:3:"a\0b";"
int(1440)
bool(false)
bool(true)
int(1)
bool(true)
int(2)
