--TEST--
ephpm_kv_pexpire(): short TTLs run out; a TTL of 1 ms; expiry seen by every operation
--EXTENSIONS--
ephpm
--FILE--
<?php
echo "-- 40 ms\n";
ephpm_kv_set('k', 'v');
var_dump(ephpm_kv_pexpire('k', 40));
var_dump(ephpm_kv_get('k'));
usleep(80000);
var_dump(ephpm_kv_get('k'), ephpm_kv_exists('k'), ephpm_kv_pttl('k'), ephpm_kv_ttl('k'));
var_dump(ephpm_kv_mget(['k']), ephpm_kv_keys('k'));

echo "-- 1 ms\n";
ephpm_kv_set('k', 'v');
var_dump(ephpm_kv_pexpire('k', 1));
usleep(10000);
var_dump(ephpm_kv_exists('k'));

echo "-- pexpire on a missing or expired key\n";
var_dump(ephpm_kv_pexpire('k', 1000), ephpm_kv_pexpire('never', 0));

echo "-- shortening a long TTL\n";
ephpm_kv_set('k', 'v', 3600);
var_dump(ephpm_kv_pexpire('k', 30));
usleep(60000);
var_dump(ephpm_kv_exists('k'));

echo "-- expired entries are counted once removed\n";
ephpm_kv_get('k');   // removes it, if the sweeper has not yet
var_dump(ephpm_kv_info()['expired']);
?>
--EXPECT--
-- 40 ms
bool(true)
string(1) "v"
NULL
bool(false)
int(-2)
int(-2)
array(1) {
  [0]=>
  NULL
}
array(0) {
}
-- 1 ms
bool(true)
bool(false)
-- pexpire on a missing or expired key
bool(false)
bool(false)
-- shortening a long TTL
bool(true)
bool(false)
-- expired entries are counted once removed
int(3)
