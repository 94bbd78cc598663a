--TEST--
ephpm_kv_pttl(): argument errors (strict types)
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

show(fn() => ephpm_kv_pttl(['k']));
show(fn() => ephpm_kv_pttl(new ArrayObject()));
show(fn() => ephpm_kv_pttl(1.0));
show(fn() => ephpm_kv_pttl());
show(fn() => ephpm_kv_pttl(''));
show(fn() => ephpm_kv_pttl(str_repeat('t', 65537)));
show(fn() => ephpm_kv_pttl(str_repeat('t', 65536)));
?>
--EXPECT--
TypeError: ephpm_kv_pttl(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_pttl(): Argument #1 ($key) must be of type string, ArrayObject given
TypeError: ephpm_kv_pttl(): Argument #1 ($key) must be of type string, float given
ArgumentCountError: ephpm_kv_pttl() expects exactly 1 argument, 0 given
ValueError: ephpm_kv_pttl(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_pttl(): Argument #1 ($key) must not be longer than 65536 bytes
int(-2)
