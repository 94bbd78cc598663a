--TEST--
ephpm_kv_get(): returns the stored string, null when missing
--EXTENSIONS--
ephpm
--FILE--
<?php
var_dump(ephpm_kv_get('missing'));
var_dump(ephpm_kv_set('greeting', 'hello'));
var_dump(ephpm_kv_get('greeting'));
var_dump(ephpm_kv_set('empty', ''));
var_dump(ephpm_kv_get('empty'));

echo "-- a later set replaces the value\n";
ephpm_kv_set('greeting', 'goodbye');
var_dump(ephpm_kv_get('greeting'));

echo "-- gone after del\n";
ephpm_kv_del('greeting');
var_dump(ephpm_kv_get('greeting'));

echo "-- hits and misses are counted\n";
$info = ephpm_kv_info();
var_dump($info['hits'], $info['misses']);
?>
--EXPECT--
NULL
bool(true)
string(5) "hello"
bool(true)
string(0) ""
-- a later set replaces the value
string(7) "goodbye"
-- gone after del
NULL
-- hits and misses are counted
int(3)
int(2)
