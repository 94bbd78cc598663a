--TEST--
ephpm_kv_keys(): argument errors (strict types)
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

ephpm_kv_set('1', 'v');
show(fn() => ephpm_kv_keys([]));
show(fn() => ephpm_kv_keys(new stdClass));
show(fn() => ephpm_kv_keys(1));
show(fn() => ephpm_kv_keys(null));
show(fn() => ephpm_kv_keys('*', '*'));
// an empty pattern is allowed, and matches no key (keys are never empty)
show(fn() => ephpm_kv_keys(''));
?>
--EXPECT--
TypeError: ephpm_kv_keys(): Argument #1 ($pattern) must be of type string, array given
TypeError: ephpm_kv_keys(): Argument #1 ($pattern) must be of type string, stdClass given
TypeError: ephpm_kv_keys(): Argument #1 ($pattern) must be of type string, int given
TypeError: ephpm_kv_keys(): Argument #1 ($pattern) must be of type string, null given
ArgumentCountError: ephpm_kv_keys() expects at most 1 argument, 2 given
array(0) {
}
