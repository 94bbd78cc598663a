--TEST--
ephpm_kv_incr(): argument errors, non-integer values and overflow keep the value (strict types)
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
show(fn() => ephpm_kv_incr([]));
show(fn() => ephpm_kv_incr(new stdClass));
show(fn() => ephpm_kv_incr(3));
show(fn() => ephpm_kv_incr());
show(fn() => ephpm_kv_incr('a', 'b'));

echo "-- key length\n";
show(fn() => ephpm_kv_incr(''));
show(fn() => ephpm_kv_incr(str_repeat('i', 65537)));
show(fn() => ephpm_kv_incr(str_repeat('i', 65536)));

echo "-- values that are not canonical int64 text\n";
foreach (['abc', '', ' 1', '1 ', '01', '+1', '-0', '1.5', '1e3', "1\0", '0x10',
          '9223372036854775808', '-9223372036854775809'] as $v) {
    ephpm_kv_set('v', $v);
    show(fn() => ephpm_kv_incr('v'));
    var_dump(ephpm_kv_get('v') === $v);
}

echo "-- overflow\n";
ephpm_kv_set('max', (string)PHP_INT_MAX);
show(fn() => ephpm_kv_incr('max'));
show(fn() => ephpm_kv_get('max'));
ephpm_kv_set('max', (string)(PHP_INT_MAX - 1));
show(fn() => ephpm_kv_incr('max'));
show(fn() => ephpm_kv_incr('max'));
show(fn() => ephpm_kv_get('max'));
?>
--EXPECT--
-- wrong types
TypeError: ephpm_kv_incr(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_incr(): Argument #1 ($key) must be of type string, stdClass given
TypeError: ephpm_kv_incr(): Argument #1 ($key) must be of type string, int given
ArgumentCountError: ephpm_kv_incr() expects exactly 1 argument, 0 given
ArgumentCountError: ephpm_kv_incr() expects exactly 1 argument, 2 given
-- key length
ValueError: ephpm_kv_incr(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_incr(): Argument #1 ($key) must not be longer than 65536 bytes
int(1)
-- values that are not canonical int64 text
Error: The value is not an integer or out of range
bool(true)
Error: The value is not an integer or out of range
bool(true)
Error: The value is not an integer or out of range
bool(true)
Error: The value is not an integer or out of range
bool(true)
Error: The value is not an integer or out of range
bool(true)
Error: The value is not an integer or out of range
bool(true)
Error: The value is not an integer or out of range
bool(true)
Error: The value is not an integer or out of range
bool(true)
Error: The value is not an integer or out of range
bool(true)
Error: The value is not an integer or out of range
bool(true)
Error: The value is not an integer or out of range
bool(true)
Error: The value is not an integer or out of range
bool(true)
Error: The value is not an integer or out of range
bool(true)
-- overflow
Error: Increment or decrement would overflow
string(19) "9223372036854775807"
int(9223372036854775807)
Error: Increment or decrement would overflow
string(19) "9223372036854775807"
