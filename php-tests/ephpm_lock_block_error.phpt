--TEST--
Ephpm\Lock::block(): argument errors, TTL and wait ranges (strict types)
--EXTENSIONS--
ephpm
--FILE--
<?php
declare(strict_types=1);
use Ephpm\Lock;

function show(callable $f): void {
    try {
        var_dump($f());
    } catch (Throwable $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}

show(fn() => Lock::block());
show(fn() => Lock::block('n', 1.0, 1.0, 1));
show(fn() => Lock::block('n', 1.0, 'x'));
show(fn() => Lock::block(''));
show(fn() => Lock::block(str_repeat('x', 65537)));
show(fn() => Lock::block('n', 0.0));
show(fn() => Lock::block('n', NAN));
show(fn() => Lock::block('n', 1.0, -0.001));
show(fn() => Lock::block('n', 1.0, NAN));
show(fn() => Lock::block('n', 1.0, INF));
show(fn() => Lock::block('n', 1.0, 1e300));
show(fn() => ephpm_kv_exists('n'));
?>
--EXPECT--
ArgumentCountError: Ephpm\Lock::block() expects at least 1 argument, 0 given
ArgumentCountError: Ephpm\Lock::block() expects at most 3 arguments, 4 given
TypeError: Ephpm\Lock::block(): Argument #3 ($wait) must be of type float, string given
ValueError: Ephpm\Lock::block(): Argument #1 ($name) must not be empty
ValueError: Ephpm\Lock::block(): Argument #1 ($name) must not be longer than 65536 bytes
ValueError: Ephpm\Lock::block(): Argument #2 ($ttl) must be greater than 0
ValueError: Ephpm\Lock::block(): Argument #2 ($ttl) must be a finite number
ValueError: Ephpm\Lock::block(): Argument #3 ($wait) must be greater than or equal to 0
ValueError: Ephpm\Lock::block(): Argument #3 ($wait) must be a finite number
ValueError: Ephpm\Lock::block(): Argument #3 ($wait) must be a finite number
ValueError: Ephpm\Lock::block(): Argument #3 ($wait) must be less than or equal to 4611686018427387
bool(false)
