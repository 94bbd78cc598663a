--TEST--
Ephpm\Lock::refresh(): TTL range as acquire()'s (strict types)
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

$l = Lock::acquire('job', 10);
show(fn() => $l->refresh());
show(fn() => $l->refresh('5'));
show(fn() => $l->refresh(0.0));
show(fn() => $l->refresh(-1.0));
show(fn() => $l->refresh(NAN));
show(fn() => $l->refresh(INF));
show(fn() => $l->refresh(5e15));
show(fn() => ephpm_kv_ttl('job'));
?>
--EXPECT--
ArgumentCountError: Ephpm\Lock::refresh() expects exactly 1 argument, 0 given
TypeError: Ephpm\Lock::refresh(): Argument #1 ($ttl) must be of type float, string given
ValueError: Ephpm\Lock::refresh(): Argument #1 ($ttl) must be greater than 0
ValueError: Ephpm\Lock::refresh(): Argument #1 ($ttl) must be greater than 0
ValueError: Ephpm\Lock::refresh(): Argument #1 ($ttl) must be a finite number
ValueError: Ephpm\Lock::refresh(): Argument #1 ($ttl) must be a finite number
ValueError: Ephpm\Lock::refresh(): Argument #1 ($ttl) must be less than or equal to 4611686018427387
int(10)
