--TEST--
ephpm_kv_ttl(): argument errors (strict types)
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

show(fn() => ephpm_kv_ttl([]));
show(fn() => ephpm_kv_ttl(new stdClass));
show(fn() => ephpm_kv_ttl(10));
show(fn() => ephpm_kv_ttl());
show(fn() => ephpm_kv_ttl('a', 'b'));
show(fn() => ephpm_kv_ttl(''));
show(fn() => ephpm_kv_ttl(str_repeat('t', 65537)));
show(fn() => ephpm_kv_ttl(str_repeat('t', 65536)));
?>
--EXPECT--
TypeError: ephpm_kv_ttl(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_ttl(): Argument #1 ($key) must be of type string, stdClass given
TypeError: ephpm_kv_ttl(): Argument #1 ($key) must be of type string, int given
ArgumentCountError: ephpm_kv_ttl() expects exactly 1 argument, 0 given
ArgumentCountError: ephpm_kv_ttl() expects exactly 1 argument, 2 given
ValueError: ephpm_kv_ttl(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_ttl(): Argument #1 ($key) must not be longer than 65536 bytes
int(-2)
