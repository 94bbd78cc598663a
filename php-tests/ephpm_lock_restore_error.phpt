--TEST--
Ephpm\Lock::restore(): argument errors: name and token (strict types)
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

$ok = str_repeat('ab', 16);
show(fn() => Lock::restore('n'));
show(fn() => Lock::restore('n', $ok, 1));
show(fn() => Lock::restore('n', 5));
show(fn() => Lock::restore('', $ok));
show(fn() => Lock::restore(str_repeat('x', 65537), $ok));
show(fn() => Lock::restore('n', ''));
show(fn() => Lock::restore('n', str_repeat('a', 31)));
show(fn() => Lock::restore('n', str_repeat('a', 33)));
show(fn() => Lock::restore('n', str_repeat('A', 32)));
show(fn() => Lock::restore('n', str_repeat('g', 32)));
show(fn() => Lock::restore('n', str_repeat("\0", 32)));
show(fn() => Lock::restore('n', $ok)->fence());
?>
--EXPECT--
ArgumentCountError: Ephpm\Lock::restore() expects exactly 2 arguments, 1 given
ArgumentCountError: Ephpm\Lock::restore() expects exactly 2 arguments, 3 given
TypeError: Ephpm\Lock::restore(): Argument #2 ($token) must be of type string, int given
ValueError: Ephpm\Lock::restore(): Argument #1 ($name) must not be empty
ValueError: Ephpm\Lock::restore(): Argument #1 ($name) must not be longer than 65536 bytes
ValueError: Ephpm\Lock::restore(): Argument #2 ($token) must be a token of 32 lowercase hexadecimal characters
ValueError: Ephpm\Lock::restore(): Argument #2 ($token) must be a token of 32 lowercase hexadecimal characters
ValueError: Ephpm\Lock::restore(): Argument #2 ($token) must be a token of 32 lowercase hexadecimal characters
ValueError: Ephpm\Lock::restore(): Argument #2 ($token) must be a token of 32 lowercase hexadecimal characters
ValueError: Ephpm\Lock::restore(): Argument #2 ($token) must be a token of 32 lowercase hexadecimal characters
ValueError: Ephpm\Lock::restore(): Argument #2 ($token) must be a token of 32 lowercase hexadecimal characters
int(0)
