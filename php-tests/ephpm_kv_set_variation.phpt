--TEST--
ephpm_kv_set(): binary values, 1 MB uncompressed, coercive conversions of scalars
--EXTENSIONS--
ephpm
--INI--
ephpm.compression=off
--FILE--
<?php
// a bare off in php.ini reaches the extension as "" and means "off"
var_dump(ini_get('ephpm.compression'));

echo "-- NUL bytes in keys and values\n";
ephpm_kv_set("k\0", "v\0");
ephpm_kv_set('k', 'v');
var_dump(bin2hex(ephpm_kv_get("k\0")), ephpm_kv_get('k'));
ephpm_kv_set("\0\0", "\0");
var_dump(bin2hex(ephpm_kv_get("\0\0")), ephpm_kv_get("\0"));

echo "-- 1 MB round-trips exactly, uncompressed\n";
$big = str_repeat("0123456789abcdef", 65536);
$random = random_bytes(1 << 20);
var_dump(ephpm_kv_set('big', $big), ephpm_kv_set('random', $random));
var_dump(ephpm_kv_get('big') === $big, ephpm_kv_get('random') === $random);
$info = ephpm_kv_info();
var_dump($info['compressed_values'], $info['compression_ratio']);
var_dump($info['memory_used'] > 2 * (1 << 20));

echo "-- coercive mode: scalars become strings\n";
var_dump(ephpm_kv_set(123, 456));
var_dump(ephpm_kv_get('123'));
var_dump(ephpm_kv_set('float', 1.5), ephpm_kv_get('float'));
var_dump(ephpm_kv_set('bool', true), ephpm_kv_get('bool'));
var_dump(ephpm_kv_set('ttl-string', 'v', '30'), ephpm_kv_ttl('ttl-string'));
class Name { public function __toString(): string { return 'from-object'; } }
var_dump(ephpm_kv_set(new Name, new Name), ephpm_kv_get('from-object'));

echo "-- an empty value is a value\n";
var_dump(ephpm_kv_set('empty', ''), ephpm_kv_get('empty'), ephpm_kv_exists('empty'));

echo "-- setting a key with a TTL on top of one with another TTL\n";
ephpm_kv_set('t', 'v', 10);
ephpm_kv_set('t', 'w', 500);
var_dump(ephpm_kv_ttl('t'));
?>
--EXPECT--
string(0) ""
-- NUL bytes in keys and values
string(4) "7600"
string(1) "v"
string(2) "00"
NULL
-- 1 MB round-trips exactly, uncompressed
bool(true)
bool(true)
bool(true)
bool(true)
int(0)
float(1)
bool(true)
-- coercive mode: scalars become strings
bool(true)
string(3) "456"
bool(true)
string(3) "1.5"
bool(true)
string(1) "1"
bool(true)
int(30)
bool(true)
string(11) "from-object"
-- an empty value is a value
bool(true)
string(0) ""
bool(true)
-- setting a key with a TTL on top of one with another TTL
int(500)
