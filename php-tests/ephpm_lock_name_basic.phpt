--TEST--
Ephpm\Lock::name(): the name it was taken under, binary-safe, kept after release
--EXTENSIONS--
ephpm
--FILE--
<?php
use Ephpm\Lock;

$a = Lock::acquire('orders:42');
var_dump($a->name());
$b = Lock::acquire("bin\0\xff");
var_dump(bin2hex($b->name()));
$b->release();
var_dump(bin2hex($b->name()));
var_dump(Lock::restore('r', str_repeat('f', 32))->name());
try {
    $a->name('x');
} catch (ArgumentCountError $e) {
    echo $e->getMessage(), "\n";
}
?>
--EXPECT--
string(9) "orders:42"
string(10) "62696e00ff"
string(10) "62696e00ff"
string(1) "r"
Ephpm\Lock::name() expects exactly 0 arguments, 1 given
