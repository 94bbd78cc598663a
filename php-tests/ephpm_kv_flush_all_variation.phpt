--TEST--
ephpm_kv_flush_all(): compressed values, binary keys, waiters see the change, statistics stay
--EXTENSIONS--
ephpm
--INI--
ephpm.compression=zstd
ephpm.compression_threshold=64
--FILE--
<?php
echo "-- an empty store\n";
var_dump(ephpm_kv_flush_all());

echo "-- compressed values and their figures go\n";
ephpm_kv_set('big', str_repeat('z', 10000));
ephpm_kv_set("bin\0", "\0");
$info = ephpm_kv_info();
var_dump($info['compressed_values'], $info['compressed_original_bytes']);
ephpm_kv_get('big');
ephpm_kv_get('missing');
ephpm_kv_flush_all();
$info = ephpm_kv_info();
var_dump($info['keys'], $info['memory_used'], $info['compressed_values'],
         $info['compressed_original_bytes'], $info['compressed_stored_bytes'],
         $info['compression_ratio']);
var_dump(ephpm_kv_exists("bin\0"));

echo "-- hit and miss counters are not reset\n";
var_dump($info['hits'], $info['misses']);

echo "-- a flush moves the versions: a waiter sees the key gone\n";
ephpm_kv_set('watched', 'v');
$seen = ephpm_kv_wait('watched', 0, 0);
ephpm_kv_flush_all();
var_dump(ephpm_kv_wait('watched', $seen['version'], 1000));
?>
--EXPECT--
-- an empty store
bool(true)
-- compressed values and their figures go
int(1)
int(10000)
int(0)
int(0)
int(0)
int(0)
int(0)
float(1)
bool(false)
-- hit and miss counters are not reset
int(1)
int(1)
-- a flush moves the versions: a waiter sees the key gone
array(2) {
  ["value"]=>
  NULL
  ["version"]=>
  int(0)
}
