--TEST--
ephpm_kv_persist(): argument errors (strict types)
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

ephpm_kv_set('k', 'v', 100);
show(fn() => ephpm_kv_persist([]));
show(fn() => ephpm_kv_persist(new stdClass));
show(fn() => ephpm_kv_persist(1));
show(fn() => ephpm_kv_persist());
show(fn() => ephpm_kv_persist('k', 'k'));
show(fn() => ephpm_kv_persist(''));
show(fn() => ephpm_kv_persist(str_repeat('p', 65537)));
show(fn() => ephpm_kv_persist(str_repeat('p', 65536)));
show(fn() => ephpm_kv_ttl('k'));
?>
--EXPECT--
TypeError: ephpm_kv_persist(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_persist(): Argument #1 ($key) must be of type string, stdClass given
TypeError: ephpm_kv_persist(): Argument #1 ($key) must be of type string, int given
ArgumentCountError: ephpm_kv_persist() expects exactly 1 argument, 0 given
ArgumentCountError: ephpm_kv_persist() expects exactly 1 argument, 2 given
ValueError: ephpm_kv_persist(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_persist(): Argument #1 ($key) must not be longer than 65536 bytes
bool(false)
int(100)
