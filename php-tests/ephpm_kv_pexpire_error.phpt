--TEST--
ephpm_kv_pexpire(): argument errors and the TTL range (strict types)
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
show(fn() => ephpm_kv_pexpire(['k'], 1));
show(fn() => ephpm_kv_pexpire('k', '100'));
show(fn() => ephpm_kv_pexpire('k', null));
show(fn() => ephpm_kv_pexpire(new stdClass, 1));
show(fn() => ephpm_kv_pexpire(0, 1));
show(fn() => ephpm_kv_pexpire('k'));
show(fn() => ephpm_kv_pexpire('', 1));
show(fn() => ephpm_kv_pexpire(str_repeat('p', 65537), 1));
show(fn() => ephpm_kv_pexpire('k', -1));
show(fn() => ephpm_kv_pexpire('k', PHP_INT_MAX));
show(fn() => ephpm_kv_pexpire('k', 4611686018427387904));
show(fn() => ephpm_kv_pttl('k'));
show(fn() => ephpm_kv_pexpire('k', 4611686018427387903));
show(fn() => ephpm_kv_ttl('k'));
?>
--EXPECT--
TypeError: ephpm_kv_pexpire(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_pexpire(): Argument #2 ($ttl) must be of type int, string given
TypeError: ephpm_kv_pexpire(): Argument #2 ($ttl) must be of type int, null given
TypeError: ephpm_kv_pexpire(): Argument #1 ($key) must be of type string, stdClass given
TypeError: ephpm_kv_pexpire(): Argument #1 ($key) must be of type string, int given
ArgumentCountError: ephpm_kv_pexpire() expects exactly 2 arguments, 1 given
ValueError: ephpm_kv_pexpire(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_pexpire(): Argument #1 ($key) must not be longer than 65536 bytes
ValueError: ephpm_kv_pexpire(): Argument #2 ($ttl) must be greater than or equal to 0
ValueError: ephpm_kv_pexpire(): Argument #2 ($ttl) must be less than or equal to 4611686018427387903
ValueError: ephpm_kv_pexpire(): Argument #2 ($ttl) must be less than or equal to 4611686018427387903
int(-1)
bool(true)
int(4611686018427388)
