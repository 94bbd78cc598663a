--TEST--
ephpm_kv_del_if_eq(): releases a value the store keeps compressed
--EXTENSIONS--
ephpm
--INI--
ephpm.compression=zstd
ephpm.compression_threshold=32
--FILE--
<?php
$token = 'holder-42:' . str_repeat('0123456789', 20);   // 210 bytes, compresses well
$before = ephpm_kv_info();
var_dump($before['compressed_values']);

var_dump(ephpm_kv_setnx('lock', $token, 30));
$after = ephpm_kv_info();
var_dump($after['compressed_values']);
var_dump($after['compressed_original_bytes']);
var_dump($after['compressed_stored_bytes'] < strlen($token));
var_dump($after['compression_ratio'] > 1);

echo "-- a wrong token of the same length does not release it\n";
$wrong = substr_replace($token, 'X', -1);
var_dump(strlen($wrong) === strlen($token));
var_dump(ephpm_kv_del_if_eq('lock', $wrong));
var_dump(ephpm_kv_del_if_eq('lock', substr($token, 0, -1)));
var_dump(ephpm_kv_get('lock') === $token);

echo "-- the right token does\n";
var_dump(ephpm_kv_del_if_eq('lock', $token));
var_dump(ephpm_kv_exists('lock'));
$end = ephpm_kv_info();
var_dump($end['compressed_values'], $end['compression_ratio'], $end['memory_used']);
?>
--EXPECT--
int(0)
bool(true)
int(1)
int(210)
bool(true)
bool(true)
-- a wrong token of the same length does not release it
bool(true)
bool(false)
bool(false)
bool(true)
-- the right token does
bool(true)
bool(false)
int(0)
float(1)
int(0)
