--TEST--
ephpm_kv_exists(): expiry, binary keys, coercive conversion
--EXTENSIONS--
ephpm
--FILE--
<?php
echo "-- an entry is absent from the moment it expires\n";
ephpm_kv_set('k', 'v');
ephpm_kv_pexpire('k', 30);
var_dump(ephpm_kv_exists('k'));
usleep(60000);
var_dump(ephpm_kv_exists('k'));

echo "-- a TTL of 0 means no expiry\n";
ephpm_kv_set('forever', 'v', 0);
var_dump(ephpm_kv_exists('forever'));

echo "-- NUL bytes\n";
ephpm_kv_set("x\0y", 'v');
var_dump(ephpm_kv_exists("x\0y"), ephpm_kv_exists('x'), ephpm_kv_exists("x\0"), ephpm_kv_exists("x\0y\0"));

echo "-- coercive mode\n";   // 12.0 becomes "12"
ephpm_kv_set('12', 'v');
var_dump(ephpm_kv_exists(12), ephpm_kv_exists(12.0), ephpm_kv_exists(13));
?>
--EXPECT--
-- an entry is absent from the moment it expires
bool(true)
bool(false)
-- a TTL of 0 means no expiry
bool(true)
-- NUL bytes
bool(true)
bool(false)
bool(false)
bool(false)
-- coercive mode
bool(true)
bool(true)
bool(false)
