--TEST--
session: user code at the end of a request (shutdown functions, destructors, an error handler run by the session's last write or close) in every lock state
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
require __DIR__ . '/session_server.inc';
/* One php -S process: a request runs a scenario and ends; the next one sees
 * what its end left in the store.
 *   held         the lock is this request's: its write at the end is fenced
 *   stale        the lock ran out and another request took it and wrote
 *   readonly     held by another request: the write at the end is skipped
 *   unconfirmed  the lock's owner is unreachable: the release at the end
 *                fails (the lock, had it landed, would stay until its TTL) */
$server = server_start(__DIR__ . '/session_user_code_shutdown.inc');
$n = 0;
function scenario(array $server, string $sid, string $where, string $state, string $action): void {
    printf("%-17s %-11s %s\n", $where, $state, $action);
    // What the end of the request printed (no handler is left for its own
    // messages once the scenario's has fired).
    $run = server_get($server, ['run' => $sid, 'state' => $state, 'where' => $where,
                                'action' => $action]);
    $run = str_replace(__DIR__, 'DIR', $run);
    $run = preg_replace('/Session [0-9a-zA-Z,-]+: /', 'Session *: ', $run);
    foreach (explode("\n", trim($run)) as $line) {
        if ($line !== '') echo "  | $line\n";
    }
    echo server_get($server, ['inspect' => $sid,
                              'unreachable' => $state === 'unconfirmed' ? 1 : 0]);
}
try {
    foreach (['exit', 'throw'] as $action) {
        scenario($server, 'x' . ++$n, 'script', 'held', $action);
    }
    foreach (['shutdown_function', 'destructor', 'error_handler'] as $where) {
        foreach (['held', 'stale', 'readonly', 'unconfirmed'] as $state) {
            // The end of a request with the lock held and nothing amiss has
            // no message to hand to an error handler.
            if ($where === 'error_handler' && $state === 'held') continue;
            foreach (['write_close', 'destroy', 'reset', 'regenerate', 'regenerate(true)',
                      'throw', 'exit'] as $action) {
                scenario($server, 'x' . ++$n, $where, $state, $action);
            }
        }
    }
} finally {
    server_stop($server);
}
?>
--EXPECT--
script            held        exit
    data='mine|i:2;' lock=none
    exit ran, status active
    exiting
script            held        throw
  | Fatal error: Uncaught RuntimeException: thrown from user code at the end of the request in DIR/session_user_code_shutdown.inc:32
  | Stack trace:
  | #0 DIR/session_user_code_shutdown.inc(78): run_action('x2', 'throw')
  | #1 {main}
  |   thrown in DIR/session_user_code_shutdown.inc on line 32
    data='mine|i:2;' lock=none
    throw ran, status active
    throwing
shutdown_function held        write_close
    data='mine|i:2;' lock=none
    write_close ran, status active
    write_close returned true, status none
shutdown_function held        destroy
    data=gone lock=none
    destroy ran, status active
    destroy returned true, status none
shutdown_function held        reset
    data='mine|i:1;' lock=none
    reset ran, status active
    reset returned true, status active
shutdown_function held        regenerate
    data='mine|i:2;' lock=none
    regenerate ran, status active
    regenerate returned true, status active
shutdown_function held        regenerate(true)
    data=gone lock=none
    regenerate(true) ran, status active
    regenerate(true) returned true, status active
shutdown_function held        throw
  | Fatal error: Uncaught RuntimeException: thrown from user code at the end of the request in DIR/session_user_code_shutdown.inc:32
  | Stack trace:
  | #0 DIR/session_user_code_shutdown.inc(81): run_action('x8', 'throw')
  | #1 [internal function]: {closure}()
  | #2 {main}
  |   thrown in DIR/session_user_code_shutdown.inc on line 32
    data='mine|i:2;' lock=none
    throw ran, status active
    throwing
shutdown_function held        exit
    data='mine|i:2;' lock=none
    exit ran, status active
    exiting
shutdown_function stale       write_close
    data=holder lock=holder
    write_close ran, status active
    > session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    > session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    write_close returned true, status none
shutdown_function stale       destroy
    data=holder lock=holder
    destroy ran, status active
    > session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_destroy(): Session object destruction failed
    destroy returned false, status none
shutdown_function stale       reset
  | Warning: PHP Request Shutdown: Session *: the session's lifetime was not refreshed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept in Unknown on line 0
  | Warning: PHP Request Shutdown: Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct () in Unknown on line 0
  | Notice: PHP Request Shutdown: Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000) in Unknown on line 0
    data=holder lock=holder
    reset ran, status active
    reset returned true, status active
