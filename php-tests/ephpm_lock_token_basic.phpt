--TEST--
Ephpm\Lock::token(): 32 lowercase hex characters, new for every grant, the value in the store
--EXTENSIONS--
ephpm
--FILE--
<?php
use Ephpm\Lock;

$tokens = [];
for ($i = 0; $i < 200; $i++) {
    $l = Lock::acquire("n$i");
    $t = $l->token();
    if (!preg_match('/^[0-9a-f]{32}$/', $t)) echo "bad token: $t\n";
    if (ephpm_kv_get("n$i") !== $t) echo "store holds another value for n$i\n";
    $tokens[$t] = true;
    if ($l->token() !== $t) echo "token changed\n";
}
var_dump(count($tokens));
echo "-- a new grant of the same name has a new token\n";
$a = Lock::acquire('same');
$ta = $a->token();
$a->release();
$b = Lock::acquire('same');
var_dump($b->token() !== $ta);
echo "-- kept after release\n";
$b->release();
var_dump(strlen($b->token()));
?>
--EXPECT--
int(200)
-- a new grant of the same name has a new token
bool(true)
-- kept after release
int(32)
