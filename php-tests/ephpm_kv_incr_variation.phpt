--TEST--
ephpm_kv_incr(): keeps the TTL, restarts from 0 after expiry, binary keys
--EXTENSIONS--
ephpm
--FILE--
<?php
echo "-- the TTL is kept\n";
ephpm_kv_set('rate', '5', 100);
var_dump(ephpm_kv_incr('rate'), ephpm_kv_ttl('rate'));
ephpm_kv_incr('rate');
var_dump(ephpm_kv_get('rate'), ephpm_kv_ttl('rate'));

echo "-- a missing key starts at 0 and gets no TTL\n";
var_dump(ephpm_kv_incr('fresh'), ephpm_kv_ttl('fresh'));

echo "-- an expired counter counts as missing\n";
ephpm_kv_set('window', '99');
ephpm_kv_pexpire('window', 20);
usleep(50000);
var_dump(ephpm_kv_incr('window'), ephpm_kv_ttl('window'));

echo "-- the lowest int64 goes up\n";
ephpm_kv_set('low', (string)PHP_INT_MIN);
var_dump(ephpm_kv_incr('low'));

echo "-- NUL bytes in the key\n";
ephpm_kv_incr("c\0");
ephpm_kv_incr("c\0");
ephpm_kv_incr('c');
var_dump(ephpm_kv_get("c\0"), ephpm_kv_get('c'));

echo "-- coercive mode\n";
var_dump(ephpm_kv_incr(7), ephpm_kv_get('7'));

echo "-- a numeric value written by set\n";
ephpm_kv_set('set-by-hand', '-1');
var_dump(ephpm_kv_incr('set-by-hand'), ephpm_kv_get('set-by-hand'));
?>
--EXPECT--
-- the TTL is kept
int(6)
int(100)
string(1) "7"
int(100)
-- a missing key starts at 0 and gets no TTL
int(1)
int(-1)
-- an expired counter counts as missing
int(1)
int(-1)
-- the lowest int64 goes up
int(-9223372036854775807)
-- NUL bytes in the key
string(1) "2"
string(1) "1"
-- coercive mode
int(1)
string(1) "1"
-- a numeric value written by set
int(0)
string(1) "0"
