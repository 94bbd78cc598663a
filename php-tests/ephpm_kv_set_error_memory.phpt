--TEST--
ephpm_kv_set(): a write refused by ephpm.memory_limit returns false with a warning and changes nothing
--EXTENSIONS--
ephpm
--INI--
ephpm.memory_limit=2K
--FILE--
<?php
var_dump(ephpm_kv_info()['memory_limit']);

$n = 0;
while (@ephpm_kv_set("key$n", str_repeat('v', 100))) {
    if (++$n > 100) break;   // the limit must stop us long before this
}
var_dump($n > 0 && $n < 100);
$before = ephpm_kv_info();
var_dump($before['memory_used'] <= 2048);

echo "-- the refused write, with its warning\n";
var_dump(ephpm_kv_set('one-more', str_repeat('v', 100)));
var_dump(ephpm_kv_exists('one-more'));

echo "-- growing an existing value is refused the same way; the old value stays\n";
var_dump(ephpm_kv_set('key0', str_repeat('w', 1500)));
var_dump(ephpm_kv_get('key0') === str_repeat('v', 100));

$after = ephpm_kv_info();
var_dump($after['keys'] === $before['keys'], $after['memory_used'] === $before['memory_used']);
var_dump($after['evicted']);

echo "-- after a delete there is room again\n";
var_dump(ephpm_kv_del('key1'));
var_dump(ephpm_kv_set('one-more', str_repeat('v', 100)));
var_dump(ephpm_kv_get('one-more') === str_repeat('v', 100));
?>
--EXPECTF--
int(2048)
bool(true)
bool(true)
-- the refused write, with its warning

Warning: ephpm_kv_set(): Out of memory: the store's memory limit of 2048 bytes (ephpm.memory_limit) is reached in %s on line %d
bool(false)
bool(false)
-- growing an existing value is refused the same way; the old value stays

Warning: ephpm_kv_set(): Out of memory: the store's memory limit of 2048 bytes (ephpm.memory_limit) is reached in %s on line %d
bool(false)
bool(true)
bool(true)
bool(true)
int(0)
-- after a delete there is room again
int(1)
bool(true)
bool(true)
