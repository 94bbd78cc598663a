--TEST--
session: session_regenerate_id() moves the data and the lock to the new id
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
ob_start();  // regenerating an id needs headers not sent yet
session_id('oldid1');
session_start();
$_SESSION['who'] = 'me';
var_dump(session_regenerate_id(true));
$new = session_id();
var_dump($new !== 'oldid1', strlen($new) >= 22);
var_dump(ephpm_kv_exists('session:{oldid1}'));        // deleted with the old id
var_dump(ephpm_kv_exists('session_lock:{oldid1}'));   // its lock released
var_dump((bool)preg_match('/^[0-9a-f]{32}$/', ephpm_kv_get("session_lock:{{$new}}")));
session_write_close();
var_dump(ephpm_kv_exists("session_lock:{{$new}}"));
session_id($new);
session_start();
var_dump($_SESSION['who']);
session_write_close();

// Keeping the old session: both ids keep their data.
session_id('keep1');
session_start();
$_SESSION['v'] = 1;
session_regenerate_id(false);
$kept = session_id();
session_write_close();
var_dump(ephpm_kv_exists('session:{keep1}'), ephpm_kv_exists("session:{{$kept}}"));
var_dump(ephpm_kv_exists('session_lock:{keep1}'), ephpm_kv_exists("session_lock:{{$kept}}"));
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
bool(false)
bool(false)
bool(true)
bool(false)
string(2) "me"
bool(true)
bool(true)
bool(false)
bool(false)
