--TEST--
Ephpm\Lock: the fencing scenario: a holder paused past its TTL cannot overwrite the next holder's write
--EXTENSIONS--
ephpm
--FILE--
<?php
use Ephpm\Lock;

// A takes the lock for 100 ms and reads its fence.
$a = Lock::acquire('lock:res', 0.1);
$fA = $a->fence();
echo "A holds the lock: ", var_export($a->isAcquired(), true), "\n";

// A "pauses" (a GC pause, a slow disk) past its TTL.
usleep(250000);
echo "A after the pause: ", var_export($a->isAcquired(), true), "\n";

// B takes the lock and writes with its fence.
$b = Lock::acquire('lock:res', 10);
$fB = $b->fence();
echo "B's fence is greater: ", var_export($fB > $fA, true), "\n";
echo "B writes: ", var_export(ephpm_kv_set_fenced('res', 'B', $fB), true), "\n";

// A wakes up and writes with its stale fence: refused.
echo "A writes with its stale fence: ", var_export(ephpm_kv_set_fenced('res', 'A', $fA), true), "\n";
echo "res: ", ephpm_kv_get('res'), "\n";

// A's release and refresh cannot touch B's lock either.
echo "A releases: ", var_export($a->release(), true), "\n";
echo "A refreshes: ", var_export($a->refresh(60), true), "\n";
echo "B still holds it: ", var_export($b->isAcquired(), true), "\n";
echo "B writes again: ", var_export(ephpm_kv_set_fenced('res', 'B2', $fB), true), "\n";
echo "B releases: ", var_export($b->release(), true), "\n";

// The next holder's fence passes B's.
$c = Lock::acquire('lock:res');
echo "C writes: ", var_export(ephpm_kv_set_fenced('res', 'C', $c->fence()), true), "\n";
echo "B writes after C: ", var_export(ephpm_kv_set_fenced('res', 'B3', $fB), true), "\n";
echo "res: ", ephpm_kv_get('res'), "\n";
?>
--EXPECT--
A holds the lock: true
A after the pause: false
B's fence is greater: true
B writes: true
A writes with its stale fence: false
res: B
A releases: false
A refreshes: false
B still holds it: true
B writes again: true
B releases: true
C writes: true
B writes after C: false
res: C