shutdown_function stale       regenerate
    data=holder lock=holder
    regenerate ran, status active
    > session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    regenerate returned false, status none
shutdown_function stale       regenerate(true)
    data=holder lock=holder
    regenerate(true) ran, status active
    > session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    regenerate(true) returned false, status none
shutdown_function stale       throw
  | Fatal error: Uncaught RuntimeException: thrown from user code at the end of the request in DIR/session_user_code_shutdown.inc:32
  | Stack trace:
  | #0 DIR/session_user_code_shutdown.inc(81): run_action('x15', 'throw')
  | #1 [internal function]: {closure}()
  | #2 {main}
  |   thrown in DIR/session_user_code_shutdown.inc on line 32
  | Warning: PHP Request Shutdown: Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept in Unknown on line 0
  | Warning: PHP Request Shutdown: Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct () in Unknown on line 0
  | Notice: PHP Request Shutdown: Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000) in Unknown on line 0
    data=holder lock=holder
    throw ran, status active
    throwing
shutdown_function stale       exit
    data=holder lock=holder
    exit ran, status active
    exiting
    > PHP Request Shutdown: Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > PHP Request Shutdown: Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    > PHP Request Shutdown: Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
shutdown_function readonly    write_close
    data=holder lock=holder
    write_close ran, status active
    > session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    write_close returned true, status none
shutdown_function readonly    destroy
    data=holder lock=holder
    destroy ran, status active
    > session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session object destruction failed
    destroy returned false, status none
shutdown_function readonly    reset
    data=holder lock=holder
    reset ran, status active
    > session_reset(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    reset returned true, status active
shutdown_function readonly    regenerate
    data=holder lock=holder
    regenerate ran, status active
    > session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    regenerate returned true, status active
shutdown_function readonly    regenerate(true)
    data=holder lock=holder
    regenerate(true) ran, status active
    > session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    regenerate(true) returned false, status none
shutdown_function readonly    throw
  | Fatal error: Uncaught RuntimeException: thrown from user code at the end of the request in DIR/session_user_code_shutdown.inc:32
  | Stack trace:
  | #0 DIR/session_user_code_shutdown.inc(81): run_action('x22', 'throw')
  | #1 [internal function]: {closure}()
  | #2 {main}
  |   thrown in DIR/session_user_code_shutdown.inc on line 32
  | Warning: PHP Request Shutdown: Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly) in Unknown on line 0
    data=holder lock=holder
    throw ran, status active
    throwing
shutdown_function readonly    exit
    data=holder lock=holder
    exit ran, status active
    exiting
    > PHP Request Shutdown: Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
shutdown_function unconfirmed write_close
    data='mine|i:2;' lock=none
    write_close ran, status active
    > session_write_close(): Session *: releasing the session lock failed: owner unreachable
    write_close returned true, status none
shutdown_function unconfirmed destroy
    data=gone lock=none
    destroy ran, status active
    > session_destroy(): Session *: releasing the session lock failed: owner unreachable
    destroy returned true, status none
shutdown_function unconfirmed reset
  | Warning: PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable in Unknown on line 0
    data='mine|i:1;' lock=none
    reset ran, status active
    reset returned true, status active
shutdown_function unconfirmed regenerate
  | Warning: PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable in Unknown on line 0
    data='mine|i:2;' lock=none
    regenerate ran, status active
    > session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    regenerate returned true, status active
