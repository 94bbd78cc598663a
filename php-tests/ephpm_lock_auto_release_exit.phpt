--TEST--
Ephpm\Lock: exit() releases the locks the request holds (test build)
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!function_exists('ephpm_test_check_at_request_end')) die('skip test build only'); ?>
--FILE--
<?php
use Ephpm\Lock;

function deep(): void {
    static $l;
    $l = Lock::acquire('job', 30);
    exit("exit with the lock held\n");
}
ephpm_test_check_at_request_end('job');
deep();
?>
--EXPECT--
exit with the lock held
at request end: job is free
