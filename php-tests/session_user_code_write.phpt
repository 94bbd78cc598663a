--TEST--
session: user code run by a message of PS_WRITE, PS_UPDATE_TIMESTAMP or PS_CLOSE in every lock state
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
session.lazy_write=1
ephpm.session_lock_wait_ms=20
--FILE--
<?php
require __DIR__ . '/session_user_code.inc';
ob_start();  // no output before session_regenerate_id(): headers are not sent

/* Starts the session and brings it into a state in which closing it emits a
 * message:
 *   stale        the lock ran out and another request took it and wrote:
 *                the fenced write is refused, close leaves that lock alone
 *   stale_lazy   the same, the data unchanged (lazy_write): the fenced refresh is
 *                refused, then close leaves the lock alone
 *   readonly     held by another request: the write is skipped
 *   unconfirmed  the lock's owner is unreachable: the release fails
 *   write_fails  the lock is taken, then the store is out of memory: the
 *                fenced write fails, the release works
 * The holder's data and lock must survive in the first three; this
 * request's write goes through only where it holds (or may hold) the lock. */
function prepare(string $state, string $sid): void {
    switch ($state) {
        case 'stale':
        case 'stale_lazy':
            ephpm_kv_set(data_key($sid), 'mine|i:1;');
            session_id($sid);
            session_start();
            if ($state === 'stale') $_SESSION['mine'] = 2;
            ephpm_kv_set(lock_key($sid), HOLDER_TOKEN, 30);
            ephpm_kv_set(data_key($sid), HOLDER_DATA);
            break;
        case 'readonly':
            ephpm_kv_set(data_key($sid), HOLDER_DATA);
            ephpm_kv_set(lock_key($sid), HOLDER_TOKEN, 30);
            ini_set('ephpm.session_lock_failure', 'readonly');
            session_id($sid);
            @session_start();
            $_SESSION['mine'] = 2;
            break;
        case 'unconfirmed':
            ephpm_test_install_host_ops('unreachable');
            session_id($sid);
            @session_start();
            $_SESSION['mine'] = 2;
            break;
        case 'write_fails':
            session_id($sid);
            session_start();
            $_SESSION['mine'] = 2;
            ephpm_test_install_host_ops('write_oom');
            break;
    }
}

/* session_regenerate_id() releases the old id without checking whether user
 * code run by the handler's write or close destroyed the session meanwhile
 * (PHP 8.2, session.c: zend_string_release_ex(PS(id)) after s_close): a crash
 * in PHP itself, with PHP's own SessionHandler as well.  Not run. */
function php_crashes(string $state, string $trigger, string $action): bool {
    return $trigger === 'regenerate' && $action === 'destroy'
        && in_array($state, ['readonly', 'unconfirmed'], true);
}

