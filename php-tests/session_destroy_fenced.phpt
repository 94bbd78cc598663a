--TEST--
session: session_destroy() and session_regenerate_id(true) are fenced by the lock; without it only an unlocked request (locking off, proceed) deletes
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
session.save_path=
ephpm.session_lock_wait_ms=20
--FILE--
<?php
ob_start();  // no output before session_regenerate_id(): headers are not sent
function state(string $sid): void {
    printf("  data=%s lock=%s\n", var_export(ephpm_kv_get("session:{{$sid}}"), true),
           var_export(ephpm_kv_get("session_lock:{{$sid}}"), true));
}

echo "-- the lock ran out and request B took it and wrote: A's destroy is refused\n";
foreach (['session_destroy' => fn() => session_destroy(),
          'session_regenerate_id(true)' => fn() => session_regenerate_id(true)] as $name => $f) {
    $sid = "stale-$name";
    $sid = preg_replace('/[^a-z]/', '', $sid);
    ephpm_kv_set("session:{{$sid}}", 'a|i:1;');
    session_id($sid);
    session_start();
    ephpm_kv_set("session_lock:{{$sid}}", 'token-of-B', 30);
    ephpm_kv_set("session:{{$sid}}", 'b|i:2;');
    echo "$name: ";
    var_dump($f());
    state($sid);
}
var_dump(ephpm_kv_info()['session_fenced_writes_refused']);

echo "-- readonly: a request without the lock may not destroy\n";
ini_set('ephpm.session_lock_failure', 'readonly');
ephpm_kv_set('session:{ro}', 'b|i:2;');
ephpm_kv_set('session_lock:{ro}', 'token-of-B', 30);
session_id('ro');
session_start();
var_dump(session_destroy());
state('ro');

echo "-- the lock held: destroyed, and released\n";
ini_set('ephpm.session_lock_failure', 'proceed');
ephpm_kv_set('session:{held}', 'a|i:1;');
session_id('held');
session_start();
var_dump(session_destroy());
state('held');

echo "-- proceed without the lock: the plain delete, the same trade as its write\n";
ephpm_kv_set('session:{pr}', 'b|i:2;');
ephpm_kv_set('session_lock:{pr}', 'token-of-B', 30);
session_id('pr');
session_start();
var_dump(session_destroy());
state('pr');

echo "-- locking off: the plain delete\n";
ini_set('ephpm.session_locking', '0');
ephpm_kv_set('session:{off}', 'a|i:1;');
session_id('off');
session_start();
var_dump(session_destroy());
state('off');
echo ob_get_clean();
?>
--EXPECTF--
-- the lock ran out and request B took it and wrote: A's destroy is refused
session_destroy: 
Warning: session_destroy(): Session stalesessiondestroy: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept in %s on line %d

Notice: session_destroy(): Session stalesessiondestroy: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000) in %s on line %d

Warning: session_destroy(): Session object destruction failed in %s on line %d
bool(false)
  data='b|i:2;' lock='token-of-B'
session_regenerate_id(true): 
Warning: session_regenerate_id(): Session stalesessionregenerateidtrue: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept in %s on line %d

Notice: session_regenerate_id(): Session stalesessionregenerateidtrue: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000) in %s on line %d

Warning: session_regenerate_id(): Session object destruction failed. ID: ephpm (path: ) in %s on line %d
bool(false)
  data='b|i:2;' lock='token-of-B'
int(2)
-- readonly: a request without the lock may not destroy

Warning: session_start(): Session ro: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly) in %s on line %d

Warning: session_destroy(): Session ro: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly) in %s on line %d

Warning: session_destroy(): Session object destruction failed in %s on line %d
bool(false)
  data='b|i:2;' lock='token-of-B'
-- the lock held: destroyed, and released
bool(true)
  data=NULL lock=NULL
-- proceed without the lock: the plain delete, the same trade as its write

Warning: session_start(): Session pr: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed) in %s on line %d
bool(true)
  data=NULL lock='token-of-B'
-- locking off: the plain delete
bool(true)
  data=NULL lock=NULL
