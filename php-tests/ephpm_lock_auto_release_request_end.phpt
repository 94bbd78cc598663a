--TEST--
Ephpm\Lock: locks alive when the request ends (static, global, in a cycle) are released (test build)
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!function_exists('ephpm_test_check_at_request_end')) die('skip test build only'); ?>
--FILE--
<?php
use Ephpm\Lock;

function keep(): void {
    static $kept;
    $kept = Lock::acquire('job', 30);
}
keep();
$global = Lock::acquire('job2', 30);
$o = new stdClass;
$o->self = $o;
$o->lock = Lock::acquire('job3', 30);
unset($o);
register_shutdown_function(function () {
    echo "shutdown function: ", ephpm_kv_exists('job') ? "job held" : "job free", "\n";
});
ephpm_test_check_at_request_end('job');
echo "end of script\n";
?>
--EXPECT--
end of script
shutdown function: job held
at request end: job is free
