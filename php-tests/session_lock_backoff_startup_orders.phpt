--TEST--
session lock: the backoff bounds at startup (-d, either order, either bound out of line, both) end up ordered, and ini_get() and the handler agree
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
--FILE--
<?php
/* Each case is a PHP process of its own, started with these -d settings on
 * top of the test's (the ini entries are registered in a fixed order, min
 * before max; the order of the -d flags must not matter either). */
$cases = [
    ['min' => 500],
    ['max' => 5],
    ['min' => 500, 'max' => 50],
    ['max' => 50, 'min' => 500],
    ['min' => 50, 'max' => 500],
    ['max' => 500, 'min' => 50],
    ['min' => 200, 'max' => 200],
];
$code = 'require ' . var_export(__DIR__ . '/session_backoff.inc', true) . ';'
      . ' echo bounds(), ": ", backoff_steps("b", 500), "\n";';
foreach ($cases as $case) {
    $args = '';
    $label = [];
    foreach ($case as $bound => $ms) {
        $args .= " -d ephpm.session_lock_backoff_{$bound}_ms=$ms";
        $label[] = "$bound=$ms";
    }
    echo "-- ", implode(' ', $label), "\n";
    $cmd = escapeshellarg(getenv('TEST_PHP_EXECUTABLE')) . ' ' . getenv('TEST_PHP_EXTRA_ARGS')
         . $args . ' -r ' . escapeshellarg($code) . ' 2>&1';
    echo trim(shell_exec($cmd)), "\n";
}
?>
--EXPECT--
-- min=500
Warning: Invalid ephpm.session_lock_backoff_min_ms value "500": must be at most ephpm.session_lock_backoff_max_ms (100); keeping 10 in Unknown on line 0
10..100: 10, 20, 40, 80, 100...
-- max=5
Warning: Invalid ephpm.session_lock_backoff_max_ms value "5": must be at least ephpm.session_lock_backoff_min_ms (10); keeping 100 in Unknown on line 0
10..100: 10, 20, 40, 80, 100...
-- min=500 max=50
Warning: Invalid ephpm.session_lock_backoff_min_ms and ephpm.session_lock_backoff_max_ms values "500" and "50": the minimum must not exceed the maximum; keeping 10 and 100 in Unknown on line 0
10..100: 10, 20, 40, 80, 100...
-- max=50 min=500
Warning: Invalid ephpm.session_lock_backoff_min_ms and ephpm.session_lock_backoff_max_ms values "500" and "50": the minimum must not exceed the maximum; keeping 10 and 100 in Unknown on line 0
10..100: 10, 20, 40, 80, 100...
-- min=50 max=500
50..500: 50, 100, 200
-- max=500 min=50
50..500: 50, 100, 200
-- min=200 max=200
200..200: 200...
