--TEST--
ephpm_kv_set(): stores, replaces, and sets or clears the TTL
--EXTENSIONS--
ephpm
--FILE--
<?php
var_dump(ephpm_kv_set('k', 'first'));
var_dump(ephpm_kv_get('k'), ephpm_kv_ttl('k'));

echo "-- replace\n";
var_dump(ephpm_kv_set('k', 'second'));
var_dump(ephpm_kv_get('k'));

echo "-- with a TTL in seconds\n";
var_dump(ephpm_kv_set('k', 'third', 100));
var_dump(ephpm_kv_get('k'), ephpm_kv_ttl('k'));

echo "-- a plain set drops the TTL\n";
var_dump(ephpm_kv_set('k', 'fourth'));
var_dump(ephpm_kv_get('k'), ephpm_kv_ttl('k'));

echo "-- explicit 0 = no expiry\n";
var_dump(ephpm_kv_set('z', 'v', 0));
var_dump(ephpm_kv_ttl('z'));

var_dump(ephpm_kv_info()['keys']);
?>
--EXPECT--
bool(true)
string(5) "first"
int(-1)
-- replace
bool(true)
string(6) "second"
-- with a TTL in seconds
bool(true)
string(5) "third"
int(100)
-- a plain set drops the TTL
bool(true)
string(6) "fourth"
int(-1)
-- explicit 0 = no expiry
bool(true)
int(-1)
int(2)
