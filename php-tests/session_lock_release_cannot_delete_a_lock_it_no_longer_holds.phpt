--TEST--
session lock: a token, not "1", and a release that cannot delete a lock taken over by another request
--DESCRIPTION--
Both halves fail against the design note's old handler: its lock value was the
constant "1", and its release was a plain delete that would remove the new
holder's lock.
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
session_id('takeover1');
session_start();
$mine = ephpm_kv_get('session_lock:{takeover1}');
// 1. During the request the lock holds 32 lowercase hex characters.
var_dump((bool)preg_match('/^[0-9a-f]{32}$/', $mine));

// 2. As if the lock expired and another request acquired it:
ephpm_kv_set('session_lock:{takeover1}', 'token-of-request-B', 30);
$_SESSION['x'] = 'stale';
session_write_close();
// ... B's lock is still there after this request released "its" lock.
var_dump(ephpm_kv_get('session_lock:{takeover1}'));
$info = ephpm_kv_info();
var_dump($info['session_stale_releases_refused']);
?>
--EXPECTF--
bool(true)

Warning: session_write_close(): Session takeover1: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept in %s on line %d

Warning: session_write_close(): Failed to write session data (ephpm). %s

Notice: session_write_close(): Session takeover1: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000) in %s on line %d
string(18) "token-of-request-B"
int(1)
