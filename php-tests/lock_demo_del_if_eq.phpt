--TEST--
Lock demo, released with ephpm_kv_del_if_eq(): A's late release is refused and B keeps the lock
--EXTENSIONS--
ephpm
--FILE--
<?php
$key = 'lock:nightly-report';
$say = fn(string $what, mixed $v) => printf("%-26s %s\n", $what . ':', var_export($v, true));

$say('A acquires (1s TTL)', ephpm_kv_setnx($key, 'a', 1));
usleep(1200000);
$say('B acquires (30s TTL)', ephpm_kv_setnx($key, 'B', 30));
$say('A releases with del_if_eq', ephpm_kv_del_if_eq($key, 'a'));
$say('C tries to acquire', ephpm_kv_setnx($key, 'c', 30));
$say('lock holder now', ephpm_kv_get($key));
?>
--EXPECT--
A acquires (1s TTL):       true
B acquires (30s TTL):      true
A releases with del_if_eq: false
C tries to acquire:        false
lock holder now:           'B'
