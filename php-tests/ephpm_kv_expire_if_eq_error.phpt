--TEST--
ephpm_kv_expire_if_eq(): argument errors and the TTL range of ephpm_kv_pexpire (strict types)
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

show(fn() => ephpm_kv_expire_if_eq('k', 't'));
show(fn() => ephpm_kv_expire_if_eq('k', 't', 1, 2));
show(fn() => ephpm_kv_expire_if_eq(['k'], 't', 1));
show(fn() => ephpm_kv_expire_if_eq('k', 1, 1));
show(fn() => ephpm_kv_expire_if_eq('k', 't', '1'));
show(fn() => ephpm_kv_expire_if_eq('k', 't', 1.5));
show(fn() => ephpm_kv_expire_if_eq('', 't', 1));
show(fn() => ephpm_kv_expire_if_eq(str_repeat('x', 65537), 't', 1));
ephpm_kv_set('k', 't');
show(fn() => ephpm_kv_expire_if_eq('k', 't', -1));
show(fn() => ephpm_kv_expire_if_eq('k', 't', PHP_INT_MIN));
show(fn() => ephpm_kv_expire_if_eq('k', 't', PHP_INT_MAX));
show(fn() => ephpm_kv_ttl('k'));
show(fn() => ephpm_kv_expire_if_eq('k', 't', intdiv(PHP_INT_MAX, 2)));
show(fn() => ephpm_kv_ttl('k') > 0);
?>
--EXPECT--
ArgumentCountError: ephpm_kv_expire_if_eq() expects exactly 3 arguments, 2 given
ArgumentCountError: ephpm_kv_expire_if_eq() expects exactly 3 arguments, 4 given
TypeError: ephpm_kv_expire_if_eq(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_expire_if_eq(): Argument #2 ($token) must be of type string, int given
TypeError: ephpm_kv_expire_if_eq(): Argument #3 ($ttl_ms) must be of type int, string given
TypeError: ephpm_kv_expire_if_eq(): Argument #3 ($ttl_ms) must be of type int, float given
ValueError: ephpm_kv_expire_if_eq(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_expire_if_eq(): Argument #1 ($key) must not be longer than 65536 bytes
ValueError: ephpm_kv_expire_if_eq(): Argument #3 ($ttl_ms) must be greater than or equal to 0
ValueError: ephpm_kv_expire_if_eq(): Argument #3 ($ttl_ms) must be greater than or equal to 0
ValueError: ephpm_kv_expire_if_eq(): Argument #3 ($ttl_ms) must be less than or equal to 4611686018427387903
int(-1)
bool(true)
bool(true)
