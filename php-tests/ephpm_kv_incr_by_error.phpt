--TEST--
ephpm_kv_incr_by(): argument errors, overflow both ways keeps the value (strict types)
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
show(fn() => ephpm_kv_incr_by([], 1));
show(fn() => ephpm_kv_incr_by('k', []));
show(fn() => ephpm_kv_incr_by('k', '5'));
show(fn() => ephpm_kv_incr_by('k', 1.5));
show(fn() => ephpm_kv_incr_by('k', new stdClass));
show(fn() => ephpm_kv_incr_by(5, 1));
show(fn() => ephpm_kv_incr_by('k'));
show(fn() => ephpm_kv_incr_by('k', 1, 2));
show(fn() => ephpm_kv_exists('k'));

echo "-- key length\n";
show(fn() => ephpm_kv_incr_by('', 1));
show(fn() => ephpm_kv_incr_by(str_repeat('k', 65537), 1));

echo "-- overflow\n";
ephpm_kv_set('big', '100');
show(fn() => ephpm_kv_incr_by('big', PHP_INT_MAX));
show(fn() => ephpm_kv_incr_by('big', PHP_INT_MAX - 100));
show(fn() => ephpm_kv_incr_by('big', 1));
ephpm_kv_set('small', '-100');
show(fn() => ephpm_kv_incr_by('small', PHP_INT_MIN));
show(fn() => ephpm_kv_incr_by('small', PHP_INT_MIN + 100));
show(fn() => ephpm_kv_incr_by('small', -1));
show(fn() => ephpm_kv_get('small'));

echo "-- not an integer\n";
ephpm_kv_set('text', '12abc');
show(fn() => ephpm_kv_incr_by('text', 1));
show(fn() => ephpm_kv_get('text'));
?>
--EXPECT--
-- wrong types
TypeError: ephpm_kv_incr_by(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_incr_by(): Argument #2 ($delta) must be of type int, array given
TypeError: ephpm_kv_incr_by(): Argument #2 ($delta) must be of type int, string given
TypeError: ephpm_kv_incr_by(): Argument #2 ($delta) must be of type int, float given
TypeError: ephpm_kv_incr_by(): Argument #2 ($delta) must be of type int, stdClass given
TypeError: ephpm_kv_incr_by(): Argument #1 ($key) must be of type string, int given
ArgumentCountError: ephpm_kv_incr_by() expects exactly 2 arguments, 1 given
ArgumentCountError: ephpm_kv_incr_by() expects exactly 2 arguments, 3 given
bool(false)
-- key length
ValueError: ephpm_kv_incr_by(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_incr_by(): Argument #1 ($key) must not be longer than 65536 bytes
-- overflow
Error: Increment or decrement would overflow
int(9223372036854775807)
Error: Increment or decrement would overflow
Error: Increment or decrement would overflow
int(-9223372036854775808)
Error: Increment or decrement would overflow
string(20) "-9223372036854775808"
-- not an integer
Error: The value is not an integer or out of range
string(5) "12abc"
