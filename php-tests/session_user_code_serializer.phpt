--TEST--
session: user code run while the session data is decoded (__wakeup, __unserialize) or encoded (__sleep, __serialize), in every lock state
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

class WithWakeup {
    public $v = 1;
    public function __wakeup(): void { hook('__wakeup'); }
}
class WithUnserialize {
    public function __serialize(): array { return ['v' => 1]; }
    public function __unserialize(array $data): void { hook('__unserialize'); }
}
class WithSleep {
    public $v = 1;
    public function __sleep(): array { hook('__sleep'); return ['v']; }
}
class WithSerialize {
    public function __serialize(): array { hook('__serialize'); return ['v' => 1]; }
    public function __unserialize(array $data): void {}
}

/* Decoding runs after PS_READ returned, encoding before PS_WRITE: the
 * handler's state is whole, and what user code does there must leave it so.
 *   held         the lock is this request's
 *   proceed      held by another request; running without it
 *   readonly     held by another request; reading without it
 *   unconfirmed  the lock's owner is unreachable
 *   stale        (encoding) the lock ran out and another request took it */
function prepare(string $state, string $sid, ?object $encode): void {
    ephpm_kv_set(data_key($sid), $GLOBALS['holder_data']);
    if (in_array($state, ['proceed', 'readonly'], true)) {
        ephpm_kv_set(lock_key($sid), HOLDER_TOKEN, 30);
        ini_set('ephpm.session_lock_failure', $state);
    }
    if ($state === 'unconfirmed') ephpm_test_install_host_ops('unreachable');
    session_id($sid);
    if ($encode === null) return;
    @session_start();
    $_SESSION['o'] = $encode;
    if ($state === 'stale') ephpm_kv_set(lock_key($sid), HOLDER_TOKEN, 30);
}

$n = 0;
foreach (['__wakeup' => new WithWakeup, '__unserialize' => new WithUnserialize] as $at => $obj) {
    echo "-- $at: session_start() decodes\n";
    $GLOBALS['holder_data'] = 'o|' . serialize($obj);
    foreach (['held', 'proceed', 'readonly', 'unconfirmed'] as $state) {
        foreach (ACTIONS as $action) {
            $sid = 's' . ++$n;
            prepare($state, $sid, null);
            arm($action, $at);
            $outer = outer(fn() => session_start());
            report($state, $action, $outer, $sid);
        }
    }
}
foreach (['__sleep' => new WithSleep, '__serialize' => new WithSerialize] as $at => $obj) {
    echo "-- $at: session_write_close() encodes\n";
    $GLOBALS['holder_data'] = HOLDER_DATA;
    foreach (['held', 'stale', 'readonly', 'unconfirmed'] as $state) {
        foreach (ACTIONS as $action) {
            $sid = 's' . ++$n;
            prepare($state, $sid, $obj);
            arm($action, $at);
            $outer = outer(fn() => session_write_close());
            report($state, $action, $outer, $sid);
        }
    }
}
echo ob_get_clean();
?>
--EXPECT--
-- __wakeup: session_start() decodes
held          none             outer=true   inner=-       active data=holder lock=ours
held          write_close      outer=false  inner=true    none   data=holder lock=none
held          abort            outer=false  inner=true    none   data=holder lock=none
held          destroy          outer=false  inner=true    none   data=gone   lock=none
held          reset            outer=true   inner=true    active data=holder lock=ours
held          regenerate       outer=true   inner=true    active (new id) data=holder lock=none
held          regenerate(true) outer=true   inner=true    active (new id) data=gone   lock=none
held          start            outer=true   inner=true    active data=holder lock=ours
    > session_start(): Ignoring session_start() because a session is already active
