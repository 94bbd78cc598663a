--TEST--
ephpm_kv_ttl(): rounds like Redis, (pttl + 500) / 1000; a 1 s TTL runs out
--EXTENSIONS--
ephpm
--FILE--
<?php
// Each TTL is at least 200 ms away from a rounding boundary, so the few
// milliseconds between the two calls cannot change the answer.
echo "-- rounding\n";
ephpm_kv_set('k', 'v');
foreach ([1800 => 'rounds up (floor would say 1)',
          1200 => 'rounds down (ceil would say 2)',
          300  => 'rounds to 0 while still alive',
          2700 => 'rounds up',
          9200 => 'rounds down'] as $ms => $why) {
    ephpm_kv_pexpire('k', $ms);
    printf("%5d ms -> %d  %s\n", $ms, ephpm_kv_ttl('k'), $why);
}
var_dump(ephpm_kv_exists('k'));

echo "-- a 1 second TTL\n";
ephpm_kv_set('second', 'v', 1);
var_dump(ephpm_kv_ttl('second'));
usleep(1050000);
var_dump(ephpm_kv_ttl('second'), ephpm_kv_get('second'));

echo "-- NUL bytes, coercive mode\n";
ephpm_kv_set("t\0", 'v', 20);
ephpm_kv_set('77', 'v', 70);
var_dump(ephpm_kv_ttl("t\0"), ephpm_kv_ttl('t'), ephpm_kv_ttl(77));
?>
--EXPECT--
-- rounding
 1800 ms -> 2  rounds up (floor would say 1)
 1200 ms -> 1  rounds down (ceil would say 2)
  300 ms -> 0  rounds to 0 while still alive
 2700 ms -> 3  rounds up
 9200 ms -> 9  rounds down
bool(true)
-- a 1 second TTL
int(1)
int(-2)
NULL
-- NUL bytes, coercive mode
int(20)
int(-2)
int(70)
