--TEST--
session lock: an attempt that fails for a reason other than contention (the store is out of memory) applies ephpm.session_lock_failure
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
session.save_path=
ephpm.memory_limit=2K
--FILE--
<?php
ephpm_kv_set('session:{oom1}', 'n|i:41;');
$n = 0;
while (@ephpm_kv_set("fill$n", str_repeat('v', 100))) {
    if (++$n > 100) break;
}
var_dump($n > 0 && $n < 100);  // the store is full

foreach (['fail', 'readonly', 'proceed'] as $policy) {
    echo "-- $policy\n";
    ini_set('ephpm.session_lock_failure', $policy);
    session_id('oom1');
    var_dump(session_start());
    var_dump(ephpm_kv_exists('session_lock:{oom1}'));
    if (session_status() === PHP_SESSION_ACTIVE) {
        var_dump($_SESSION['n']);
        $_SESSION['n']++;
        if ($policy === 'readonly') {
            session_write_close();  // skipped, with a warning
        } else {
            session_abort();        // proceed would write unfenced: its documented trade
        }
    }
    var_dump(ephpm_kv_get('session:{oom1}'));
}
?>
--EXPECTF--
bool(true)
-- fail

Warning: session_start(): Session oom1: taking the session lock failed: out of memory; gave up (ephpm.session_lock_failure=fail) in %s on line %d

Warning: session_start(): Failed to read session data: ephpm (path: ) in %s on line %d
bool(false)
bool(false)
string(7) "n|i:41;"
-- readonly

Warning: session_start(): Session oom1: taking the session lock failed: out of memory; reading without it, the data will not be written (ephpm.session_lock_failure=readonly) in %s on line %d
bool(true)
bool(false)
int(41)

Warning: session_write_close(): Session oom1: the data was not written: the session lock was not acquired (ephpm.session_lock_failure=readonly) in %s on line %d
string(7) "n|i:41;"
-- proceed

Warning: session_start(): Session oom1: taking the session lock failed: out of memory; proceeding without it (ephpm.session_lock_failure=proceed) in %s on line %d
bool(true)
bool(false)
int(41)
string(7) "n|i:41;"
