--TEST--
ephpm_kv_incr_by(): extreme deltas, TTL kept, coercive deltas
--EXTENSIONS--
ephpm
--FILE--
<?php
echo "-- extreme deltas on a missing key\n";
var_dump(ephpm_kv_incr_by('a', PHP_INT_MAX));
var_dump(ephpm_kv_incr_by('b', PHP_INT_MIN));
var_dump(ephpm_kv_incr_by('a', PHP_INT_MIN));
var_dump(ephpm_kv_get('a'));

echo "-- the TTL is kept\n";
ephpm_kv_set('t', '1', 300);
var_dump(ephpm_kv_incr_by('t', 1000), ephpm_kv_ttl('t'));

echo "-- coercive mode: numeric strings and integral floats\n";
var_dump(ephpm_kv_incr_by('c', '5'), ephpm_kv_incr_by('c', 2.0), ephpm_kv_incr_by('c', ' 3'));
try {
    ephpm_kv_incr_by('c', 'five');
} catch (TypeError $e) {
    echo $e->getMessage(), "\n";
}
var_dump(ephpm_kv_get('c'));

echo "-- NUL bytes in the key\n";
ephpm_kv_incr_by("n\0", 3);
var_dump(ephpm_kv_get("n\0"), ephpm_kv_get('n'));
?>
--EXPECT--
-- extreme deltas on a missing key
int(9223372036854775807)
int(-9223372036854775808)
int(-1)
string(2) "-1"
-- the TTL is kept
int(1001)
int(300)
-- coercive mode: numeric strings and integral floats
int(5)
int(7)
int(10)
ephpm_kv_incr_by(): Argument #2 ($delta) must be of type int, string given
string(2) "10"
-- NUL bytes in the key
string(1) "3"
NULL
