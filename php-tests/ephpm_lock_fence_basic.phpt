--TEST--
Ephpm\Lock::fence(): every grant's fence is greater than every earlier one's
--EXTENSIONS--
ephpm
--FILE--
<?php
use Ephpm\Lock;

$last = 0;
$ok = true;
for ($i = 0; $i < 50; $i++) {
    $l = Lock::acquire('job', 10);
    $f = $l->fence();
    if (!is_int($f) || $f <= $last) $ok = false;
    $last = $f;
    $l->release();
}
var_dump($ok, $last >= 50);
echo "-- kept after release, the same on restore\n";
$a = Lock::acquire('a');
$fa = $a->fence();
var_dump(Lock::restore('a', $a->token())->fence() === $fa);
$a->release();
var_dump($a->fence() === $fa);
echo "-- the next grant's fence passes a fence written with\n";
var_dump(ephpm_kv_set_fenced('res', 'v', $fa));
$b = Lock::acquire('b');
var_dump($b->fence() > $fa, ephpm_kv_set_fenced('res', 'w', $b->fence()));
?>
--EXPECT--
bool(true)
bool(true)
-- kept after release, the same on restore
bool(true)
bool(true)
-- the next grant's fence passes a fence written with
bool(true)
bool(true)
bool(true)
