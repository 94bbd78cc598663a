--TEST--
session: user code run by a message of PS_READ (an error handler calling session functions, or throwing) in every lock state
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

/* Each state makes PS_READ emit a message while it holds (or has just given
 * up) its state:
 *   held           the lock is taken, the owner read falls back to this node
 *   proceed        held by another request; proceeding without it
 *   readonly       held by another request; reading without it
 *   fail           held by another request; session_start() fails
 *   unconfirmed    the lock's owner is unreachable
 *   read_fails     the lock is taken, the read fails, the lock is released
 *   lock_oom/fail  the lock attempt fails (out of memory) under "fail"
 * The holder's data is there in every state; in the three contended ones
 * the holder's lock too. */
function prepare(string $state, string $sid): void {
    ephpm_kv_set(data_key($sid), HOLDER_DATA);
    switch ($state) {
        case 'held': ephpm_test_install_host_ops('owner_read_unreachable'); break;
        case 'proceed': case 'readonly': case 'fail':
            ephpm_kv_set(lock_key($sid), HOLDER_TOKEN, 30);
            ini_set('ephpm.session_lock_failure', $state);
            break;
        case 'unconfirmed': ephpm_test_install_host_ops('unreachable'); break;
        case 'read_fails': ephpm_test_install_host_ops('get_fails'); break;
        case 'lock_oom/fail':
            ephpm_test_install_host_ops('lock_oom');
            ini_set('ephpm.session_lock_failure', 'fail');
            break;
    }
}

$n = 0;
foreach (['held', 'proceed', 'readonly', 'fail', 'unconfirmed', 'read_fails',
          'lock_oom/fail'] as $state) {
    foreach (ACTIONS as $action) {
        $sid = 'r' . ++$n;
        prepare($state, $sid);
        session_id($sid);
        arm($action);
        $outer = outer(fn() => session_start());
        report($state, $action, $outer, $sid);
    }
}
echo "-- session_reset() reads again, and its read runs user code too\n";
foreach (['held', 'proceed', 'readonly'] as $state) {
    foreach (['write_close', 'destroy', 'regenerate'] as $action) {
        $sid = 'r' . ++$n;
        ephpm_kv_set(data_key($sid), HOLDER_DATA);
        if ($state !== 'held') {
            ephpm_kv_set(lock_key($sid), HOLDER_TOKEN, 30);
            ini_set('ephpm.session_lock_failure', $state);
        }
        session_id($sid);
        @session_start();  // held: the lock; else running without it
        if ($state === 'held') ephpm_test_install_host_ops('owner_read_unreachable');
        arm($action);
        $outer = outer(fn() => session_reset());
        report("reset:$state", $action, $outer, $sid);
    }
}
echo ob_get_clean();
?>
--EXPECT--
held          none             outer=true   inner=-       active data=holder lock=ours
    session_start(): Session *: the session data's owner is unreachable; reading this node's copy, which may miss the latest write
