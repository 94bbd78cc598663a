--TEST--
session: the fenced write refuses a request that lost its lock, and the holder's data survives
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
session_id('fence1');
session_start();
$_SESSION['cart'] = ['stale item'];
// Meanwhile this request overran its lock: request B took the lock over and
// wrote its own data.
ephpm_kv_set('session_lock:{fence1}', 'token-of-request-B', 30);
ephpm_kv_set('session:{fence1}', 'cart|a:1:{i:0;s:8:"B\'s item";}');
var_dump(session_write_close());  // PHP 8.2 returns true whatever the handler says
var_dump(ephpm_kv_get('session:{fence1}'));
var_dump(ephpm_kv_info()['session_fenced_writes_refused']);
?>
--EXPECTF--
Warning: session_write_close(): Session fence1: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept in %s on line %d

Warning: session_write_close(): Failed to write session data (ephpm). %s

Notice: session_write_close(): Session fence1: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000) in %s on line %d
bool(true)
string(30) "cart|a:1:{i:0;s:8:"B's item";}"
int(1)
