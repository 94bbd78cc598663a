--TEST--
ephpm_kv_get(): binary-safe keys and values, large values stored compressed round-trip exactly
--EXTENSIONS--
ephpm
--INI--
ephpm.compression=zstd
ephpm.compression_threshold=64
--FILE--
<?php
echo "-- NUL bytes in keys: \"a\\0b\", \"a\" and \"a\\0\" are three keys\n";
ephpm_kv_set("a\0b", 'with nul');
ephpm_kv_set('a', 'plain');
var_dump(ephpm_kv_get("a\0b"), ephpm_kv_get('a'), ephpm_kv_get("a\0"), ephpm_kv_get("\0"));

echo "-- NUL bytes in values\n";
ephpm_kv_set('bin', "x\0y\0\0z");
var_dump(bin2hex(ephpm_kv_get('bin')));
$all = '';
for ($i = 0; $i < 256; $i++) $all .= chr($i);
ephpm_kv_set('bytes', $all);
var_dump(ephpm_kv_get('bytes') === $all);

echo "-- below the threshold: not compressed\n";
ephpm_kv_set('short', str_repeat('s', 63));
var_dump(ephpm_kv_get('short') === str_repeat('s', 63));
var_dump(ephpm_kv_info()['compressed_values']);

echo "-- at the threshold and compressible: compressed\n";
ephpm_kv_set('at', str_repeat('t', 64));
var_dump(ephpm_kv_get('at') === str_repeat('t', 64));
var_dump(ephpm_kv_info()['compressed_values']);

echo "-- 1 MB compressible value with NUL bytes\n";
$big = str_repeat("row\0" . str_repeat("ab", 29) . "\n\n", 16384);
var_dump(strlen($big));
ephpm_kv_set('big', $big);
$back = ephpm_kv_get('big');
var_dump(strlen($back), $back === $big);
$info = ephpm_kv_info();
var_dump($info['compressed_values'], $info['compressed_stored_bytes'] < $info['compressed_original_bytes']);

echo "-- 1 MB of random bytes does not shrink: kept as is\n";
$random = random_bytes(1 << 20);
ephpm_kv_set('random', $random);
var_dump(ephpm_kv_get('random') === $random);
var_dump(ephpm_kv_info()['compressed_values']);

echo "-- a compressed value read twice\n";
var_dump(ephpm_kv_get('big') === $big, ephpm_kv_get('at'));
?>
--EXPECT--
-- NUL bytes in keys: "a\0b", "a" and "a\0" are three keys
string(8) "with nul"
string(5) "plain"
NULL
NULL
-- NUL bytes in values
string(12) "78007900007a"
bool(true)
-- below the threshold: not compressed
bool(true)
int(0)
-- at the threshold and compressible: compressed
bool(true)
int(1)
-- 1 MB compressible value with NUL bytes
int(1048576)
int(1048576)
bool(true)
int(2)
bool(true)
-- 1 MB of random bytes does not shrink: kept as is
bool(true)
int(2)
-- a compressed value read twice
bool(true)
string(64) "tttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttt"
