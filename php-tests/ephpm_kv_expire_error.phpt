--TEST--
ephpm_kv_expire(): argument errors and the TTL range (strict types)
--EXTENSIONS--
ephpm
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

ephpm_kv_set('k', 'v');
echo "-- wrong types\n";
show(fn() => ephpm_kv_expire([], 1));
show(fn() => ephpm_kv_expire('k', []));
show(fn() => ephpm_kv_expire('k', '10'));
show(fn() => ephpm_kv_expire('k', 1.5));
show(fn() => ephpm_kv_expire(new stdClass, 1));
show(fn() => ephpm_kv_expire(1, 1));
show(fn() => ephpm_kv_expire('k'));
show(fn() => ephpm_kv_expire('k', 1, 1));

echo "-- key length\n";
show(fn() => ephpm_kv_expire('', 1));
show(fn() => ephpm_kv_expire(str_repeat('e', 65537), 1));

echo "-- TTL range\n";
show(fn() => ephpm_kv_expire('k', -1));
show(fn() => ephpm_kv_expire('k', PHP_INT_MIN));
show(fn() => ephpm_kv_expire('k', PHP_INT_MAX));
show(fn() => ephpm_kv_expire('k', intdiv(PHP_INT_MAX, 1000)));
show(fn() => ephpm_kv_expire('k', 4611686018427388));

echo "-- the key kept no TTL through all of that\n";
show(fn() => ephpm_kv_ttl('k'));
show(fn() => ephpm_kv_expire('k', 4611686018427387));
show(fn() => ephpm_kv_ttl('k'));
?>
--EXPECT--
-- wrong types
TypeError: ephpm_kv_expire(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_expire(): Argument #2 ($ttl) must be of type int, array given
TypeError: ephpm_kv_expire(): Argument #2 ($ttl) must be of type int, string given
TypeError: ephpm_kv_expire(): Argument #2 ($ttl) must be of type int, float given
TypeError: ephpm_kv_expire(): Argument #1 ($key) must be of type string, stdClass given
TypeError: ephpm_kv_expire(): Argument #1 ($key) must be of type string, int given
ArgumentCountError: ephpm_kv_expire() expects exactly 2 arguments, 1 given
ArgumentCountError: ephpm_kv_expire() expects exactly 2 arguments, 3 given
-- key length
ValueError: ephpm_kv_expire(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_expire(): Argument #1 ($key) must not be longer than 65536 bytes
-- TTL range
ValueError: ephpm_kv_expire(): Argument #2 ($ttl) must be greater than or equal to 0
ValueError: ephpm_kv_expire(): Argument #2 ($ttl) must be greater than or equal to 0
ValueError: ephpm_kv_expire(): Argument #2 ($ttl) must be less than or equal to 4611686018427387
ValueError: ephpm_kv_expire(): Argument #2 ($ttl) must be less than or equal to 4611686018427387
ValueError: ephpm_kv_expire(): Argument #2 ($ttl) must be less than or equal to 4611686018427387
-- the key kept no TTL through all of that
int(-1)
bool(true)
int(4611686018427387)
