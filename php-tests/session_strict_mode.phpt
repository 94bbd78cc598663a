--TEST--
session: use_strict_mode=1 rejects an unknown id and accepts a known one
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=1
--FILE--
<?php
session_id('attacker-chosen-id');
session_start();
$issued = session_id();
var_dump($issued !== 'attacker-chosen-id');
$_SESSION['a'] = 1;
session_write_close();
var_dump(ephpm_kv_exists('session:{attacker-chosen-id}'));

session_id($issued);  // known now: accepted
session_start();
var_dump(session_id() === $issued, $_SESSION['a']);
session_write_close();
?>
--EXPECT--
bool(true)
bool(false)
bool(true)
int(1)