held          throw            outer=thrown inner=threw   active data=holder lock=ours
proceed       none             outer=true   inner=-       active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
proceed       write_close      outer=false  inner=true    none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
proceed       abort            outer=false  inner=true    none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
proceed       destroy          outer=false  inner=true    none   data=gone   lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
proceed       reset            outer=true   inner=true    active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
    > session_reset(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
proceed       regenerate       outer=true   inner=true    active (new id) data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
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
readonly      abort            outer=false  inner=true    none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
readonly      destroy          outer=false  inner=false   none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session object destruction failed
readonly      reset            outer=true   inner=true    active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_reset(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
readonly      regenerate       outer=true   inner=true    active (new id) data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      regenerate(true) outer=false  inner=false   none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
readonly      start            outer=true   inner=true    active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_start(): Ignoring session_start() because a session is already active
readonly      throw            outer=thrown inner=threw   active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
unconfirmed   none             outer=true   inner=-       active data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   write_close      outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_write_close(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   abort            outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_abort(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   destroy          outer=false  inner=true    none   data=gone   lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_destroy(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   reset            outer=true   inner=true    active data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   regenerate       outer=true   inner=true    active (new id) data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   regenerate(true) outer=true   inner=true    active (new id) data=gone   lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   start            outer=true   inner=true    active data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_start(): Ignoring session_start() because a session is already active
unconfirmed   throw            outer=thrown inner=threw   active data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
-- __unserialize: session_start() decodes
held          none             outer=true   inner=-       active data=holder lock=ours
held          write_close      outer=false  inner=true    none   data=holder lock=none
held          abort            outer=false  inner=true    none   data=holder lock=none
held          destroy          outer=false  inner=true    none   data=gone   lock=none
held          reset            outer=true   inner=true    active data=holder lock=ours
held          regenerate       outer=true   inner=true    active (new id) data=holder lock=none
held          regenerate(true) outer=true   inner=true    active (new id) data=gone   lock=none
held          start            outer=true   inner=true    active data=holder lock=ours
    > session_start(): Ignoring session_start() because a session is already active
held          throw            outer=thrown inner=threw   active data=holder lock=ours
proceed       none             outer=true   inner=-       active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
proceed       write_close      outer=false  inner=true    none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
proceed       abort            outer=false  inner=true    none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
proceed       destroy          outer=false  inner=true    none   data=gone   lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
proceed       reset            outer=true   inner=true    active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
    > session_reset(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
proceed       regenerate       outer=true   inner=true    active (new id) data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; proceeding without it after 20 ms (ephpm.session_lock_failure=proceed)
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
readonly      abort            outer=false  inner=true    none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
readonly      destroy          outer=false  inner=false   none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session object destruction failed
readonly      reset            outer=true   inner=true    active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_reset(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
readonly      regenerate       outer=true   inner=true    active (new id) data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      regenerate(true) outer=false  inner=false   none   data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
readonly      start            outer=true   inner=true    active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    > session_start(): Ignoring session_start() because a session is already active
readonly      throw            outer=thrown inner=threw   active data=holder lock=holder
    session_start(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
unconfirmed   none             outer=true   inner=-       active data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   write_close      outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_write_close(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   abort            outer=false  inner=true    none   data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_abort(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   destroy          outer=false  inner=true    none   data=gone   lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_destroy(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   reset            outer=true   inner=true    active data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   regenerate       outer=true   inner=true    active (new id) data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   regenerate(true) outer=true   inner=true    active (new id) data=gone   lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
unconfirmed   start            outer=true   inner=true    active data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    > session_start(): Ignoring session_start() because a session is already active
unconfirmed   throw            outer=thrown inner=threw   active data=holder lock=none
    session_start(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
-- __sleep: session_write_close() encodes
held          none             outer=true   inner=-       none   data='holder|s:4:"data";o|O:9:"WithSleep":1:{s:1:"v";i:1;}' lock=none
held          write_close      outer=true   inner=true    none   data='holder|s:4:"data";o|O:9:"WithSleep":1:{s:1:"v";i:1;}' lock=none
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
held          abort            outer=true   inner=true    none   data=holder lock=none
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
held          destroy          outer=true   inner=true    none   data=gone   lock=none
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
held          reset            outer=true   inner=true    none   data='holder|s:4:"data";o|O:9:"WithSleep":1:{s:1:"v";i:1;}' lock=none
held          regenerate       outer=true   inner=true    none   data='holder|s:4:"data";o|O:9:"WithSleep":1:{s:1:"v";i:1;}' lock=none
held          regenerate(true) outer=true   inner=true    none   data=gone   lock=none
held          start            outer=true   inner=true    none   data='holder|s:4:"data";o|O:9:"WithSleep":1:{s:1:"v";i:1;}' lock=none
    > session_start(): Ignoring session_start() because a session is already active
held          throw            outer=thrown inner=threw   none   data=holder lock=none
stale         none             outer=true   inner=-       none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
stale         write_close      outer=true   inner=true    none   data=holder lock=holder
    > session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    > session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         abort            outer=true   inner=true    none   data=holder lock=holder
    > session_abort(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         destroy          outer=true   inner=false   none   data=holder lock=holder
    > session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_destroy(): Session object destruction failed
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         reset            outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
stale         regenerate       outer=true   inner=false   none   data=holder lock=holder
    > session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         regenerate(true) outer=true   inner=false   none   data=holder lock=holder
    > session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         start            outer=true   inner=true    none   data=holder lock=holder
    > session_start(): Ignoring session_start() because a session is already active
    session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
stale         throw            outer=thrown inner=threw   none   data=holder lock=holder
readonly      none             outer=true   inner=-       none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      write_close      outer=true   inner=true    none   data=holder lock=holder
    > session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
readonly      abort            outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
readonly      destroy          outer=true   inner=false   none   data=holder lock=holder
    > session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session object destruction failed
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
readonly      reset            outer=true   inner=true    none   data=holder lock=holder
    > session_reset(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      regenerate       outer=true   inner=true    none   data=holder lock=holder
    > session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      regenerate(true) outer=true   inner=false   none   data=holder lock=holder
    > session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
readonly      start            outer=true   inner=true    none   data=holder lock=holder
    > session_start(): Ignoring session_start() because a session is already active
    session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      throw            outer=thrown inner=threw   none   data=holder lock=holder
unconfirmed   none             outer=true   inner=-       none   data='holder|s:4:"data";o|O:9:"WithSleep":1:{s:1:"v";i:1;}' lock=none
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   write_close      outer=true   inner=true    none   data='holder|s:4:"data";o|O:9:"WithSleep":1:{s:1:"v";i:1;}' lock=none
    > session_write_close(): Session *: releasing the session lock failed: owner unreachable
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
unconfirmed   abort            outer=true   inner=true    none   data=holder lock=none
    > session_abort(): Session *: releasing the session lock failed: owner unreachable
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
unconfirmed   destroy          outer=true   inner=true    none   data=gone   lock=none
    > session_destroy(): Session *: releasing the session lock failed: owner unreachable
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
unconfirmed   reset            outer=true   inner=true    none   data='holder|s:4:"data";o|O:9:"WithSleep":1:{s:1:"v";i:1;}' lock=none
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   regenerate       outer=true   inner=true    none   data='holder|s:4:"data";o|O:9:"WithSleep":1:{s:1:"v";i:1;}' lock=none
    > session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   regenerate(true) outer=true   inner=true    none   data=gone   lock=none
    > session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   start            outer=true   inner=true    none   data='holder|s:4:"data";o|O:9:"WithSleep":1:{s:1:"v";i:1;}' lock=none
    > session_start(): Ignoring session_start() because a session is already active
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   throw            outer=thrown inner=threw   none   data=holder lock=none
-- __serialize: session_write_close() encodes
held          none             outer=true   inner=-       none   data='holder|s:4:"data";o|O:13:"WithSerialize":1:{s:1:"v";i:1;}' lock=none
held          write_close      outer=true   inner=true    none   data='holder|s:4:"data";o|O:13:"WithSerialize":1:{s:1:"v";i:1;}' lock=none
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
held          abort            outer=true   inner=true    none   data=holder lock=none
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
held          destroy          outer=true   inner=true    none   data=gone   lock=none
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
held          reset            outer=true   inner=true    none   data='holder|s:4:"data";o|O:13:"WithSerialize":1:{s:1:"v";i:1;}' lock=none
held          regenerate       outer=true   inner=true    none   data='holder|s:4:"data";o|O:13:"WithSerialize":1:{s:1:"v";i:1;}' lock=none
held          regenerate(true) outer=true   inner=true    none   data=gone   lock=none
held          start            outer=true   inner=true    none   data='holder|s:4:"data";o|O:13:"WithSerialize":1:{s:1:"v";i:1;}' lock=none
    > session_start(): Ignoring session_start() because a session is already active
held          throw            outer=thrown inner=threw   none   data=holder lock=none
stale         none             outer=true   inner=-       none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
stale         write_close      outer=true   inner=true    none   data=holder lock=holder
    > session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    > session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         abort            outer=true   inner=true    none   data=holder lock=holder
    > session_abort(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         destroy          outer=true   inner=false   none   data=holder lock=holder
    > session_destroy(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_destroy(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_destroy(): Session object destruction failed
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         reset            outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
stale         regenerate       outer=true   inner=false   none   data=holder lock=holder
    > session_regenerate_id(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session write failed. ID: ephpm (path: )
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         regenerate(true) outer=true   inner=false   none   data=holder lock=holder
    > session_regenerate_id(): Session *: the session was not destroyed: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    > session_regenerate_id(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
stale         start            outer=true   inner=true    none   data=holder lock=holder
    > session_start(): Ignoring session_start() because a session is already active
    session_write_close(): Session *: the data was not written: this request no longer holds the session lock (it ran past ephpm.session_lock_ttl_ms=30000 and another request took it); that request's data is kept
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
    session_write_close(): Session *: the session lock had expired and was taken by another request; it was left to that request (ephpm.session_lock_ttl_ms=30000)
stale         throw            outer=thrown inner=threw   none   data=holder lock=holder
readonly      none             outer=true   inner=-       none   data=holder lock=holder
    session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      write_close      outer=true   inner=true    none   data=holder lock=holder
    > session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
readonly      abort            outer=true   inner=true    none   data=holder lock=holder
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
readonly      destroy          outer=true   inner=false   none   data=holder lock=holder
    > session_destroy(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_destroy(): Session object destruction failed
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
readonly      reset            outer=true   inner=true    none   data=holder lock=holder
    > session_reset(): Session *: the session lock is held by another request; reading without it after 20 ms, the data will not be written (ephpm.session_lock_failure=readonly)
    session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      regenerate       outer=true   inner=true    none   data=holder lock=holder
    > session_regenerate_id(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      regenerate(true) outer=true   inner=false   none   data=holder lock=holder
    > session_regenerate_id(): Session *: the data was not destroyed: the session lock was not acquired (ephpm.session_lock_failure=readonly)
    > session_regenerate_id(): Session object destruction failed. ID: ephpm (path: )
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
readonly      start            outer=true   inner=true    none   data=holder lock=holder
    > session_start(): Ignoring session_start() because a session is already active
    session_write_close(): Session *: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly)
readonly      throw            outer=thrown inner=threw   none   data=holder lock=holder
unconfirmed   none             outer=true   inner=-       none   data='holder|s:4:"data";o|O:13:"WithSerialize":1:{s:1:"v";i:1;}' lock=none
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   write_close      outer=true   inner=true    none   data='holder|s:4:"data";o|O:13:"WithSerialize":1:{s:1:"v";i:1;}' lock=none
    > session_write_close(): Session *: releasing the session lock failed: owner unreachable
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
unconfirmed   abort            outer=true   inner=true    none   data=holder lock=none
    > session_abort(): Session *: releasing the session lock failed: owner unreachable
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
unconfirmed   destroy          outer=true   inner=true    none   data=gone   lock=none
    > session_destroy(): Session *: releasing the session lock failed: owner unreachable
    session_write_close(): Failed to write session data (ephpm). Please verify that the current setting of session.save_path is correct ()
unconfirmed   reset            outer=true   inner=true    none   data='holder|s:4:"data";o|O:13:"WithSerialize":1:{s:1:"v";i:1;}' lock=none
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   regenerate       outer=true   inner=true    none   data='holder|s:4:"data";o|O:13:"WithSerialize":1:{s:1:"v";i:1;}' lock=none
    > session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   regenerate(true) outer=true   inner=true    none   data=gone   lock=none
    > session_regenerate_id(): Session *: releasing the session lock failed: owner unreachable
    > session_regenerate_id(): Session *: the session lock's owner is unreachable, the outcome is unknown; proceeding without confirmation
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   start            outer=true   inner=true    none   data='holder|s:4:"data";o|O:13:"WithSerialize":1:{s:1:"v";i:1;}' lock=none
    > session_start(): Ignoring session_start() because a session is already active
    session_write_close(): Session *: releasing the session lock failed: owner unreachable
unconfirmed   throw            outer=thrown inner=threw   none   data=holder lock=none
