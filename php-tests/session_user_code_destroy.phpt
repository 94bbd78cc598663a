--TEST--
session: user code run by a message of PS_DESTROY (session_destroy(), session_regenerate_id(true)) in every lock state
--SKIPIF--
<?php if (!function_exists('ephpm_test_install_host_ops')) die('skip test build only'); ?>
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
require __DIR__ . '/session_user_code.inc';
ob_start();  // no output before session_regenerate_id(): headers are not sent

/* Starts the session and brings it into a state in which destroying it
 * emits a message:
 *   stale           the lock ran out, another request took it and wrote: the
 *                   fenced delete is refused
 *   stale/old_host  the same with a host table from before del_if_guard_eq
 *                   (the fenced write of empty data is refused)
 *   readonly        held by another request: the destroy is refused
 *   unreachable     the lock is taken, then its owner becomes unreachable:
 *                   the fenced delete and the release fail
 * In every state the holder's data and lock survive. */
function prepare(string $state, string $sid): void {
    ephpm_kv_set(data_key($sid), 'mine|i:1;');
    session_id($sid);
    switch ($state) {
        case 'stale':
        case 'stale/old_host':
            if ($state === 'stale/old_host') ephpm_test_install_host_ops('no_guard_delete');
            session_start();
            ephpm_kv_set(lock_key($sid), HOLDER_TOKEN, 30);
            ephpm_kv_set(data_key($sid), HOLDER_DATA);
            break;
        case 'readonly':
            ephpm_kv_set(data_key($sid), HOLDER_DATA);
            ephpm_kv_set(lock_key($sid), HOLDER_TOKEN, 30);
            ini_set('ephpm.session_lock_failure', 'readonly');
            @session_start();
            break;
        case 'unreachable':
            session_start();
            ephpm_test_install_host_ops('unreachable');
            break;
    }
}

