--TEST--
ephpm_kv_del_if_eq(): argument errors, a token longer than ephpm.max_value_size (strict types)
--EXTENSIONS--
ephpm
--INI--
ephpm.max_value_size=10
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

ephpm_kv_set('lock', 'token');
echo "-- wrong types\n";
show(fn() => ephpm_kv_del_if_eq([], 'token'));
show(fn() => ephpm_kv_del_if_eq('lock', ['token']));
show(fn() => ephpm_kv_del_if_eq('lock', new stdClass));
show(fn() => ephpm_kv_del_if_eq(1, 'token'));
show(fn() => ephpm_kv_del_if_eq('lock', 1));

echo "-- argument count\n";
show(fn() => ephpm_kv_del_if_eq('lock'));
show(fn() => ephpm_kv_del_if_eq('lock', 'token', 'extra'));

echo "-- key length\n";
show(fn() => ephpm_kv_del_if_eq('', 'token'));
show(fn() => ephpm_kv_del_if_eq(str_repeat('k', 65537), 'token'));
show(fn() => ephpm_kv_del_if_eq(str_repeat('k', 65536), 'token'));

echo "-- a token that no value could equal\n";
show(fn() => ephpm_kv_del_if_eq('lock', str_repeat('t', 11)));
show(fn() => ephpm_kv_del_if_eq('lock', str_repeat('t', 10)));

echo "-- the lock survived every error\n";
show(fn() => ephpm_kv_get('lock'));
?>
--EXPECT--
-- wrong types
TypeError: ephpm_kv_del_if_eq(): Argument #1 ($key) must be of type string, array given
TypeError: ephpm_kv_del_if_eq(): Argument #2 ($token) must be of type string, array given
TypeError: ephpm_kv_del_if_eq(): Argument #2 ($token) must be of type string, stdClass given
TypeError: ephpm_kv_del_if_eq(): Argument #1 ($key) must be of type string, int given
TypeError: ephpm_kv_del_if_eq(): Argument #2 ($token) must be of type string, int given
-- argument count
ArgumentCountError: ephpm_kv_del_if_eq() expects exactly 2 arguments, 1 given
ArgumentCountError: ephpm_kv_del_if_eq() expects exactly 2 arguments, 3 given
-- key length
ValueError: ephpm_kv_del_if_eq(): Argument #1 ($key) must not be empty
ValueError: ephpm_kv_del_if_eq(): Argument #1 ($key) must not be longer than 65536 bytes
bool(false)
-- a token that no value could equal
ValueError: ephpm_kv_del_if_eq(): Argument #2 ($token) must not be longer than 10 bytes (ephpm.max_value_size)
bool(false)
-- the lock survived every error
string(5) "token"
