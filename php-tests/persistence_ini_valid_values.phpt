--TEST--
INI: ephpm.persistence, ephpm.data_dir and ephpm.fsync: accepted spellings; startup only
--EXTENSIONS--
ephpm
--INI--
ephpm.persistence=Off
ephpm.data_dir=/nonexistent/ephpm-never-made
ephpm.fsync=ALWAYS
--FILE--
<?php
// PHP's INI parser turns a bare Off into "": that is off, not an invalid value.
foreach (['persistence', 'data_dir', 'fsync'] as $name) {
    printf("%-20s %s\n", "ephpm.$name", var_export(ini_get("ephpm.$name"), true));
}

echo "-- off: the data dir is not used (it does not even exist)\n";
$info = ephpm_kv_info();
var_dump($info['persistence_enabled'], $info['persistence_data_dir'], ephpm_kv_set('k', 'v'));
var_dump(is_dir('/nonexistent/ephpm-never-made'));

echo "-- the settings cannot change at runtime\n";
var_dump(ini_set('ephpm.persistence', 'log'), ini_set('ephpm.data_dir', '/tmp'),
         ini_set('ephpm.fsync', 'no'));
var_dump(ini_get('ephpm.persistence'), ini_get('ephpm.fsync'));
?>
--EXPECT--
ephpm.persistence    ''
ephpm.data_dir       '/nonexistent/ephpm-never-made'
ephpm.fsync          'ALWAYS'
-- off: the data dir is not used (it does not even exist)
bool(false)
string(0) ""
bool(true)
bool(false)
-- the settings cannot change at runtime
bool(false)
bool(false)
bool(false)
string(0) ""
string(6) "ALWAYS"
