--TEST--
ephpm_kv_decr(): argument errors, non-integer values and underflow keep the value (strict types)
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

show(fn() => ephpm_kv_decr(['k']));
show(fn() => ephpm_kv_decr(new stdClass));
show(fn() => ephpm_kv_decr(-1));
show(fn() => ephpm_kv_decr());
show(fn() => ephpm_kv_decr(''));
show(fn() => ephpm_kv_decr(str_repeat('d', 65537)));

echo "-- not an integer\n";
ephpm_kv_set('v', 'ten');
show(fn() => ephpm_kv_decr('v'));
show(fn() => ephpm_kv_get('v'));

echo "-- below the lowest int64\n";
ephpm_kv_set('min', (string)PHP_INT_MIN);
show(fn() => ephpm_kv_decr('min'));
show(fn() => ephpm_kv_get('min'));
?>
--EXPECT--
TypeError: ephpm_kv_decr(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_decr(): Argument #1 ($key) must be of type string, stdClass given
TypeError: ephpm_kv_decr(): Argument #1 ($key) must be of type string, int given
ArgumentCountError: ephpm_kv_decr() expects exactly 1 argument, 0 given
ValueError: ephpm_kv_decr(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_decr(): Argument #1 ($key) must not be longer than 65536 bytes
-- not an integer
Error: The value is not an integer or out of range
string(3) "ten"
-- below the lowest int64
Error: Increment or decrement would overflow
string(20) "-9223372036854775808"
