--TEST--
session lock: the acquire loop waits 10, 20, 40, 80, 100 ... ms, within ephpm.session_lock_wait_ms
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
ephpm.session_lock_wait_ms=500
--FILE--
<?php
ephpm_kv_set('session_lock:{seq1}', 'foreign-token');
ephpm_test_session_trace(true);
session_id('seq1');
@session_start();
$trace = ephpm_test_session_trace_get();
ephpm_test_session_trace(false);
// The first wait only learns the holder's version (it returns at once);
// every other one is a full backoff step that timed out.
var_dump($trace[0]['woken']);
$steps = array_column(array_filter(array_slice($trace, 1), fn($w) => !$w['woken']), 'timeout_ms');
echo implode(', ', array_slice($steps, 0, -1)), "\n";
// The last step is what is left of the 500 ms budget.  The first wait's
// own time counts too: a millisecond or two on a slow (sanitized) build.
$last = end($steps);
var_dump($last > 0 && $last <= 50);
var_dump(array_sum($steps) <= 500 && array_sum($steps) >= 450);
var_dump(count($trace) === count($steps) + 1);
session_write_close();
?>
--EXPECT--
bool(true)
10, 20, 40, 80, 100, 100, 100
bool(true)
bool(true)
bool(true)