held          write_close      outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: the session data's owner is unreachable; reading this node's copy, which may miss the latest write
    > session_write_close(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
held          abort            outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: the session data's owner is unreachable; reading this node's copy, which may miss the latest write
held          destroy          outer=false  inner=true    none   data=gone   lock=none
    session_start(): Session *: the session data's owner is unreachable; reading this node's copy, which may miss the latest write
held          reset            outer=true   inner=true    active data=holder lock=ours
    session_start(): Session *: the session data's owner is unreachable; reading this node's copy, which may miss the latest write
    > session_reset(): Session *: the session data's owner is unreachable; reading this node's copy, which may miss the latest write
held          regenerate       outer=false  inner=false   none   data=holder lock=none
    session_start(): Session *: the session data's owner is unreachable; reading this node's copy, which may miss the latest write
    > session_regenerate_id(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
held          regenerate(true) outer=true   inner=true    active (new id) data=gone   lock=none
    session_start(): Session *: the session data's owner is unreachable; reading this node's copy, which may miss the latest write
    > session_regenerate_id(): Session *: the session data's owner is unreachable; reading this node's copy, which may miss the latest write
held          start            outer=true   inner=true    active data=holder lock=ours
    session_start(): Session *: the session data's owner is unreachable; reading this node's copy, which may miss the latest write
    > session_start(): Ignoring session_start() because a session is already active
held          throw            outer=thrown inner=threw   active data=holder lock=ours
    session_start(): Session *: the session data's owner is unreachable; reading this node's copy, which may miss the latest write
proceed       none             outer=true   inner=-       active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
proceed       write_close      outer=false  inner=true    none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
    > session_write_close(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
proceed       abort            outer=false  inner=true    none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
proceed       destroy          outer=false  inner=true    none   data=gone   lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
proceed       reset            outer=true   inner=true    active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
    > session_reset(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
proceed       regenerate       outer=false  inner=false   none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
    > session_regenerate_id(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
proceed       regenerate(true) outer=true   inner=true    active (new id) data=gone   lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
proceed       start            outer=true   inner=true    active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
    > session_start(): Ignoring session_start() because a session is already active
proceed       throw            outer=thrown inner=threw   active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
readonly      none             outer=true   inner=-       active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
readonly      write_close      outer=false  inner=true    none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_write_close(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
readonly      abort            outer=false  inner=true    none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
readonly      destroy          outer=false  inner=false   none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session object destruction failed
readonly      reset            outer=true   inner=true    active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_reset(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
readonly      regenerate       outer=false  inner=false   none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
readonly      regenerate(true) outer=false  inner=false   none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
readonly      start            outer=true   inner=true    active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_start(): Ignoring session_start() because a session is already active
readonly      throw            outer=thrown inner=threw   active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
fail          none             outer=false  inner=-       none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; gave up after 20 ms (ephpm.session_lock_failure=fail)
    session_start(): Failed to read session data: ephpm (path: )
fail          write_close      outer=false  inner=true    none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; gave up after 20 ms (ephpm.session_lock_failure=fail)
    > session_write_close(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_start(): Failed to read session data: ephpm (path: )
fail          abort            outer=false  inner=true    none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; gave up after 20 ms (ephpm.session_lock_failure=fail)
    session_start(): Failed to read session data: ephpm (path: )
fail          destroy          outer=false  inner=false   none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; gave up after 20 ms (ephpm.session_lock_failure=fail)
    > session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=fail)
    > session_destroy(): Session object destruction failed
    session_start(): Failed to read session data: ephpm (path: )
fail          reset            outer=false  inner=true    none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; gave up after 20 ms (ephpm.session_lock_failure=fail)
    > session_reset(): Session *: the session lock is held by another request; gave up after 20 ms (ephpm.session_lock_failure=fail)
    > session_reset(): Failed to read session data: ephpm (path: )
    session_start(): Failed to read session data: ephpm (path: )
fail          regenerate       outer=false  inner=false   none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; gave up after 20 ms (ephpm.session_lock_failure=fail)
    > session_regenerate_id(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_start(): Failed to read session data: ephpm (path: )
fail          regenerate(true) outer=false  inner=false   none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; gave up after 20 ms (ephpm.session_lock_failure=fail)
    > session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=fail)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_start(): Failed to read session data: ephpm (path: )
fail          start            outer=false  inner=true    none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; gave up after 20 ms (ephpm.session_lock_failure=fail)
    > session_start(): Ignoring session_start() because a session is already active
    session_start(): Failed to read session data: ephpm (path: )
fail          throw            outer=thrown inner=threw   none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; gave up after 20 ms (ephpm.session_lock_failure=fail)
unconfirmed   none             outer=true   inner=-       active data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   write_close      outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_write_close(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    > session_write_close(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   abort            outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_abort(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   destroy          outer=false  inner=true    none   data=gone   lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_destroy(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   reset            outer=true   inner=true    active data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   regenerate       outer=false  inner=false   none   data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_regenerate_id(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
unconfirmed   regenerate(true) outer=true   inner=true    active (new id) data=gone   lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   start            outer=true   inner=true    active data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_start(): Ignoring session_start() because a session is already active
unconfirmed   throw            outer=thrown inner=threw   active data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
read_fails    none             outer=false  inner=-       none   data=holder lock=none
    session_start(): Session *: reading the session data failed: wrong type
    session_start(): Failed to read session data: ephpm (path: )
read_fails    write_close      outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: reading the session data failed: wrong type
    > session_write_close(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_start(): Failed to read session data: ephpm (path: )
read_fails    abort            outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: reading the session data failed: wrong type
    session_start(): Failed to read session data: ephpm (path: )
read_fails    destroy          outer=false  inner=false   none   data=holder lock=none
    session_start(): Session *: reading the session data failed: wrong type
    > session_destroy(): Session *: the data was not destroyed: this request has released the session lock, which another request may hold now
    > session_destroy(): Session object destruction failed
    session_start(): Failed to read session data: ephpm (path: )
read_fails    reset            outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: reading the session data failed: wrong type
    > session_reset(): Session *: reading the session data failed: wrong type
    > session_reset(): Failed to read session data: ephpm (path: )
    session_start(): Failed to read session data: ephpm (path: )
read_fails    regenerate       outer=false  inner=false   none   data=holder lock=none
    session_start(): Session *: reading the session data failed: wrong type
    > session_regenerate_id(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_start(): Failed to read session data: ephpm (path: )
read_fails    regenerate(true) outer=false  inner=false   none   data=holder lock=none
    session_start(): Session *: reading the session data failed: wrong type
    > session_regenerate_id(): Session *: the data was not destroyed: this request has released the session lock, which another request may hold now
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_start(): Failed to read session data: ephpm (path: )
read_fails    start            outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: reading the session data failed: wrong type
    > session_start(): Ignoring session_start() because a session is already active
    session_start(): Failed to read session data: ephpm (path: )
read_fails    throw            outer=thrown inner=threw   none   data=holder lock=none
    session_start(): Session *: reading the session data failed: wrong type
lock_oom/fail none             outer=false  inner=-       none   data=holder lock=none
    session_start(): Session *: taking the session lock failed: out of memory; gave up (ephpm.session_lock_failure=fail)
    session_start(): Failed to read session data: ephpm (path: )
lock_oom/fail write_close      outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: taking the session lock failed: out of memory; gave up (ephpm.session_lock_failure=fail)
    > session_write_close(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_start(): Failed to read session data: ephpm (path: )
lock_oom/fail abort            outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: taking the session lock failed: out of memory; gave up (ephpm.session_lock_failure=fail)
    session_start(): Failed to read session data: ephpm (path: )
lock_oom/fail destroy          outer=false  inner=false   none   data=holder lock=none
    session_start(): Session *: taking the session lock failed: out of memory; gave up (ephpm.session_lock_failure=fail)
    > session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=fail)
    > session_destroy(): Session object destruction failed
    session_start(): Failed to read session data: ephpm (path: )
lock_oom/fail reset            outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: taking the session lock failed: out of memory; gave up (ephpm.session_lock_failure=fail)
    > session_reset(): Session *: taking the session lock failed: out of memory; gave up (ephpm.session_lock_failure=fail)
    > session_reset(): Failed to read session data: ephpm (path: )
    session_start(): Failed to read session data: ephpm (path: )
lock_oom/fail regenerate       outer=false  inner=false   none   data=holder lock=none
    session_start(): Session *: taking the session lock failed: out of memory; gave up (ephpm.session_lock_failure=fail)
    > session_regenerate_id(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_start(): Failed to read session data: ephpm (path: )
lock_oom/fail regenerate(true) outer=false  inner=false   none   data=holder lock=none
    session_start(): Session *: taking the session lock failed: out of memory; gave up (ephpm.session_lock_failure=fail)
    > session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=fail)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_start(): Failed to read session data: ephpm (path: )
lock_oom/fail start            outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: taking the session lock failed: out of memory; gave up (ephpm.session_lock_failure=fail)
    > session_start(): Ignoring session_start() because a session is already active
    session_start(): Failed to read session data: ephpm (path: )
lock_oom/fail throw            outer=thrown inner=threw   none   data=holder lock=none
    session_start(): Session *: taking the session lock failed: out of memory; gave up (ephpm.session_lock_failure=fail)
-- session_reset() reads again, and its read runs user code too
reset:held    write_close      outer=true   inner=true    none   data=holder lock=none
    session_reset(): Session *: the session data's owner is unreachable; reading this node's copy, which may miss the latest write
    > session_write_close(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
reset:held    destroy          outer=true   inner=true    none   data=gone   lock=none
    session_reset(): Session *: the session data's owner is unreachable; reading this node's copy, which may miss the latest write
reset:held    regenerate       outer=true   inner=false   none   data=holder lock=none
    session_reset(): Session *: the session data's owner is unreachable; reading this node's copy, which may miss the latest write
    > session_regenerate_id(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
reset:proceed write_close      outer=true   inner=true    none   data=holder lock=holder
    session_reset(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
    > session_write_close(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
reset:proceed destroy          outer=true   inner=true    none   data=gone   lock=holder
    session_reset(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
reset:proceed regenerate       outer=true   inner=false   none   data=holder lock=holder
    session_reset(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
    > session_regenerate_id(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
reset:readonly write_close      outer=true   inner=true    none   data=holder lock=holder
    session_reset(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_write_close(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
reset:readonly destroy          outer=true   inner=false   none   data=holder lock=holder
    session_reset(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session object destruction failed
reset:readonly regenerate       outer=true   inner=false   none   data=holder lock=holder
    session_reset(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session *: the data was not written: the session was still being read (a session function was called from an error handler during the read), so $_SESSION does not hold its data yet; the stored data is kept
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
