--TEST--
ephpm_kv_exists(): argument errors (strict types)
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

show(fn() => ephpm_kv_exists([1]));
show(fn() => ephpm_kv_exists(new stdClass));
show(fn() => ephpm_kv_exists(5));
show(fn() => ephpm_kv_exists(false));
show(fn() => ephpm_kv_exists());
show(fn() => ephpm_kv_exists('a', 'b'));
show(fn() => ephpm_kv_exists(''));
show(fn() => ephpm_kv_exists(str_repeat('e', 65537)));
show(fn() => ephpm_kv_exists(str_repeat('e', 65536)));
?>
--EXPECT--
TypeError: ephpm_kv_exists(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_exists(): Argument #1 ($key) must be of type string, stdClass given
TypeError: ephpm_kv_exists(): Argument #1 ($key) must be of type string, int given
TypeError: ephpm_kv_exists(): Argument #1 ($key) must be of type string, bool given
ArgumentCountError: ephpm_kv_exists() expects exactly 1 argument, 0 given
ArgumentCountError: ephpm_kv_exists() expects exactly 1 argument, 2 given
ValueError: ephpm_kv_exists(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_exists(): Argument #1 ($key) must not be longer than 65536 bytes
bool(false)
