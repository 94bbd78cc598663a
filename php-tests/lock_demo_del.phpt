--TEST--
Lock demo, released with ephpm_kv_del(): A's late release frees B's lock and C walks in
--EXTENSIONS--
ephpm
--FILE--
<?php
// The design note's scenario: A's lock runs out while A still works, B takes
// the lock, then A "releases" it.
$key = 'lock:nightly-report';
$say = fn(string $what, mixed $v) => printf("%-26s %s\n", $what . ':', var_export($v, true));

$say('A acquires (1s TTL)', ephpm_kv_setnx($key, 'a', 1));
usleep(1200000);
$say('B acquires (30s TTL)', ephpm_kv_setnx($key, 'B', 30));
$say('A releases with del', ephpm_kv_del($key));
$say('C tries to acquire', ephpm_kv_setnx($key, 'c', 30));
$say('lock holder now', ephpm_kv_get($key));
?>
--EXPECT--
A acquires (1s TTL):       true
B acquires (30s TTL):      true
A releases with del:       1
C tries to acquire:        true
lock holder now:           'c'
