--TEST--
ephpm_kv_wait(): argument errors, negative version or timeout (strict types)
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
show(fn() => ephpm_kv_wait([], 0, 0));
show(fn() => ephpm_kv_wait(new stdClass, 0, 0));
show(fn() => ephpm_kv_wait(1, 0, 0));
show(fn() => ephpm_kv_wait('k', '0', 0));
show(fn() => ephpm_kv_wait('k', 0, '10'));
show(fn() => ephpm_kv_wait('k', 0, 1.5));
show(fn() => ephpm_kv_wait('k', []));
show(fn() => ephpm_kv_wait('k', 0));
show(fn() => ephpm_kv_wait('k', 0, 0, 0));

echo "-- key length\n";
show(fn() => ephpm_kv_wait('', 0, 0));
show(fn() => ephpm_kv_wait(str_repeat('w', 65537), 0, 0));

echo "-- ranges\n";
show(fn() => ephpm_kv_wait('k', -1, 0));
show(fn() => ephpm_kv_wait('k', PHP_INT_MIN, 0));
show(fn() => ephpm_kv_wait('k', 0, -1));
show(fn() => ephpm_kv_wait('k', 0, PHP_INT_MIN));
show(fn() => ephpm_kv_wait('k', -1, -1));
?>
--EXPECT--
-- wrong types
TypeError: ephpm_kv_wait(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_wait(): Argument #1 ($key) must be of type string, stdClass given
TypeError: ephpm_kv_wait(): Argument #1 ($key) must be of type string, int given
TypeError: ephpm_kv_wait(): Argument #2 ($last_version) must be of type int, string given
TypeError: ephpm_kv_wait(): Argument #3 ($timeout_ms) must be of type int, string given
TypeError: ephpm_kv_wait(): Argument #3 ($timeout_ms) must be of type int, float given
ArgumentCountError: ephpm_kv_wait() expects exactly 3 arguments, 2 given
ArgumentCountError: ephpm_kv_wait() expects exactly 3 arguments, 2 given
ArgumentCountError: ephpm_kv_wait() expects exactly 3 arguments, 4 given
-- key length
ValueError: ephpm_kv_wait(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_wait(): Argument #1 ($key) must not be longer than 65536 bytes
-- ranges
ValueError: ephpm_kv_wait(): Argument #2 ($last_version) must be greater than or equal to 0
ValueError: ephpm_kv_wait(): Argument #2 ($last_version) must be greater than or equal to 0
ValueError: ephpm_kv_wait(): Argument #3 ($timeout_ms) must be greater than or equal to 0
ValueError: ephpm_kv_wait(): Argument #3 ($timeout_ms) must be greater than or equal to 0
ValueError: ephpm_kv_wait(): Argument #2 ($last_version) must be greater than or equal to 0