shutdown_function unconfirmed regenerate(true)
  | Warning: PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable in Unknown on line 0
    data=gone lock=none
    regenerate(true) ran, status active
    > session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    regenerate(true) returned true, status active
shutdown_function unconfirmed throw
  | Fatal error: Uncaught RuntimeException: thrown from user code at the end of the request in DIR/session_user_code_shutdown.inc:32
  | Stack trace:
  | #0 DIR/session_user_code_shutdown.inc(81): run_action('x29', 'throw')
  | #1 [internal function]: {closure}()
  | #2 {main}
  |   thrown in DIR/session_user_code_shutdown.inc on line 32
  | Warning: PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable in Unknown on line 0
    data='mine|i:2;' lock=none
    throw ran, status active
    throwing
shutdown_function unconfirmed exit
    data='mine|i:2;' lock=none
    exit ran, status active
    exiting
    > PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable
destructor        held        write_close
    data='mine|i:2;' lock=none
    write_close ran, status active
    write_close returned true, status none
destructor        held        destroy
    data=gone lock=none
    destroy ran, status active
    destroy returned true, status none
destructor        held        reset
    data='mine|i:1;' lock=none
    reset ran, status active
    reset returned true, status active
destructor        held        regenerate
    data='mine|i:2;' lock=none
    regenerate ran, status active
    regenerate returned true, status active
destructor        held        regenerate(true)
    data=gone lock=none
    regenerate(true) ran, status active
    regenerate(true) returned true, status active
destructor        held        throw
  | Fatal error: Uncaught RuntimeException: thrown from user code at the end of the request in DIR/session_user_code_shutdown.inc:32
  | Stack trace:
  | #0 DIR/session_user_code_shutdown.inc(86): run_action('x36', 'throw')
  | #1 [internal function]: class@anonymous->__destruct()
  | #2 {main}
  |   thrown in DIR/session_user_code_shutdown.inc on line 32
    data='mine|i:2;' lock=none
    throw ran, status active
    throwing
destructor        held        exit
    data='mine|i:2;' lock=none
    exit ran, status active
    exiting
destructor        stale       write_close
    data=holder lock=holder
    write_close ran, status active
    > session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    > session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    write_close returned true, status none
destructor        stale       destroy
    data=holder lock=holder
    destroy ran, status active
    > session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_destroy(): Session object destruction failed
    destroy returned false, status none
destructor        stale       reset
  | Warning: PHP Request Shutdown: Session *: the session's lifetime was not refreshed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept in Unknown on line 0
  | Warning: PHP Request Shutdown: Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct () in Unknown on line 0
  | Notice: PHP Request Shutdown: Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000) in Unknown on line 0
    data=holder lock=holder
    reset ran, status active
    reset returned true, status active
destructor        stale       regenerate
    data=holder lock=holder
    regenerate ran, status active
    > session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    regenerate returned false, status none
destructor        stale       regenerate(true)
    data=holder lock=holder
    regenerate(true) ran, status active
    > session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    regenerate(true) returned false, status none
destructor        stale       throw
  | Fatal error: Uncaught RuntimeException: thrown from user code at the end of the request in DIR/session_user_code_shutdown.inc:32
  | Stack trace:
  | #0 DIR/session_user_code_shutdown.inc(86): run_action('x43', 'throw')
  | #1 [internal function]: class@anonymous->__destruct()
  | #2 {main}
  |   thrown in DIR/session_user_code_shutdown.inc on line 32
  | Warning: PHP Request Shutdown: Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept in Unknown on line 0
  | Warning: PHP Request Shutdown: Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct () in Unknown on line 0
  | Notice: PHP Request Shutdown: Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000) in Unknown on line 0
    data=holder lock=holder
    throw ran, status active
    throwing
destructor        stale       exit
    data=holder lock=holder
    exit ran, status active
    exiting
    > PHP Request Shutdown: Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > PHP Request Shutdown: Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    > PHP Request Shutdown: Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
