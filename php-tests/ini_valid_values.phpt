--TEST--
INI: accepted spellings of the store settings, a bare Off for compression included
--EXTENSIONS--
ephpm
--INI--
ephpm.shards=1
ephpm.eviction_policy=ALLKEYS-LRU
ephpm.compression=Off
ephpm.memory_limit=1m
ephpm.compression_level=-7
ephpm.max_value_size=64k
ephpm.compression_threshold=0
--FILE--
<?php
// php.ini's parser hands a bare Off to the extension as "", which is "off".
foreach (['shards', 'eviction_policy', 'compression', 'memory_limit', 'compression_level',
          'max_value_size', 'compression_threshold'] as $name) {
    printf("%-30s %s\n", "ephpm.$name", var_export(ini_get("ephpm.$name"), true));
}
$info = ephpm_kv_info();
var_dump($info['memory_limit'], $info['max_value_size']);
var_dump(ephpm_kv_set('k', str_repeat('x', 5000)), ephpm_kv_info()['compressed_values']);
try {
    ephpm_kv_set('big', str_repeat('x', 65537));
} catch (ValueError $e) {
    echo $e->getMessage(), "\n";
}
?>
--EXPECT--
ephpm.shards                   '1'
ephpm.eviction_policy          'ALLKEYS-LRU'
ephpm.compression              ''
ephpm.memory_limit             '1m'
ephpm.compression_level        '-7'
ephpm.max_value_size           '64k'
ephpm.compression_threshold    '0'
int(1048576)
int(65536)
bool(true)
int(0)
ephpm_kv_set(): Argument #2 ($value) must not be longer than 65536 bytes (ephpm.max_value_size)
