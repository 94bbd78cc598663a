--TEST--
session lock: a release during a wait wakes the waiter at once, not at the end of its step
--SKIPIF--
<?php if (!function_exists('ephpm_test_session_trace')) die('skip test build only'); ?>
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
ephpm.session_lock_wait_ms=30000
ephpm.session_lock_backoff_min_ms=10000
ephpm.session_lock_backoff_max_ms=10000
--FILE--
<?php
// The holder releases 200 ms into a 10 s backoff step.
ephpm_kv_set('session_lock:{wake1}', 'foreign-token');
ephpm_test_delete_after('session_lock:{wake1}', 200);
ephpm_test_session_trace(true);
session_id('wake1');
var_dump(session_start());
$trace = ephpm_test_session_trace_get();
ephpm_test_session_trace(false);
// probe (woken at once), then the 10 s step, woken by the release
var_dump(count($trace));
var_dump($trace[1]['timeout_ms'], $trace[1]['woken']);
var_dump((bool)preg_match('/^[0-9a-f]{32}$/', ephpm_kv_get('session_lock:{wake1}')));
var_dump(ephpm_kv_info()['session_lock_timeouts']);
session_write_close();
?>
--EXPECT--
bool(true)
int(2)
int(10000)
bool(true)
bool(true)
int(0)
