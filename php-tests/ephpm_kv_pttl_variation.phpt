--TEST--
ephpm_kv_pttl(): counts down, then the key is missing
--EXTENSIONS--
ephpm
--FILE--
<?php
ephpm_kv_set('k', 'v');
ephpm_kv_pexpire('k', 300);
$first = ephpm_kv_pttl('k');
usleep(50000);
$second = ephpm_kv_pttl('k');
var_dump($first > 0 && $first <= 300);
var_dump($second > 0 && $second <= $first - 45);
usleep(300000);
var_dump(ephpm_kv_pttl('k'));

echo "-- persist turns it back to -1, incr keeps it\n";
ephpm_kv_set('n', '1');
ephpm_kv_pexpire('n', 60000);
ephpm_kv_incr('n');
$ms = ephpm_kv_pttl('n');
var_dump($ms > 59000 && $ms <= 60000);
ephpm_kv_persist('n');
var_dump(ephpm_kv_pttl('n'));

echo "-- the longest TTL there is\n";
ephpm_kv_set('far', 'v');
ephpm_kv_pexpire('far', 4611686018427387903);
var_dump(ephpm_kv_pttl('far') > 4611686018427387903 - 10000);

echo "-- NUL bytes\n";
ephpm_kv_set("\0", 'v');
var_dump(ephpm_kv_pttl("\0"), ephpm_kv_pttl("\0\0"));
?>
--EXPECT--
bool(true)
bool(true)
int(-2)
-- persist turns it back to -1, incr keeps it
bool(true)
int(-1)
-- the longest TTL there is
bool(true)
-- NUL bytes
int(-1)
int(-2)
