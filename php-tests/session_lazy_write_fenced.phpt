--TEST--
session: the lazy_write refresh is fenced: a request that lost its lock cannot change the holder's data lifetime
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
session.lazy_write=1
session.gc_maxlifetime=600
--FILE--
<?php
ephpm_kv_set('session:{lz1}', 'k|s:1:"A";', 600);
session_id('lz1');
session_start();  // A reads and changes nothing
// Meanwhile A overran its lock: request B took the lock over and wrote its
// own data, with its own lifetime.
ephpm_kv_set('session_lock:{lz1}', 'token-of-request-B', 30);
ephpm_kv_set('session:{lz1}', 'k|s:1:"A";', 50);
var_dump(session_write_close());
// B's data keeps B's lifetime, not A's 600 s.
var_dump(ephpm_kv_get('session:{lz1}'), ephpm_kv_ttl('session:{lz1}'));
var_dump(ephpm_kv_info()['session_fenced_writes_refused']);

echo "-- holding the lock, the refresh works\n";
ephpm_kv_del('session_lock:{lz1}');
session_id('lz1');
session_start();
ephpm_kv_expire('session:{lz1}', 5);
var_dump(session_write_close(), ephpm_kv_ttl('session:{lz1}'), ephpm_kv_get('session:{lz1}'));
?>
--EXPECTF--
Warning: session_write_close(): Session lz1: the session's lifetime was not refreshed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept in %s on line %d

Warning: session_write_close(): Failed to write session data (ephpm). %s

Notice: session_write_close(): Session lz1: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000) in %s on line %d
bool(true)
string(10) "k|s:1:"A";"
int(50)
int(1)
-- holding the lock, the refresh works
bool(true)
int(600)
string(10) "k|s:1:"A";"
