--TEST--
Ephpm\Lock: a fatal error releases the locks the request holds (test build)
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!function_exists('ephpm_test_check_at_request_end')) die('skip test build only'); ?>
--INI--
memory_limit=16M
--FILE--
<?php
use Ephpm\Lock;

class HoldsOne {
    public ?Lock $lock;
    function __construct() { $this->lock = Lock::acquire('job', 30); }
    function __destruct() { echo "never: destructors do not run after a fatal error\n"; }
}
$h = new HoldsOne;
ephpm_test_check_at_request_end('job');
echo "held: ", var_export(ephpm_kv_exists('job'), true), "\n";
$blow = str_repeat('x', 64 * 1024 * 1024);
?>
--EXPECTF--
held: true

Fatal error: Allowed memory size of %d bytes exhausted %s
at request end: job is free
