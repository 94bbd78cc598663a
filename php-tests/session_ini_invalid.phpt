--TEST--
session: invalid ephpm.session_* values are refused with a message
--EXTENSIONS--
ephpm
session
--INI--
ephpm.session_lock_ttl_ms=0
ephpm.session_lock_failure=maybe
ephpm.session_lock_backoff_min_ms=-5
--FILE--
<?php
var_dump(ini_get('ephpm.session_lock_ttl_ms'));
var_dump(ini_get('ephpm.session_lock_failure'));
var_dump(ini_get('ephpm.session_lock_backoff_min_ms'));
var_dump(ini_set('ephpm.session_lock_wait_ms', '-1'));
var_dump(ini_set('ephpm.session_lock_wait_ms', '250'), ini_get('ephpm.session_lock_wait_ms'));
var_dump(ini_set('ephpm.session_lock_failure', 'readonly'), ini_get('ephpm.session_lock_failure'));
var_dump(ini_set('ephpm.session_lock_backoff_max_ms', '5'));  // below the minimum (10)
?>
--EXPECTF--
Warning: Invalid ephpm.session_lock_ttl_ms value "0": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping the default in Unknown on line 0

Warning: Invalid ephpm.session_lock_backoff_min_ms value "-5": must be a whole number of milliseconds from 1 to 4611686018427387903 (the longest TTL the store accepts); keeping the default in Unknown on line 0

Warning: Invalid ephpm.session_lock_failure value "maybe": must be proceed, fail or readonly; keeping the default in Unknown on line 0
string(5) "30000"
string(7) "proceed"
string(2) "10"

Warning: Invalid ephpm.session_lock_wait_ms value "-1": must be a whole number of milliseconds from 0 to 4611686018427387903 (the longest TTL the store accepts); keeping 30000 in %s on line %d
bool(false)
string(5) "30000"
string(3) "250"
string(7) "proceed"
string(8) "readonly"

Warning: Invalid ephpm.session_lock_backoff_max_ms value "5": must be at least ephpm.session_lock_backoff_min_ms (10); keeping 100 in %s on line %d
bool(false)
