--TEST--
ephpm_kv_info(): settings from php.ini, expiry and eviction counters, compression figures
--EXTENSIONS--
ephpm
--INI--
ephpm.memory_limit=4K
ephpm.max_value_size=1K
ephpm.eviction_policy=allkeys-lru
ephpm.compression=zstd
ephpm.compression_threshold=100
--FILE--
<?php
$info = ephpm_kv_info();
var_dump($info['memory_limit'], $info['max_value_size']);

echo "-- an expired entry is counted when it is removed\n";
ephpm_kv_set('e', 'v');
ephpm_kv_pexpire('e', 20);
usleep(50000);
var_dump(ephpm_kv_info()['keys']);
ephpm_kv_get('e');
$info = ephpm_kv_info();
var_dump($info['expired'], $info['misses']);

echo "-- compression figures\n";
$value = str_repeat('abcd', 250);            // 1000 bytes, compresses well
ephpm_kv_set('c1', $value);
ephpm_kv_set('c2', $value);
ephpm_kv_set('small', str_repeat('s', 99));  // under the threshold
$info = ephpm_kv_info();
var_dump($info['compressed_values'], $info['compressed_original_bytes']);
var_dump($info['compressed_stored_bytes'] > 0 && $info['compressed_stored_bytes'] < 1000);
var_dump(abs($info['compression_ratio'] - 2000 / $info['compressed_stored_bytes']) < 1e-9);
ephpm_kv_flush_all();

echo "-- allkeys-lru makes room instead of refusing\n";
for ($i = 0; $i < 60; $i++) {
    if (!ephpm_kv_set("k$i", random_bytes(200))) echo "refused k$i\n";
}
$info = ephpm_kv_info();
var_dump($info['evicted'] > 0, $info['memory_used'] <= 4096, $info['keys'] < 60);
var_dump($info['keys'] + $info['evicted']);
var_dump(ephpm_kv_exists('k59'));
?>
--EXPECT--
int(4096)
int(1024)
-- an expired entry is counted when it is removed
int(0)
int(1)
int(1)
-- compression figures
int(2)
int(2000)
bool(true)
bool(true)
-- allkeys-lru makes room instead of refusing
bool(true)
bool(true)
bool(true)
int(60)
bool(true)
