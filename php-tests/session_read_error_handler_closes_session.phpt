--TEST--
session: an error handler that closes the session from inside session_start()'s lock warning (proceed, readonly) crashes nothing, writes nothing of the unread session, and leaves the holder's lock
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
$calls = [
    'session_write_close' => fn() => session_write_close(),
    'session_abort' => fn() => session_abort(),
    'session_destroy' => fn() => session_destroy(),
    'session_reset' => fn() => session_reset(),
    'session_regenerate_id' => fn() => session_regenerate_id(),
];
$n = 0;
foreach (['proceed', 'readonly'] as $policy) {
    ini_set('ephpm.session_lock_failure', $policy);
    foreach ($calls as $name => $call) {
        $sid = 'c' . ++$n;
        ephpm_kv_set("session:{{$sid}}", 'n|i:41;');
        ephpm_kv_set("session_lock:{{$sid}}", 'holder-token', 30);
        $fired = false;
        set_error_handler(function () use ($call, &$fired) {
            if (!$fired) {
                $fired = true;
                @$call();
            }
            return true;
        });
        session_id($sid);
        $started = session_start();
        restore_error_handler();
        printf("%-8s %-21s start=%-5s data=%s lock=%s\n", $policy, $name, var_export($started, true),
               var_export(ephpm_kv_get("session:{{$sid}}"), true),
               var_export(ephpm_kv_get("session_lock:{{$sid}}"), true));
        if (session_status() === PHP_SESSION_ACTIVE) session_abort();
    }
}
echo ob_get_clean();
?>
--EXPECT--
proceed  session_write_close   start=false data='n|i:41;' lock='holder-token'
proceed  session_abort         start=false data='n|i:41;' lock='holder-token'
proceed  session_destroy       start=false data=NULL lock='holder-token'
proceed  session_reset         start=true  data='n|i:41;' lock='holder-token'
proceed  session_regenerate_id start=false data='n|i:41;' lock='holder-token'
readonly session_write_close   start=false data='n|i:41;' lock='holder-token'
readonly session_abort         start=false data='n|i:41;' lock='holder-token'
readonly session_destroy       start=false data='n|i:41;' lock='holder-token'
readonly session_reset         start=true  data='n|i:41;' lock='holder-token'
readonly session_regenerate_id start=false data='n|i:41;' lock='holder-token'
