--TEST--
ephpm_kv_expire(): sets a TTL in seconds; false for a missing key; 0 deletes
--EXTENSIONS--
ephpm
--FILE--
<?php
ephpm_kv_set('k', 'v');
var_dump(ephpm_kv_expire('k', 100));
var_dump(ephpm_kv_ttl('k'));
var_dump(ephpm_kv_expire('k', 7));
var_dump(ephpm_kv_ttl('k'), ephpm_kv_get('k'));

echo "-- missing key\n";
var_dump(ephpm_kv_expire('missing', 100));
var_dump(ephpm_kv_exists('missing'));

echo "-- 0 deletes the key\n";
var_dump(ephpm_kv_expire('k', 0));
var_dump(ephpm_kv_exists('k'), ephpm_kv_ttl('k'));
?>
--EXPECT--
bool(true)
int(100)
bool(true)
int(7)
string(1) "v"
-- missing key
bool(false)
bool(false)
-- 0 deletes the key
bool(true)
bool(false)
int(-2)
