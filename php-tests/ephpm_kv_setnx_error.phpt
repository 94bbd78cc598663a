--TEST--
ephpm_kv_setnx(): argument errors, TTL range and ephpm.max_value_size (strict types)
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

echo "-- wrong types\n";
show(fn() => ephpm_kv_setnx(['k'], 'v'));
show(fn() => ephpm_kv_setnx('k', new stdClass));
show(fn() => ephpm_kv_setnx(1, 'v'));
show(fn() => ephpm_kv_setnx('k', 1));
show(fn() => ephpm_kv_setnx('k', 'v', '1'));
show(fn() => ephpm_kv_setnx('k', 'v', null));

echo "-- argument count\n";
show(fn() => ephpm_kv_setnx());
show(fn() => ephpm_kv_setnx('k', 'v', 1, 2));

echo "-- key length\n";
show(fn() => ephpm_kv_setnx('', 'v'));
show(fn() => ephpm_kv_setnx(str_repeat('x', 65537), 'v'));
show(fn() => ephpm_kv_setnx(str_repeat('x', 65536), 'v'));

echo "-- TTL range\n";
show(fn() => ephpm_kv_setnx('t', 'v', -5));
show(fn() => ephpm_kv_setnx('t', 'v', PHP_INT_MAX));
show(fn() => ephpm_kv_setnx('t', 'v', intdiv(PHP_INT_MAX, 1000)));
show(fn() => ephpm_kv_exists('t'));

echo "-- value length\n";
show(fn() => ephpm_kv_setnx('v', '123456789'));
show(fn() => ephpm_kv_exists('v'));
show(fn() => ephpm_kv_setnx('v', '12345678'));
show(fn() => ephpm_kv_get('v'));
?>
--EXPECT--
-- wrong types
TypeError: ephpm_kv_setnx(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_setnx(): Argument #2 ($value) must be of type string, stdClass given
TypeError: ephpm_kv_setnx(): Argument #1 ($key) must be of type string, int given
TypeError: ephpm_kv_setnx(): Argument #2 ($value) must be of type string, int given
TypeError: ephpm_kv_setnx(): Argument #3 ($ttl) must be of type int, string given
TypeError: ephpm_kv_setnx(): Argument #3 ($ttl) must be of type int, null given
-- argument count
ArgumentCountError: ephpm_kv_setnx() expects at least 2 arguments, 0 given
ArgumentCountError: ephpm_kv_setnx() expects at most 3 arguments, 4 given
-- key length
ValueError: ephpm_kv_setnx(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_setnx(): Argument #1 ($key) must not be longer than 65536 bytes
bool(true)
-- TTL range
ValueError: ephpm_kv_setnx(): Argument #3 ($ttl) must be greater than or equal to 0
ValueError: ephpm_kv_setnx(): Argument #3 ($ttl) must be less than or equal to 4611686018427387
ValueError: ephpm_kv_setnx(): Argument #3 ($ttl) must be less than or equal to 4611686018427387
bool(false)
-- value length
ValueError: ephpm_kv_setnx(): Argument #2 ($value) must not be longer than 8 bytes (ephpm.max_value_size)
bool(false)
bool(true)
string(8) "12345678"
