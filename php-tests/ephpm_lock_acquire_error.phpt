--TEST--
Ephpm\Lock::acquire(): argument errors, name length and TTL range (strict types)
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

echo "-- wrong types\n";
show(fn() => Lock::acquire(['n']));
show(fn() => Lock::acquire(1));
show(fn() => Lock::acquire('n', '1'));
show(fn() => Lock::acquire('n', null));

echo "-- argument count\n";
show(fn() => Lock::acquire());
show(fn() => Lock::acquire('n', 1.0, 2.0));

echo "-- name length\n";
show(fn() => Lock::acquire(''));
show(fn() => Lock::acquire(str_repeat('x', 65537)));
show(fn() => Lock::acquire(str_repeat('x', 65536))->name() === str_repeat('x', 65536));

echo "-- TTL range\n";
show(fn() => Lock::acquire('t', 0.0));
show(fn() => Lock::acquire('t', -0.0));
show(fn() => Lock::acquire('t', -1.5));
show(fn() => Lock::acquire('t', NAN));
show(fn() => Lock::acquire('t', INF));
show(fn() => Lock::acquire('t', -INF));
show(fn() => Lock::acquire('t', 4611686018427388.0));
show(fn() => Lock::acquire('t', 1e300));
show(fn() => ephpm_kv_exists('t'));
$kept = null;
show(function () use (&$kept) { $kept = Lock::acquire('t', 4611686018427387.0); return $kept instanceof Lock; });
show(fn() => ephpm_kv_ttl('t') > 4611686018427000);
?>
--EXPECT--
-- wrong types
TypeError: Ephpm\Lock::acquire(): Argument #1 ($name) must be of type string, array given
TypeError: Ephpm\Lock::acquire(): Argument #1 ($name) must be of type string, int given
TypeError: Ephpm\Lock::acquire(): Argument #2 ($ttl) must be of type float, string given
TypeError: Ephpm\Lock::acquire(): Argument #2 ($ttl) must be of type float, null given
-- argument count
ArgumentCountError: Ephpm\Lock::acquire() expects at least 1 argument, 0 given
ArgumentCountError: Ephpm\Lock::acquire() expects at most 2 arguments, 3 given
-- name length
ValueError: Ephpm\Lock::acquire(): Argument #1 ($name) must not be empty
ValueError: Ephpm\Lock::acquire(): Argument #1 ($name) must not be longer than 65536 bytes
bool(true)
-- TTL range
ValueError: Ephpm\Lock::acquire(): Argument #2 ($ttl) must be greater than 0
ValueError: Ephpm\Lock::acquire(): Argument #2 ($ttl) must be greater than 0
ValueError: Ephpm\Lock::acquire(): Argument #2 ($ttl) must be greater than 0
ValueError: Ephpm\Lock::acquire(): Argument #2 ($ttl) must be a finite number
ValueError: Ephpm\Lock::acquire(): Argument #2 ($ttl) must be a finite number
ValueError: Ephpm\Lock::acquire(): Argument #2 ($ttl) must be a finite number
ValueError: Ephpm\Lock::acquire(): Argument #2 ($ttl) must be less than or equal to 4611686018427387
ValueError: Ephpm\Lock::acquire(): Argument #2 ($ttl) must be less than or equal to 4611686018427387
bool(false)
bool(true)
bool(true)
