--TEST--
ephpm_kv_del(): argument errors (strict types)
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

ephpm_kv_set('1', 'one');
show(fn() => ephpm_kv_del([]));
show(fn() => ephpm_kv_del(new stdClass));
show(fn() => ephpm_kv_del(1));
show(fn() => ephpm_kv_get('1'));
show(fn() => ephpm_kv_del());
show(fn() => ephpm_kv_del('a', 'b'));
show(fn() => ephpm_kv_del(''));
show(fn() => ephpm_kv_del(str_repeat('d', 65537)));
show(fn() => ephpm_kv_del(str_repeat('d', 65536)));
?>
--EXPECT--
TypeError: ephpm_kv_del(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_del(): Argument #1 ($key) must be of type string, stdClass given
TypeError: ephpm_kv_del(): Argument #1 ($key) must be of type string, int given
string(3) "one"
ArgumentCountError: ephpm_kv_del() expects exactly 1 argument, 0 given
ArgumentCountError: ephpm_kv_del() expects exactly 1 argument, 2 given
ValueError: ephpm_kv_del(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_del(): Argument #1 ($key) must not be longer than 65536 bytes
int(0)