destructor        readonly    write_close
    data=holder lock=holder
    write_close ran, status active
    > session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    write_close returned true, status none
destructor        readonly    destroy
    data=holder lock=holder
    destroy ran, status active
    > session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session object destruction failed
    destroy returned false, status none
destructor        readonly    reset
    data=holder lock=holder
    reset ran, status active
    > session_reset(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    reset returned true, status active
destructor        readonly    regenerate
    data=holder lock=holder
    regenerate ran, status active
    > session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    regenerate returned true, status active
destructor        readonly    regenerate(true)
    data=holder lock=holder
    regenerate(true) ran, status active
    > session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    regenerate(true) returned false, status none
destructor        readonly    throw
  | Fatal error: Uncaught RuntimeException: thrown from user code at the end of the request in DIR/session_user_code_shutdown.inc:32
  | Stack trace:
  | #0 DIR/session_user_code_shutdown.inc(86): run_action('x50', 'throw')
  | #1 [internal function]: class@anonymous->__destruct()
  | #2 {main}
  |   thrown in DIR/session_user_code_shutdown.inc on line 32
  | Warning: PHP Request Shutdown: Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly) in Unknown on line 0
    data=holder lock=holder
    throw ran, status active
    throwing
destructor        readonly    exit
    data=holder lock=holder
    exit ran, status active
    exiting
    > PHP Request Shutdown: Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
destructor        unconfirmed write_close
    data='mine|i:2;' lock=none
    write_close ran, status active
    > session_write_close(): Session *: releasing the session lock failed: owner unreachable
    write_close returned true, status none
destructor        unconfirmed destroy
    data=gone lock=none
    destroy ran, status active
    > session_destroy(): Session *: releasing the session lock failed: owner unreachable
    destroy returned true, status none
destructor        unconfirmed reset
  | Warning: PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable in Unknown on line 0
    data='mine|i:1;' lock=none
    reset ran, status active
    reset returned true, status active
destructor        unconfirmed regenerate
  | Warning: PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable in Unknown on line 0
    data='mine|i:2;' lock=none
    regenerate ran, status active
    > session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    regenerate returned true, status active
destructor        unconfirmed regenerate(true)
  | Warning: PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable in Unknown on line 0
    data=gone lock=none
    regenerate(true) ran, status active
    > session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    regenerate(true) returned true, status active
destructor        unconfirmed throw
  | Fatal error: Uncaught RuntimeException: thrown from user code at the end of the request in DIR/session_user_code_shutdown.inc:32
  | Stack trace:
  | #0 DIR/session_user_code_shutdown.inc(86): run_action('x57', 'throw')
  | #1 [internal function]: class@anonymous->__destruct()
  | #2 {main}
  |   thrown in DIR/session_user_code_shutdown.inc on line 32
  | Warning: PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable in Unknown on line 0
    data='mine|i:2;' lock=none
    throw ran, status active
    throwing
destructor        unconfirmed exit
    data='mine|i:2;' lock=none
    exit ran, status active
    exiting
    > PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable
error_handler     stale       write_close
    data=holder lock=holder
    PHP Request Shutdown: Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    write_close ran, status active
    > session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    > session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    write_close returned true, status none
    PHP Request Shutdown: Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
error_handler     stale       destroy
    data=holder lock=holder
    PHP Request Shutdown: Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    destroy ran, status active
    > session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_destroy(): Session object destruction failed
    destroy returned false, status none
    PHP Request Shutdown: Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
error_handler     stale       reset
    data=holder lock=holder
    PHP Request Shutdown: Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    reset ran, status active
    reset returned true, status active
    PHP Request Shutdown: Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    PHP Request Shutdown: Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
error_handler     stale       regenerate
    data=holder lock=holder
    PHP Request Shutdown: Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    regenerate ran, status active
    > session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    regenerate returned false, status none
    PHP Request Shutdown: Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
error_handler     stale       regenerate(true)
    data=holder lock=holder
    PHP Request Shutdown: Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    regenerate(true) ran, status active
    > session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    regenerate(true) returned false, status none
    PHP Request Shutdown: Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
