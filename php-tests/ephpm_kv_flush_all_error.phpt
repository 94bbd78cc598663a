--TEST--
ephpm_kv_flush_all(): takes no arguments, and removes nothing when given some
--EXTENSIONS--
ephpm
--FILE--
<?php
ephpm_kv_set('k', 'v');
foreach ([['*'], [true], [null]] as $args) {
    try {
        var_dump(ephpm_kv_flush_all(...$args));
    } catch (ArgumentCountError $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}
var_dump(ephpm_kv_get('k'));
?>
--EXPECT--
ArgumentCountError: ephpm_kv_flush_all() expects exactly 0 arguments, 1 given
ArgumentCountError: ephpm_kv_flush_all() expects exactly 0 arguments, 1 given
ArgumentCountError: ephpm_kv_flush_all() expects exactly 0 arguments, 1 given
string(1) "v"
