--TEST--
session lock: every millisecond setting is refused past the store's longest TTL, at startup and in ini_set(); an absurd lock TTL no longer lets a request past the holder
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
session.save_path=
ephpm.session_lock_ttl_ms=4611686018427387904
ephpm.session_lock_wait_ms=99999999999999999999
ephpm.session_lock_backoff_min_ms=9223372036854775807
ephpm.session_lock_backoff_max_ms=4611686018427387903
--FILE--
<?php
$names = ['ttl', 'wait', 'backoff_min', 'backoff_max'];
echo "-- startup\n";
foreach ($names as $name) {
    echo "$name: ", ini_get("ephpm.session_lock_{$name}_ms"), "\n";
}

echo "-- ini_set\n";
foreach ($names as $name) {
    foreach (['4611686018427387904', '9223372036854775807', '99999999999999999999', '-1',
              '1e3', ''] as $value) {
        $r = @ini_set("ephpm.session_lock_{$name}_ms", $value);
        printf("%-11s %-21s %s\n", $name, $value === '' ? "''" : $value,
               $r === false ? 'refused: ' . error_get_last()['message'] : "accepted (was $r)");
    }
}
// The longest TTL itself is fine (the backoff bounds keep their order:
// backoff_max is the longest TTL since startup).
var_dump(ini_set('ephpm.session_lock_backoff_min_ms', '4611686018427387903'));
ini_restore('ephpm.session_lock_backoff_min_ms');
ini_restore('ephpm.session_lock_backoff_max_ms');
var_dump(ini_set('ephpm.session_lock_ttl_ms', '4611686018427387903'));
session_id('longest');
var_dump(session_start());
var_dump(ephpm_kv_pttl('session_lock:{longest}') > (PHP_INT_MAX >> 1) - 60000);
session_write_close();
ini_restore('ephpm.session_lock_ttl_ms');

echo "-- a lock TTL past the store's range cannot be set, so it cannot get a request past the holder\n";
ini_set('ephpm.session_lock_wait_ms', '20');
ini_set('ephpm.session_lock_failure', 'fail');
ephpm_kv_set('session:{t1}', 'n|i:41;');
ephpm_kv_set('session_lock:{t1}', 'holder-token', 30);
var_dump(@ini_set('ephpm.session_lock_ttl_ms', '9223372036854775807'));
session_id('t1');
var_dump(@session_start());
$_SESSION['n'] = 0;
session_write_close();
var_dump(ephpm_kv_get('session:{t1}'), ephpm_kv_get('session_lock:{t1}'));
?>
--EXPECTF--
Warning: Invalid ephpm.session_lock_ttl_ms value "4611686018427387904": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping the default in Unknown on line 0

Warning: Invalid ephpm.session_lock_wait_ms value "99999999999999999999": must be a whole number of milliseconds from 0 to 4611686018427387903 (the longest TTL the store accepts); keeping the default in Unknown on line 0

Warning: Invalid ephpm.session_lock_backoff_min_ms value "9223372036854775807": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping the default in Unknown on line 0
-- startup
ttl: 30000
wait: 30000
backoff_min: 10
backoff_max: 4611686018427387903
-- ini_set
ttl         4611686018427387904   refused: Invalid ephpm.session_lock_ttl_ms value "4611686018427387904": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 30000
ttl         9223372036854775807   refused: Invalid ephpm.session_lock_ttl_ms value "9223372036854775807": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 30000
ttl         99999999999999999999  refused: Invalid ephpm.session_lock_ttl_ms value "99999999999999999999": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 30000
ttl         -1                    refused: Invalid ephpm.session_lock_ttl_ms value "-1": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 30000
ttl         1e3                   refused: Invalid ephpm.session_lock_ttl_ms value "1e3": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 30000
ttl         ''                    refused: Invalid ephpm.session_lock_ttl_ms value "": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 30000
wait        4611686018427387904   refused: Invalid ephpm.session_lock_wait_ms value "4611686018427387904": must be a whole number of milliseconds from 0 to 4611686018427387903 (the longest TTL the store accepts); keeping 30000
wait        9223372036854775807   refused: Invalid ephpm.session_lock_wait_ms value "9223372036854775807": must be a whole number of milliseconds from 0 to 4611686018427387903 (the longest TTL the store accepts); keeping 30000
wait        99999999999999999999  refused: Invalid ephpm.session_lock_wait_ms value "99999999999999999999": must be a whole number of milliseconds from 0 to 4611686018427387903 (the longest TTL the store accepts); keeping 30000
wait        -1                    refused: Invalid ephpm.session_lock_wait_ms value "-1": must be a whole number of milliseconds from 0 to 4611686018427387903 (the longest TTL the store accepts); keeping 30000
wait        1e3                   refused: Invalid ephpm.session_lock_wait_ms value "1e3": must be a whole number of milliseconds from 0 to 4611686018427387903 (the longest TTL the store accepts); keeping 30000
wait        ''                    refused: Invalid ephpm.session_lock_wait_ms value "": must be a whole number of milliseconds from 0 to 4611686018427387903 (the longest TTL the store accepts); keeping 30000
backoff_min 4611686018427387904   refused: Invalid ephpm.session_lock_backoff_min_ms value "4611686018427387904": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 10
backoff_min 9223372036854775807   refused: Invalid ephpm.session_lock_backoff_min_ms value "9223372036854775807": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 10
backoff_min 99999999999999999999  refused: Invalid ephpm.session_lock_backoff_min_ms value "99999999999999999999": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 10
backoff_min -1                    refused: Invalid ephpm.session_lock_backoff_min_ms value "-1": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 10
backoff_min 1e3                   refused: Invalid ephpm.session_lock_backoff_min_ms value "1e3": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 10
backoff_min ''                    refused: Invalid ephpm.session_lock_backoff_min_ms value "": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 10
backoff_max 4611686018427387904   refused: Invalid ephpm.session_lock_backoff_max_ms value "4611686018427387904": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 4611686018427387903
backoff_max 9223372036854775807   refused: Invalid ephpm.session_lock_backoff_max_ms value "9223372036854775807": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 4611686018427387903
backoff_max 99999999999999999999  refused: Invalid ephpm.session_lock_backoff_max_ms value "99999999999999999999": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 4611686018427387903
backoff_max -1                    refused: Invalid ephpm.session_lock_backoff_max_ms value "-1": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 4611686018427387903
backoff_max 1e3                   refused: Invalid ephpm.session_lock_backoff_max_ms value "1e3": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 4611686018427387903
backoff_max ''                    refused: Invalid ephpm.session_lock_backoff_max_ms value "": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping 4611686018427387903
string(2) "10"
string(5) "30000"
bool(true)
bool(true)
-- a lock TTL past the store's range cannot be set, so it cannot get a request past the holder
bool(false)
bool(false)
string(7) "n|i:41;"
string(12) "holder-token"