--TEST--
ephpm_kv_set_fenced(): argument errors, fence and TTL ranges, ephpm.max_value_size (strict types)
--EXTENSIONS--
ephpm
--INI--
ephpm.max_value_size=8
--FILE--
<?php
declare(strict_types=1);

function show(callable $f): void {
    try {
        var_dump($f());
    } catch (Throwable $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}

echo "-- wrong types and counts\n";
show(fn() => ephpm_kv_set_fenced(['k'], 'v', 1));
show(fn() => ephpm_kv_set_fenced('k', 1, 1));
show(fn() => ephpm_kv_set_fenced('k', 'v', '1'));
show(fn() => ephpm_kv_set_fenced('k', 'v', 1.5));
show(fn() => ephpm_kv_set_fenced('k', 'v', 1, null));
show(fn() => ephpm_kv_set_fenced('k', 'v'));
show(fn() => ephpm_kv_set_fenced('k', 'v', 1, 0, 0));
echo "-- key\n";
show(fn() => ephpm_kv_set_fenced('', 'v', 1));
show(fn() => ephpm_kv_set_fenced(str_repeat('x', 65537), 'v', 1));
echo "-- fence\n";
show(fn() => ephpm_kv_set_fenced('k', 'v', 0));
show(fn() => ephpm_kv_set_fenced('k', 'v', -1));
show(fn() => ephpm_kv_set_fenced('k', 'v', PHP_INT_MIN));
show(fn() => ephpm_kv_set_fenced('k', 'v', PHP_INT_MAX));
echo "-- TTL\n";
show(fn() => ephpm_kv_set_fenced('t', 'v', 1, -1));
show(fn() => ephpm_kv_set_fenced('t', 'v', 1, PHP_INT_MAX));
show(fn() => ephpm_kv_exists('t'));
echo "-- value length\n";
show(fn() => ephpm_kv_set_fenced('v', '123456789', 1));
show(fn() => ephpm_kv_exists('v'));
show(fn() => ephpm_kv_set_fenced('v', '12345678', 1));
?>
--EXPECT--
-- wrong types and counts
TypeError: ephpm_kv_set_fenced(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_set_fenced(): Argument #2 ($value) must be of type string, int given
TypeError: ephpm_kv_set_fenced(): Argument #3 ($fence) must be of type int, string given
TypeError: ephpm_kv_set_fenced(): Argument #3 ($fence) must be of type int, float given
TypeError: ephpm_kv_set_fenced(): Argument #4 ($ttl) must be of type int, null given
ArgumentCountError: ephpm_kv_set_fenced() expects at least 3 arguments, 2 given
ArgumentCountError: ephpm_kv_set_fenced() expects at most 4 arguments, 5 given
-- key
ValueError: ephpm_kv_set_fenced(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_set_fenced(): Argument #1 ($key) must not be longer than 65536 bytes
-- fence
ValueError: ephpm_kv_set_fenced(): Argument #3 ($fence) must be greater than 0
ValueError: ephpm_kv_set_fenced(): Argument #3 ($fence) must be greater than 0
ValueError: ephpm_kv_set_fenced(): Argument #3 ($fence) must be greater than 0
bool(true)
-- TTL
ValueError: ephpm_kv_set_fenced(): Argument #4 ($ttl) must be greater than or equal to 0
ValueError: ephpm_kv_set_fenced(): Argument #4 ($ttl) must be less than or equal to 4611686018427387
bool(false)
-- value length
ValueError: ephpm_kv_set_fenced(): Argument #2 ($value) must not be longer than 8 bytes (ephpm.max_value_size)
bool(false)
bool(true)
