--TEST--
Ephpm\Lock::restore(): a Lock for a grant known by its token, with the grant's fence
--EXTENSIONS--
ephpm
--FILE--
<?php
use Ephpm\Lock;

$a = Lock::acquire('job', 10);
$r = Lock::restore('job', $a->token());
var_dump($r->name(), $r->token() === $a->token(), $r->fence() === $a->fence());
var_dump($r->isAcquired(), $r->remaining() > 9.0);

echo "-- either handle releases the one grant\n";
var_dump($r->release(), $a->isAcquired(), $a->release());

echo "-- a token that holds nothing: fence 0, not acquired\n";
$n = Lock::restore('job', str_repeat('0', 32));
var_dump($n->fence(), $n->isAcquired(), $n->remaining(), $n->release(), $n->refresh(5));

echo "-- a token of an expired grant\n";
$old = Lock::acquire('exp', 0.05);
$token = $old->token();
usleep(100000);
$e = Lock::restore('exp', $token);
var_dump($e->fence(), $e->isAcquired());

echo "-- restore of someone else's name does not take it\n";
$b = Lock::acquire('other');
$x = Lock::restore('other', str_repeat('a', 32));
var_dump($x->isAcquired(), $b->isAcquired());
?>
--EXPECT--
string(3) "job"
bool(true)
bool(true)
bool(true)
bool(true)
-- either handle releases the one grant
bool(true)
bool(false)
bool(false)
-- a token that holds nothing: fence 0, not acquired
int(0)
bool(false)
NULL
bool(false)
bool(false)
-- a token of an expired grant
int(0)
bool(false)
-- restore of someone else's name does not take it
bool(false)
bool(true)
