--TEST--
Ephpm\Lock::block(): takes a free lock at once, waits for a held one, null when the wait runs out
--EXTENSIONS--
ephpm
--FILE--
<?php
use Ephpm\Lock;

echo "-- free: at once\n";
$t = microtime(true);
$a = Lock::block('job', 10, 5);
var_dump($a instanceof Lock, microtime(true) - $t < 0.5);

echo "-- held until its TTL ends (0.3 s): taken then, with a higher fence\n";
$short = Lock::acquire('short', 0.3);
$t = microtime(true);
$b = Lock::block('short', 10, 5);
$waited = microtime(true) - $t;
var_dump($b instanceof Lock, $waited >= 0.2 && $waited < 2.0, $b->fence() > $short->fence());

echo "-- held for longer than the wait: null after the wait\n";
$t = microtime(true);
var_dump(Lock::block('job', 10, 0.25));
$waited = microtime(true) - $t;
var_dump($waited >= 0.24 && $waited < 2.0);
var_dump($a->isAcquired());

echo "-- defaults: ttl 30 s\n";
$c = Lock::block('defaults');
var_dump(ephpm_kv_ttl('defaults'));
?>
--EXPECT--
-- free: at once
bool(true)
bool(true)
-- held until its TTL ends (0.3 s): taken then, with a higher fence
bool(true)
bool(true)
bool(true)
-- held for longer than the wait: null after the wait
NULL
bool(true)
bool(true)
-- defaults: ttl 30 s
int(30)