error_handler     stale       throw
  | Fatal error: Uncaught RuntimeException: thrown from user code at the end of the request in DIR/session_user_code_shutdown.inc:32
  | Stack trace:
  | #0 DIR/session_user_code_shutdown.inc(97): run_action('x64', 'throw')
  | #1 [internal function]: {closure}(2, 'PHP Request Shu...', 'Unknown', 0)
  | #2 {main}
  |   thrown in DIR/session_user_code_shutdown.inc on line 32
  | Notice: PHP Request Shutdown: Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000) in Unknown on line 0
    data=holder lock=holder
    PHP Request Shutdown: Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    throw ran, status active
    throwing
error_handler     stale       exit
    data=holder lock=holder
    PHP Request Shutdown: Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    exit ran, status active
    exiting
    > PHP Request Shutdown: Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
error_handler     readonly    write_close
    data=holder lock=holder
    PHP Request Shutdown: Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    write_close ran, status active
    > session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    write_close returned true, status none
error_handler     readonly    destroy
    data=holder lock=holder
    PHP Request Shutdown: Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    destroy ran, status active
    > session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session object destruction failed
    destroy returned false, status none
error_handler     readonly    reset
    data=holder lock=holder
    PHP Request Shutdown: Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    reset ran, status active
    > session_reset(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    reset returned true, status active
error_handler     readonly    regenerate
    data=holder lock=holder
    PHP Request Shutdown: Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    regenerate ran, status active
    > session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    regenerate returned true, status active
error_handler     readonly    regenerate(true)
    data=holder lock=holder
    PHP Request Shutdown: Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    regenerate(true) ran, status active
    > session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    regenerate(true) returned false, status none
error_handler     readonly    throw
  | Fatal error: Uncaught RuntimeException: thrown from user code at the end of the request in DIR/session_user_code_shutdown.inc:32
  | Stack trace:
  | #0 DIR/session_user_code_shutdown.inc(97): run_action('x71', 'throw')
  | #1 [internal function]: {closure}(2, 'PHP Request Shu...', 'Unknown', 0)
  | #2 {main}
  |   thrown in DIR/session_user_code_shutdown.inc on line 32
    data=holder lock=holder
    PHP Request Shutdown: Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    throw ran, status active
    throwing
error_handler     readonly    exit
    data=holder lock=holder
    PHP Request Shutdown: Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    exit ran, status active
    exiting
error_handler     unconfirmed write_close
    data='mine|i:2;' lock=none
    PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable
    write_close ran, status active
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    write_close returned true, status none
error_handler     unconfirmed destroy
    data='mine|i:2;' lock=none
    PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable
    destroy ran, status active
    > session_destroy(): Session object destruction failed
    destroy returned false, status none
error_handler     unconfirmed reset
    data='mine|i:2;' lock=none
    PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable
    reset ran, status active
    > session_reset(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    reset returned true, status active
    PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable
error_handler     unconfirmed regenerate
    data='mine|i:2;' lock=none
    PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable
    regenerate ran, status active
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    regenerate returned false, status none
error_handler     unconfirmed regenerate(true)
    data='mine|i:2;' lock=none
    PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable
    regenerate(true) ran, status active
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    regenerate(true) returned false, status none
error_handler     unconfirmed throw
  | Fatal error: Uncaught RuntimeException: thrown from user code at the end of the request in DIR/session_user_code_shutdown.inc:32
  | Stack trace:
  | #0 DIR/session_user_code_shutdown.inc(97): run_action('x78', 'throw')
  | #1 [internal function]: {closure}(2, 'PHP Request Shu...', 'Unknown', 0)
  | #2 {main}
  |   thrown in DIR/session_user_code_shutdown.inc on line 32
    data='mine|i:2;' lock=none
    PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable
    throw ran, status active
    throwing
error_handler     unconfirmed exit
    data='mine|i:2;' lock=none
    PHP Request Shutdown: Session *: releasing the session lock failed: owner unreachable
    exit ran, status active
    exiting
