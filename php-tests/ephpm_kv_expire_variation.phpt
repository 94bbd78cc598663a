--TEST--
ephpm_kv_expire(): 0 on missing keys, expired keys, replacing a TTL, not refused for memory
--EXTENSIONS--
ephpm
--INI--
ephpm.memory_limit=2K
--FILE--
<?php
echo "-- 0 on a missing key is false and creates nothing\n";
var_dump(ephpm_kv_expire('nothing', 0), ephpm_kv_exists('nothing'));

echo "-- an expired key is missing\n";
ephpm_kv_set('gone', 'v');
ephpm_kv_pexpire('gone', 20);
usleep(50000);
var_dump(ephpm_kv_expire('gone', 100), ephpm_kv_exists('gone'));

echo "-- a shorter TTL replaces a longer one and back\n";
ephpm_kv_set('k', 'v', 1000);
var_dump(ephpm_kv_expire('k', 10), ephpm_kv_ttl('k'));
var_dump(ephpm_kv_expire('k', 2000), ephpm_kv_ttl('k'));

echo "-- NUL bytes in the key\n";
ephpm_kv_set("k\0", 'v');
var_dump(ephpm_kv_expire("k\0", 0), ephpm_kv_get('k'));

echo "-- coercive mode\n";
var_dump(ephpm_kv_expire('k', '42'), ephpm_kv_ttl('k'));

echo "-- a full store does not refuse a TTL\n";
$n = 0;
foreach ([100, 1] as $size) {
    while (@ephpm_kv_set("f$n", str_repeat('f', $size))) {
        if (++$n > 100) break 2;
    }
}
var_dump(@ephpm_kv_set('one-more', 'v'));
var_dump(ephpm_kv_expire('f0', 100), ephpm_kv_ttl('f0'));
?>
--EXPECT--
-- 0 on a missing key is false and creates nothing
bool(false)
bool(false)
-- an expired key is missing
bool(false)
bool(false)
-- a shorter TTL replaces a longer one and back
bool(true)
int(10)
bool(true)
int(2000)
-- NUL bytes in the key
bool(true)
string(1) "v"
-- coercive mode
bool(true)
int(42)
-- a full store does not refuse a TTL
bool(false)
bool(true)
int(100)