$triggers = [
    'write_close' => fn() => session_write_close(),
    'abort' => fn() => session_abort(),
    'regenerate' => fn() => session_regenerate_id(),
];
$n = 0;
foreach ($triggers as $name => $trigger) {
    echo "-- $name\n";
    // session_abort() only closes: only a release has something to say.
    $states = $name === 'abort' ? ['stale', 'unconfirmed']
                                : ['stale', 'stale_lazy', 'readonly', 'unconfirmed', 'write_fails'];
    foreach ($states as $state) {
        foreach (ACTIONS as $action) {
            if (php_crashes($state, $name, $action)) continue;
            $sid = 'w' . ++$n;
            prepare($state, $sid);
            arm($action);
            $outer = outer($trigger);
            report($state, $action, $outer, $sid);
        }
    }
}
echo ob_get_clean();
?>
--EXPECT--
-- write_close
stale         none             outer=true   inner=-       none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
stale         write_close      outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    > session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         abort            outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_abort(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         destroy          outer=true   inner=false   none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_destroy(): Session object destruction failed
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         reset            outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
stale         regenerate       outer=true   inner=false   none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         regenerate(true) outer=true   inner=false   none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         start            outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_start(): Ignoring session_start() because a session is already active
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
stale         throw            outer=thrown inner=threw   none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
stale_lazy    none             outer=true   inner=-       none   data=holder lock=holder
    session_write_close(): Session *: the session's lifetime was not refreshed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
stale_lazy    write_close      outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Session *: the session's lifetime was not refreshed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Session *: the session's lifetime was not refreshed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    > session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale_lazy    abort            outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Session *: the session's lifetime was not refreshed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_abort(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale_lazy    destroy          outer=true   inner=false   none   data=holder lock=holder
    session_write_close(): Session *: the session's lifetime was not refreshed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_destroy(): Session object destruction failed
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale_lazy    reset            outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Session *: the session's lifetime was not refreshed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
stale_lazy    regenerate       outer=true   inner=false   none   data=holder lock=holder
    session_write_close(): Session *: the session's lifetime was not refreshed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale_lazy    regenerate(true) outer=true   inner=false   none   data=holder lock=holder
    session_write_close(): Session *: the session's lifetime was not refreshed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale_lazy    start            outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Session *: the session's lifetime was not refreshed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_start(): Ignoring session_start() because a session is already active
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
stale_lazy    throw            outer=thrown inner=threw   none   data=holder lock=holder
    session_write_close(): Session *: the session's lifetime was not refreshed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
readonly      none             outer=true   inner=-       none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      write_close      outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      abort            outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      destroy          outer=true   inner=false   none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session object destruction failed
readonly      reset            outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_reset(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
readonly      regenerate       outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      regenerate(true) outer=true   inner=false   none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
readonly      start            outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_start(): Ignoring session_start() because a session is already active
readonly      throw            outer=thrown inner=threw   none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
unconfirmed   none             outer=true   inner=-       none   data='mine|i:2;' lock=none
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   write_close      outer=true   inner=true    none   data='mine|i:2;' lock=none
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
unconfirmed   abort            outer=true   inner=true    none   data='mine|i:2;' lock=none
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   destroy          outer=true   inner=false   none   data='mine|i:2;' lock=none
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
    > session_destroy(): Session object destruction failed
unconfirmed   reset            outer=true   inner=true    none   data='mine|i:2;' lock=none
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
    > session_reset(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   regenerate       outer=true   inner=false   none   data='mine|i:2;' lock=none
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
unconfirmed   regenerate(true) outer=true   inner=false   none   data='mine|i:2;' lock=none
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
unconfirmed   start            outer=true   inner=true    none   data='mine|i:2;' lock=none
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
    > session_start(): Ignoring session_start() because a session is already active
unconfirmed   throw            outer=thrown inner=threw   none   data='mine|i:2;' lock=none
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
write_fails   none             outer=true   inner=-       none   data=gone   lock=none
    session_write_close(): Session *: writing the session data failed: out of memory
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
write_fails   write_close      outer=true   inner=true    none   data=gone   lock=none
    session_write_close(): Session *: writing the session data failed: out of memory
    > session_write_close(): Session *: writing the session data failed: out of memory
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
write_fails   abort            outer=true   inner=true    none   data=gone   lock=none
    session_write_close(): Session *: writing the session data failed: out of memory
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
write_fails   destroy          outer=true   inner=true    none   data=gone   lock=none
    session_write_close(): Session *: writing the session data failed: out of memory
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
write_fails   reset            outer=true   inner=true    none   data=gone   lock=none
    session_write_close(): Session *: writing the session data failed: out of memory
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
write_fails   regenerate       outer=true   inner=false   none   data=gone   lock=none
    session_write_close(): Session *: writing the session data failed: out of memory
    > session_regenerate_id(): Session *: writing the session data failed: out of memory
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
write_fails   regenerate(true) outer=true   inner=true    none   data=gone   lock=none
    session_write_close(): Session *: writing the session data failed: out of memory
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
write_fails   start            outer=true   inner=true    none   data=gone   lock=none
    session_write_close(): Session *: writing the session data failed: out of memory
    > session_start(): Ignoring session_start() because a session is already active
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
write_fails   throw            outer=thrown inner=threw   none   data=gone   lock=none
    session_write_close(): Session *: writing the session data failed: out of memory
-- abort
stale         none             outer=true   inner=-       none   data=holder lock=holder
    session_abort(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
stale         write_close      outer=true   inner=true    none   data=holder lock=holder
    session_abort(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         abort            outer=true   inner=true    none   data=holder lock=holder
    session_abort(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
stale         destroy          outer=true   inner=false   none   data=holder lock=holder
    session_abort(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_destroy(): Session object destruction failed
stale         reset            outer=true   inner=true    none   data=holder lock=holder
    session_abort(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_reset(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
stale         regenerate       outer=true   inner=false   none   data=holder lock=holder
    session_abort(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale         regenerate(true) outer=true   inner=false   none   data=holder lock=holder
    session_abort(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
stale         start            outer=true   inner=true    none   data=holder lock=holder
    session_abort(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_start(): Ignoring session_start() because a session is already active
stale         throw            outer=thrown inner=threw   none   data=holder lock=holder
    session_abort(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
unconfirmed   none             outer=true   inner=-       none   data=gone   lock=none
    session_abort(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   write_close      outer=true   inner=true    none   data=gone   lock=none
    session_abort(): Session *: releasing the session lock failed: owner unreachable
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
unconfirmed   abort            outer=true   inner=true    none   data=gone   lock=none
    session_abort(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   destroy          outer=true   inner=false   none   data=gone   lock=none
    session_abort(): Session *: releasing the session lock failed: owner unreachable
    > session_destroy(): Session object destruction failed
unconfirmed   reset            outer=true   inner=true    none   data=gone   lock=none
    session_abort(): Session *: releasing the session lock failed: owner unreachable
    > session_reset(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   regenerate       outer=true   inner=false   none   data=gone   lock=none
    session_abort(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
unconfirmed   regenerate(true) outer=true   inner=false   none   data=gone   lock=none
    session_abort(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
unconfirmed   start            outer=true   inner=true    none   data=gone   lock=none
    session_abort(): Session *: releasing the session lock failed: owner unreachable
    > session_start(): Ignoring session_start() because a session is already active
unconfirmed   throw            outer=thrown inner=threw   none   data=gone   lock=none
    session_abort(): Session *: releasing the session lock failed: owner unreachable
-- regenerate
stale         none             outer=false  inner=-       none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale         write_close      outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    > session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale         abort            outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_abort(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale         destroy          outer=false  inner=false   none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_destroy(): Session object destruction failed
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale         reset            outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale         regenerate       outer=false  inner=false   none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale         regenerate(true) outer=false  inner=false   none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale         start            outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_start(): Ignoring session_start() because a session is already active
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale         throw            outer=thrown inner=threw   none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
stale_lazy    none             outer=false  inner=-       none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale_lazy    write_close      outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Session *: the session's lifetime was not refreshed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    > session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale_lazy    abort            outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_abort(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale_lazy    destroy          outer=false  inner=false   none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_destroy(): Session object destruction failed
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale_lazy    reset            outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale_lazy    regenerate       outer=false  inner=false   none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale_lazy    regenerate(true) outer=false  inner=false   none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale_lazy    start            outer=false  inner=true    none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_start(): Ignoring session_start() because a session is already active
    session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
stale_lazy    throw            outer=thrown inner=threw   none   data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
readonly      none             outer=true   inner=-       active (new id) data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      write_close      outer=true   inner=true    none   data=holder lock=holder (new id open until the next session_start(), which released it)
    session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      abort            outer=true   inner=true    none   data=holder lock=holder (new id open until the next session_start(), which released it)
    session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      reset            outer=true   inner=true    active (new id) data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_reset(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
readonly      regenerate       outer=true   inner=true    active (new id) data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      regenerate(true) outer=true   inner=false   none   data=holder lock=holder (new id open until the next session_start(), which released it)
    session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
readonly      start            outer=true   inner=true    active (new id) data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_start(): Ignoring session_start() because a session is already active
readonly      throw            outer=thrown inner=threw   active (new id) data=holder lock=holder
    session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
unconfirmed   none             outer=true   inner=-       active (new id) data='mine|i:2;' lock=none
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   write_close      outer=true   inner=true    none   data='mine|i:2;' lock=none
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   abort            outer=true   inner=true    none   data='mine|i:2;' lock=none
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   reset            outer=true   inner=true    active (new id) data='mine|i:2;' lock=none
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_reset(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   regenerate       outer=true   inner=false   none   data='mine|i:2;' lock=none
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   regenerate(true) outer=true   inner=false   none   data='mine|i:2;' lock=none
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   start            outer=true   inner=true    active (new id) data='mine|i:2;' lock=none
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_start(): Ignoring session_start() because a session is already active
    session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   throw            outer=thrown inner=threw   active (new id) data='mine|i:2;' lock=none
    session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
write_fails   none             outer=false  inner=-       none   data=gone   lock=none
    session_regenerate_id(): Session *: writing the session data failed: out of memory
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
write_fails   write_close      outer=false  inner=true    none   data=gone   lock=none
    session_regenerate_id(): Session *: writing the session data failed: out of memory
    > session_write_close(): Session *: writing the session data failed: out of memory
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
write_fails   abort            outer=false  inner=true    none   data=gone   lock=none
    session_regenerate_id(): Session *: writing the session data failed: out of memory
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
write_fails   destroy          outer=false  inner=true    none   data=gone   lock=none
    session_regenerate_id(): Session *: writing the session data failed: out of memory
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
write_fails   reset            outer=false  inner=true    none   data=gone   lock=none
    session_regenerate_id(): Session *: writing the session data failed: out of memory
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
write_fails   regenerate       outer=false  inner=false   none   data=gone   lock=none
    session_regenerate_id(): Session *: writing the session data failed: out of memory
    > session_regenerate_id(): Session *: writing the session data failed: out of memory
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
write_fails   regenerate(true) outer=false  inner=true    none   data=gone   lock=none
    session_regenerate_id(): Session *: writing the session data failed: out of memory
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
write_fails   start            outer=false  inner=true    none   data=gone   lock=none
    session_regenerate_id(): Session *: writing the session data failed: out of memory
    > session_start(): Ignoring session_start() because a session is already active
    session_regenerate_id(): Session write failed. ID: ephpm (path: )
write_fails   throw            outer=thrown inner=threw   none   data=gone   lock=none
    session_regenerate_id(): Session *: writing the session data failed: out of memory
