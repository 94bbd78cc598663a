--TEST--
ephpm_kv_del(): expired keys, binary keys, the longest key, memory given back
--EXTENSIONS--
ephpm
--INI--
ephpm.compression=zstd
ephpm.compression_threshold=64
--FILE--
<?php
echo "-- an expired entry is not counted as removed\n";
ephpm_kv_set('short-lived', 'v');
ephpm_kv_pexpire('short-lived', 20);
usleep(50000);
var_dump(ephpm_kv_del('short-lived'));

echo "-- NUL bytes: only the exact key goes\n";
ephpm_kv_set('a', '1');
ephpm_kv_set("a\0", '2');
ephpm_kv_set("a\0b", '3');
var_dump(ephpm_kv_del("a\0"));
var_dump(ephpm_kv_get('a'), ephpm_kv_get("a\0"), ephpm_kv_get("a\0b"));

echo "-- the longest key\n";
$long = str_repeat('L', 65536);
ephpm_kv_set($long, 'v', 60);
var_dump(ephpm_kv_del($long), ephpm_kv_exists($long));

echo "-- a compressed value\n";
ephpm_kv_set('packed', str_repeat('p', 4096));
var_dump(ephpm_kv_info()['compressed_values']);
var_dump(ephpm_kv_del('packed'));
$info = ephpm_kv_info();
var_dump($info['compressed_values'], $info['compressed_original_bytes'], $info['compressed_stored_bytes']);

echo "-- coercive mode: an int key\n";
ephpm_kv_set('42', 'answer');
var_dump(ephpm_kv_del(42));

echo "-- memory comes back\n";
ephpm_kv_del('a');
ephpm_kv_del("a\0b");
var_dump(ephpm_kv_info()['memory_used'], ephpm_kv_info()['keys']);
?>
--EXPECT--
-- an expired entry is not counted as removed
int(0)
-- NUL bytes: only the exact key goes
int(1)
string(1) "1"
NULL
string(1) "3"
-- the longest key
int(1)
bool(false)
-- a compressed value
int(1)
int(1)
int(0)
int(0)
int(0)
-- coercive mode: an int key
int(1)
-- memory comes back
int(0)
int(0)
