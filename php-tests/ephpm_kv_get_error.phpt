--TEST--
ephpm_kv_get(): argument errors (strict types)
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

echo "-- wrong types\n";
show(fn() => ephpm_kv_get([]));
show(fn() => ephpm_kv_get(['k']));
show(fn() => ephpm_kv_get(new stdClass));
show(fn() => ephpm_kv_get(42));
show(fn() => ephpm_kv_get(1.5));
show(fn() => ephpm_kv_get(null));
show(fn() => ephpm_kv_get(true));

echo "-- argument count\n";
show(fn() => ephpm_kv_get());
show(fn() => ephpm_kv_get('a', 'b'));

echo "-- key length\n";
show(fn() => ephpm_kv_get(''));
show(fn() => ephpm_kv_get(str_repeat('k', 65537)));
show(fn() => ephpm_kv_get(str_repeat('k', 65536)));
var_dump(ephpm_kv_set(str_repeat('k', 65536), 'longest'));
show(fn() => ephpm_kv_get(str_repeat('k', 65536)));
?>
--EXPECT--
-- wrong types
TypeError: ephpm_kv_get(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_get(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_get(): Argument #1 ($key) must be of type string, stdClass given
TypeError: ephpm_kv_get(): Argument #1 ($key) must be of type string, int given
TypeError: ephpm_kv_get(): Argument #1 ($key) must be of type string, float given
TypeError: ephpm_kv_get(): Argument #1 ($key) must be of type string, null given
TypeError: ephpm_kv_get(): Argument #1 ($key) must be of type string, bool given
-- argument count
ArgumentCountError: ephpm_kv_get() expects exactly 1 argument, 0 given
ArgumentCountError: ephpm_kv_get() expects exactly 1 argument, 2 given
-- key length
ValueError: ephpm_kv_get(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_get(): Argument #1 ($key) must not be longer than 65536 bytes
NULL
bool(true)
string(7) "longest"
