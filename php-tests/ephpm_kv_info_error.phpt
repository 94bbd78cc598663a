--TEST--
ephpm_kv_info(): takes no arguments
--EXTENSIONS--
ephpm
--FILE--
<?php
try {
    ephpm_kv_info('keys');
} catch (ArgumentCountError $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
try {
    ephpm_kv_info(...[1, 2]);
} catch (ArgumentCountError $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
var_dump(count(ephpm_kv_info()));
?>
--EXPECT--
ArgumentCountError: ephpm_kv_info() expects exactly 0 arguments, 1 given
ArgumentCountError: ephpm_kv_info() expects exactly 0 arguments, 2 given
int(43)
