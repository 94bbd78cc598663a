--TEST--
ephpm_kv_mget(): non-string and empty elements are refused (strict types)
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
echo "-- the argument itself\n";
show(fn() => ephpm_kv_mget('k'));
show(fn() => ephpm_kv_mget(new ArrayObject(['k'])));
show(fn() => ephpm_kv_mget(null));
show(fn() => ephpm_kv_mget());
show(fn() => ephpm_kv_mget(['k'], ['k']));

echo "-- its elements\n";
show(fn() => ephpm_kv_mget(['k', ['nested']]));
show(fn() => ephpm_kv_mget([new stdClass]));
show(fn() => ephpm_kv_mget(['k', null]));
show(fn() => ephpm_kv_mget([1.5]));
show(fn() => ephpm_kv_mget([true]));
show(fn() => ephpm_kv_mget([1]));                  // strict: no int to string

echo "-- key length\n";
show(fn() => ephpm_kv_mget(['k', '']));
show(fn() => ephpm_kv_mget([str_repeat('m', 65537)]));
show(fn() => ephpm_kv_mget([str_repeat('m', 65536), 'k']));
?>
--EXPECT--
-- the argument itself
TypeError: ephpm_kv_mget(): Argument #1 ($keys) must be of type array, string given
TypeError: ephpm_kv_mget(): Argument #1 ($keys) must be of type array, ArrayObject given
TypeError: ephpm_kv_mget(): Argument #1 ($keys) must be of type array, null given
ArgumentCountError: ephpm_kv_mget() expects exactly 1 argument, 0 given
ArgumentCountError: ephpm_kv_mget() expects exactly 1 argument, 2 given
-- its elements
TypeError: ephpm_kv_mget(): Argument #1 ($keys) must contain only strings, array given
TypeError: ephpm_kv_mget(): Argument #1 ($keys) must contain only strings, stdClass given
TypeError: ephpm_kv_mget(): Argument #1 ($keys) must contain only strings, null given
TypeError: ephpm_kv_mget(): Argument #1 ($keys) must contain only strings, float given
TypeError: ephpm_kv_mget(): Argument #1 ($keys) must contain only strings, bool given
TypeError: ephpm_kv_mget(): Argument #1 ($keys) must contain only strings, int given
-- key length
ValueError: ephpm_kv_mget(): Argument #1 ($keys) must contain only keys of 1 to 65536 bytes
ValueError: ephpm_kv_mget(): Argument #1 ($keys) must contain only keys of 1 to 65536 bytes
array(2) {
  [0]=>
  NULL
  [1]=>
  string(1) "v"
}
