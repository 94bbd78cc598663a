--TEST--
INI: invalid store settings are refused at startup with a warning and the defaults stay
--EXTENSIONS--
ephpm
--INI--
ephpm.shards=48
ephpm.eviction_policy=lru
ephpm.compression=gzip
ephpm.memory_limit=lots
ephpm.compression_level=23
ephpm.max_value_size=0
ephpm.compression_threshold=-1
--FILE--
<?php
foreach (['shards', 'eviction_policy', 'compression', 'memory_limit', 'compression_level',
          'max_value_size', 'compression_threshold'] as $name) {
    printf("%-30s %s\n", "ephpm.$name", var_export(ini_get("ephpm.$name"), true));
}

echo "-- the store is built from the defaults\n";
$info = ephpm_kv_info();
var_dump($info['memory_limit'], $info['max_value_size']);
var_dump(ephpm_kv_set('k', str_repeat('x', 5000)), ephpm_kv_info()['compressed_values']);

echo "-- store settings cannot change at runtime\n";
var_dump(ini_set('ephpm.shards', '128'));
var_dump(ini_set('ephpm.memory_limit', '1M'));
var_dump(ini_set('ephpm.compression', 'zstd'));
var_dump(ini_get('ephpm.shards'), ini_get('ephpm.memory_limit'), ini_get('ephpm.compression'));
?>
--EXPECTF--
Warning: Invalid ephpm.memory_limit value "lots": %s; keeping the default in Unknown on line 0

Warning: Invalid ephpm.eviction_policy value "lru": %s; keeping the default in Unknown on line 0

Warning: Invalid ephpm.compression value "gzip": %s; keeping the default in Unknown on line 0

Warning: Invalid ephpm.compression_threshold value "-1": %s; keeping the default in Unknown on line 0

Warning: Invalid ephpm.compression_level value "23": %s; keeping the default in Unknown on line 0

Warning: Invalid ephpm.max_value_size value "0": %s; keeping the default in Unknown on line 0

Warning: Invalid ephpm.shards value "48": %s; keeping the default in Unknown on line 0
ephpm.shards                   '64'
ephpm.eviction_policy          'noeviction'
ephpm.compression              'off'
ephpm.memory_limit             '0'
ephpm.compression_level        '3'
ephpm.max_value_size           '512M'
ephpm.compression_threshold    '1024'
-- the store is built from the defaults
int(0)
int(536870912)
bool(true)
int(0)
-- store settings cannot change at runtime
bool(false)
bool(false)
bool(false)
string(2) "64"
string(1) "0"
string(3) "off"
