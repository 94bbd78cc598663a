--TEST--
ephpm_kv_incr(): a new counter refused by ephpm.memory_limit is false with a warning
--EXTENSIONS--
ephpm
--INI--
ephpm.memory_limit=2K
--FILE--
<?php
var_dump(ephpm_kv_incr('counter'));
// fill the store with big values, then with the smallest ones, until even
// those are refused
$n = 0;
foreach ([100, 1] as $size) {
    while (@ephpm_kv_set("f$n", str_repeat('f', $size))) {
        if (++$n > 100) break 2;
    }
}
var_dump($n > 0 && $n < 100);
var_dump(ephpm_kv_incr('another-counter'));
var_dump(ephpm_kv_exists('another-counter'));
// the existing counter still counts: its value does not grow past one byte here
var_dump(ephpm_kv_incr('counter'));
?>
--EXPECTF--
int(1)
bool(true)

Warning: ephpm_kv_incr(): Out of memory: the store's memory limit of 2048 bytes (ephpm.memory_limit) is reached in %s on line %d
bool(false)
bool(false)
int(2)