$triggers = [
    'destroy' => fn() => session_destroy(),
    'regenerate(true)' => fn() => session_regenerate_id(true),
];
$n = 0;
foreach ($triggers as $name => $trigger) {
    echo "-- $name\n";
    foreach (['stale', 'stale/old_host', 'readonly', 'unreachable'] as $state) {
        foreach (ACTIONS as $action) {
            $sid = 'd' . ++$n;
            prepare($state, $sid);
            arm($action);
            $outer = outer($trigger);
            report($state, $action, $outer, $sid, $state === 'unreachable');
        }
    }
}
echo ob_get_clean();
?>
--EXPECT--
-- destroy
stale         none             outer=false  inner=-       none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale         write_close      outer=false  inner=true    none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Session *: the data was not written: this request has released the session lock, which another request may hold now
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale         abort            outer=false  inner=true    none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale         destroy          outer=false  inner=false   none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the data was not destroyed: this request has released the session lock, which another request may hold now
    > session_destroy(): Session object destruction failed
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale         reset            outer=false  inner=true    none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_reset(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale         regenerate       outer=false  inner=false   none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the data was not written: this request has released the session lock, which another request may hold now
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale         regenerate(true) outer=false  inner=false   none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the data was not destroyed: this request has released the session lock, which another request may hold now
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale         start            outer=false  inner=true    none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_start(): Ignoring session_start() because a session is already active
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale         throw            outer=thrown inner=threw   none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
stale/old_host none             outer=false  inner=-       none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale/old_host write_close      outer=false  inner=true    none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Session *: the data was not written: this request has released the session lock, which another request may hold now
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale/old_host abort            outer=false  inner=true    none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale/old_host destroy          outer=false  inner=false   none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the data was not destroyed: this request has released the session lock, which another request may hold now
    > session_destroy(): Session object destruction failed
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale/old_host reset            outer=false  inner=true    none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_reset(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale/old_host regenerate       outer=false  inner=false   none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the data was not written: this request has released the session lock, which another request may hold now
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale/old_host regenerate(true) outer=false  inner=false   none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the data was not destroyed: this request has released the session lock, which another request may hold now
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale/old_host start            outer=false  inner=true    none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_start(): Ignoring session_start() because a session is already active
    session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_destroy(): Session object destruction failed
stale/old_host throw            outer=thrown inner=threw   none   data=holder lock=holder
    session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
readonly      none             outer=false  inner=-       none   data=holder lock=holder
    session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    session_destroy(): Session object destruction failed
readonly      write_close      outer=false  inner=true    none   data=holder lock=holder
    session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    session_destroy(): Session object destruction failed
readonly      abort            outer=false  inner=true    none   data=holder lock=holder
    session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    session_destroy(): Session object destruction failed
readonly      destroy          outer=false  inner=false   none   data=holder lock=holder
    session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session object destruction failed
    session_destroy(): Session object destruction failed
readonly      reset            outer=false  inner=true    none   data=holder lock=holder
    session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_reset(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    session_destroy(): Session object destruction failed
readonly      regenerate       outer=false  inner=true    none   data=holder lock=holder
    session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    session_destroy(): Session object destruction failed
readonly      regenerate(true) outer=false  inner=false   none   data=holder lock=holder
    session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_destroy(): Session object destruction failed
readonly      start            outer=false  inner=true    none   data=holder lock=holder
    session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_start(): Ignoring session_start() because a session is already active
    session_destroy(): Session object destruction failed
readonly      throw            outer=thrown inner=threw   none   data=holder lock=holder
    session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
unreachable   none             outer=false  inner=-       none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_destroy(): Session *: destroying the session failed: owner unreachable
    session_destroy(): Session *: releasing the session lock failed: owner unreachable
    session_destroy(): Session object destruction failed
unreachable   write_close      outer=false  inner=true    none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_destroy(): Session *: destroying the session failed: owner unreachable
    > session_write_close(): Session *: the data was not written: this request has released the session lock, which another request may hold now
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_destroy(): Session *: releasing the session lock failed: owner unreachable
    session_destroy(): Session object destruction failed
unreachable   abort            outer=false  inner=true    none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_destroy(): Session *: destroying the session failed: owner unreachable
    session_destroy(): Session *: releasing the session lock failed: owner unreachable
    session_destroy(): Session object destruction failed
unreachable   destroy          outer=false  inner=false   none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_destroy(): Session *: destroying the session failed: owner unreachable
    > session_destroy(): Session *: the data was not destroyed: this request has released the session lock, which another request may hold now
    > session_destroy(): Session object destruction failed
    session_destroy(): Session *: releasing the session lock failed: owner unreachable
    session_destroy(): Session object destruction failed
unreachable   reset            outer=false  inner=true    none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_destroy(): Session *: destroying the session failed: owner unreachable
    > session_reset(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    session_destroy(): Session *: releasing the session lock failed: owner unreachable
    session_destroy(): Session object destruction failed
    session_destroy(): Session *: releasing the session lock failed: owner unreachable
unreachable   regenerate       outer=false  inner=false   none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_destroy(): Session *: destroying the session failed: owner unreachable
    > session_regenerate_id(): Session *: the data was not written: this request has released the session lock, which another request may hold now
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_destroy(): Session *: releasing the session lock failed: owner unreachable
    session_destroy(): Session object destruction failed
unreachable   regenerate(true) outer=false  inner=false   none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_destroy(): Session *: destroying the session failed: owner unreachable
    > session_regenerate_id(): Session *: the data was not destroyed: this request has released the session lock, which another request may hold now
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_destroy(): Session *: releasing the session lock failed: owner unreachable
    session_destroy(): Session object destruction failed
unreachable   start            outer=false  inner=true    none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_destroy(): Session *: destroying the session failed: owner unreachable
    > session_start(): Ignoring session_start() because a session is already active
    session_destroy(): Session *: releasing the session lock failed: owner unreachable
    session_destroy(): Session object destruction failed
unreachable   throw            outer=thrown inner=threw   none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_destroy(): Session *: destroying the session failed: owner unreachable
-- regenerate(true)
stale         none             outer=false  inner=-       none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale         write_close      outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Session *: the data was not written: this request has released the session lock, which another request may hold now
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale         abort            outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale         destroy          outer=false  inner=false   none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the data was not destroyed: this request has released the session lock, which another request may hold now
    > session_destroy(): Session object destruction failed
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale         reset            outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_reset(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale         regenerate       outer=false  inner=false   none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the data was not written: this request has released the session lock, which another request may hold now
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale         regenerate(true) outer=false  inner=false   none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the data was not destroyed: this request has released the session lock, which another request may hold now
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale         start            outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_start(): Ignoring session_start() because a session is already active
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale         throw            outer=thrown inner=threw   none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
stale/old_host none             outer=false  inner=-       none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale/old_host write_close      outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Session *: the data was not written: this request has released the session lock, which another request may hold now
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale/old_host abort            outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale/old_host destroy          outer=false  inner=false   none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the data was not destroyed: this request has released the session lock, which another request may hold now
    > session_destroy(): Session object destruction failed
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale/old_host reset            outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_reset(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale/old_host regenerate       outer=false  inner=false   none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the data was not written: this request has released the session lock, which another request may hold now
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale/old_host regenerate(true) outer=false  inner=false   none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the data was not destroyed: this request has released the session lock, which another request may hold now
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale/old_host start            outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_start(): Ignoring session_start() because a session is already active
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale/old_host throw            outer=thrown inner=threw   none   data=holder lock=holder
    session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
readonly      none             outer=false  inner=-       none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
readonly      write_close      outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
readonly      abort            outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
readonly      destroy          outer=false  inner=false   none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session object destruction failed
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
readonly      reset            outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_reset(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
readonly      regenerate       outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
readonly      regenerate(true) outer=false  inner=false   none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
readonly      start            outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_start(): Ignoring session_start() because a session is already active
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
readonly      throw            outer=thrown inner=threw   none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
unreachable   none             outer=false  inner=-       none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_regenerate_id(): Session *: destroying the session failed: owner unreachable
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
unreachable   write_close      outer=false  inner=true    none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_regenerate_id(): Session *: destroying the session failed: owner unreachable
    > session_write_close(): Session *: the data was not written: this request has released the session lock, which another request may hold now
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
unreachable   abort            outer=false  inner=true    none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_regenerate_id(): Session *: destroying the session failed: owner unreachable
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
unreachable   destroy          outer=false  inner=false   none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_regenerate_id(): Session *: destroying the session failed: owner unreachable
    > session_destroy(): Session *: the data was not destroyed: this request has released the session lock, which another request may hold now
    > session_destroy(): Session object destruction failed
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
unreachable   reset            outer=false  inner=true    none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_regenerate_id(): Session *: destroying the session failed: owner unreachable
    > session_reset(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
unreachable   regenerate       outer=false  inner=false   none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_regenerate_id(): Session *: destroying the session failed: owner unreachable
    > session_regenerate_id(): Session *: the data was not written: this request has released the session lock, which another request may hold now
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
unreachable   regenerate(true) outer=false  inner=false   none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_regenerate_id(): Session *: destroying the session failed: owner unreachable
    > session_regenerate_id(): Session *: the data was not destroyed: this request has released the session lock, which another request may hold now
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
unreachable   start            outer=false  inner=true    none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_regenerate_id(): Session *: destroying the session failed: owner unreachable
    > session_start(): Ignoring session_start() because a session is already active
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
unreachable   throw            outer=thrown inner=threw   none   data='mine|i:1;' lock=ours (kept until its TTL: the owner was unreachable for the release)
    session_regenerate_id(): Session *: destroying the session failed: owner unreachable
