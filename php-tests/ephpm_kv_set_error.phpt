--TEST--
ephpm_kv_set(): argument errors, TTL range and ephpm.max_value_size (strict types)
--EXTENSIONS--
ephpm
--INI--
ephpm.max_value_size=16
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
show(fn() => ephpm_kv_set([], 'v'));
show(fn() => ephpm_kv_set(new stdClass, 'v'));
show(fn() => ephpm_kv_set('k', ['v']));
show(fn() => ephpm_kv_set('k', new ArrayObject()));
show(fn() => ephpm_kv_set(7, 'v'));
show(fn() => ephpm_kv_set('k', 7));
show(fn() => ephpm_kv_set('k', 'v', '10'));
show(fn() => ephpm_kv_set('k', 'v', 1.0));
show(fn() => ephpm_kv_set('k', 'v', []));

echo "-- argument count\n";
show(fn() => ephpm_kv_set('k'));
show(fn() => ephpm_kv_set('k', 'v', 0, 0));

echo "-- key length\n";
show(fn() => ephpm_kv_set('', 'v'));
show(fn() => ephpm_kv_set(str_repeat('k', 65537), 'v'));
show(fn() => ephpm_kv_set(str_repeat('k', 65536), 'v'));

echo "-- TTL range\n";
show(fn() => ephpm_kv_set('k', 'v', -1));
show(fn() => ephpm_kv_set('k', 'v', PHP_INT_MIN));
show(fn() => ephpm_kv_set('k', 'v', PHP_INT_MAX));
show(fn() => ephpm_kv_set('k', 'v', intdiv(PHP_INT_MAX, 1000)));
show(fn() => ephpm_kv_set('k', 'v', 4611686018427388));
show(fn() => ephpm_kv_set('k', 'v', 4611686018427387));
show(fn() => ephpm_kv_ttl('k'));

echo "-- value length: 16 bytes is the limit\n";
show(fn() => ephpm_kv_set('exact', str_repeat('v', 16)));
show(fn() => ephpm_kv_get('exact'));
show(fn() => ephpm_kv_set('over', str_repeat('v', 17)));
show(fn() => ephpm_kv_exists('over'));
echo "-- a refused overwrite keeps the old value\n";
show(fn() => ephpm_kv_set('exact', str_repeat('w', 1000)));
show(fn() => ephpm_kv_get('exact'));

var_dump(ephpm_kv_info()['keys']);
?>
--EXPECT--
-- wrong types
TypeError: ephpm_kv_set(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_set(): Argument #1 ($key) must be of type string, stdClass given
TypeError: ephpm_kv_set(): Argument #2 ($value) must be of type string, array given
TypeError: ephpm_kv_set(): Argument #2 ($value) must be of type string, ArrayObject given
TypeError: ephpm_kv_set(): Argument #1 ($key) must be of type string, int given
TypeError: ephpm_kv_set(): Argument #2 ($value) must be of type string, int given
TypeError: ephpm_kv_set(): Argument #3 ($ttl) must be of type int, string given
TypeError: ephpm_kv_set(): Argument #3 ($ttl) must be of type int, float given
TypeError: ephpm_kv_set(): Argument #3 ($ttl) must be of type int, array given
-- argument count
ArgumentCountError: ephpm_kv_set() expects at least 2 arguments, 1 given
ArgumentCountError: ephpm_kv_set() expects at most 3 arguments, 4 given
-- key length
ValueError: ephpm_kv_set(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_set(): Argument #1 ($key) must not be longer than 65536 bytes
bool(true)
-- TTL range
ValueError: ephpm_kv_set(): Argument #3 ($ttl) must be greater than or equal to 0
ValueError: ephpm_kv_set(): Argument #3 ($ttl) must be greater than or equal to 0
ValueError: ephpm_kv_set(): Argument #3 ($ttl) must be less than or equal to 4611686018427387
ValueError: ephpm_kv_set(): Argument #3 ($ttl) must be less than or equal to 4611686018427387
ValueError: ephpm_kv_set(): Argument #3 ($ttl) must be less than or equal to 4611686018427387
bool(true)
int(4611686018427387)
-- value length: 16 bytes is the limit
bool(true)
string(16) "vvvvvvvvvvvvvvvv"
ValueError: ephpm_kv_set(): Argument #2 ($value) must not be longer than 16 bytes (ephpm.max_value_size)
bool(false)
-- a refused overwrite keeps the old value
ValueError: ephpm_kv_set(): Argument #2 ($value) must not be longer than 16 bytes (ephpm.max_value_size)
string(16) "vvvvvvvvvvvvvvvv"
int(3)
